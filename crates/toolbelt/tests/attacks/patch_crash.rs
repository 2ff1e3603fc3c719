//! `kill -9` during an ApplyPatch commit left some files new and the rest old. Here the
//! binary applies a patch over a few hundred files and is killed at points spread over its
//! whole run, many times; after the next write (which recovers), the tree is always wholly
//! old or wholly new, every file whole, and no temp file or journal is left.
//!
//! The project is in memory (fsync costs nothing there) and the commit waits a millisecond
//! after each file it stages and each rename (`TOOLBELT_TEST_COMMIT_DELAY_MS`, a test-only
//! setting), so staging and renaming take most of the run and most kills land inside them:
//! before the journal's commit line (rolled back) or between two renames (rolled forward).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use serde_json::json;

use crate::World;

const UPDATED: usize = 240;
const ADDED: usize = 30;
const DELETED: usize = 30;
const ITERATIONS: usize = 30;

fn updated(i: usize) -> String {
    format!("src/d{}/f{i}.txt", i % 12)
}

fn old_text(i: usize) -> String {
    (1..=12).map(|k| format!("file {i} line {k}\n")).collect()
}

fn new_text(i: usize) -> String {
    old_text(i).replace(&format!("file {i} line 6\n"), &format!("file {i} line 6 changed\n"))
}

type Tree = BTreeMap<String, String>;

fn old_tree() -> Tree {
    let mut tree: Tree = (0..UPDATED).map(|i| (updated(i), old_text(i))).collect();
    tree.extend((0..DELETED).map(|j| (format!("gone/g{j}.txt"), format!("to delete {j}\n"))));
    tree
}

fn new_tree() -> Tree {
    let mut tree: Tree = (0..UPDATED).map(|i| (updated(i), new_text(i))).collect();
    tree.extend((0..ADDED).map(|j| (format!("added/a{j}.txt"), format!("added {j}\n"))));
    tree
}

fn patch() -> String {
    let mut p = String::from("*** Begin Patch\n");
    for i in 0..UPDATED {
        p.push_str(&format!(
            "*** Update File: {}\n@@\n file {i} line 5\n-file {i} line 6\n+file {i} line 6 changed\n file {i} line 7\n",
            updated(i)
        ));
    }
    for j in 0..ADDED {
        p.push_str(&format!("*** Add File: added/a{j}.txt\n+added {j}\n"));
    }
    for j in 0..DELETED {
        p.push_str(&format!("*** Delete File: gone/g{j}.txt\n"));
    }
    p.push_str("*** End Patch");
    p
}

/// Every file under the project (but toolbelt's own `.toolbelt/` and the scratch files the
/// recovering writes make), hidden ones included.
fn tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let rel = entry.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".toolbelt" || rel == "scratch" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                out.insert(rel, std::fs::read_to_string(entry.path()).unwrap_or_else(|_| "<unreadable>".into()));
            }
        }
    }
    out
}

fn reset(root: &Path) {
    for dir in ["src", "added", "gone"] {
        let _ = std::fs::remove_dir_all(root.join(dir));
    }
    for (rel, text) in old_tree() {
        std::fs::create_dir_all(root.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(root.join(&rel), text).unwrap();
    }
}

/// The journals toolbelt keeps for this user (there must be none once recovered).
fn journals(w: &World) -> Vec<String> {
    let projects = w.home.join(".local/state/toolbelt/projects");
    let Ok(dirs) = std::fs::read_dir(projects) else { return Vec::new() };
    dirs.flatten()
        .flat_map(|d| std::fs::read_dir(d.path().join("patch-journal")).into_iter().flatten().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Starts the patch's ApplyPatch (input on stdin).
fn start(w: &World, input: &Path) -> std::process::Child {
    w.toolbelt()
        .args(["call", "ApplyPatch", "-", "--mode", "acceptEdits"])
        .env("TOOLBELT_TEST_COMMIT_DELAY_MS", "1")
        .stdin(std::fs::File::open(input).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_patch_killed_anywhere_in_its_commit_is_all_old_or_all_new_after_recovery() {
    let w = World::in_memory();
    let input = w.markers.join("patch.json");
    std::fs::write(&input, json!({ "input": patch() }).to_string()).unwrap();
    let (old, new) = (old_tree(), new_tree());

    // One uninterrupted run, to know how long a whole one takes.
    reset(&w.root);
    let started = Instant::now();
    assert!(start(&w, &input).wait().unwrap().success());
    let whole = started.elapsed();
    assert!(tree(&w.root) == new, "the uninterrupted patch did not apply");

    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    // Kill points: one at a random place in each of ITERATIONS equal slices of the run (and a
    // little past its end). The seed is printed, to replay a failure.
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("kill points seeded with {seed}");
    let mut rng = seed;
    for k in 0..ITERATIONS {
        reset(&w.root);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let within = (rng % 1000) as f64 / 1000.0;
        let delay = whole.mul_f64(1.15 * (k as f64 + within) / ITERATIONS as f64);
        let mut child = start(&w, &input);
        std::thread::sleep(delay);
        let _ = child.kill();
        let finished = child.wait().unwrap().success();

        // The next write in the workspace recovers what the kill left.
        let (code, out) = w.call(
            "Write",
            json!({"file_path": format!("scratch/{k}.txt"), "content": "x"}),
            &["--mode", "acceptEdits"],
        );
        assert_eq!(code, 0, "{out}");
        let after = tree(&w.root);
        let state = if after == old {
            "old"
        } else if after == new {
            "new"
        } else {
            let mixed: Vec<&String> = after.keys().filter(|f| old.get(*f) != after.get(*f)).take(5).collect();
            panic!("iteration {k} (killed after {delay:?}): a mixed tree, e.g. {mixed:?}\n{out}");
        };
        assert!(!w.root.join("added").exists() || state == "new", "a directory made for new files is left");
        let left = journals(&w);
        assert!(left.is_empty(), "iteration {k}: journals left: {left:?}");
        let how = match (finished, out.contains("completed"), out.contains("rolled back")) {
            (true, _, _) => "finished before the kill",
            (false, true, _) => "rolled forward",
            (false, _, true) => "rolled back",
            (false, false, false) => "killed before its journal",
        };
        *tally.entry(how).or_default() += 1;
        eprintln!("iteration {k}: killed after {delay:?} -> {how}, {state}");
    }
    eprintln!("{ITERATIONS} kills over a {whole:?} run: {tally:?}");
    // The kills must have landed inside commits, both before and after the commit line.
    assert!(tally.get("rolled forward").is_some_and(|n| *n > 0), "{tally:?}");
    assert!(tally.get("rolled back").is_some_and(|n| *n > 0), "{tally:?}");
}
