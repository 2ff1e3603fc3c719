//! `code_query` on a large tree: the cold index (every file read and tagged), a warm query
//! (the tree walked and compared, nothing changed, then the lookup) through the registry as
//! the runtime calls it, and the lookup alone (the index's SQL and the ranking).
//!
//! Run: `cargo bench -p toolbelt-tools --bench code_query -- DIR [N]` (N warm queries, default
//! 50), e.g. the generated tree (`bench/gen-tree.py /tmp/tree`) or the crates in
//! `~/.cargo/registry/src/*`. The index goes to a temporary directory.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, Registry, SessionState, ToolContext};
use toolbelt_tools::code::index::CodeIndexDir;

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    times[((times.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let dir = PathBuf::from(args.next().expect("usage: code_query DIR [N]")).canonicalize().unwrap();
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let cache = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let session = Arc::new(SessionState::new("bench", dir.clone(), vec![dir.clone()]));
    let call = |input: Value| -> (Duration, Value) {
        let mut services = Extensions::default();
        services.insert(CodeIndexDir(cache.path().to_path_buf()));
        let cx = ToolContext::new(
            "b",
            Arc::clone(&session),
            CancellationToken::new(),
            EventSink::none(),
            Limits::default(),
            services,
        );
        let entry = registry.lookup("code_query").unwrap();
        let start = Instant::now();
        let prepared = entry.prepare(input).unwrap();
        let out = rt.block_on(entry.tool().call(prepared, cx)).unwrap();
        (start.elapsed(), out.structured.unwrap())
    };
    let (cold, v) = call(json!({"query": "parse"}));
    let files = v["files"].as_u64().unwrap_or(0);
    println!(
        "tree: {} ({files} files, {} symbols, {} did not parse cleanly)",
        dir.display(),
        v["symbols"],
        v["parse_errors"]
    );
    println!(
        "cold index            {:>9.0} ms  ({:.0} files/s)",
        cold.as_secs_f64() * 1e3,
        files as f64 / cold.as_secs_f64()
    );
    let queries = ["parse", "new", "Config", "handler", "read_to_end", "Serialize", "main", "prase"];
    let mut warm: Vec<Duration> = (0..n).map(|i| call(json!({"query": queries[i % queries.len()]})).0).collect();
    println!(
        "warm query (walk+look) p50 {:>6.1} ms  p90 {:>6.1} ms",
        percentile(&mut warm, 0.5),
        percentile(&mut warm, 0.9)
    );
    let mut lookups = Vec::new();
    let db = CodeIndexDir(cache.path().to_path_buf()).database(&dir);
    let conn = rusqlite::Connection::open(&db).unwrap();
    for i in 0..n.max(100) {
        let start = Instant::now();
        let hits = toolbelt_tools::code::index::search::search(
            &conn,
            queries[i % queries.len()],
            toolbelt_tools::code::index::search::Wanted::All,
            "",
            30,
        )
        .unwrap();
        std::hint::black_box(hits);
        lookups.push(start.elapsed());
    }
    println!(
        "lookup alone           p50 {:>6.2} ms  p90 {:>6.2} ms",
        percentile(&mut lookups, 0.5),
        percentile(&mut lookups, 0.9)
    );
    for q in queries {
        let mut times: Vec<Duration> = (0..20)
            .map(|_| {
                let start = Instant::now();
                let hits = toolbelt_tools::code::index::search::search(
                    &conn,
                    q,
                    toolbelt_tools::code::index::search::Wanted::All,
                    "",
                    30,
                )
                .unwrap();
                std::hint::black_box(hits);
                start.elapsed()
            })
            .collect();
        println!("  lookup {q:<14}   p50 {:>6.2} ms", percentile(&mut times, 0.5));
    }
}
