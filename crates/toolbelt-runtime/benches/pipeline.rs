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
//! * **batch**: `Runtime::batch` with 100 shared calls, reported per call;
//! * **permission engine**: one call judged by the real engine (default mode, 20 rules of
//!   every kind): a read of a path (symlinks resolved, roots compared), and a compound shell
//!   command (parsed, split, each part matched and classified) on a stand-in `Bash`.
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
    Access, CancellationToken, EventSink, Extensions, Limits, Registry, TextOutput, Tool, ToolContext, ToolError,
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
    type Output = TextOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Noop", "Does nothing.").read_only()
    }

    fn access(&self, _: &NoopInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: NoopInput, _: ToolContext) -> Result<TextOutput, ToolError> {
        black_box(input.note);
        Ok(TextOutput::new("ok"))
    }
}

/// A stand-in `Bash` that declares the command it would run and runs nothing, so only the
/// permission engine's work on a command line is measured.
struct FakeBash;

/// Input of the stand-in `Bash`.
#[derive(Deserialize, JsonSchema)]
struct FakeBashInput {
    /// The command.
    command: String,
}

impl Tool for FakeBash {
    type Input = FakeBashInput;
    type Output = TextOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Bash", "Declares a command.").permission(toolbelt_core::PermissionClass::External)
    }

    fn access(&self, input: &FakeBashInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().executes(input.command.clone()))
    }

    async fn call(&self, _: FakeBashInput, _: ToolContext) -> Result<TextOutput, ToolError> {
        Ok(TextOutput::new("ok"))
    }
}

/// A tool that declares it reads a path.
struct FakeRead;

/// Input of `FakeRead`.
#[derive(Deserialize, JsonSchema)]
struct FakeReadInput {
    /// The path.
    file_path: String,
}

impl Tool for FakeRead {
    type Input = FakeReadInput;
    type Output = TextOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Read", "Declares a read.").read_only()
    }

    fn access(&self, input: &FakeReadInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().reads(input.file_path.clone()))
    }

    async fn call(&self, _: FakeReadInput, _: ToolContext) -> Result<TextOutput, ToolError> {
        Ok(TextOutput::new("ok"))
    }
}

/// A runtime with the real permission engine: default mode, 20 rules of every kind.
fn engine_runtime() -> Runtime {
    use toolbelt_policy::rules::{Rule, RuleEnv, RuleOrigin};
    let registry = Registry::new();
    registry.register(erase(FakeBash)).unwrap();
    registry.register(erase(FakeRead)).unwrap();
    let tmp = std::env::temp_dir();
    let env = RuleEnv { home: tmp.clone(), cwd: tmp.clone() };
    let origin = Arc::new(RuleOrigin::new("bench", tmp));
    let parse = |rules: &[&str]| rules.iter().map(|r| Rule::parse(r, origin.clone(), &env).unwrap()).collect();
    let rules = toolbelt_policy::PermissionRules {
        mode: toolbelt_policy::PermissionMode::Default,
        allow: parse(&[
            "Bash(cargo test *)",
            "Bash(npm run lint)",
            "Bash(git diff *)",
            "Read(~/notes/**)",
            "WebFetch(domain:docs.rs)",
            "mcp__docs",
            "Edit(./src/**)",
            "Bash(make *)",
        ]),
        ask: parse(&["Bash(git push *)", "Edit(./Cargo.lock)", "WebFetch(domain:*.example.com)"]),
        deny: parse(&[
            "Read(./.env)",
            "Read(./secrets/**)",
            "Bash(curl *)",
            "Bash(rm -rf *)",
            "Edit(//etc/**)",
            "WebFetch(domain:evil.example)",
            "mcp__untrusted",
            "Bash(sudo *)",
            "Read(*.pem)",
        ]),
    };
    let engine = toolbelt_policy::PermissionEngine::new(rules, env);
    Runtime::builder(Arc::new(registry)).authorizer(Arc::new(engine)).build()
}

async fn judged_call(f: &Fixture, runtime: &Runtime, name: &str, input: Value, iters: usize) -> Stats {
    let (events, cancel) = (&EventSink::none(), &CancellationToken::new());
    let result = runtime.call(&f.session, ToolCall::new("c", name, input.clone()), events, cancel).await;
    assert!(!result.is_error, "unexpected result: {result:?}");
    let input = &input;
    measure(iters, 1, |n| async move {
        for _ in 0..n {
            let call = ToolCall::new("c", name, input.clone());
            black_box(runtime.call(&f.session, call, events, cancel).await);
        }
    })
    .await
}

struct Fixture {
    runtime: Runtime,
    session: Session,
    input: Value,
}

fn fixture() -> Fixture {
    let registry = Registry::new();
    registry.register(erase(Noop)).unwrap();
    let runtime = Runtime::builder(Arc::new(registry)).authorizer(Arc::new(toolbelt_policy::AllowAll)).build();
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
    let engine = engine_runtime();
    let file = std::env::temp_dir().join("toolbelt-bench-read.txt").display().to_string();
    let command = json!({"command": "cargo test --workspace && git diff --stat | tail -3"});
    vec![
        Row { name: "direct tool call (baseline)", stats: base, baseline: None },
        row("pipeline: one call", one_call(f, &EventSink::none(), iters).await),
        row("pipeline: one call, listening event sink", one_call(f, &listening, iters).await),
        row("pipeline: batch of 100 shared calls", batch(f, iters).await),
        row("+ permission engine: a read", judged_call(f, &engine, "Read", json!({"file_path": file}), iters).await),
        row("+ permission engine: a compound command", judged_call(f, &engine, "Bash", command, iters / 10).await),
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
