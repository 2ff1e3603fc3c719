//! The job store on real SQLite files: claims across connections, runs kept and capped, a
//! file of another program refused.

use super::*;

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
fn a_slot_is_claimed_once_across_connections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join(FILE_NAME);
    let a = JobStore::open(&path).unwrap();
    let b = JobStore::open(&path).unwrap();
    assert!(a.insert(&job("job_1", Some(1000))).unwrap());
    assert!(!b.insert(&job("job_1", Some(1000))).unwrap(), "ids are unique");
    assert_eq!(b.due(999).unwrap().len(), 0);
    assert_eq!(b.due(1000).unwrap().len(), 1);
    let row = job("job_1", Some(1000));
    assert_eq!(a.claim(&row, Some(61_000), Some(("schedule", 1000))).unwrap(), Some(Some(1)));
    assert_eq!(b.claim(&row, Some(61_000), Some(("schedule", 1000))).unwrap(), None, "the slot is taken");
    assert_eq!(b.next_due().unwrap(), Some(61_000));
    // A one-shot's claim deletes it.
    assert!(b.insert(&job("job_2", Some(5))).unwrap());
    assert_eq!(b.claim(&job("job_2", Some(5)), None, None).unwrap(), Some(None));
    assert_eq!(a.claim(&job("job_2", Some(5)), None, None).unwrap(), None);
    assert_eq!(a.find("job_2").unwrap(), None);
    // A run still going is not joined by the next firing's.
    let later = JobRow { next_ms: Some(61_000), ..row };
    assert_eq!(a.claim(&later, Some(121_000), Some(("schedule", 61_000))).unwrap(), Some(None));
    assert_eq!(a.find("job_1").unwrap().unwrap().next_ms, Some(121_000));
    // A paused job's slot cannot be claimed.
    a.set_enabled("job_1", false, Some(121_000)).unwrap();
    let paused = JobRow { next_ms: Some(121_000), ..later };
    assert_eq!(a.claim(&paused, Some(181_000), None).unwrap(), None);
    let mode = std::fs::metadata(&path).unwrap();
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777, 0o600);
}

#[test]
fn runs_are_numbered_capped_and_kept_to_the_last_twenty() {
    let store = JobStore::in_memory().unwrap();
    let row = job("job_3", Some(1));
    store.insert(&row).unwrap();
    for i in 0..25 {
        let seq = store.start_run(&row, "schedule", i).unwrap();
        assert_eq!(seq, i + 1);
        store.end_run("job_3", seq, RunStatus::Completed, &"é".repeat(OUTPUT_CAP), i + 1).unwrap();
    }
    let last = store.run("job_3", None).unwrap().unwrap();
    assert_eq!((last.seq, last.run_id()), (25, "job_3.25".to_string()));
    assert!(last.truncated && last.output.len() <= OUTPUT_CAP);
    assert_eq!(store.run("job_3", Some(5)).unwrap(), None, "older runs are dropped");
    assert!(store.run("job_3", Some(6)).unwrap().is_some());
    assert_eq!(store.find("job_3 name").unwrap().unwrap().runs, 25, "found by name too");
}

#[test]
fn a_file_of_another_program_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    std::fs::write(&path, "not a database at all, just text that is long enough to be a header").unwrap();
    let e = JobStore::open(&path).unwrap_err().to_string();
    assert!(e.contains(FILE_NAME) && e.contains("move it aside"), "{e}");
}
