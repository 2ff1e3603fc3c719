//! toolbelt never starts itself as its own upstream server: the README's Claude Code entry in
//! a trusted project's `.mcp.json` (which toolbelt reads too) once made `toolbelt tools`
//! start itself, which started itself, hundreds of processes a second.
//!
//! Each test is guarded so that a regression cannot fork-bomb the machine: every process of
//! the test carries the test's own `HOME` in its environment; a watchdog counts them every
//! few milliseconds and kills them all (and fails the test) past a handful, or past a
//! deadline.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// More processes than any of these tests starts when toolbelt behaves.
const TOO_MANY: usize = 8;

/// The README's Claude Code entry for toolbelt (`.mcp.json` in the project).
fn claude_code_snippet() -> Value {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let at = readme.find("\nClaude Code, `.mcp.json` in the project").expect("README has the Claude Code snippet");
    let block = &readme[at..];
    let start = block.find("```json\n").unwrap() + "```json\n".len();
    let end = start + block[start..].find("\n```").unwrap();
    let snippet: Value = serde_json::from_str(&block[start..end]).unwrap();
    assert_eq!(snippet["mcpServers"]["toolbelt"]["command"], "toolbelt", "{snippet}");
    snippet
}

/// A project holding the README's `.mcp.json`, trusted, and a `bin` directory to put first
/// on `PATH`.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    bin: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join(".mcp.json"), claude_code_snippet().to_string()).unwrap();
        let world = World { home: root.join(".test-home"), bin: root.join("bin"), root, _dir: dir };
        let out = world.toolbelt().arg("trust").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        world
    }

    /// The real binary, with this world's home and its `bin` first on `PATH`.
    fn toolbelt(&self) -> Command {
        let mut cmd = hermetic::toolbelt(&self.root);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin.clone()];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(dirs).unwrap());
        cmd
    }

    /// Starts the watchdog over this test's processes.
    fn watch(&self) -> Watchdog {
        Watchdog::start(self.home.clone())
    }

    /// Runs `cmd` to its end under the watchdog; (exit code, stdout, stderr, the most
    /// processes a gateway started seen at once).
    fn guarded(&self, mut cmd: Command) -> (i32, String, String, usize) {
        let watchdog = self.watch();
        let output = cmd.stdin(Stdio::null()).output().unwrap();
        let most = watchdog.stop();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr), most)
    }

    /// Waits (up to 10 s) for every process of the test to end.
    fn all_ended(&self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if processes(&self.home).is_empty() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

/// The processes of a test: those whose environment holds its `HOME`.
fn processes(home: &Path) -> Vec<i32> {
    scan(home).into_iter().map(|(pid, _)| pid).collect()
}

/// The processes of a test, each with whether a gateway started it (its environment holds
/// the depth marker every upstream server process gets; the sandbox probe's does not).
fn scan(home: &Path) -> Vec<(i32, bool)> {
    let wanted = format!("HOME={}", home.display()).into_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        let mut vars = environ.split(|b| *b == 0);
        if vars.clone().any(|var| var == wanted.as_slice()) {
            found.push((pid, vars.any(|var| var.starts_with(b"TOOLBELT_GATEWAY_DEPTH="))));
        }
    }
    found
}

/// Kills every process of a test, again until none is left.
fn kill_all(home: &Path) {
    for _ in 0..50 {
        let pids = processes(home);
        if pids.is_empty() {
            return;
        }
        let _ = Command::new("kill").arg("-KILL").args(pids.iter().map(i32::to_string)).stderr(Stdio::null()).status();
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Counts a test's processes every few milliseconds; past [`TOO_MANY`], or after a minute,
/// kills them all and remembers it (the test then fails).
struct Watchdog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<(usize, usize, bool)>>,
}

impl Watchdog {
    fn start(home: PathBuf) -> Watchdog {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            let (mut most, mut started) = (0, 0);
            while !stopped.load(Ordering::Relaxed) {
                let found = scan(&home);
                most = most.max(found.len());
                started = started.max(found.iter().filter(|(_, by_gateway)| *by_gateway).count());
                if found.len() > TOO_MANY || Instant::now() > deadline {
                    kill_all(&home);
                    return (most, started, true);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            (most, started, false)
        });
        Watchdog { stop, thread: Some(thread) }
    }

    /// Stops watching; the most processes a gateway started seen at once. Fails the test if
    /// it had to kill.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let (most, started, killed) = self.thread.take().unwrap().join().unwrap();
        assert!(!killed, "toolbelt started itself over and over: {most} processes at once (all killed)");
        started
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for World {
    fn drop(&mut self) {
        kill_all(&self.home);
    }
}

#[test]
fn the_readme_entry_for_claude_code_is_not_started_by_toolbelt_itself() {
    let w = World::new();
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("toolbelt"), w.bin.join("toolbelt")).unwrap();
    let mut cmd = w.toolbelt();
    cmd.args(["tools", "--format", "names"]);
    let (code, out, err, started) = w.guarded(cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(started, 0, "the gateway started no process");
    assert!(out.lines().any(|l| l == "Read") && !out.contains("mcp__toolbelt"), "{out}");
    assert!(err.contains("MCP server `toolbelt`") && err.contains("this toolbelt itself"), "{err}");
    // `mcp-servers` shows it skipped, and why; that is no failure.
    let mut cmd = w.toolbelt();
    cmd.arg("mcp-servers");
    let (code, out, err, _) = w.guarded(cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("toolbelt  stdio      skipped: ") && out.contains("this toolbelt itself"), "{out}");
    // The trust review says so too, rather than listing the entry as one that will run.
    let mut cmd = w.toolbelt();
    cmd.args(["trust", "--show"]);
    let (code, out, err, started) = w.guarded(cmd);
    assert_eq!((code, started), (0, 0), "{out}{err}");
    let entry = out.lines().find(|l| l.contains("mcp.servers.toolbelt")).unwrap_or_default();
    assert!(entry.contains("— never started: its command `toolbelt` is this toolbelt itself"), "{out}");
}

#[test]
fn started_by_its_host_toolbelt_says_so_to_the_host() {
    let w = World::new();
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("toolbelt"), w.bin.join("toolbelt")).unwrap();
    let watchdog = w.watch();
    // As Claude Code starts it from the project's `.mcp.json`.
    let snippet = claude_code_snippet();
    let args: Vec<String> = serde_json::from_value(snippet["mcpServers"]["toolbelt"]["args"].clone()).unwrap();
    let mut child =
        w.toolbelt().args(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}}));
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "toolbelt", "{init}");
    assert!(scan(&w.home).iter().all(|(_, by_gateway)| !by_gateway), "toolbelt started itself");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let told: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(told["method"], "notifications/message", "{told}");
    assert_eq!(told["params"]["level"], "warning", "{told}");
    assert!(told["params"]["data"].as_str().unwrap().contains("this toolbelt itself"), "{told}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(watchdog.stop(), 0, "the gateway started no process");
}

#[test]
fn a_chain_back_to_toolbelt_through_another_program_ends() {
    let w = World::new();
    // `toolbelt` on PATH is a script that starts the real binary: no path resolves to it, so
    // only the depth marker can end the chain.
    let log = w.root.join("started.log");
    let script = format!(
        "#!/bin/sh\necho $$ >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        assert_cmd::cargo::cargo_bin("toolbelt").display()
    );
    std::fs::write(w.bin.join("toolbelt"), script).unwrap();
    std::fs::set_permissions(w.bin.join("toolbelt"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut top = w.toolbelt();
    top.args(["tools", "--format", "names"]);
    // (The watchdog bounds the processes at once: three toolbelts, and the sandbox probes of
    // the two serving ones.)
    let (code, out, err, _) = w.guarded(top);
    assert_eq!(code, 0, "{out}{err}");
    let started = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(started.lines().count(), 2, "two levels below the first toolbelt, then no further: {started}");
    // The first level's tools came through.
    assert!(out.lines().any(|l| l == "mcp__toolbelt__Read"), "{out}");
    // Nothing outlives the command.
    assert!(w.all_ended(), "processes left: {:?}", processes(&w.home));
}
