//! The Grep tool on real trees, and its results against the real `rg` on the same tree.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::{Value, json};

fn dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    (tmp, root)
}

fn put(root: &Path, files: &[(&str, &[u8])]) {
    for (path, body) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
}

/// A small project: sources, docs, ignored output, hidden files and a binary.
fn project() -> (tempfile::TempDir, PathBuf) {
    let (t, root) = dir();
    put(
        &root,
        &[
            (".gitignore", b"target/\n*.log\n"),
            ("src/main.rs", b"fn main() {\n    println!(\"hello\");\n    // TODO: tidy\n}\n"),
            ("src/lib.rs", b"pub fn greet() -> &'static str {\n    \"Hello\"\n}\n"),
            ("src/util/mod.rs", b"// helpers\npub fn twice(x: u32) -> u32 {\n    x * 2\n}\n"),
            ("docs/guide.md", b"# Guide\n\nSay hello.\n"),
            ("scripts/run.py", b"def hello():\n    print('hello')\n"),
            ("target/out.rs", b"hello from target\n"),
            ("debug.log", b"hello log\n"),
            (".hidden/secret.txt", b"hello hidden\n"),
            ("data.bin", b"hello\0binary"),
        ],
    );
    (t, root)
}

async fn structured(s: &std::sync::Arc<toolbelt_core::SessionState>, input: Value) -> Value {
    call(s, "Grep", input).await.unwrap().structured.unwrap()
}

#[tokio::test]
async fn files_with_matches_in_path_order_skipping_ignored_hidden_and_binary_files() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    // Not a git repository: .gitignore applies all the same.
    let out = ok(&s, "Grep", json!({"pattern": "hello"})).await;
    assert_eq!(out, "docs/guide.md\nscripts/run.py\nsrc/main.rs");
    let out = ok(&s, "grep", json!({"pattern": "hello", "-i": true})).await;
    assert_eq!(out, "docs/guide.md\nscripts/run.py\nsrc/lib.rs\nsrc/main.rs");
    let v = structured(&s, json!({"pattern": "hello"})).await;
    assert_eq!(v["files"], json!(["docs/guide.md", "scripts/run.py", "src/main.rs"]));
    assert_eq!((v["mode"].as_str(), v["total"].as_u64()), (Some("files_with_matches"), Some(3)));
}

#[tokio::test]
async fn content_mode_numbers_lines_by_default_and_shows_context_like_rg() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let out = ok(&s, "Grep", json!({"pattern": "hello", "output_mode": "content"})).await;
    assert_eq!(
        out,
        "docs/guide.md:3:Say hello.\nscripts/run.py:1:def hello():\nscripts/run.py:2:    print('hello')\n\
         src/main.rs:2:    println!(\"hello\");"
    );
    let out = ok(&s, "Grep", json!({"pattern": "hello", "output_mode": "content", "-n": false, "path": "src"})).await;
    assert_eq!(out, "src/main.rs:    println!(\"hello\");");

    put(&root, &[("ctx.txt", b"a\nfoo\nb\nc\nd\ne\nfoo\nf\n"), ("ctx2.txt", b"foo\nz\n")]);
    let out = ok(&s, "Grep", json!({"pattern": "foo", "output_mode": "content", "-C": 1, "glob": "ctx*"})).await;
    assert_eq!(
        out,
        "ctx.txt-1-a\nctx.txt:2:foo\nctx.txt-3-b\n--\nctx.txt-6-e\nctx.txt:7:foo\nctx.txt-8-f\n--\nctx2.txt:1:foo\nctx2.txt-2-z"
    );
    let out =
        ok(&s, "Grep", json!({"pattern": "foo", "output_mode": "content", "-B": 2, "-A": 0, "path": "ctx.txt"})).await;
    assert_eq!(out, "ctx.txt-1-a\nctx.txt:2:foo\n--\nctx.txt-5-d\nctx.txt-6-e\nctx.txt:7:foo");
    let v = structured(&s, json!({"pattern": "foo", "output_mode": "content", "-A": 1, "path": "ctx2.txt"})).await;
    assert_eq!(
        v["matches"],
        json!([{"path": "ctx2.txt", "line": 1, "text": "foo"}, {"path": "ctx2.txt", "line": 2, "text": "z", "context": true}])
    );
}

#[tokio::test]
async fn count_mode_and_the_type_and_glob_filters() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let out = ok(&s, "Grep", json!({"pattern": "hello", "output_mode": "count", "-i": true})).await;
    assert_eq!(out, "docs/guide.md:1\nscripts/run.py:2\nsrc/lib.rs:1\nsrc/main.rs:1");
    let v = structured(&s, json!({"pattern": "hello", "output_mode": "count", "type": "py"})).await;
    assert_eq!(v["counts"], json!([{"path": "scripts/run.py", "count": 2}]));

    assert_eq!(
        ok(&s, "Grep", json!({"pattern": "fn", "type": "rust"})).await,
        "src/lib.rs\nsrc/main.rs\nsrc/util/mod.rs"
    );
    assert_eq!(ok(&s, "Grep", json!({"pattern": "hello", "glob": "*.{md,py}"})).await, "docs/guide.md\nscripts/run.py");
    assert_eq!(ok(&s, "Grep", json!({"pattern": "hello", "glob": "!*.md"})).await, "scripts/run.py\nsrc/main.rs");
    assert_eq!(ok(&s, "Grep", json!({"pattern": "fn", "glob": "src/*.rs"})).await, "src/lib.rs\nsrc/main.rs");
    // A glob with `/` is anchored at the searched path, not at the working directory.
    assert_eq!(ok(&s, "Grep", json!({"pattern": "fn", "path": "src", "glob": "util/*.rs"})).await, "src/util/mod.rs");
    // As with rg, a glob naming files outright reaches ignored and hidden ones, but not
    // inside a hidden directory it does not name.
    put(&root, &[(".env", b"hello=1\n")]);
    assert_eq!(ok(&s, "Grep", json!({"pattern": "hello", "glob": "*.log"})).await, "debug.log");
    assert_eq!(ok(&s, "Grep", json!({"pattern": "hello", "glob": ".env"})).await, ".env");
    let out = ok(&s, "Grep", json!({"pattern": "hello", "glob": "secret.txt"})).await;
    assert!(out.starts_with("No matches found for `hello` in "), "{out}");
    // Several globs separated by spaces.
    assert_eq!(ok(&s, "Grep", json!({"pattern": "hello", "glob": "*.md *.py"})).await, "docs/guide.md\nscripts/run.py");

    let e = err(&s, "Grep", json!({"pattern": "x", "type": "rs"})).await;
    assert!(e.starts_with("unknown file type `rs`: did you mean `rust`"), "{e}");
    let e = err(&s, "Grep", json!({"pattern": "x", "glob": "a{b"})).await;
    assert!(e.starts_with("invalid glob in `glob`"), "{e}");
}

#[tokio::test]
async fn invalid_regex_says_what_is_wrong_and_how_to_escape() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let e = err(&s, "Grep", json!({"pattern": "interface{}"})).await;
    assert!(e.starts_with("invalid regex `interface{}`:"), "{e}");
    assert!(e.contains("repetition"), "{e}");
    assert!(e.contains("`interface\\{\\}` to find `interface{}`"), "{e}");
    let e = err(&s, "Grep", json!({"pattern": "a\\nb"})).await;
    assert!(e.contains("set `multiline: true`"), "{e}");
}

#[tokio::test]
async fn multiline_matches_span_lines() {
    let (_t, root) = dir();
    put(&root, &[("m.rs", b"struct A {\n    x: u32,\n}\nstruct B;\n")]);
    let s = session(&root, &[]);
    let input = json!({"pattern": "struct A \\{.*?\\}", "output_mode": "content", "multiline": true});
    assert_eq!(ok(&s, "Grep", input).await, "m.rs:1:struct A {\nm.rs:2:    x: u32,\nm.rs:3:}");
    let input = json!({"pattern": "struct A \\{.*?\\}", "output_mode": "content"});
    assert!(ok(&s, "Grep", input).await.starts_with("No matches found for `struct A \\{.*?\\}` in "));
    let input = json!({"pattern": "struct \\w+", "output_mode": "count", "multiline": true});
    assert_eq!(ok(&s, "Grep", input).await, "m.rs:2");
}

#[tokio::test]
async fn long_lines_are_cut_and_single_files_and_binaries_are_handled() {
    let (_t, root) = dir();
    let long = format!("needle {}", "x".repeat(3_000));
    put(&root, &[("long.txt", long.as_bytes()), ("bin.dat", b"needle\0\x01\x02")]);
    let s = session(&root, &[]);
    let out = ok(&s, "Grep", json!({"pattern": "needle", "output_mode": "content"})).await;
    assert_eq!(out, format!("long.txt:1:{}… [line cut: 1,007 more characters]", &long[..2_000]));
    assert_eq!(ok(&s, "Grep", json!({"pattern": "needle", "path": "long.txt"})).await, "long.txt");
    let out = ok(&s, "Grep", json!({"pattern": "needle", "path": "bin.dat"})).await;
    assert_eq!(out, "bin.dat is a binary file (it contains NUL bytes); Grep searches text files only.");
    let e = err(&s, "Grep", json!({"pattern": "x", "path": "missing"})).await;
    assert!(e.contains("does not exist"), "{e}");
}

#[tokio::test]
async fn head_limit_and_offset_page_with_a_notice() {
    let (_t, root) = dir();
    let files: Vec<(String, String)> =
        (0..12).map(|i| (format!("f{i:02}.txt"), "hit one\nmiss\nhit two\n".to_string())).collect();
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_bytes())).collect();
    put(&root, &files);
    let s = session(&root, &[]);

    let out = ok(&s, "Grep", json!({"pattern": "hit", "head_limit": 3})).await;
    assert_eq!(
        out,
        "f00.txt\nf01.txt\nf02.txt\n\n[Showing files 1–3 of 12 (in path order); use offset=3 for more, or narrow the search.]"
    );
    let out = ok(&s, "Grep", json!({"pattern": "hit", "head_limit": 2, "offset": 10})).await;
    assert_eq!(out, "f10.txt\nf11.txt\n\n[Showing files 11–12 of 12 (in path order).]");
    let v = structured(&s, json!({"pattern": "hit", "head_limit": 2, "offset": 3})).await;
    assert_eq!((v["total"].as_u64(), v["offset"].as_u64(), v["next_offset"].as_u64()), (Some(12), Some(3), Some(5)));
    assert_eq!(v["files"], json!(["f03.txt", "f04.txt"]));

    let out = ok(&s, "Grep", json!({"pattern": "hit", "output_mode": "content", "head_limit": 3, "offset": 1})).await;
    assert_eq!(
        out,
        "f00.txt:3:hit two\nf01.txt:1:hit one\nf01.txt:3:hit two\n\n\
         [Showing lines 2–4 of 24 (in path order); use offset=4 for more, or narrow the search.]"
    );
    let out = ok(&s, "Grep", json!({"pattern": "hit", "output_mode": "count", "head_limit": 1, "offset": 11})).await;
    assert_eq!(out, "f11.txt:2\n\n[Showing count entries 12–12 of 12 (in path order).]");
    let out = ok(&s, "Grep", json!({"pattern": "hit", "offset": 50})).await;
    assert_eq!(out, "[No files at offset 50: there are 12 in all; use a smaller offset.]");
}

#[tokio::test]
async fn paths_outside_the_cwd_are_absolute_and_outside_the_roots_refused() {
    let (_t, root) = project();
    let (_o, other) = dir();
    put(&other, &[("note.txt", b"hello there\n")]);
    let s = session(&root, &[&root, &other]);
    let out = ok(&s, "Grep", json!({"pattern": "hello", "path": other.to_str().unwrap()})).await;
    assert_eq!(out, other.join("note.txt").to_string_lossy());
    let s = session(&root, &[]);
    let e = err(&s, "Grep", json!({"pattern": "hello", "path": other.to_str().unwrap()})).await;
    assert!(e.contains("is outside the workspace roots"), "{e}");
    let e = err(&s, "Grep", json!({"pattern": "hello", "path": "../"})).await;
    assert!(e.contains("outside the workspace roots"), "{e}");
}

#[tokio::test]
async fn no_match_says_what_was_searched() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let out = ok(&s, "Grep", json!({"pattern": "zzz", "glob": "*.rs"})).await;
    assert_eq!(
        out,
        format!(
            "No matches found for `zzz` in {}, glob `*.rs`; .gitignore'd, hidden and binary files were skipped.",
            root.display()
        )
    );
    assert_eq!(structured(&s, json!({"pattern": "zzz"})).await["total"], 0);
}

// ---- Same results as ripgrep ----------------------------------------------------------

/// The `rg` binary, or `None` (and a notice) when it is missing outside CI.
fn ripgrep() -> Option<&'static str> {
    if Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some("rg");
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("`rg` is required to compare Grep with ripgrep in CI; install it (Debian: apt-get install -y ripgrep)");
    }
    eprintln!("skipping the ripgrep comparison: `rg` is not installed (Debian: apt-get install -y ripgrep)");
    None
}

/// A deterministic tree of a few dozen files: nested directories, several languages,
/// ignored and hidden files, a binary, Unicode, a file without a final newline, and names
/// whose order differs between path-string and component order (`a.txt` vs `a/`).
fn parity_tree(root: &Path) {
    const WORDS: &[&str] = &[
        "foo",
        "bar",
        "baz",
        "qux",
        "Foo",
        "FOO",
        "fn",
        "def",
        "import",
        "TODO",
        "FIXME",
        "héllo",
        "ünïcode",
        "x1",
        "2024",
        "{",
        "}",
        "(",
        ")",
        "foobar",
        "foo_bar",
        "bar.baz",
        "self",
        "return",
        "  ",
        "\t",
        "ÄÖ",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n
    };
    let dirs = ["", "src", "src/core", "src/core/deep", "lib", "docs", "a", "tests", "vendor", ".cfg"];
    let exts = ["rs", "py", "md", "txt", "js", "toml"];
    for i in 0..60 {
        let dir = dirs[next(dirs.len())];
        let name = format!("f{i}.{}", exts[next(exts.len())]);
        let mut body = String::new();
        for _ in 0..next(40) + 1 {
            let words: Vec<&str> = (0..next(8) + 1).map(|_| WORDS[next(WORDS.len())]).collect();
            body.push_str(&words.join(" "));
            body.push('\n');
        }
        if i % 7 == 0 {
            body.pop(); // no final newline
        }
        put(root, &[(format!("{dir}/{name}").trim_start_matches('/'), body.as_bytes())]);
    }
    put(
        root,
        &[
            (".gitignore", b"vendor/\n*.log\n"),
            ("a.txt", b"foo at a.txt\n"),
            ("a/b.txt", b"foo at a/b.txt\n"),
            ("build.log", b"foo in a log\n"),
            (".hidden.txt", b"foo hidden\n"),
            ("blob.bin", b"foo\0\x01\x02foo"),
            ("src/core/deep/ml.rs", b"fn alpha() {\n    foo();\n}\n\nfn beta() {\n    bar();\n}\n"),
            // Byte-order marks: UTF-8, and UTF-16 (searched transcoded, as rg does).
            ("docs/bom8.txt", b"\xEF\xBB\xBFfoo after a UTF-8 mark\nbar\n"),
            ("docs/utf16.txt", &utf16le("foo in UTF-16\nbar baz\nTODO: héllo\n")),
        ],
    );
    // Larger than the files read whole (64 KiB): read as a stream, matches near its end too.
    let mut big = String::new();
    for i in 0..6_000 {
        big.push_str(&format!("line {i} {} {}\n", WORDS[next(WORDS.len())], WORDS[next(WORDS.len())]));
    }
    big.push_str("foo at the very end");
    assert!(big.len() > 64 * 1024);
    put(root, &[("src/big.txt", big.as_bytes())]);
}

/// `text` in UTF-16LE with its byte-order mark.
fn utf16le(text: &str) -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    bytes
}

#[tokio::test]
async fn results_equal_ripgrep_on_the_same_tree() {
    let Some(rg) = ripgrep() else { return };
    let (_t, root) = dir();
    parity_tree(&root);
    let s = session(&root, &[]);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"pattern": "foo"}), vec!["-l", "foo"]),
        (json!({"pattern": "foo", "output_mode": "content"}), vec!["-n", "foo"]),
        (json!({"pattern": "foo", "output_mode": "content", "-n": false}), vec!["-N", "foo"]),
        (json!({"pattern": "foo", "output_mode": "count"}), vec!["-c", "foo"]),
        (json!({"pattern": "\\bfoo\\b", "output_mode": "count"}), vec!["-c", "\\bfoo\\b"]),
        (json!({"pattern": "FOO", "-i": true, "output_mode": "count"}), vec!["-c", "-i", "FOO"]),
        (json!({"pattern": "fo+_?ba[rz]", "output_mode": "content", "-C": 2}), vec!["-n", "-C2", "fo+_?ba[rz]"]),
        (json!({"pattern": "TODO|FIXME", "output_mode": "content", "-A": 1}), vec!["-n", "-A1", "TODO|FIXME"]),
        (json!({"pattern": "^import", "output_mode": "content", "-B": 3}), vec!["-n", "-B3", "^import"]),
        (json!({"pattern": "qux", "output_mode": "content", "-A": 1, "-B": 2}), vec!["-n", "-A1", "-B2", "qux"]),
        (json!({"pattern": "héllo|ünï", "output_mode": "content"}), vec!["-n", "héllo|ünï"]),
        (json!({"pattern": "äö", "-i": true, "output_mode": "content"}), vec!["-n", "-i", "äö"]),
        (json!({"pattern": "\\d{4}", "output_mode": "content", "-n": false, "-C": 1}), vec!["-N", "-C1", "\\d{4}"]),
        (json!({"pattern": "\\s+$", "output_mode": "count"}), vec!["-c", "\\s+$"]),
        (json!({"pattern": "foo", "glob": "*.rs"}), vec!["-l", "-g", "*.rs", "foo"]),
        (json!({"pattern": "foo", "glob": "!*.md"}), vec!["-l", "-g", "!*.md", "foo"]),
        (json!({"pattern": "bar", "glob": "*.{py,js}"}), vec!["-l", "-g", "*.{py,js}", "bar"]),
        (
            json!({"pattern": "bar", "glob": "src/**/*.rs", "output_mode": "count"}),
            vec!["-c", "-g", "src/**/*.rs", "bar"],
        ),
        (json!({"pattern": "def", "type": "py", "output_mode": "content"}), vec!["-n", "-t", "py", "def"]),
        (json!({"pattern": "fn", "type": "rust", "output_mode": "count"}), vec!["-c", "-t", "rust", "fn"]),
        (json!({"pattern": "foo", "path": "src", "output_mode": "content"}), vec!["-n", "foo", "src"]),
        (json!({"pattern": "foo", "path": "a.txt", "output_mode": "content"}), vec!["-H", "-n", "foo", "a.txt"]),
        (
            json!({"pattern": "fn alpha.*?\\}", "multiline": true, "output_mode": "content"}),
            vec!["-n", "-U", "--multiline-dotall", "fn alpha.*?\\}"],
        ),
        (json!({"pattern": "foo.bar", "multiline": true}), vec!["-l", "-U", "--multiline-dotall", "foo.bar"]),
        (
            json!({"pattern": "\\}\\n\\nfn", "multiline": true, "output_mode": "count"}),
            vec!["-c", "-U", "--multiline-dotall", "\\}\\n\\nfn"],
        ),
        (json!({"pattern": "zzz_nothing"}), vec!["-l", "zzz_nothing"]),
    ];
    let mut compared = 0;
    for (input, args) in cases {
        let output = Command::new(rg)
            .args(["--no-config", "--no-require-git", "--sort", "path"])
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(output.status.code().is_some_and(|c| c <= 1), "rg {args:?} failed: {output:?}");
        let expected = String::from_utf8(output.stdout).unwrap();
        let expected: Vec<&str> = expected.lines().collect();
        let out = call(&s, "Grep", input.clone()).await.unwrap();
        let text = out.joined_text();
        if expected.is_empty() {
            assert_eq!(out.structured.unwrap()["total"], 0, "{input}: rg found nothing, Grep said:\n{text}");
            continue;
        }
        let got: Vec<&str> = text.lines().collect();
        assert_eq!(got, expected, "Grep {input} differs from rg {args:?}");
        compared += 1;
    }
    assert!(compared >= 24, "only {compared} cases had results to compare");
}

#[tokio::test]
async fn a_cancelled_call_stops_and_says_so() {
    use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, ToolContext, ToolError};
    let (_t, root) = project();
    let s = session(&root, &[]);
    for (tool, input) in [
        ("Grep", json!({"pattern": "hello"})),
        ("Glob", json!({"pattern": "**/*"})),
        ("ListDir", json!({"recursive": true})),
    ] {
        let registry = registry();
        let entry = registry.lookup(tool).unwrap();
        let prepared = entry.prepare(input).unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let cx = ToolContext::new("c", s.clone(), cancel, EventSink::none(), Limits::default(), Extensions::default());
        assert_eq!(entry.tool().call(prepared, cx).await.unwrap_err(), ToolError::Cancelled, "{tool}");
    }
}

#[tokio::test]
async fn structured_results_match_the_output_schemas() {
    let (_t, root) = project();
    put(&root, &[("ctx.txt", b"a\nhello\nb\n")]);
    let s = session(&root, &[]);
    let registry = registry();
    for (tool, input) in [
        ("Grep", json!({"pattern": "hello"})),
        ("Grep", json!({"pattern": "hello", "output_mode": "content", "-C": 1, "head_limit": 3})),
        ("Grep", json!({"pattern": "hello", "output_mode": "content", "-n": false})),
        ("Grep", json!({"pattern": "hello", "output_mode": "count"})),
        ("Grep", json!({"pattern": "nothing here"})),
        ("Glob", json!({"pattern": "**/*", "limit": 2})),
        ("ListDir", json!({"recursive": true})),
    ] {
        let spec = registry.lookup(tool).unwrap().spec().clone();
        let validator =
            toolbelt_core::InputValidator::compile(tool, spec.output_schema.as_ref().unwrap(), &[]).unwrap();
        let structured = call(&s, tool, input.clone()).await.unwrap().structured.unwrap();
        if let Err(e) = validator.check(structured.clone()) {
            panic!("{tool} {input}: {e}\n{structured}");
        }
        // The check has teeth: a result missing its totals fails.
        let mut broken = structured;
        broken.as_object_mut().unwrap().remove("total");
        assert!(validator.check(broken).is_err(), "{tool}");
    }
}
