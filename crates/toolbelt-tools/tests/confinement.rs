//! Every path trick aimed outside the workspace roots fails at open time.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;
use serde_json::json;

struct Setup {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

/// `<tmp>/app` is the root; `<tmp>/app2` (a sibling sharing the prefix) and `<tmp>/secret`
/// are outside it.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("app");
    let outside = base.join("secret");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(base.join("app2")).unwrap();
    std::fs::write(root.join("src/ok.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("key.txt"), "SECRET\n").unwrap();
    std::fs::write(base.join("app2/key.txt"), "SIBLING SECRET\n").unwrap();
    symlink(outside.join("key.txt"), root.join("file_link")).unwrap();
    symlink(&outside, root.join("dir_link")).unwrap();
    symlink("../secret/key.txt", root.join("relative_link")).unwrap();
    symlink("src/ok.txt", root.join("inner_link")).unwrap();
    Setup { _tmp: tmp, root, outside }
}

#[tokio::test]
async fn reads_outside_the_roots_fail() {
    let s = setup();
    let session = session(&s.root, &[]);
    let attacks = [
        "../secret/key.txt".to_string(),
        "src/../../secret/key.txt".to_string(),
        s.outside.join("key.txt").display().to_string(),
        format!("{}/key.txt", s.root.display().to_string().replace("/app", "/app2")),
        "file_link".to_string(),
        "dir_link/key.txt".to_string(),
        "relative_link".to_string(),
    ];
    for path in &attacks {
        let message = err(&session, "Read", json!({"file_path": path})).await;
        assert!(!message.contains("SECRET"), "{path}: {message}");
        assert!(
            message.contains("outside the workspace roots"),
            "{path} must be refused as outside the roots, got: {message}"
        );
    }
    // The absolute path outside gets the way to add a root.
    let message = err(&session, "Read", json!({"file_path": s.outside.join("key.txt")})).await;
    assert!(message.contains(&format!("--add-dir {}", s.outside.display())), "{message}");
    // A symlink that stays inside is followed.
    assert!(ok(&session, "Read", json!({"file_path": "inner_link"})).await.contains("inside"));
}

/// A symlink naming its target by absolute path is followed when the target is inside the
/// roots (the path is located again where it really is, and opened beneath that root), for
/// reads, edits, new files through a linked directory, and searches; one leading out is
/// still refused.
#[tokio::test]
async fn absolute_links_inside_the_roots_are_followed() {
    let s = setup();
    symlink(s.root.join("src/ok.txt"), s.root.join("abs_link")).unwrap();
    symlink(s.root.join("src"), s.root.join("abs_dir")).unwrap();
    let session = session(&s.root, &[]);
    assert!(ok(&session, "Read", json!({"file_path": "abs_link"})).await.contains("inside"));
    assert!(ok(&session, "Read", json!({"file_path": "abs_dir/ok.txt"})).await.contains("inside"));
    ok(&session, "Edit", json!({"file_path": "abs_link", "old_string": "inside", "new_string": "edited"})).await;
    assert_eq!(std::fs::read_to_string(s.root.join("src/ok.txt")).unwrap(), "edited\n");
    assert!(std::fs::symlink_metadata(s.root.join("abs_link")).unwrap().is_symlink(), "the link stays a link");
    ok(&session, "Write", json!({"file_path": "abs_dir/new.txt", "content": "new\n"})).await;
    assert_eq!(std::fs::read_to_string(s.root.join("src/new.txt")).unwrap(), "new\n");
    assert!(ok(&session, "Grep", json!({"pattern": "edited", "path": "abs_dir"})).await.contains("ok.txt"));
    assert!(ok(&session, "Glob", json!({"pattern": "*.txt", "path": "abs_dir"})).await.contains("new.txt"));
    assert!(ok(&session, "ListDir", json!({"path": "abs_dir"})).await.contains("new.txt"));
    // Leading out, absolute or not, is refused as before.
    for path in ["file_link", "dir_link/key.txt"] {
        let message = err(&session, "Read", json!({"file_path": path})).await;
        assert!(message.contains("outside the workspace roots") && !message.contains("SECRET"), "{message}");
    }
    let message = err(&session, "Write", json!({"file_path": "dir_link/new.txt", "content": "x"})).await;
    assert!(message.contains("outside the workspace roots"), "{message}");
    assert!(!s.outside.join("new.txt").exists());
}

/// A directory swapped for a symlink to outside while Glob and ListDir walk: the walker may
/// list the other place, but no name or size from there reaches a result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_during_walks_never_shows_outside_names() {
    let s = setup();
    for i in 0..50 {
        std::fs::write(s.outside.join(format!("outside-{i}.txt")), "x").unwrap();
    }
    let session = session(&s.root, &[]);
    let walked = s.root.join("walked");
    let real = s.root.join("walked-real");
    std::fs::create_dir_all(&real).unwrap();
    for i in 0..50 {
        std::fs::write(real.join(format!("inside-{i}.txt")), "x").unwrap();
    }
    std::fs::create_dir_all(&walked).unwrap();
    std::fs::write(walked.join("inside-a.txt"), "x").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, walked, outside) = (stop.clone(), walked.clone(), s.outside.clone());
        std::thread::spawn(move || {
            let (aside, link) = (walked.with_extension("aside"), walked.with_extension("link"));
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // The directory moves aside and a symlink to outside takes its name; then back.
                let _ = std::fs::remove_file(&link);
                symlink(&outside, &link).unwrap();
                if std::fs::rename(&walked, &aside).is_ok() {
                    let _ = std::fs::rename(&link, &walked);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&walked);
                    let _ = std::fs::rename(&aside, &walked);
                }
                flips += 1;
            }
            flips
        })
    };
    let mut walks = 0;
    let mut saw_inside = false;
    while walks < 400 {
        walks += 1;
        for (tool, input) in [
            ("Glob", json!({"pattern": "**/*.txt"})),
            ("ListDir", json!({"recursive": true, "limit": 5000})),
            ("Grep", json!({"pattern": "x", "output_mode": "content"})),
        ] {
            if let Ok(out) = call(&session, tool, input).await {
                let text = out.joined_text();
                assert!(!text.contains("outside-"), "{tool} leaked: {text}");
                saw_inside |= text.contains("inside-a.txt");
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 10, "the directory really was swapped ({flips} times)");
    assert!(saw_inside, "the walks did list the directory when it was in place");
}

#[tokio::test]
async fn writes_outside_the_roots_fail_and_write_nothing() {
    let s = setup();
    let session = session(&s.root, &[]);
    for path in ["../secret/new.txt", "dir_link/new.txt", "file_link"] {
        let message = err(&session, "Write", json!({"file_path": path, "content": "pwned"})).await;
        assert!(message.contains("outside the workspace roots"), "{path}: {message}");
    }
    let names: Vec<_> = std::fs::read_dir(&s.outside).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["key.txt"]);
    assert_eq!(std::fs::read_to_string(s.outside.join("key.txt")).unwrap(), "SECRET\n");
}

#[tokio::test]
async fn an_added_root_is_reachable() {
    let s = setup();
    let session = session(&s.root, &[&s.root, &s.outside]);
    assert!(ok(&session, "Read", json!({"file_path": s.outside.join("key.txt")})).await.contains("SECRET"));
}

/// A symlink flipped between an inside and an outside target while reads run: no read ever
/// returns the outside content, because the check and the open are the same operation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_during_reads_never_leaks() {
    let s = setup();
    let session = session(&s.root, &[]);
    let link = s.root.join("swap");
    symlink("src/ok.txt", &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, link, inside, outside) =
            (stop.clone(), link.clone(), std::path::PathBuf::from("src/ok.txt"), s.outside.join("key.txt"));
        std::thread::spawn(move || {
            let tmp = link.with_extension("tmp");
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let target = if flips.is_multiple_of(2) { &outside } else { &inside };
                let _ = std::fs::remove_file(&tmp);
                symlink(target, &tmp).unwrap();
                std::fs::rename(&tmp, &link).unwrap(); // atomic swap of the link
                flips += 1;
            }
            flips
        })
    };
    // Read until both outcomes were seen (at least 200 reads, at most 20,000), so a flipper
    // starved of CPU on a loaded machine makes the test longer, not flaky.
    let (mut inside_reads, mut refused, mut reads) = (0, 0, 0);
    while reads < 20_000 && (reads < 200 || inside_reads == 0 || refused == 0) {
        reads += 1;
        match call(&session, "Read", json!({"file_path": "swap"})).await {
            Ok(out) => {
                let text = out.joined_text();
                assert!(!text.contains("SECRET"), "leaked: {text}");
                inside_reads += 1;
            }
            Err(e) => {
                assert!(!e.to_string().contains("SECRET"));
                refused += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 10, "the link really was swapped ({flips} times)");
    assert!(refused > 0, "some reads met the outside target and were refused");
    assert!(inside_reads > 0, "some reads met the inside target and succeeded");
}
