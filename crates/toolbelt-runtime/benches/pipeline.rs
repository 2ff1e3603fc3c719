//! Pipeline overhead: what one call pays for going through the runtime instead of calling
//! the tool directly.
//!
//! The tool under test does nothing (`Noop` answers "ok"), so every nanosecond above the
//! direct baseline is the pipeline's own: resolve, validation against the compiled JSON
//! schema, describe, pre-hooks (none configured), authorization (allow-all), execution under
//! timeout, cancellation and the session lock, post-hooks and render. The cases are
//!
//! * **direct**: decode the input with `serde_json::from_value` and call the tool, the floor
//!   every call pays whatever runs it;
//! * **one call**: `Runtime::call`, one call at a time;
//! * **one call, listening event sink**: the same with a sink that takes every event, to show
//!   what event streaming adds;
//! * **batch**: `Runtime::batch` with 100 shared calls, reported per call.
//!
//! Each case is warmed up, then timed over several rounds; the table shows the median and
//! the best round in ns per call, and the overhead over the direct median in µs. The goal
//! is that the pipeline adds at most 5 µs per call, so it never shows next to real tools.
//!
//! Run with `cargo bench -p toolbelt-runtime --bench pipeline [-- ITERS]` (or `BENCH_ITERS`)
//! where ITERS is the number of calls per round (default 20000).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::{
    Access, CancellationToken, EventSink, Extensions, Limits, Registry, Tool, ToolContext, ToolError, ToolOutput,
    ToolSpec, erase,
};
use toolbelt_runtime::{Runtime, Session, ToolCall};

const ROUNDS: usize = 7;
const BATCH: usize = 100;
const DEFAULT_ITERS: usize = 20_000;
const GOAL_US: f64 = 5.0;

/// A tool that does nothing, so only the pipeline is measured.
struct Noop;

/// Input of `Noop`.
#[derive(Deserialize, JsonSchema)]
struct NoopInput {
    /// An optional note, ignored.
    note: Option<String>,
}

impl Tool for Noop {
    type Input = NoopInput;
    const NAME: &'static str = "Noop";

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(Self::NAME, "Does nothing.").read_only()
    }

    fn access(&self, _: &NoopInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: NoopInput, _: ToolContext) -> Result<ToolOutput, ToolError> {
        black_box(input.note);
        Ok(ToolOutput::text("ok"))
    }
}

struct Fixture {
    runtime: Runtime,
    session: Session,
    input: Value,
}

fn fixture() -> Fixture {
    let registry = Registry::new();
    registry.register(erase(Noop)).unwrap();
    let runtime = Runtime::builder(Arc::new(registry)).build();
    let tmp = std::env::temp_dir();
    let session = Session::new("bench", tmp.clone(), vec![], tmp.join("toolbelt-bench"));
    Fixture { runtime, session, input: json!({ "note": "hello" }) }
}

#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    min: f64,
}

/// Runs `body(n)` (which makes `n` iterations of `calls` calls each) once to warm up, then
/// `ROUNDS` times timed; returns ns per call.
async fn measure<F, Fut>(iters: usize, calls: usize, mut body: F) -> Stats
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = ()>,
{
    body((iters / 5).max(1)).await;
    let mut per_call = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        body(iters).await;
        per_call.push(start.elapsed().as_nanos() as f64 / (iters * calls) as f64);
    }
    per_call.sort_by(f64::total_cmp);
    Stats { median: per_call[ROUNDS / 2], min: per_call[0] }
}

async fn direct(f: &Fixture, iters: usize) -> Stats {
    let cx = ToolContext::new(
        "direct",
        Arc::clone(f.session.state()),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        Extensions::default(),
    );
    let cx = &cx;
    measure(iters, 1, |n| async move {
        for _ in 0..n {
            let input: NoopInput = serde_json::from_value(black_box(f.input.clone())).unwrap();
            black_box(Noop.call(input, cx.clone()).await.unwrap());
        }
    })
    .await
}

async fn one_call(f: &Fixture, events: &EventSink, iters: usize) -> Stats {
    let cancel = &CancellationToken::new();
    let result = f.runtime.call(&f.session, ToolCall::new("c", "Noop", f.input.clone()), events, cancel).await;
    assert!(!result.is_error && result.text() == "ok", "unexpected result: {result:?}");
    measure(iters, 1, |n| async move {
        for _ in 0..n {
            let call = ToolCall::new("c", "Noop", f.input.clone());
            black_box(f.runtime.call(&f.session, call, events, cancel).await);
        }
    })
    .await
}

async fn batch(f: &Fixture, iters: usize) -> Stats {
    let cancel = &CancellationToken::new();
    let events = &EventSink::none();
    let calls = || (0..BATCH).map(|_| ToolCall::new("c", "Noop", f.input.clone())).collect::<Vec<_>>();
    let results = f.runtime.batch(&f.session, calls(), events, cancel).await;
    assert!(results.len() == BATCH && results.iter().all(|r| !r.is_error), "unexpected results: {results:?}");
    let calls = &calls;
    measure((iters / BATCH).max(1), BATCH, |n| async move {
        for _ in 0..n {
            black_box(f.runtime.batch(&f.session, calls(), events, cancel).await);
        }
    })
    .await
}

struct Row {
    name: &'static str,
    stats: Stats,
    baseline: Option<f64>,
}

/// Every case, one after another, on whatever runtime polls this future.
async fn all_cases(f: &Fixture, iters: usize) -> Vec<Row> {
    let base = direct(f, iters).await;
    let listening = EventSink::new(|_| {});
    let row = |name, stats| Row { name, stats, baseline: Some(base.median) };
    vec![
        Row { name: "direct tool call (baseline)", stats: base, baseline: None },
        row("pipeline: one call", one_call(f, &EventSink::none(), iters).await),
        row("pipeline: one call, listening event sink", one_call(f, &listening, iters).await),
        row("pipeline: batch of 100 shared calls", batch(f, iters).await),
    ]
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n{title}");
    println!("  {:<44}{:>16}{:>14}{:>15}", "case", "median ns/call", "min ns/call", "overhead µs");
    for r in rows {
        let overhead = r.baseline.map_or_else(|| "-".to_string(), |b| format!("{:.2}", (r.stats.median - b) / 1000.0));
        println!("  {:<44}{:>16.0}{:>14.0}{:>15}", r.name, r.stats.median, r.stats.min, overhead);
    }
}

fn iterations() -> usize {
    // Cargo hands `--bench` (and any filter) to the program: take the first number.
    std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .or_else(|| std::env::var("BENCH_ITERS").ok().and_then(|v| v.parse().ok()))
        .unwrap_or(DEFAULT_ITERS)
        .max(1)
}

fn main() {
    let iters = iterations();
    let fx = Arc::new(fixture());
    println!("pipeline overhead: {iters} calls per round, {ROUNDS} rounds, median and best round");

    let current = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rows = current.block_on(all_cases(&fx, iters));
    print_table("current-thread tokio runtime", &rows);

    // On the multi-thread runtime the cases run in a spawned task, on a worker thread.
    let multi = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let task_fx = Arc::clone(&fx);
    let multi_rows =
        multi.block_on(async move { tokio::spawn(async move { all_cases(&task_fx, iters).await }).await }).unwrap();
    print_table("multi-thread tokio runtime (2 workers)", &multi_rows);

    let overhead = (rows[1].stats.median - rows[0].stats.median) / 1000.0;
    let verdict = if overhead <= GOAL_US { "within goal" } else { "ABOVE GOAL" };
    println!("\npipeline overhead per call (median): {overhead:.2} µs  (goal ≤ {GOAL_US} µs: {verdict})");
}
