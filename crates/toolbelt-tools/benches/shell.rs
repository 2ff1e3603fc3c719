//! Shell benchmarks, in process:
//!
//! * **spawn overhead**: `Bash{command:"true"}` through the runtime (`Runtime::call`: every
//!   stage, then spawn in a new process group, control pipe, output capture, exit, leftover
//!   check) against a bare `std::process::Command::new("bash").arg("-c").arg("true").status()`
//!   in the same process, without the sandbox and with the default one (workspace-write,
//!   network off: cgroup, capabilities, Landlock and seccomp applied in the child, which Bash
//!   starts with `clone3`, see `process/spawn/clone.rs`), and in a repository (its `.git`
//!   held read-only in a mount namespace). Also shown: the bare spawn through tokio with piped
//!   output, with an empty `pre_exec` hook (a fork), and the tool called directly. Goal: runtime
//!   ≤ 1.3× the bare spawn. Each case is timed over several rounds of N calls; the table shows
//!   the median and best round, in µs per call.
//! * **1 GB of output**: `head -c 1000000000 /dev/zero | tr '\0' x` through the runtime, with
//!   wall time and the growth of the process's peak RSS (VmHWM), against the same pipeline
//!   run bare into /dev/null and into a file (the tool writes every byte to its spill file).
//!
//! Run: `bench/shell.sh` (or `cargo bench -p toolbelt-tools --bench shell -- [N]`).
//! `BENCH_GB=0` skips the 1 GB case; `BENCH_DIR` picks where the session (and the spill file)
//! lives.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, PlannedTool, Registry, Render, ToolContext};
use toolbelt_runtime::{Runtime, Session, ToolCall};
use toolbelt_tools::shell::{Bash, BashInput};
use toolbelt_tools::shell::{SandboxConfig, SandboxMode};

const ROUNDS: usize = 5;

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmHWM:")).map(str::to_string))
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// CPU time this process has used (user + system), from `/proc/self/stat` (clock ticks,
/// taken as the usual 100 per second).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    Duration::from_millis(ticks * 10)
}

struct Stats {
    median: f64,
    best: f64,
}

/// Times `ROUNDS` rounds of `n` calls of every case, after a warm-up, interleaving the cases
/// call by call so that load from elsewhere on the machine weighs on all of them alike; µs
/// per call for each case.
fn measure(n: usize, cases: &mut [&mut dyn FnMut()]) -> Vec<Stats> {
    for _ in 0..(n / 10).max(3) {
        cases.iter_mut().for_each(|case| case());
    }
    let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for _ in 0..ROUNDS {
        let mut spent = vec![Duration::ZERO; cases.len()];
        for _ in 0..n {
            for (case, spent) in cases.iter_mut().zip(&mut spent) {
                let start = Instant::now();
                case();
                *spent += start.elapsed();
            }
        }
        for (round, spent) in rounds.iter_mut().zip(spent) {
            round.push(spent.as_secs_f64() * 1e6 / n as f64);
        }
    }
    rounds
        .into_iter()
        .map(|mut per_call| {
            per_call.sort_by(f64::total_cmp);
            Stats { median: per_call[ROUNDS / 2], best: per_call[0] }
        })
        .collect()
}

#[allow(unsafe_code)]
fn no_op_hook(command: &mut tokio::process::Command) {
    // SAFETY: the hook does nothing, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| Ok(()));
    }
}

/// Services with the sandbox in `mode` (network off).
fn sandbox(mode: SandboxMode) -> Extensions {
    let mut services = Extensions::default();
    services.insert(SandboxConfig { mode, ..SandboxConfig::default() });
    services
}

fn runtime(services: Extensions) -> Runtime {
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    Runtime::builder(Arc::new(registry)).authorizer(Arc::new(toolbelt_policy::AllowAll)).services(services).build()
}

fn session(root: &Path) -> Session {
    Session::new("bench", root.to_path_buf(), vec![], root.join(".toolbelt/sessions/bench"))
}

fn spawn_overhead(rt: &tokio::runtime::Runtime, root: &Path, n: usize) {
    println!("\nspawn overhead: `true`, {n} calls per round, {ROUNDS} rounds, cases interleaved (µs per call)");
    let mut bare = || {
        let status = Command::new("bash").arg("-c").arg("true").status().unwrap();
        assert!(status.success());
    };
    let mut tokio_bare = || {
        rt.block_on(async {
            let out = tokio::process::Command::new("bash")
                .arg("-c")
                .arg("true")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .await
                .unwrap();
            assert!(out.status.success());
        })
    };
    // The same with an empty pre_exec hook: what any hook costs (a fork instead of posix_spawn).
    let mut tokio_fork = || {
        rt.block_on(async {
            let mut command = tokio::process::Command::new("bash");
            command.arg("-c").arg("true").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
            no_op_hook(&mut command);
            let out = command.output().await.unwrap();
            assert!(out.status.success());
        })
    };
    let sess = session(root);
    let cx = ToolContext::new(
        "bench",
        Arc::clone(sess.state()),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        sandbox(SandboxMode::DangerFullAccess),
    );
    let input = BashInput { command: "true".into(), ..BashInput::default() };
    let bash = Bash::default();
    let mut direct = || {
        let (_, plan) = bash.access(&input, &cx).unwrap();
        let out = rt.block_on(bash.call(input.clone(), plan, cx.clone())).unwrap();
        assert!(!out.is_error());
        black_box(out);
    };
    let cancel = CancellationToken::new();
    let events = EventSink::none();
    let (sess, cancel, events) = (&sess, &cancel, &events);
    let through = |runtime: Runtime| {
        move || {
            let call = ToolCall::new("c", "Bash", json!({"command": "true"}));
            let result = rt.block_on(runtime.call(sess, call, events, cancel));
            assert!(!result.is_error, "{result:?}");
            black_box(result);
        }
    };
    let mut unconfined = through(runtime(sandbox(SandboxMode::DangerFullAccess)));
    let mut confined = through(runtime(sandbox(SandboxMode::WorkspaceWrite)));
    // A root holding a repository: its `.git` is bound read-only in a mount namespace of the
    // command's own.
    let repo_dir = tempfile::tempdir_in(root.parent().unwrap_or(root)).unwrap();
    let repo = repo_dir.path().canonicalize().unwrap();
    for dir in [".git/hooks", ".git/info", "src"] {
        std::fs::create_dir_all(repo.join(dir)).unwrap();
    }
    std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    let repo_session = session(&repo);
    let repo_runtime = runtime(sandbox(SandboxMode::WorkspaceWrite));
    let mut confined_repo = || {
        let call = ToolCall::new("c", "Bash", json!({"command": "true"}));
        let result = rt.block_on(repo_runtime.call(&repo_session, call, events, cancel));
        assert!(!result.is_error, "{result:?}");
        black_box(result);
    };
    let names = [
        "bare: std Command bash -c true .status()",
        "bare: tokio Command, piped output",
        "bare: tokio Command, piped output, empty pre_exec hook",
        "Bash tool called directly, no sandbox",
        "Bash{command:\"true\"} through Runtime::call, no sandbox",
        "… through Runtime::call, workspace-write sandbox (default)",
        "… the same in a repository (.git held read-only)",
    ];
    let stats = measure(
        n,
        &mut [
            &mut bare,
            &mut tokio_bare,
            &mut tokio_fork,
            &mut direct,
            &mut unconfined,
            &mut confined,
            &mut confined_repo,
        ],
    );
    println!("  {:<58}{:>10}{:>10}{:>8}", "case", "median", "best", "ratio");
    for (name, s) in names.iter().zip(&stats) {
        println!("  {name:<58}{:>10.0}{:>10.0}{:>7.2}×", s.median, s.best, s.median / stats[0].median);
    }
    println!("  goal: through the runtime ≤ 1.30× bare, with and without the sandbox");
}

fn huge_output(rt: &tokio::runtime::Runtime, root: &Path, gb: u64) {
    let bytes = gb * 1_000_000_000;
    let pipeline = format!("head -c {bytes} /dev/zero | tr '\\0' x");
    println!("\n{gb} GB of output: `{pipeline}`");
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    let to_null = time(&mut || {
        Command::new("bash").arg("-c").arg(format!("{pipeline} > /dev/null")).status().unwrap();
    });
    let file = root.join("bare-output.txt");
    let to_file = time(&mut || {
        Command::new("bash").arg("-c").arg(format!("{pipeline} > '{}'", file.display())).status().unwrap();
    });
    let _ = std::fs::remove_file(&file);

    let runtime = runtime(sandbox(SandboxMode::WorkspaceWrite));
    let sess = session(root);
    let before = peak_rss_kb();
    let cpu_before = cpu_time();
    let mut result = None;
    let through = time(&mut || {
        let call = ToolCall::new("c", "Bash", json!({"command": pipeline, "timeout": 600_000}));
        result = Some(rt.block_on(runtime.call(&sess, call, &EventSink::none(), &CancellationToken::new())));
    });
    let after = peak_rss_kb();
    let cpu = cpu_time().saturating_sub(cpu_before);
    let result = result.unwrap();
    assert!(!result.is_error, "{}", result.text());
    let structured = result.structured.unwrap();
    let spill = structured["output_file"].as_str().unwrap();
    let spilled = std::fs::metadata(spill).unwrap().len();
    assert_eq!(spilled, bytes, "the spill file holds every byte");
    let _ = std::fs::remove_file(spill);
    let secs = |d: Duration| d.as_secs_f64();
    println!("  {:<58}{:>9.2} s", "bare: bash -c '… > /dev/null'", secs(to_null));
    println!("  {:<58}{:>9.2} s", "bare: bash -c '… > file'", secs(to_file));
    println!(
        "  {:<58}{:>9.2} s   ({:.0} MB/s)",
        "Bash through Runtime::call, sandboxed (text + spill file)",
        secs(through),
        bytes as f64 / 1e6 / secs(through)
    );
    println!("  {:<58}{:>9.2} s", "  CPU time of this process during that call", secs(cpu));
    println!(
        "  peak RSS: {:.1} MB before the call, {:.1} MB after (grew {:.1} MB); text shown: {} characters",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / 1024.0,
        result.content.iter().filter_map(|c| c.as_text()).map(|t| t.chars().count()).sum::<usize>()
    );
}

fn main() {
    let n = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .or_else(|| std::env::var("BENCH_ITERS").ok().and_then(|v| v.parse().ok()))
        .unwrap_or(300usize)
        .max(1);
    let gb: u64 = std::env::var("BENCH_GB").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let tmp = match std::env::var_os("BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let root = tmp.path().canonicalize().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    println!("peak RSS at start: {:.1} MB", peak_rss_kb() as f64 / 1024.0);
    if gb > 0 {
        huge_output(&rt, &root, gb);
    }
    spawn_overhead(&rt, &root, n);
}
