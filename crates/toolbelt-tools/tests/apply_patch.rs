//! ApplyPatch on real files: every operation, the tolerance levels, byte-exact line endings,
//! all-or-nothing failures with precise reports, confinement and the read ledger.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::json;
use toolbelt_tools::files::{FileLedger, content_hash as hash};

fn dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    (tmp, root)
}

fn patch(body: &str) -> serde_json::Value {
    json!({ "input": format!("*** Begin Patch\n{body}*** End Patch\n") })
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Every file under `root`, with its bytes (hidden temp files included).
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn add_delete_update_and_move() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("old.txt"), "bye\nbye\n").unwrap();
    std::fs::write(root.join("a.rs"), "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n").unwrap();
    std::fs::write(root.join("run.sh"), "#!/bin/sh\necho one\n").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let out = call(
        &s,
        "ApplyPatch",
        patch(
            "*** Add File: new/dir/new.txt\n+hello\n+\n+world\n\
             *** Delete File: old.txt\n\
             *** Update File: a.rs\n@@\n fn main() {\n-    let x = 1;\n+    let x = 2;\n+    let y = 3;\n     println!(\"{x}\");\n\
             *** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n #!/bin/sh\n-echo one\n+echo two\n",
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        out.joined_text(),
        "Success. Updated the following files:\nA new/dir/new.txt (+3 -0)\nD old.txt (+0 -2)\
         \nM a.rs (+2 -1)\nM bin/run.sh (moved from run.sh) (+1 -1)"
    );
    assert_eq!(read(root.join("new/dir/new.txt")), "hello\n\nworld\n");
    assert!(!root.join("old.txt").exists());
    assert_eq!(read(root.join("a.rs")), "fn main() {\n    let x = 2;\n    let y = 3;\n    println!(\"{x}\");\n}\n");
    assert!(!root.join("run.sh").exists());
    assert_eq!(read(root.join("bin/run.sh")), "#!/bin/sh\necho two\n");
    assert_eq!(std::fs::metadata(root.join("bin/run.sh")).unwrap().permissions().mode() & 0o777, 0o750);
    let structured = out.structured.unwrap();
    assert_eq!(structured["files"][0], json!({"path": "new/dir/new.txt", "status": "added", "added": 3, "removed": 0}));
    assert_eq!(structured["files"][1]["status"], "deleted");
    assert_eq!(structured["files"][3]["moved_from"], "run.sh");
    // No temp files left anywhere.
    assert!(snapshot(&root).iter().all(|(p, _)| !p.file_name().unwrap().to_string_lossy().starts_with('.')));
}

#[tokio::test]
async fn the_alias_and_the_patch_parameter_spelling_work() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    ok(&s, "apply_patch", patch("*** Add File: x.txt\n+x\n")).await;
    let p = "*** Begin Patch\n*** Update File: x.txt\n@@\n-x\n+y\n*** End Patch";
    ok(&s, "apply_patch", json!({ "patch": p })).await;
    assert_eq!(read(root.join("x.txt")), "y\n");
}

#[tokio::test]
async fn multiple_hunks_anchors_and_end_of_file() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let mut text = String::new();
    for f in ["alpha", "beta", "gamma"] {
        text.push_str(&format!("fn {f}() {{\n    let v = 0;\n    v + 1\n}}\n\n"));
    }
    text.push_str("// end\nlet v = 0;\n");
    std::fs::write(root.join("f.rs"), &text).unwrap();
    // The `let v = 0;` lines are identical in every function: only the anchors tell them apart.
    ok(
        &s,
        "ApplyPatch",
        patch(
            "*** Update File: f.rs\n@@ fn beta() {\n-    let v = 0;\n+    let v = 20;\n\
             @@ fn gamma()\n-    let v = 0;\n+    let v = 30;\n\
             @@\n // end\n-let v = 0;\n+let v = 99;\n*** End of File\n",
        ),
    )
    .await;
    let got = read(root.join("f.rs"));
    assert!(got.contains("fn alpha() {\n    let v = 0;"), "{got}");
    assert!(got.contains("fn beta() {\n    let v = 20;"), "{got}");
    assert!(got.contains("fn gamma() {\n    let v = 30;"), "{got}");
    assert!(got.ends_with("// end\nlet v = 99;\n"), "{got}");

    // End of File: the same lines earlier in the file do not count.
    std::fs::write(root.join("e.txt"), "x\ny\nx\n").unwrap();
    ok(&s, "ApplyPatch", patch("*** Update File: e.txt\n@@\n-x\n+z\n*** End of File\n")).await;
    assert_eq!(read(root.join("e.txt")), "x\ny\nz\n");
    let e = err(&s, "ApplyPatch", patch("*** Update File: e.txt\n@@\n-y\n+w\n*** End of File\n")).await;
    assert!(e.contains("marked `*** End of File`"), "{e}");

    // An add-only hunk goes right after its anchor.
    ok(&s, "ApplyPatch", patch("*** Update File: e.txt\n@@ y\n+inserted\n")).await;
    assert_eq!(read(root.join("e.txt")), "x\ny\ninserted\nz\n");
}

#[tokio::test]
async fn each_tolerance_level_matches_and_keeps_the_files_context_bytes() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let cases: [(&str, &str, &str, &str); 4] = [
        // (file, patch context, patch removed line, what the note says)
        ("keep \t\nold\n", "keep", "old", "trailing whitespace"),
        ("    keep\n  old  \n", "keep", "old", "leading and trailing whitespace"),
        ("a \u{2013} b \u{201C}q\u{201D}\u{00A0}x\nold\n", "a - b \"q\" x", "old", "Unicode punctuation"),
        ("it\u{2019}s \u{2014} fine\nold\n", "it's - fine", "old", "Unicode punctuation"),
    ];
    for (i, (file, context, removed, note)) in cases.iter().enumerate() {
        let name = format!("t{i}.txt");
        std::fs::write(root.join(&name), file).unwrap();
        let out =
            ok(&s, "ApplyPatch", patch(&format!("*** Update File: {name}\n@@\n {context}\n-{removed}\n+new\n"))).await;
        assert!(out.contains(note), "case {i}: {out}");
        // The context line keeps its own bytes; only the removed line changed.
        let first_line = file.split_inclusive('\n').next().unwrap();
        assert_eq!(read(root.join(&name)), format!("{first_line}new\n"), "case {i}");
    }
    // Exact matches carry no note.
    std::fs::write(root.join("exact.txt"), "a\nb\n").unwrap();
    let out = ok(&s, "ApplyPatch", patch("*** Update File: exact.txt\n@@\n a\n-b\n+c\n")).await;
    assert!(!out.contains("Note:"), "{out}");
}

#[tokio::test]
async fn crlf_bom_and_missing_final_newline_are_kept_byte_exact() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let original = b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\nfour\r\nfive".to_vec();
    std::fs::write(root.join("w.txt"), &original).unwrap();
    ok(&s, "ApplyPatch", patch("*** Update File: w.txt\n@@\n two\n-three\n+THREE\n+3b\n four\n")).await;
    assert_eq!(
        std::fs::read(root.join("w.txt")).unwrap(),
        b"\xEF\xBB\xBFone\r\ntwo\r\nTHREE\r\n3b\r\nfour\r\nfive".to_vec()
    );
    // A patch sent with CRLF line endings works the same.
    let crlf = "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n-five\r\n+5\r\n*** End of File\r\n*** End Patch\r\n";
    ok(&s, "ApplyPatch", json!({ "input": crlf })).await;
    assert_eq!(
        std::fs::read(root.join("w.txt")).unwrap(),
        b"\xEF\xBB\xBFone\r\ntwo\r\nTHREE\r\n3b\r\nfour\r\n5".to_vec()
    );
    // UTF-16 stays UTF-16.
    let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain("a\nb\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    std::fs::write(root.join("u.txt"), &utf16).unwrap();
    ok(&s, "ApplyPatch", patch("*** Update File: u.txt\n@@\n a\n-b\n+\u{e9}\n")).await;
    let want: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("a\n\u{e9}\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    assert_eq!(std::fs::read(root.join("u.txt")).unwrap(), want);
}

#[tokio::test]
async fn a_failing_hunk_in_the_second_file_leaves_every_file_unchanged() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("first.txt"), "a\nb\nc\n").unwrap();
    std::fs::write(root.join("gone.txt"), "keep me\n").unwrap();
    let mut second = String::new();
    for i in 1..=60 {
        second.push_str(&format!("line {i}\n"));
    }
    second = second.replace("line 42\n", "    let x = 1;\n");
    std::fs::write(root.join("second.rs"), &second).unwrap();
    let before = snapshot(&root);

    let e = err(
        &s,
        "ApplyPatch",
        patch(
            "*** Update File: first.txt\n@@\n a\n-b\n+B\n\
             *** Delete File: gone.txt\n\
             *** Add File: brand/new.txt\n+new\n\
             *** Update File: second.rs\n@@\n line 10\n-line 11\n+eleven\n\
             @@ line 40\n line 41\n-    let x = 2;\n+    let x = 3;\n line 43\n",
        ),
    )
    .await;
    assert_eq!(snapshot(&root), before, "nothing may change on disk");
    assert!(!root.join("brand").exists(), "no directory created either");
    assert!(e.starts_with("The patch was not applied; nothing was changed"), "{e}");
    assert!(e.contains("second.rs, hunk 2 of 2 (patch line 15, `@@ line 40`): its lines were not found after its @@ anchor (line 40)"), "{e}");
    assert!(e.contains("Nearest candidate: lines 41-43 of the file (2 of 3 lines agree)"), "{e}");
    assert!(e.contains("line 42 in the file: `    let x = 1;`\n    vs patch line 17:  `    let x = 2;`"), "{e}");
    assert!(e.contains("they first differ at column 13: the file has `1;`, the patch `2;`"), "{e}");
}

#[tokio::test]
async fn every_problem_is_reported_at_once() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("exists.txt"), "x\n").unwrap();
    std::fs::write(root.join("f.txt"), "fn alpha() {}\nbody\n").unwrap();
    let e = err(
        &s,
        "ApplyPatch",
        patch(
            "*** Add File: exists.txt\n+y\n\
             *** Update File: missing.txt\n@@\n-a\n+b\n\
             *** Delete File: nope.txt\n\
             *** Update File: f.txt\n@@ fn alpah()\n-body\n+b\n",
        ),
    )
    .await;
    assert!(e.contains(" 4 problems:"), "{e}");
    assert!(e.contains("exists.txt already exists; use `*** Update File: exists.txt` to change it"), "{e}");
    assert!(e.contains("missing.txt does not exist; use `*** Add File:` to create a file"), "{e}");
    assert!(e.contains("`*** Delete File: nope.txt` (patch line 8): nope.txt does not exist"), "{e}");
    assert!(e.contains("anchor `@@ fn alpah()` was not found in the file"), "{e}");
    assert_eq!(read(root.join("exists.txt")), "x\n");
}

#[tokio::test]
async fn malformed_patches_name_the_line() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let e = err(&s, "ApplyPatch", json!({"input": "*** Update File: a\n"})).await;
    assert!(e.starts_with("invalid patch, line 1: the patch must start with `*** Begin Patch`"), "{e}");
    let e = err(&s, "ApplyPatch", patch("*** Update File: a.txt\n@@\n ok\nno prefix\n")).await;
    assert!(e.starts_with("invalid patch, line 5: every line of a hunk starts with"), "{e}");
    let e = err(&s, "ApplyPatch", json!({"input": "*** Begin Patch\n*** Add File: a.txt\n+x\n"})).await;
    assert!(e.contains("ends without `*** End Patch`"), "{e}");
    let e = err(&s, "ApplyPatch", patch("*** Rename File: a.txt\n")).await;
    assert!(e.starts_with("invalid patch, line 2: expected `*** Add File: <path>`"), "{e}");
    assert!(!root.join("a.txt").exists());
}

#[tokio::test]
async fn paths_outside_the_roots_are_refused_and_nothing_is_written() {
    let (_t, base) = dir();
    let root = base.join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(base.join("outside.txt"), "secret\n").unwrap();
    let s = session(&root, &[]);
    let before = snapshot(&base);
    for body in [
        "*** Add File: inside.txt\n+ok\n*** Add File: ../escape.txt\n+x\n".to_string(),
        "*** Add File: inside.txt\n+ok\n*** Update File: ../outside.txt\n@@\n-secret\n+pwned\n".to_string(),
        format!("*** Add File: inside.txt\n+ok\n*** Delete File: {}\n", base.join("outside.txt").display()),
        format!("*** Add File: inside.txt\n+ok\n*** Add File: {}\n+x\n", base.join("abs.txt").display()),
    ] {
        let e = err(&s, "ApplyPatch", patch(&body)).await;
        assert!(e.contains("outside the workspace roots"), "{e}");
        assert_eq!(snapshot(&base), before, "{body}");
    }
    // An absolute path inside the roots is fine.
    ok(&s, "ApplyPatch", patch(&format!("*** Add File: {}\n+ok\n", root.join("abs_ok.txt").display()))).await;
    assert_eq!(read(root.join("abs_ok.txt")), "ok\n");
}

#[tokio::test]
async fn a_file_read_and_changed_since_is_refused_a_never_read_one_is_not() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("read.txt"), "one\n").unwrap();
    std::fs::write(root.join("unread.txt"), "one\n").unwrap();
    ok(&s, "Read", json!({"file_path": "read.txt"})).await;
    std::fs::write(root.join("read.txt"), "one\ntwo\n").unwrap();
    let e = err(
        &s,
        "ApplyPatch",
        patch("*** Update File: unread.txt\n@@\n-one\n+1\n*** Update File: read.txt\n@@\n-one\n+1\n"),
    )
    .await;
    assert!(e.contains("read.txt has changed since you read it"), "{e}");
    assert_eq!(read(root.join("unread.txt")), "one\n");
    assert_eq!(read(root.join("read.txt")), "one\ntwo\n");
    // Never read: allowed. Read again: allowed.
    ok(&s, "ApplyPatch", patch("*** Update File: unread.txt\n@@\n-one\n+1\n")).await;
    ok(&s, "Read", json!({"file_path": "read.txt"})).await;
    ok(&s, "ApplyPatch", patch("*** Update File: read.txt\n@@\n-one\n+1\n")).await;
    assert_eq!(read(root.join("read.txt")), "1\ntwo\n");
}

#[tokio::test]
async fn written_files_are_recorded_so_an_edit_can_follow() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("m.txt"), "alpha\nbeta\n").unwrap();
    ok(
        &s,
        "ApplyPatch",
        patch("*** Add File: n.txt\n+fresh\n*** Update File: m.txt\n*** Move to: moved.txt\n@@\n-beta\n+gamma\n"),
    )
    .await;
    let cx = cx(&s);
    for name in ["n.txt", "moved.txt"] {
        let bytes = std::fs::read(root.join(name)).unwrap();
        let seen = FileLedger::get(&cx, &root.join(name)).expect("recorded");
        assert_eq!(seen.hash, hash(&bytes), "{name}");
        FileLedger::check_fresh(&cx, &root.join(name), Path::new(name), &bytes).unwrap();
    }
    // And the real Edit tool accepts them without a Read.
    ok(&s, "Edit", json!({"file_path": "moved.txt", "old_string": "gamma", "new_string": "delta"})).await;
    assert_eq!(read(root.join("moved.txt")), "alpha\ndelta\n");
}

#[tokio::test]
async fn symlinks_are_followed_for_updates_and_removed_as_links() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("target.txt"), "a\n").unwrap();
    std::os::unix::fs::symlink("target.txt", root.join("link.txt")).unwrap();
    ok(&s, "ApplyPatch", patch("*** Update File: link.txt\n@@\n-a\n+b\n")).await;
    assert!(std::fs::symlink_metadata(root.join("link.txt")).unwrap().file_type().is_symlink());
    assert_eq!(read(root.join("target.txt")), "b\n");
    ok(&s, "ApplyPatch", patch("*** Delete File: link.txt\n")).await;
    assert!(std::fs::symlink_metadata(root.join("link.txt")).is_err());
    assert_eq!(read(root.join("target.txt")), "b\n");
}

#[tokio::test]
async fn one_file_touched_twice_sees_its_own_changes() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("f.txt"), "old\n").unwrap();
    let out = ok(
        &s,
        "ApplyPatch",
        patch("*** Delete File: f.txt\n*** Add File: f.txt\n+new\n*** Update File: f.txt\n@@\n new\n+more\n"),
    )
    .await;
    assert_eq!(out, "Success. Updated the following files:\nM f.txt (+2 -1)");
    assert_eq!(read(root.join("f.txt")), "new\nmore\n");
}

#[test]
fn spec_snapshot() {
    let entry = registry().lookup("apply_patch").unwrap();
    insta::assert_json_snapshot!("apply_patch_spec", entry.tool().spec());
}

#[tokio::test]
async fn renames_binary_files_and_move_targets() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    std::fs::write(root.join("taken.txt"), "t\n").unwrap();
    std::fs::write(root.join("img.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    // A move onto an existing file is refused; a pure rename (no hunks) works.
    let e = err(&s, "ApplyPatch", patch("*** Update File: a.txt\n*** Move to: taken.txt\n")).await;
    assert!(e.contains("taken.txt already exists; move to another path"), "{e}");
    let out = ok(&s, "ApplyPatch", patch("*** Update File: a.txt\n*** Move to: sub/b.txt\n")).await;
    assert_eq!(out, "Success. Updated the following files:\nM sub/b.txt (moved from a.txt) (+0 -0)");
    assert_eq!(read(root.join("sub/b.txt")), "a\n");
    assert!(!root.join("a.txt").exists());
    // Binary files cannot be patched, but can be deleted.
    let e = err(&s, "ApplyPatch", patch("*** Update File: img.png\n@@\n-x\n+y\n")).await;
    assert!(e.contains("img.png is a binary file (PNG image); only text files can be patched"), "{e}");
    ok(&s, "ApplyPatch", patch("*** Delete File: img.png\n")).await;
    assert!(!root.join("img.png").exists());
    // A heredoc wrapper around the patch is tolerated.
    let wrapped = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+h\n*** End Patch\nEOF\n";
    ok(&s, "ApplyPatch", json!({ "input": wrapped })).await;
    assert_eq!(read(root.join("h.txt")), "h\n");
}
