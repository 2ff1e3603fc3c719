//! Memory stays bounded whatever a command prints. Alone in its own test binary, so the
//! process's peak RSS is this test's. The precise figure (1 GB of output) is in the bench
//! (`bench/shell.sh`); this checks correctness with a generous bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[tokio::test]
async fn huge_output_keeps_memory_bounded_and_spills_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let s = common::session(&root, &[]);
    let before = peak_rss_kb();
    let command = "head -c 200000000 /dev/zero | tr '\\0' x; echo; echo the-end >&2";
    let out = common::call(&s, "Bash", json!({"command": command})).await.unwrap();
    let grew_mb = (peak_rss_kb() - before) / 1024;
    assert!(grew_mb < 200, "peak RSS grew by {grew_mb} MB for 200 MB of output");

    let text = out.joined_text();
    assert!(text.chars().count() <= 30_000);
    assert!(text.starts_with("xxxx") && text.contains("the-end"), "head and tail kept");
    let st = out.structured.unwrap();
    let spill = st["output_file"].as_str().unwrap();
    assert_eq!(std::fs::metadata(spill).unwrap().len(), 200_000_000 + 1 + 8);
}
