//! A project's durable jobs in the shared database, as replicas (each with a pool of its own)
//! use them: a slot is claimed once whoever tries, runs are numbered across replicas, a run
//! whose process is gone stops counting as running, and projects stay apart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use toolbelt_core::{JobAction, RunStatus, Schedule};
use toolbelt_tools::cron::store::{JobRow, JobStore};
use toolbelt_tools::storage::SharedStorage;

fn replica(url: &str, project: &str, machine: &str) -> JobStore {
    JobStore::shared(Arc::new(SharedStorage::new(url, None, 2).unwrap()), project.to_string(), machine)
}

fn job(id: &str, next: Option<i64>) -> JobRow {
    JobRow {
        id: id.into(),
        name: format!("{id} name"),
        owner: "s".into(),
        schedule: Schedule::Every { seconds: 60 },
        action: JobAction::Tool { tool: "Glob".into(), input: serde_json::json!({"pattern": "*"}) },
        recurring: true,
        enabled: true,
        created_ms: 0,
        expires_ms: None,
        next_ms: next,
        runs: 0,
    }
}

#[test]
fn replicas_claim_each_slot_once_and_number_runs_together() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "cron_claims");
    let stores: Vec<JobStore> = (0..4).map(|i| replica(&url, "app-1234", &format!("r{i}"))).collect();
    assert!(stores[0].insert(&job("job_1", Some(1000))).unwrap());
    assert!(!stores[1].insert(&job("job_1", Some(1000))).unwrap(), "ids are unique");
    assert_eq!(stores[2].due(999).unwrap().len(), 0);
    assert_eq!(stores[2].due(1000).unwrap(), vec![job("job_1", Some(1000))]);

    // Four replicas claim the slot at once: one wins, and starts run 1.
    let row = job("job_1", Some(1000));
    let claims: Vec<_> = std::thread::scope(|s| {
        let tries: Vec<_> = stores
            .iter()
            .map(|st| s.spawn(|| st.claim(&row, Some(61_000), Some(("schedule", 1000))).unwrap()))
            .collect();
        tries.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(claims.iter().filter(|c| c.is_some()).count(), 1, "{claims:?}");
    assert!(claims.contains(&Some(Some(1))), "{claims:?}");
    assert_eq!(stores[3].next_due().unwrap(), Some(61_000));
    let run = stores[3].run("job_1", None).unwrap().unwrap();
    assert_eq!((run.seq, run.status, run.reason.as_str()), (1, RunStatus::Running, "schedule"));

    // While run 1 goes on, the next slot is claimed but starts nothing.
    let next = job("job_1", Some(61_000));
    assert_eq!(stores[1].claim(&next, Some(121_000), Some(("schedule", 61_000))).unwrap(), Some(None));
    // Its end is read on any replica; the next run, started on another, is number 2.
    stores[0].end_run("job_1", 1, RunStatus::Completed, "found\0 it", 2000).unwrap();
    let ended = stores[2].run("job_1", Some(1)).unwrap().unwrap();
    assert_eq!(
        (ended.status, ended.output.as_str(), ended.ended_ms),
        (RunStatus::Completed, "found\u{FFFD} it", Some(2000))
    );
    assert_eq!(stores[3].start_run(&next, "manual", 3000).unwrap(), 2);
    assert_eq!(stores[0].find("job_1 name").unwrap().unwrap().runs, 2);

    // Another project's jobs are apart.
    let other = replica(&url, "other-5678", "r0");
    assert!(other.list().unwrap().is_empty());
    assert!(other.insert(&job("job_1", Some(5))).unwrap(), "the same id in another project");
    assert_eq!(stores[0].list().unwrap().len(), 1);

    // Paused, deleted, and a one-shot's claim that deletes it.
    assert!(stores[1].set_enabled("job_1", false, None).unwrap());
    assert_eq!(stores[0].next_due().unwrap(), None);
    assert!(stores[2].delete("job_1").unwrap());
    assert!(!stores[2].delete("job_1").unwrap());
    assert!(stores[0].insert(&job("job_2", Some(5))).unwrap());
    assert_eq!(stores[1].claim(&job("job_2", Some(5)), None, None).unwrap(), Some(None));
    assert_eq!(stores[0].find("job_2").unwrap(), None);
}

#[test]
fn a_run_whose_process_is_gone_stops_keeping_its_job_from_firing() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "cron_silent");
    let a = replica(&url, "app-1", "a");
    let b = replica(&url, "app-1", "b");
    assert!(a.insert(&job("job_1", Some(1000))).unwrap());
    assert_eq!(a.claim(&job("job_1", Some(1000)), Some(2000), Some(("schedule", 1000))).unwrap(), Some(Some(1)));
    // A's process is alive: its run keeps B from starting another, and is not interrupted.
    assert_eq!(b.mark_interrupted(0).unwrap(), 0);
    assert_eq!(b.claim(&job("job_1", Some(2000)), Some(3000), Some(("schedule", 2000))).unwrap(), Some(None));

    // A goes (its heartbeat ends): the run is interrupted, and the job fires on B.
    drop(a);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let fired = b.claim(&job("job_1", Some(3000)), Some(4000), Some(("schedule", 3000))).unwrap();
        if fired == Some(Some(2)) {
            break;
        }
        assert_eq!(fired, Some(None));
        assert!(std::time::Instant::now() < deadline, "A's run still counts as running");
        // Try the slot again (its claim moved it on).
        b.set_enabled("job_1", true, Some(3000)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let first = b.run("job_1", Some(1)).unwrap().unwrap();
    assert_eq!(first.status, RunStatus::Interrupted);
    assert!(first.output.contains("stopped before it finished"), "{first:?}");
}

#[test]
fn a_run_whose_process_fell_silent_is_interrupted_and_one_still_beating_is_not() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "cron_ghosts");
    let b = replica(&url, "app-1", "b");
    for id in ["job_ghost", "job_alive"] {
        assert!(b.insert(&job(id, Some(1000))).unwrap());
    }
    assert!(b.list().unwrap().len() == 2);
    // Two runs left `running` by other processes, as a killed one leaves them: one whose
    // process last said it was alive 2 minutes ago, one that said so just now.
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    db.batch_execute(
        "INSERT INTO cron_holders VALUES ('ghost', (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT - 120000), \
         ('alive', (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT);
         INSERT INTO cron_runs (project, job_id, seq, job_name, started_ms, status, reason, holder) VALUES \
         ('app-1', 'job_ghost', 1, 'g', 1, 'running', 'schedule', 'ghost'), \
         ('app-1', 'job_alive', 1, 'a', 1, 'running', 'schedule', 'alive');",
    )
    .unwrap();
    assert_eq!(b.mark_interrupted(0).unwrap(), 1);
    assert_eq!(b.run("job_ghost", None).unwrap().unwrap().status, RunStatus::Interrupted);
    assert_eq!(b.run("job_alive", None).unwrap().unwrap().status, RunStatus::Running);
    // The silent one's job fires again; the live one's skips its firing.
    assert_eq!(b.claim(&job("job_ghost", Some(1000)), Some(2000), Some(("schedule", 1000))).unwrap(), Some(Some(2)));
    assert_eq!(b.claim(&job("job_alive", Some(1000)), Some(2000), Some(("schedule", 1000))).unwrap(), Some(None));

    // Runs past the last 20 are dropped; the latest is read without a number.
    for n in 0..25 {
        b.start_run(&job("job_ghost", Some(2000)), "manual", 3000 + n).unwrap();
    }
    let latest = b.run("job_ghost", None).unwrap().unwrap();
    assert_eq!(latest.seq, 27);
    assert!(b.run("job_ghost", Some(7)).unwrap().is_none());
    assert!(b.run("job_ghost", Some(8)).unwrap().is_some());
}
