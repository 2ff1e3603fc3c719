//! What one audit record costs: `AuditLog::record` for a typical call (a `Bash` command with
//! its permission decision), redaction, serialization, the locked append and the chain
//! included.
//!
//! * **chained, anchored**: the default — after each record the head anchor is replaced
//!   (temp file + rename);
//! * **chained, no anchor**: the same without the anchor, to show what it costs;
//! * **redaction only**: redacting the input and the reason, the part of a record's cost
//!   that grows with what the call carries.
//!
//! Each case is timed over several rounds on a log in a fresh temporary directory (never
//! rotated: the size limit is out of reach); the table shows the median and the best round
//! in µs per record.
//!
//! Run with `cargo bench -p toolbelt-runtime --bench audit [-- ITERS]` (default 20000
//! records per round).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::time::{Instant, SystemTime};

use serde_json::{Value, json};
use toolbelt_policy::{Decision, Verdict, VerdictSource};
use toolbelt_runtime::audit::{redact, redact_text, rfc3339};
use toolbelt_runtime::{AuditConfig, AuditLog, AuditRecord, ClientInfo, Outcome};

const ROUNDS: usize = 7;
const DEFAULT_ITERS: usize = 20_000;

fn input() -> Value {
    json!({
        "command": "cargo test -p toolbelt-runtime --locked -- --nocapture 2>&1 | tail -n 40",
        "timeout": 60000,
        "description": "Run the runtime's tests",
    })
}

fn record_into(log: &AuditLog, client: &ClientInfo, verdict: &Verdict, input: Value, i: usize) {
    let id = format!("call-{i}");
    log.record(&AuditRecord {
        time: rfc3339(SystemTime::now()),
        session: "batch-1795356187123-4242",
        client,
        call_id: &id,
        tool: "Bash",
        input,
        reason: None,
        decision: Some(verdict),
        approval: None,
        hooks: &[],
        follow_ups: &[],
        outcome: Outcome::Ok,
        is_error: false,
        duration_ms: 12.345,
        output_chars: 120,
    });
}

/// Median and best of `ROUNDS` rounds of `iters` runs of `f`, in µs per run.
fn time(iters: usize, mut f: impl FnMut(usize)) -> (f64, f64) {
    for i in 0..iters / 10 {
        f(i);
    }
    let mut rounds: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for i in 0..iters {
                f(i);
            }
            start.elapsed().as_secs_f64() * 1e6 / iters as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    (rounds[ROUNDS / 2], rounds[0])
}

fn main() {
    let iters = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .or_else(|| std::env::var("BENCH_ITERS").ok().and_then(|v| v.parse().ok()))
        .unwrap_or(DEFAULT_ITERS);
    let client = ClientInfo::cli();
    let verdict = Verdict::new(
        Decision::Allow,
        "`cargo test` only builds and runs tests",
        VerdictSource::Other("rule Bash(cargo test *)".into()),
    );
    let input = input();
    println!("{:<24} {:>12} {:>12}", "case", "median µs", "best µs");
    for (name, anchor) in [("chained, anchored", true), ("chained, no anchor", false)] {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(AuditConfig {
            anchor,
            max_bytes: 1 << 40,
            ..AuditConfig::at(dir.path().join("audit.jsonl"))
        });
        let (median, best) = time(iters, |i| record_into(&log, &client, &verdict, input.clone(), i));
        println!("{name:<24} {median:>12.2} {best:>12.2}");
    }
    let (median, best) = time(iters, |_| {
        black_box(redact(black_box(&input)));
        black_box(redact_text(black_box(&verdict.reason)));
    });
    println!("{:<24} {median:>12.2} {best:>12.2}", "redaction only");
}
