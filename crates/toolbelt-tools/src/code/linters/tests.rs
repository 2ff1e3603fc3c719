//! Planning: which linters a tree gets, the lines declared, and a named linter.

use super::*;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
        std::fs::write(root.join(name), text).unwrap();
    }
}

#[test]
fn the_tree_chooses_the_linters_and_lines_start_from_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(&root, &[("svc/Cargo.toml", ""), ("svc/src/main.rs", ""), ("tools/run.sh", "echo\n"), ("app/x.py", "")]);
    // Programs found on a PATH of our own, outside the tree.
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().to_path_buf();
    for program in ["cargo", "ruff", "shellcheck"] {
        std::fs::write(bin.join(program), "").unwrap();
        std::fs::set_permissions(bin.join(program), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let path_var = std::ffi::OsString::from(bin.as_os_str());
    let cx = toolbelt_core::ToolContext::detached(root.clone());
    let survey = Survey::of(&root, &cx).unwrap();
    let roots = [root.clone()];
    let target = Target { path: &root, roots: &roots, path_var: Some(&path_var), cwd: &root };
    let planned = plan(&LintSettings::default(), &target, &survey, None).unwrap();
    let lines: Vec<(&str, &str)> = planned.runs.iter().map(|r| (r.linter.as_str(), r.line.as_str())).collect();
    assert_eq!(
        lines,
        [
            ("clippy", "cd svc && cargo clippy --all-targets --message-format=json"),
            ("ruff", "ruff check --no-cache --no-fix --no-fix-only --output-format=json --force-exclude -- ."),
            ("shellcheck", "shellcheck -f json1 -- tools/run.sh"),
        ]
    );
    assert!(!planned.runs[0].read_only && planned.runs[1].read_only && planned.runs[2].read_only);

    // One named linter; one that is none; a configured one replacing a default.
    let only = plan(&LintSettings::default(), &target, &survey, Some("ruff")).unwrap();
    assert_eq!(only.runs.len(), 1);
    let err = plan(&LintSettings::default(), &target, &survey, Some("pylint")).unwrap_err();
    assert_eq!(err, "there is no linter `pylint`; the linters are clippy, eslint, ruff, shellcheck");
    let mut settings = LintSettings::default();
    settings.linters.push(
        spec_from_json("ruff", &serde_json::json!({"command": "ruff check --output-format=sarif {path}", "format": "sarif", "extensions": ["py"]}), "t")
            .unwrap(),
    );
    let py = root.join("app/x.py");
    let survey = Survey::of(&py, &cx).unwrap();
    let target = Target { path: &py, roots: &roots, path_var: Some(&path_var), cwd: &root };
    let planned = plan(&settings, &target, &survey, None).unwrap();
    let lines: Vec<&str> = planned.runs.iter().map(|r| r.line.as_str()).collect();
    assert_eq!(lines, ["ruff check --output-format=sarif app/x.py"]);
}

#[test]
fn a_missing_program_is_named_with_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(&root, &[("a.py", ""), ("eslint.config.mjs", "export default [];\n"), ("b.ts", "")]);
    let cx = toolbelt_core::ToolContext::detached(root.clone());
    let survey = Survey::of(&root, &cx).unwrap();
    let roots = [root.clone()];
    let empty = std::ffi::OsString::new();
    let target = Target { path: &root, roots: &roots, path_var: Some(&empty), cwd: &root };
    let planned = plan(&LintSettings::default(), &target, &survey, None).unwrap();
    assert!(planned.runs.is_empty());
    let why: Vec<(&str, bool)> =
        planned.unavailable.iter().map(|u| (u.linter.as_str(), u.why.contains("install"))).collect();
    assert_eq!(why, [("ruff", true), ("eslint", true)]);
}

#[test]
fn quoting_and_settings_tables() {
    assert_eq!(quote("src/a.py"), "src/a.py");
    assert_eq!(quote("my file's.sh"), r"'my file'\''s.sh'");
    assert_eq!(quote("-rf"), "'-rf'");
    // A path starting with `-` is never an option to the linter.
    assert_eq!(path_word(Path::new("--fix")), "./--fix");
    assert_eq!(path_word(Path::new("-x y")), "'./-x y'");
    assert_eq!(path_word(Path::new("/abs/-x")), "/abs/-x");
    let err = spec_from_json("x", &serde_json::json!({"command": "x"}), "t").unwrap_err();
    assert!(err.contains("`format` is missing"), "{err}");
    let err = spec_from_json("x", &serde_json::json!({"command": "x", "format": "xml"}), "t").unwrap_err();
    assert!(err.contains("not one of cargo, ruff"), "{err}");
}
