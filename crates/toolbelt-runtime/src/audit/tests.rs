use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::chain::numbered;
use super::*;

fn record_of(call_id: &str) -> AuditRecord<'_> {
    static CLIENT: std::sync::LazyLock<ClientInfo> = std::sync::LazyLock::new(ClientInfo::cli);
    AuditRecord {
        time: rfc3339(SystemTime::now()),
        session: "s",
        client: &CLIENT,
        call_id,
        tool: "Read",
        input: json!({"file_path": "a.txt"}),
        reason: None,
        decision: None,
        approval: None,
        hooks: &[],
        follow_ups: &[],
        outcome: Outcome::Ok,
        is_error: false,
        duration_ms: 0.5,
        output_chars: 10,
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write(log: &AuditLog, n: usize) {
    for i in 0..n {
        log.record(&record_of(&format!("call-{i:02}")));
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn records_chain_from_64_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs/audit.jsonl");
    write(&AuditLog::new(AuditConfig::at(&path)), 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let raw: Vec<&str> = text.lines().collect();
    let parsed = lines(&path);
    assert_eq!(parsed[0]["seq"], 1);
    assert_eq!(parsed[0]["prev"], GENESIS);
    assert!(raw[0].starts_with(r#"{"seq":1,"prev":"000"#), "seq and prev come first: {}", raw[0]);
    for i in 1..3 {
        assert_eq!(parsed[i]["seq"], i + 1);
        assert_eq!(parsed[i]["prev"], toolbelt_core::sha256_hex(raw[i - 1]));
    }
    assert_eq!(parsed[2]["client"], json!({"kind": "cli"}));
    let head = std::fs::read_to_string(head_path(&path)).unwrap();
    assert_eq!(head.trim(), format!(r#"{{"seq":3,"sha256":"{}","first":1}}"#, toolbelt_core::sha256_hex(raw[2])));
    assert_eq!(verify(&path).unwrap().records, 3);
}

#[test]
fn the_file_is_0600_in_a_0700_directory_and_looser_files_are_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/projects/p/audit.jsonl");
    write(&AuditLog::new(AuditConfig::at(&path)), 1);
    assert_eq!((mode(&path), mode(path.parent().unwrap()), mode(&head_path(&path))), (0o600, 0o700, 0o600));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    write(&AuditLog::new(AuditConfig::at(&path)), 1);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn rotation_continues_the_chain_and_never_truncates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::new(AuditConfig { path: path.clone(), max_bytes: 700, keep: 2, anchor: true });
    write(&log, 12);
    let (now, one, two) = (lines(&path), lines(&numbered(&path, 1)), lines(&numbered(&path, 2)));
    assert!(!numbered(&path, 3).exists(), "only `keep` rotated files are kept");
    for file in [&path, &numbered(&path, 1), &numbered(&path, 2)] {
        assert!(std::fs::metadata(file).unwrap().len() <= 700);
    }
    let seqs = |l: &[Value]| l.iter().map(|v| v["seq"].as_u64().unwrap()).collect::<Vec<_>>();
    assert_eq!(seqs(&now).last(), Some(&12));
    assert_eq!(seqs(&one).last().map(|s| s + 1), seqs(&now).first().copied());
    assert_eq!(seqs(&two).last().map(|s| s + 1), seqs(&one).first().copied());
    // The first record of a new file chains to the last record of the rotated one.
    let last_of_one = std::fs::read_to_string(numbered(&path, 1)).unwrap().lines().last().unwrap().to_string();
    assert_eq!(now[0]["prev"], toolbelt_core::sha256_hex(last_of_one));
    let summary = verify(&path).unwrap();
    assert_eq!((summary.first_seq, summary.last_seq), (seqs(&two)[0], 12), "older records were rotated out");

    // keep = 0 is read as 1: the rotated file stays and the chain can still be followed.
    let path = dir.path().join("zero.jsonl");
    write(&AuditLog::new(AuditConfig { path: path.clone(), max_bytes: 700, keep: 0, anchor: true }), 6);
    assert!(numbered(&path, 1).exists() && !numbered(&path, 2).exists());
    assert_eq!(verify(&path).unwrap().last_seq, 6);
}

#[test]
fn a_restarted_writer_recovers_seq_and_prev() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write(&AuditLog::new(AuditConfig::at(&path)), 3);
    write(&AuditLog::new(AuditConfig::at(&path)), 2);
    let summary = verify(&path).unwrap();
    assert_eq!((summary.records, summary.first_seq, summary.last_seq), (5, 1, 5));
    // Right after a rotation the live file is empty: the chain comes from the rotated one.
    let config = AuditConfig { path: dir.path().join("rotated.jsonl"), anchor: false, ..AuditConfig::at("") };
    write(&AuditLog::new(config.clone()), 2);
    std::fs::rename(&config.path, numbered(&config.path, 1)).unwrap();
    write(&AuditLog::new(config.clone()), 1);
    let rotated = std::fs::read_to_string(numbered(&config.path, 1)).unwrap();
    let first = &lines(&config.path)[0];
    assert_eq!(first["seq"], 3);
    assert_eq!(first["prev"], toolbelt_core::sha256_hex(rotated.lines().last().unwrap()));
}

#[test]
fn a_partial_last_line_is_not_continued() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write(&AuditLog::new(AuditConfig::at(&path)), 2);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"seq":3,"prev":"ab"#);
    std::fs::write(&path, &text).unwrap();
    write(&AuditLog::new(AuditConfig::at(&path)), 1);
    let after = std::fs::read_to_string(&path).unwrap();
    let raw: Vec<&str> = after.lines().collect();
    assert_eq!(raw.len(), 4, "the new record starts on a line of its own: {after}");
    assert_eq!(raw[2], r#"{"seq":3,"prev":"ab"#);
    let new: Value = serde_json::from_str(raw[3]).unwrap();
    assert_eq!((new["seq"].as_u64(), new["prev"].as_str()), (Some(3), Some(&*toolbelt_core::sha256_hex(raw[1]))));
    assert_eq!(verify(&path).unwrap_err().to_string(), "audit.jsonl line 3 is truncated (not a complete JSON record)");
}

#[test]
fn removing_the_last_records_leaves_a_gap_the_next_record_does_not_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write(&AuditLog::new(AuditConfig::at(&path)), 4);
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&path, format!("{}\n", kept.join("\n"))).unwrap();
    assert_eq!(verify(&path).unwrap_err().to_string(), "the last 2 records are missing: the head anchor says seq 4");
    write(&AuditLog::new(AuditConfig::at(&path)), 1);
    assert_eq!(lines(&path)[2]["seq"], 5, "the chain goes on from the anchor");
    assert_eq!(
        verify(&path).unwrap_err().to_string(),
        "records seq 3..4 are missing between audit.jsonl line 2 and audit.jsonl line 3"
    );
}

#[test]
fn removing_the_first_records_or_the_whole_file_shows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write(&AuditLog::new(AuditConfig::at(&path)), 3);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.split_once('\n').unwrap().1).unwrap();
    assert_eq!(
        verify(&path).unwrap_err().to_string(),
        "record seq 1 is missing before audit.jsonl line 1: the head anchor says the log starts at seq 1"
    );
    std::fs::remove_file(&path).unwrap();
    write(&AuditLog::new(AuditConfig::at(&path)), 1);
    assert_eq!(lines(&path)[0]["seq"], 4);
    assert_eq!(
        verify(&path).unwrap_err().to_string(),
        "records seq 1..3 are missing before audit.jsonl line 1: the head anchor says the log starts at seq 1"
    );
}

#[test]
fn writers_in_parallel_keep_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let config = AuditConfig { path: path.clone(), max_bytes: 16 * 1024, keep: 100, anchor: true };
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let config = config.clone();
            // Separate logs, separate file descriptions: only the lock on the file orders them.
            scope.spawn(move || write(&AuditLog::new(config), 300));
        }
    });
    let summary = verify(&path).unwrap();
    assert_eq!((summary.records, summary.first_seq, summary.last_seq), (600, 1, 600));
    assert!(numbered(&path, 1).exists(), "the writers rotated the log between them");
}

#[test]
fn an_unwritable_log_never_fails_a_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "").unwrap();
    // Its "directory" is a file: every write fails; recording just warns.
    let log = AuditLog::new(AuditConfig::at(dir.path().join("file/audit.jsonl")));
    write(&log, 2);
    assert!(log.warned.load(Ordering::Relaxed));
}

#[test]
fn inputs_reasons_and_decisions_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("audit.jsonl");
    let log = AuditLog::new(AuditConfig::at(&path));
    let verdict = toolbelt_policy::Verdict::new(
        toolbelt_policy::Decision::Deny,
        "no `curl -u admin:hunter2`",
        toolbelt_policy::VerdictSource::Other("rule Bash(curl *)".into()),
    );
    let mut record = record_of("c");
    record.input = json!({"command": "curl -u admin:hunter2 https://x", "api_token": "t"});
    record.reason = Some("denied: curl -u admin:hunter2");
    record.decision = Some(&verdict);
    log.record(&record);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    let line = &lines(&path)[0];
    assert_eq!(line["input"], json!({"command": "curl -u admin:[redacted] https://x", "api_token": "[redacted]"}));
    assert_eq!(line["reason"], "denied: curl -u admin:[redacted]");
}

#[test]
fn formats_utc_times() {
    let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_356_187_123);
    assert_eq!(rfc3339(t), "2026-11-22T14:03:07.123Z");
    assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
    assert_eq!(&rfc3339(leap)[..10], "2000-02-29");
}
