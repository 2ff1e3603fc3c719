//! Many MCP sessions over Streamable HTTP against `toolbelt mcp --http` (the release build):
//! opens SESSIONS sessions that all stay open, makes CALLS small reads in each (every session
//! at once, at most CONCURRENCY HTTP requests in flight), then leaves them idle until the
//! server closes them; ROUNDS times. Prints the errors, sessions/s, calls/s, and the server's
//! RSS before, with every session open, after the idle sessions were reclaimed, and at its
//! peak. The allocator keeps freed memory for reuse, so RSS after a round stays near its
//! peak; a second round that does not grow it shows the first round's sessions were freed.
//!
//! ```sh
//! bench/mcp_http.sh                                   # builds, then 1000 sessions × 5 calls
//! cargo bench -p toolbelt-mcp --bench http_load -- [SESSIONS] [CALLS]
//! IDLE=3 CONCURRENCY=256 TOOLBELT=path/to/toolbelt cargo bench -p toolbelt-mcp --bench http_load
//! ```
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "common/load.rs"]
mod load;
use load::Load;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn arg_or(n: usize, default: usize) -> usize {
    std::env::args().skip(1).filter(|a| !a.starts_with('-')).nth(n).and_then(|a| a.parse().ok()).unwrap_or(default)
}

/// (VmRSS, VmHWM) of a process, in MB.
fn memory_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let sessions = arg_or(0, 1000);
    let calls = arg_or(1, 5);
    let idle: u64 = env_or("IDLE", 3);
    let rounds: usize = env_or("ROUNDS", 2);
    let concurrency: usize = env_or("CONCURRENCY", 256);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let toolbelt = std::env::var_os("TOOLBELT").map_or_else(|| root.join("target/release/toolbelt"), PathBuf::from);
    assert!(toolbelt.exists(), "{} is missing: run cargo build --release -p toolbelt first", toolbelt.display());

    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let small = dir.join("small.txt");
    std::fs::write(&small, (0..40).map(|i| format!("line {i} of a small file\n")).collect::<String>()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(&toolbelt)
        .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
        .args(["--max-sessions", &(sessions * 2).to_string(), "--session-idle-timeout", &idle.to_string()])
        .current_dir(&dir)
        .env("HOME", dir.join("home"))
        .env("XDG_CONFIG_HOME", dir.join("home/.config"))
        .env("XDG_STATE_HOME", dir.join("home/.local/state"))
        .env_remove("TOOLBELT_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = server.id();
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("serving MCP at") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server ended before serving");
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    std::thread::sleep(Duration::from_millis(500));
    let (rss_before, _) = memory_mb(pid);

    // The peak as sampled (VmHWM gives it exactly at the end).
    let sampling = Arc::new(AtomicBool::new(true));
    let peak_kb = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (sampling, peak_kb) = (Arc::clone(&sampling), Arc::clone(&peak_kb));
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                let (rss, _) = memory_mb(pid);
                if rss.is_finite() {
                    peak_kb.fetch_max((rss * 1024.0) as u64, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };

    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let load = Arc::new(Load::new(format!("http://127.0.0.1:{port}/mcp"), concurrency));

    println!(
        "MCP over Streamable HTTP: {rounds} rounds of {sessions} sessions open at once, {calls} Read calls each, \
         at most {concurrency} requests in flight, idle timeout {idle} s"
    );
    println!("server RSS before: {rss_before:.1} MB");
    let mut total_errors = 0;
    for n in 1..=rounds {
        let r = round(&runtime, &load, sessions, calls, &small, Duration::from_secs(idle), pid);
        total_errors += r.errors;
        println!(
            "round {n}: {} sessions in {:.2} s = {:.0} sessions/s; {} calls in {:.2} s = {:.0} calls/s; \
             errors {}; RSS {:.1} MB with every session open ({:.0} KB per session over the start), \
             {:.1} MB once they were closed ({} still open)",
            r.opened,
            r.open_time.as_secs_f64(),
            r.opened as f64 / r.open_time.as_secs_f64(),
            r.calls,
            r.call_time.as_secs_f64(),
            r.calls as f64 / r.call_time.as_secs_f64(),
            r.errors,
            r.rss_open,
            (r.rss_open - rss_before) * 1024.0 / r.opened.max(1) as f64,
            r.rss_after,
            r.alive,
        );
    }
    let (_, hwm) = memory_mb(pid);
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let peak = (peak_kb.load(Ordering::Relaxed) as f64 / 1024.0).max(hwm);
    println!("server RSS at peak: {peak:.1} MB; errors in all: {total_errors}");
    if let Some(first) = load.first_error.lock().unwrap().as_ref() {
        println!("first error: {first}");
    }
}

/// What one round measured.
struct Round {
    opened: usize,
    open_time: Duration,
    calls: usize,
    call_time: Duration,
    errors: usize,
    rss_open: f64,
    rss_after: f64,
    alive: usize,
}

/// Opens `sessions` sessions, makes `calls` reads in each, then leaves them idle until the
/// server closed them.
fn round(
    runtime: &tokio::runtime::Runtime,
    load: &Arc<Load>,
    sessions: usize,
    calls: usize,
    small: &Path,
    idle: Duration,
    pid: u32,
) -> Round {
    let errors_before = load.errors.load(Ordering::Relaxed);
    let started = Instant::now();
    let ids: Vec<String> = runtime.block_on(load.open_all(sessions));
    let open_time = started.elapsed();

    let started = Instant::now();
    let ok_calls: usize = runtime.block_on(async {
        let tasks: Vec<_> = ids
            .iter()
            .cloned()
            .map(|id| {
                let (load, small) = (Arc::clone(load), small.to_path_buf());
                tokio::spawn(async move {
                    let mut ok = 0;
                    for n in 0..calls as u64 {
                        ok += usize::from(load.call(&id, n, "Read", json!({"file_path": small})).await.is_some());
                    }
                    ok
                })
            })
            .collect();
        let mut ok = 0;
        for task in tasks {
            ok += task.await.unwrap();
        }
        ok
    });
    let call_time = started.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let (rss_open, _) = memory_mb(pid);

    // Leave every session idle past the timeout (and the reaper's next look).
    std::thread::sleep(idle + idle.div_f64(4.0) + Duration::from_secs(1));
    let alive: usize = runtime.block_on(async {
        let ping = json!({"jsonrpc": "2.0", "id": 99, "method": "ping"});
        let mut alive = 0;
        for id in &ids {
            if let Some((200, _, _)) = load.post(Some(id), &ping).await {
                alive += 1;
            }
        }
        alive
    });
    std::thread::sleep(Duration::from_secs(1));
    let (rss_after, _) = memory_mb(pid);
    Round {
        opened: ids.len(),
        open_time,
        calls: ok_calls,
        call_time,
        errors: load.errors.load(Ordering::Relaxed) - errors_before,
        rss_open,
        rss_after,
        alive,
    }
}
