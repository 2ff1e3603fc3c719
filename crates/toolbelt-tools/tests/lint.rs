//! `Lint` with real linters on the fixture projects under `tests/fixtures/lint`: ruff
//! (Python), shellcheck (shell scripts, found by extension and by `#!` line), cargo clippy
//! (Rust), eslint (JavaScript with a flat config), and configured linters printing SARIF
//! (ruff) and text lines (gcc). Each linter runs under the sandbox; what they find is listed
//! in one shape, the project is left as it was, and a linter past its time limit is killed.
//!
//! `.ci/run` installs ruff (`.ci/peers/venv`), eslint (`.ci/peers/node_modules`) and
//! shellcheck (Debian); clippy comes with the toolchain. The fixtures use them as a project
//! would have them: ruff in its `.venv`, eslint in its `node_modules`. Without them a test
//! says so and passes, except under CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolbelt_core::{Extensions, SessionState, ToolContext};
use toolbelt_tools::code::linters::{LintSettings, spec_from_json};
use toolbelt_tools::files::JournalDir;

/// Where `.ci/run` puts the peers.
fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers")
}

/// `program` at `path`, or None (a failure under CI) when it is not installed.
fn installed(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path.canonicalize().unwrap());
    }
    assert!(std::env::var_os("CI").is_none(), "{what} is not installed; .ci/run installs it");
    eprintln!("skipped: {what} is not installed (.ci/run installs it)");
    None
}

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    session: Arc<SessionState>,
    settings: LintSettings,
}

/// A copy of fixture project `name` in a temp directory.
fn project(name: &str) -> Project {
    let dir = tempfile::Builder::new().prefix("lint-").tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join(name);
    common::copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint").join(name), &root);
    let session = Arc::new(SessionState::new("t", root.clone(), vec![root.clone()]));
    Project { _dir: dir, root, session, settings: LintSettings::default() }
}

/// Every file below `root` (but `skip`) with its bytes, to see that linting changed nothing.
fn snapshot(root: &Path, skip: &[&str]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let rel = entry.path().strip_prefix(root).unwrap().to_path_buf();
            if skip.iter().any(|s| rel.starts_with(s)) {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                files.push((rel, std::fs::read(entry.path()).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

impl Project {
    /// A link from the project's `rel` (as `.venv/bin/ruff`) to an installed program.
    fn link(&self, rel: &str, program: &Path) {
        let at = self.root.join(rel);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(program, at).unwrap();
    }

    fn cx(&self) -> ToolContext {
        let mut services = Extensions::default();
        services.insert(JournalDir(common::journal_dir()));
        services.insert(self.settings.clone());
        common::cx_with(&self.session, services)
    }

    async fn lint(&self, input: Value) -> (String, Value) {
        common::ok_in(self.cx(), "Lint", input).await
    }

    async fn lint_err(&self, input: Value) -> String {
        common::err_in(self.cx(), "Lint", input).await
    }
}

/// Each finding as `path:line:col severity code`.
fn found(out: &Value) -> Vec<String> {
    out["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{} {} {}",
                f["path"].as_str().unwrap(),
                f["line"],
                f["column"],
                f["severity"].as_str().unwrap(),
                f["code"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

#[tokio::test]
async fn ruff_lists_the_findings_and_applies_no_fix_whatever_the_project_says() {
    let Some(ruff) = installed(peers().join("venv/bin/ruff"), "ruff") else { return };
    let p = project("python");
    p.link(".venv/bin/ruff", &ruff);
    let before = snapshot(&p.root, &[".venv"]);
    let (text, out) = p.lint(json!({})).await;
    assert_eq!(
        found(&out),
        [
            "app/broken.py:1:12 error invalid-syntax",
            "app/broken.py:1:13 error invalid-syntax",
            "app/main.py:1:8 error F401",
            "app/main.py:2:8 error F401",
            "app/main.py:6:26 error F821",
        ],
        "{text}"
    );
    assert_eq!(
        out["linters"][0]["command"],
        ".venv/bin/ruff check --no-cache --no-fix --no-fix-only --output-format=json --force-exclude -- ."
    );
    assert!(text.contains("app/main.py:1:8 error F401 `os` imported but unused [fixable]"), "{text}");
    assert!(text.contains("`ruff check --fix`"), "{text}");
    // `fix = true` in pyproject.toml, and no cache written: the project is as it was.
    assert_eq!(snapshot(&p.root, &[".venv"]), before);
    assert!(!p.root.join(".ruff_cache").exists());

    // A file: only its findings.
    let (_, out) = p.lint(json!({"path": "app/main.py"})).await;
    assert_eq!(
        found(&out),
        ["app/main.py:1:8 error F401", "app/main.py:2:8 error F401", "app/main.py:6:26 error F821"]
    );
    let (text, out) = p.lint(json!({"path": "app/clean.py"})).await;
    assert_eq!(out["total"], 0);
    assert!(text.starts_with("No findings in app/clean.py."), "{text}");
}

#[tokio::test]
async fn shellcheck_finds_scripts_by_extension_and_first_line() {
    if std::process::Command::new("shellcheck").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "shellcheck is not installed; .ci/run installs it");
        return eprintln!("skipped: shellcheck is not installed");
    }
    let p = project("shell");
    let (text, out) = p.lint(json!({})).await;
    assert_eq!(out["linters"][0]["command"], "shellcheck -f json1 -- bin/sync deploy.sh");
    let got = found(&out);
    for expected in ["bin/sync:2:10 error SC2045", "deploy.sh:3:12 info SC2086", "deploy.sh:4:1 warning SC2164"] {
        assert!(got.contains(&expected.to_owned()), "{expected} missing from {got:?}\n{text}");
    }
    assert!(!got.iter().any(|f| f.starts_with("bin/notes")), "{got:?}");
    // Grouped by file: a blank line between files.
    assert!(text.contains("bin/sync:2:15 info SC2035"), "{text}");
    assert!(text.contains("\n\ndeploy.sh:"), "{text}");
}

#[tokio::test]
async fn clippy_reports_once_per_finding_and_compile_errors_as_errors() {
    let p = project("rust");
    let (text, out) = p.lint(json!({"linter": "clippy"})).await;
    // `--all-targets` checks the binary and its tests: each warning once.
    assert_eq!(
        found(&out),
        ["src/main.rs:2:5 warning clippy::needless_return", "src/main.rs:6:9 warning unused_variables"],
        "{text}"
    );
    assert_eq!(out["linters"][0]["findings"], 2);
    std::fs::write(p.root.join("src/main.rs"), "fn main() {\n    let x: u32 = \"three\";\n}\n").unwrap();
    let (text, out) = p.lint(json!({"linter": "clippy"})).await;
    assert_eq!(found(&out), ["src/main.rs:2:18 error E0308"], "{text}");
    assert!(text.contains("error E0308 mismatched types"), "{text}");
}

#[tokio::test]
async fn eslint_with_the_projects_flat_config() {
    let Some(eslint) = installed(peers().join("node_modules/eslint/bin/eslint.js"), "eslint") else { return };
    let p = project("js");
    p.link("node_modules/.bin/eslint", &eslint);
    let (text, out) = p.lint(json!({"path": "src"})).await;
    assert_eq!(
        found(&out),
        [
            "src/app.js:1:7 error no-unused-vars",
            "src/app.js:4:13 warning eqeqeq",
            "src/app.js:5:17 error no-undef",
            "src/broken.js:1:14 error -",
        ],
        "{text}"
    );
    assert_eq!(out["linters"][0]["command"], "node_modules/.bin/eslint -f json --no-color -- src");
    assert!(text.contains("src/broken.js:1:14 error Parsing error"), "{text}");
}

#[tokio::test]
async fn configured_linters_printing_sarif_and_text_lines() {
    let Some(ruff) = installed(peers().join("venv/bin/ruff"), "ruff") else { return };
    let mut p = project("python");
    let gcc = json!({"command": "gcc -fsyntax-only -Wall {path}", "format": "lines", "extensions": ["c"]});
    let sarif = json!({
        "command": format!("{} check --no-cache --no-fix --no-fix-only --output-format=sarif {{path}}", ruff.display()),
        "format": "sarif",
        "extensions": ["py"],
    });
    p.settings.linters =
        vec![spec_from_json("gcc", &gcc, "test").unwrap(), spec_from_json("ruff", &sarif, "test").unwrap()];
    let (text, out) = p.lint(json!({"path": "app/main.py"})).await;
    assert_eq!(
        found(&out),
        ["app/main.py:1:8 error F401", "app/main.py:2:8 error F401", "app/main.py:6:26 error F821"],
        "{text}"
    );
    assert!(out["linters"][0]["command"].as_str().unwrap().ends_with("--output-format=sarif app/main.py"), "{out}");
    assert!(!out["linters"][0]["command"].as_str().unwrap().starts_with("cd "), "{out}");

    common::copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint/c"), &p.root.join("c"));
    let (text, out) = p.lint(json!({"path": "c/calc.c", "linter": "gcc"})).await;
    let got = found(&out);
    assert!(got.contains(&"c/calc.c:3:17 error -".to_owned()), "{got:?}\n{text}");
    assert!(got.iter().any(|f| f.starts_with("c/calc.c:2:9 warning")), "{got:?}\n{text}");
    // A linter that fails before it lints: said so with its stderr, never "no findings".
    let broken = json!({"command": "echo 'cannot read the rule set' >&2; exit 3", "format": "lines"});
    p.settings.linters.push(spec_from_json("broken", &broken, "test").unwrap());
    let err = p.lint_err(json!({"linter": "broken"})).await;
    assert!(err.starts_with("No linter gave a report.\nbroken: `echo 'cannot read the rule set' >&2; exit 3` exited with 3 without a report."), "{err}");
    assert!(err.ends_with("The end of its stderr:\ncannot read the rule set"), "{err}");
}

#[tokio::test]
async fn a_linter_past_its_time_limit_is_stopped_with_everything_it_started() {
    let mut p = project("shell");
    let marker = p.root.join("still-running");
    let command = format!("(sleep 3; touch {}) & sleep 30", marker.display());
    let slow = json!({"command": command, "format": "lines"});
    p.settings.linters = vec![spec_from_json("slow", &slow, "test").unwrap()];
    p.settings.timeout = Duration::from_secs(1);
    let started = std::time::Instant::now();
    let err = p.lint_err(json!({"linter": "slow"})).await;
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert!(err.contains("slow: stopped after 1 s, the time limit"), "{err}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!marker.exists(), "a process of the linter outlived the call");
}

#[tokio::test]
async fn nothing_to_run_says_what_was_looked_for() {
    let p = project("c");
    let err = p.lint_err(json!({})).await;
    assert!(err.starts_with("No linter applies to"), "{err}");
    assert!(err.contains("[lint.linters.NAME]"), "{err}");
    let err = p.lint_err(json!({"linter": "eslint"})).await;
    assert!(err.contains("eslint does not apply to"), "{err}");
    let err = p.lint_err(json!({"path": "nowhere"})).await;
    assert!(err.ends_with("nowhere does not exist"), "{err}");
}
