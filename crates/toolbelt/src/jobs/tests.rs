//! The scheduler on a clock the tests set, over real SQLite: claims across processes, missed
//! firings, one-shots, expiry and jitter.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use jiff::Timestamp;
use toolbelt_core::{JobAction, RunStatus, Schedule};
use toolbelt_tools::cron::store::{JobRow, JobStore};

use super::{JobHost, JobPlace, JobSettings};

fn host(dir: &std::path::Path, settings: JobSettings) -> Arc<JobHost> {
    let place = JobPlace {
        cwd: dir.to_path_buf(),
        roots: vec![dir.to_path_buf()],
        data_dir: dir.join("sessions"),
        state_dir: dir.join("state"),
        shared: Ok(None),
        machine: "test".into(),
    };
    let host = JobHost::new(place, settings);
    // The clock is driven by hand: no task runs it.
    let _ = host.serving.set(true);
    host
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn row(id: &str, schedule: Schedule, recurring: bool, created: Timestamp, next: Timestamp) -> JobRow {
    JobRow {
        id: id.into(),
        name: id.into(),
        owner: "s".into(),
        schedule,
        action: JobAction::Tool { tool: "Glob".into(), input: serde_json::json!({"pattern": "*"}) },
        recurring,
        enabled: true,
        created_ms: created.as_millisecond(),
        expires_ms: None,
        next_ms: Some(next.as_millisecond()),
        runs: 0,
    }
}

fn durable(host: &JobHost) -> Arc<JobStore> {
    host.durable(true).unwrap().unwrap()
}

async fn settle(handles: Vec<tokio::task::JoinHandle<Option<toolbelt_core::RunReport>>>) -> Vec<RunStatus> {
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap().unwrap().status);
    }
    out
}

#[tokio::test]
async fn two_processes_serving_one_store_run_each_firing_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (host(dir.path(), JobSettings::default()), host(dir.path(), JobSettings::default()));
    let created = at("2026-11-29T10:00:00Z");
    let job = row("job_a", Schedule::Every { seconds: 60 }, true, created, at("2026-11-29T10:01:00Z"));
    durable(&a).insert(&job).unwrap();
    let now = at("2026-11-29T10:01:00.5Z");
    let first = a.fire_due(now);
    let second = b.fire_due(now);
    assert_eq!((first.len(), second.len()), (1, 0));
    // Without a runtime the run is recorded as interrupted, but it is recorded once.
    assert_eq!(settle(first).await, [RunStatus::Interrupted]);
    let store = durable(&b);
    assert_eq!(store.find("job_a").unwrap().unwrap().runs, 1);
    // The next slot is 10:02 plus this job's jitter (at most 6 s for a minute's period).
    let next = store.find("job_a").unwrap().unwrap().next_ms.unwrap();
    let slot = at("2026-11-29T10:02:00Z").as_millisecond();
    assert!((slot..=slot + 6_000).contains(&next), "{next}");
}

#[tokio::test]
async fn a_missed_firing_runs_once_and_the_next_is_after_now() {
    let dir = tempfile::tempdir().unwrap();
    let h = host(dir.path(), JobSettings { jitter: false, ..JobSettings::default() });
    let created = at("2026-11-29T10:00:00Z");
    let cron = Schedule::Cron { expr: "*/5 * * * *".into(), tz: Some("UTC".into()) };
    durable(&h).insert(&row("job_m", cron, true, created, at("2026-11-29T10:05:00Z"))).unwrap();
    // Down from 10:03 to 11:02: twelve slots missed.
    let fired = h.fire_due(at("2026-11-29T11:02:00Z"));
    assert_eq!(fired.len(), 1);
    settle(fired).await;
    let job = durable(&h).find("job_m").unwrap().unwrap();
    assert_eq!(job.next_ms, Some(at("2026-11-29T11:05:00Z").as_millisecond()));
    assert!(h.fire_due(at("2026-11-29T11:04:59Z")).is_empty());
}

#[tokio::test]
async fn a_one_shot_deletes_itself_and_its_run_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let h = host(dir.path(), JobSettings::default());
    let created = at("2026-11-29T10:00:00Z");
    let once = Schedule::At { at: "2026-11-29T12:00:00Z".into() };
    h.session_store().unwrap().insert(&row("job_o", once, false, created, at("2026-11-29T12:00:00Z"))).unwrap();
    assert!(h.fire_due(at("2026-11-29T11:59:59Z")).is_empty());
    settle(h.fire_due(at("2026-11-29T12:00:01Z"))).await;
    assert_eq!(h.session_store().unwrap().find("job_o").unwrap(), None);
    assert_eq!(h.session_store().unwrap().run("job_o", Some(1)).unwrap().unwrap().run_id(), "job_o.1");
}

#[tokio::test]
async fn a_recurring_job_fires_a_last_time_at_its_expiry_and_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let h = host(dir.path(), JobSettings { jitter: false, ..JobSettings::default() });
    let created = at("2026-11-29T10:00:00Z");
    let mut job = row("job_e", Schedule::Every { seconds: 3600 }, true, created, at("2026-11-29T11:00:00Z"));
    job.expires_ms = Some(at("2026-11-29T11:30:00Z").as_millisecond());
    h.session_store().unwrap().insert(&job).unwrap();
    assert_eq!(settle(h.fire_due(at("2026-11-29T11:00:00Z"))).await.len(), 1);
    assert_eq!(h.session_store().unwrap().find("job_e").unwrap(), None, "the next slot is past its expiry");
}

#[tokio::test]
async fn a_paused_job_does_not_fire() {
    let dir = tempfile::tempdir().unwrap();
    let h = host(dir.path(), JobSettings::default());
    let created = at("2026-11-29T10:00:00Z");
    h.session_store()
        .unwrap()
        .insert(&row("job_p", Schedule::Every { seconds: 60 }, true, created, at("2026-11-29T10:01:00Z")))
        .unwrap();
    h.session_store().unwrap().set_enabled("job_p", false, Some(at("2026-11-29T10:01:00Z").as_millisecond())).unwrap();
    assert!(h.fire_due(at("2026-11-29T10:30:00Z")).is_empty());
}

#[tokio::test]
async fn a_job_paused_past_its_expiry_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let h = host(dir.path(), JobSettings::default());
    let created = at("2026-11-29T10:00:00Z");
    let mut job = row("job_x", Schedule::Every { seconds: 60 }, true, created, at("2026-11-29T10:01:00Z"));
    job.expires_ms = Some(at("2026-12-06T10:00:00Z").as_millisecond());
    h.session_store().unwrap().insert(&job).unwrap();
    h.session_store().unwrap().set_enabled("job_x", false, job.next_ms).unwrap();
    assert!(h.fire_due(at("2026-12-01T00:00:00Z")).is_empty());
    assert!(h.session_store().unwrap().find("job_x").unwrap().is_some(), "paused, not yet expired");
    assert!(h.fire_due(at("2026-12-06T10:00:01Z")).is_empty());
    assert_eq!(h.session_store().unwrap().find("job_x").unwrap(), None);
}
