//! In-process timings of the file tools, with the figures the goals are stated in:
//!
//! * Read of a 1 MB text file (goal ≤ 5 ms),
//! * Edit of a 1,000-line file (goal ≤ 0.5 ms),
//! * Read of a slice near the end of a 2 GB file, with the process's peak RSS (bounded
//!   memory: the file is streamed, never loaded). Set `BENCH_HUGE_GB=0` to skip it.
//!
//! Each figure is the median of many calls through the tool's `call` (the same code the
//! runtime runs, spawn_blocking included). Run: `cargo bench -p toolbelt-tools --bench fs_tools`.
//! `BENCH_DIR=/dev/shm` runs it on tmpfs, where fsync is free: the difference between the
//! two runs is what the disk's fsync costs (Write and Edit fsync before renaming).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolbelt_core::{Content, Render, SessionState, Tool, ToolContext};
use toolbelt_tools::files::edit::{Edit, EditInput};
use toolbelt_tools::files::read::{Read, ReadInput};
use toolbelt_tools::files::write::{Write, WriteInput};

fn cx(root: &Path) -> ToolContext {
    let session = Arc::new(SessionState::new("bench", root.to_path_buf(), vec![]));
    ToolContext::new(
        "bench",
        session,
        toolbelt_core::CancellationToken::new(),
        toolbelt_core::EventSink::none(),
        toolbelt_core::Limits::default(),
        toolbelt_core::Extensions::default(),
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn read_input(path: &str, offset: Option<u64>, limit: Option<u64>) -> ReadInput {
    ReadInput { file_path: path.to_string(), offset, limit, pages: None }
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let tmp = match std::env::var_os("BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let root = tmp.path().canonicalize().unwrap();
    let cx = cx(&root);

    // Read of a 1 MB file: 20,000 lines of 50 characters.
    let line = format!("{}\n", "abcdefghij".repeat(5).chars().take(49).collect::<String>());
    std::fs::write(root.join("one_mb.txt"), line.repeat(20_000)).unwrap();
    let runs: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            rt.block_on(Read.call(read_input("one_mb.txt", None, Some(20_000)), cx.clone())).unwrap();
            t.elapsed()
        })
        .collect();
    let read_1mb = median(runs);

    // Edit of a 1,000-line file, alternating between two contents.
    let text: String = (0..1_000).map(|i| format!("    let value_{i} = compute({i}, \"argument\");\n")).collect();
    std::fs::write(root.join("thousand.rs"), text).unwrap();
    rt.block_on(Read.call(read_input("thousand.rs", None, None), cx.clone())).unwrap();
    let (a, b) = ("let value_500 = compute(500,", "let value_500 = compute_fast(500,");
    let runs: Vec<Duration> = (0..400)
        .map(|i| {
            let (old, new) = if i % 2 == 0 { (a, b) } else { (b, a) };
            let input = EditInput {
                file_path: "thousand.rs".into(),
                old_string: old.into(),
                new_string: new.into(),
                replace_all: false,
            };
            let t = Instant::now();
            rt.block_on(Edit.call(input, cx.clone())).unwrap();
            t.elapsed()
        })
        .collect();
    let edit_1k = median(runs);

    // Read and Write of a 4 KB file (the common case: open, fstat, read; temp, fsync, rename).
    let small: String = (0..100).map(|i| format!("line {i:>4} of a small file, forty bytes\n")).collect();
    std::fs::write(root.join("small.txt"), &small).unwrap();
    let runs: Vec<Duration> = (0..400)
        .map(|_| {
            let t = Instant::now();
            rt.block_on(Read.call(read_input("small.txt", None, None), cx.clone())).unwrap();
            t.elapsed()
        })
        .collect();
    let read_4k = median(runs);
    let runs: Vec<Duration> = (0..400)
        .map(|i| {
            let content = if i % 2 == 0 { small.replace("forty", "FORTY") } else { small.clone() };
            let input = WriteInput { file_path: "small.txt".into(), content };
            let t = Instant::now();
            rt.block_on(Write.call(input, cx.clone())).unwrap();
            t.elapsed()
        })
        .collect();
    let write_4k = median(runs);

    println!("file tools, in process (median), in {}", root.display());
    println!("                                        measured      goal");
    println!("Read, 1 MB file (20,000 lines)          {:>8.3} ms   ≤ 5 ms", read_1mb.as_secs_f64() * 1e3);
    println!("Edit, 1,000-line file                   {:>8.3} ms   ≤ 0.5 ms", edit_1k.as_secs_f64() * 1e3);
    println!("Read, 4 KB file                         {:>8.3} ms", read_4k.as_secs_f64() * 1e3);
    println!("Write, 4 KB file                        {:>8.3} ms", write_4k.as_secs_f64() * 1e3);

    let gb: u64 = std::env::var("BENCH_HUGE_GB").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    if gb > 0 {
        let path = root.join("huge.log");
        let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        let row = format!("{}\n", "0123456789".repeat(10));
        let rows = gb * 1_000_000_000 / row.len() as u64;
        for _ in 0..rows {
            f.write_all(row.as_bytes()).unwrap();
        }
        f.flush().unwrap();
        drop(f);
        let before = peak_rss_kb();
        let t = Instant::now();
        let out = rt.block_on(Read.call(read_input("huge.log", Some(rows - 10), Some(5)), cx.clone())).unwrap();
        let took = t.elapsed();
        assert!(out.render().iter().filter_map(Content::as_text).any(|t| t.contains("0123456789")));
        println!(
            "Read, 5 lines near the end of {gb} GB     {:>8.3} s    peak RSS {} MB (before the read: {} MB)",
            took.as_secs_f64(),
            peak_rss_kb() / 1024,
            before / 1024
        );
    }
}
