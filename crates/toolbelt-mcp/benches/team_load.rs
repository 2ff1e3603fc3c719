//! A team's load on an MCP endpoint already running (one `toolbelt mcp --http`, or replicas
//! behind a load balancer): SESSIONS sessions open at once, each calling Read, Grep and Bash
//! in turn, one call after the other, for SECONDS. Prints the calls made, the errors, calls/s
//! and the latency of a call as its client saw it (p50, p90, p99, max), then one JSON line
//! with the same figures for scripts (`bench/team.py` starts the servers and reads it).
//!
//! ```sh
//! cargo bench -p toolbelt-mcp --bench team_load -- URL [SESSIONS] [SECONDS]
//! ```
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/load.rs"]
mod load;
use load::Load;

/// The calls a session makes, in turn: a small read, a search of the project, a command.
fn calls() -> [(&'static str, Value); 3] {
    [
        ("Read", json!({"file_path": "hello.txt", "limit": 5})),
        ("Grep", json!({"pattern": "hello", "path": ".", "output_mode": "count"})),
        ("Bash", json!({"command": "echo ok"})),
    ]
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let url = args.first().cloned().expect("usage: team_load URL [SESSIONS] [SECONDS]");
    let sessions: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let seconds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(60);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let load = Arc::new(Load::new(url.clone(), sessions));

    let (latencies, opened, wall) = runtime.block_on(async {
        let ids = load.open_all(sessions).await;
        let started = Instant::now();
        let deadline = started + Duration::from_secs(seconds);
        let tasks: Vec<_> = ids
            .iter()
            .cloned()
            .enumerate()
            .map(|(s, id)| {
                let load = Arc::clone(&load);
                tokio::spawn(async move {
                    let mut micros = Vec::new();
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        let (tool, input) = calls()[(n as usize + s) % 3].clone();
                        let began = Instant::now();
                        if load.call(&id, n, tool, input).await.is_some() {
                            micros.push(began.elapsed().as_micros() as u64);
                        }
                        n += 1;
                    }
                    let _ = load.post(Some(&id), &json!({"jsonrpc": "2.0", "id": 0, "method": "ping"})).await;
                    micros
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap());
        }
        (all, ids.len(), started.elapsed())
    });
    let mut sorted = latencies;
    sorted.sort_unstable();
    let errors = load.errors.load(Ordering::Relaxed);
    let calls_per_s = sorted.len() as f64 / wall.as_secs_f64();
    let (p50, p90, p99) = (percentile(&sorted, 0.5), percentile(&sorted, 0.9), percentile(&sorted, 0.99));
    let max = sorted.last().map_or(f64::NAN, |m| *m as f64 / 1000.0);
    println!(
        "{url}: {opened} of {sessions} sessions for {:.1} s: {} calls ({calls_per_s:.0}/s), {errors} errors; \
         latency p50 {p50:.1} ms, p90 {p90:.1} ms, p99 {p99:.1} ms, max {max:.1} ms",
        wall.as_secs_f64(),
        sorted.len()
    );
    if let Some(first) = load.first_error.lock().unwrap().as_ref() {
        println!("first error: {first}");
    }
    let summary = json!({"sessions": opened, "seconds": wall.as_secs_f64(), "calls": sorted.len(), "errors": errors,
        "calls_per_s": calls_per_s, "p50_ms": p50, "p90_ms": p90, "p99_ms": p99, "max_ms": max});
    println!("{summary}");
}
