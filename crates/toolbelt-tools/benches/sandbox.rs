//! What the OS sandbox adds to starting a command, in process: `bash -c true` spawned and
//! waited for through tokio, N times per round, the cases interleaved call by call:
//!
//! * **bare**: no hook (the standard library can use `posix_spawn`);
//! * **no-op hook**: an empty `pre_exec` hook, which forces a plain `fork` — the part of the
//!   cost that any hook brings, whatever it does;
//! * **workspace-write**: `Confinement::for_command` (Landlock ruleset with the roots, the temp
//!   directory and the devices; the cached seccomp program) then `install`, network off;
//! * **workspace-write, network on**: Landlock only.
//!
//! Also timed alone: `for_command` without spawning (what the parent prepares per command).
//!
//! This is the public hook (`Confinement::install`, a fork), which the Bash tool uses only where
//! `clone3` is refused; `bench/shell.sh` times the spawn Bash makes.
//!
//! Run: `cargo bench -p toolbelt-tools --bench sandbox -- [N]` (default 300 per round).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use toolbelt_tools::shell::{Confinement, SandboxConfig, SandboxMode, SandboxReport};

const ROUNDS: usize = 5;

fn command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new("bash");
    command.arg("-c").arg("true").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    command
}

#[allow(unsafe_code)]
fn no_op_hook(command: &mut tokio::process::Command) {
    // SAFETY: the hook does nothing, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| Ok(()));
    }
}

/// Median and best round, in µs per call, for each case.
fn measure(n: usize, cases: &mut [(&str, &mut dyn FnMut())]) {
    for _ in 0..(n / 10).max(3) {
        cases.iter_mut().for_each(|(_, case)| case());
    }
    let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for _ in 0..ROUNDS {
        let mut spent = vec![Duration::ZERO; cases.len()];
        for _ in 0..n {
            for ((_, case), spent) in cases.iter_mut().zip(&mut spent) {
                let start = Instant::now();
                case();
                *spent += start.elapsed();
            }
        }
        for (round, spent) in rounds.iter_mut().zip(spent) {
            round.push(spent.as_secs_f64() * 1e6 / n as f64);
        }
    }
    let base = {
        let mut r = rounds[0].clone();
        r.sort_by(f64::total_cmp);
        r[ROUNDS / 2]
    };
    println!("{:<34} {:>10} {:>10} {:>8}", "case (µs per call)", "median", "best", "× bare");
    for ((name, _), mut per_call) in cases.iter().zip(rounds) {
        per_call.sort_by(f64::total_cmp);
        let median = per_call[ROUNDS / 2];
        println!("{name:<34} {median:>10.0} {:>10.0} {:>8.2}", per_call[0], median / base);
    }
}

fn main() {
    let n = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300usize).max(1);
    for line in SandboxReport::probe().lines() {
        println!("{line}");
    }
    let root: PathBuf = std::env::current_dir().unwrap();
    let roots = vec![root];
    let off = SandboxConfig { mode: SandboxMode::WorkspaceWrite, network: false, ..SandboxConfig::default() };
    let on = SandboxConfig { network: true, ..off.clone() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let run = |mut command: tokio::process::Command| {
        let status = rt.block_on(async move { command.status().await }).unwrap();
        assert!(status.success());
    };

    let mut bare = || run(command());
    let mut hook = || {
        let mut c = command();
        no_op_hook(&mut c);
        run(c);
    };
    let mut confined = || {
        let mut c = command();
        Confinement::for_command(&off, &roots, &[]).unwrap().unwrap().install(&mut c, None);
        run(c);
    };
    let mut confined_net = || {
        let mut c = command();
        Confinement::for_command(&on, &roots, &[]).unwrap().unwrap().install(&mut c, None);
        run(c);
    };
    println!("\nbash -c true, {n} spawns per round, {ROUNDS} rounds");
    measure(
        n,
        &mut [
            ("bare", &mut bare),
            ("no-op pre_exec hook", &mut hook),
            ("workspace-write, network off", &mut confined),
            ("workspace-write, network on", &mut confined_net),
        ],
    );

    let builds = n * 20;
    let start = Instant::now();
    for _ in 0..builds {
        std::hint::black_box(Confinement::for_command(&off, &roots, &[]).unwrap());
    }
    println!("\nfor_command alone: {:.1} µs per build", start.elapsed().as_secs_f64() * 1e6 / builds as f64);
}
