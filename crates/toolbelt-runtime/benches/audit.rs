#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use serde_json::json;
use std::time::{Instant, SystemTime};
use toolbelt_runtime::{AuditConfig, AuditLog, AuditRecord, redact};

fn main() {
    let iters: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::new(AuditConfig { path: dir.path().join("audit.jsonl"), max_bytes: 1 << 40, keep: 5 });
    let input = json!({"command": "cargo test -p toolbelt-runtime --locked -- --nocapture", "timeout": 60000, "description": "run the tests"});
    for round in 0..5 {
        let start = Instant::now();
        for i in 0..iters {
            let id = format!("call-{i}");
            log.record(&AuditRecord {
                time: toolbelt_runtime::rfc3339(SystemTime::now()),
                session: "batch-1795356187123-4242",
                call_id: &id,
                tool: "Bash",
                input: redact(&input),
                decision: None,
                approval: None,
                hooks: &[],
                outcome: "ok",
                is_error: false,
                duration_ms: 12.345,
                output_chars: 120,
            });
        }
        println!("round {round}: {:.2} µs per record", start.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
}
