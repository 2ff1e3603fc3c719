//! `PowerShell` through the real `toolbelt` binary. PowerShell cannot be installed on the
//! machines these tests run on, so a stand-in `pwsh` (`peers/pwsh`: it answers the version
//! question, records its arguments and runs the decoded script as bash) shows what toolbelt
//! does around it: the tool absent, with why, where no `pwsh` is on PATH; the exact command
//! line; approval asked unless a `PowerShell` rule allows it (Bash's rules do not); the
//! timeout killing the tree; background tasks; the sandbox; a version below 7 refused by the
//! script's own prologue, in the sandbox; a `PowerShell(…)` rule matched against the script,
//! never the description.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// A project in a temp directory, and a directory holding the stand-in `pwsh`.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let bin = base.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("pwsh");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/pwsh"), &fake).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, root, bin)
}

/// `toolbelt` in `root`; with `bin` first on PATH when given.
fn toolbelt(root: &Path, bin: Option<&Path>) -> Command {
    let mut cmd = hermetic::toolbelt(root);
    if let Some(bin) = bin {
        let path = cmd.get_envs().find(|(k, _)| *k == "PATH").and_then(|(_, v)| v).map(|v| v.to_os_string());
        let mut dirs = vec![bin.to_path_buf()];
        dirs.extend(std::env::split_paths(&path.unwrap_or_default()));
        cmd.env("PATH", std::env::join_paths(dirs).unwrap());
    }
    cmd
}

/// `toolbelt [args…] call --json PowerShell INPUT`: the result and the exit code.
fn call(root: &Path, bin: Option<&Path>, args: &[&str], input: Value) -> (Value, i32) {
    let out =
        toolbelt(root, bin).args(args).args(["call", "--json", "PowerShell", &input.to_string()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = serde_json::from_str(&stdout)
        .unwrap_or_else(|_| json!({"stdout": stdout, "stderr": String::from_utf8_lossy(&out.stderr)}));
    (result, out.status.code().unwrap_or(-1))
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn without_pwsh_the_tool_is_absent_and_says_why() {
    let (_dir, root, _bin) = project();
    let table = toolbelt(&root, None).arg("tools").output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("Not available here:\n  PowerShell: PowerShell 7 or later (`pwsh`) is not on PATH"),
        "{table}"
    );
    let names = toolbelt(&root, None).args(["tools", "--format", "names"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&names.stdout).lines().any(|l| l == "PowerShell"));

    let out = toolbelt(&root, None).args(["call", "PowerShell", r#"{"command":"Get-Date"}"#]).output().unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("`PowerShell` is disabled: PowerShell 7 or later (`pwsh`) is not on PATH"), "{said}");
}

#[test]
fn a_script_runs_through_pwsh_encoded_once_a_rule_allows_it() {
    let (_dir, root, bin) = project();
    let listed = toolbelt(&root, Some(&bin)).args(["tools", "--format", "names"]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).lines().any(|l| l == "PowerShell"));

    let script = "Write-Output \"it's $((6 * 7))\"";
    // Default mode: every script asks; Bash's rules do not reach PowerShell.
    let (asked, code) = call(&root, Some(&bin), &["--allow", "Bash"], json!({"command": script}));
    assert_eq!(code, 1, "{asked}");
    let message = text(&asked);
    assert!(message.contains("`PowerShell` runs the PowerShell script `Write-Output"), "{message}");
    assert!(message.contains("--allow 'PowerShell'"), "{message}");
    assert!(!root.join("pwsh-argv.txt").exists(), "pwsh ran before approval");

    let (ran, code) = call(&root, Some(&bin), &["--allow", "PowerShell"], json!({"command": script}));
    assert_eq!(code, 0, "{ran}");
    assert!(text(&ran).contains("it's 42"), "{ran}");
    // Exactly these arguments, the script encoded whole.
    let argv = std::fs::read_to_string(root.join("pwsh-argv.txt")).unwrap();
    let args: Vec<&str> = argv.lines().collect();
    assert_eq!(args[..5], ["-NoProfile", "-NonInteractive", "-OutputFormat", "Text", "-EncodedCommand"], "{argv}");
    assert_eq!(args.len(), 6, "{argv}");
    assert!(args[5].bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)), "{argv}");
    // As the stand-in decoded it (base64 of UTF-16LE).
    let decoded = std::fs::read_to_string(root.join("pwsh-script.txt")).unwrap();
    assert!(decoded.starts_with("if ($PSVersionTable.PSVersion.Major -lt 7)"), "{decoded}");
    assert!(decoded.contains("\n$ProgressPreference = 'SilentlyContinue'\n"), "{decoded}");
    assert!(decoded.ends_with(script), "{decoded}");

    // A rule's pattern is matched against the script.
    let (matched, code) =
        call(&root, Some(&bin), &["--allow", "PowerShell(Write-Output *)"], json!({"command": script}));
    assert_eq!(code, 0, "{matched}");
    let (other, code) =
        call(&root, Some(&bin), &["--allow", "PowerShell(Write-Output *)"], json!({"command": "Remove-Item x"}));
    assert_eq!(code, 1, "{other}");
}

#[test]
fn a_timeout_kills_the_tree_and_a_background_script_is_a_task() {
    let (_dir, root, bin) = project();
    let (timed, code) = call(
        &root,
        Some(&bin),
        &["--allow", "PowerShell"],
        json!({"command": "echo before; sleep 31 & wait", "timeout": 1500}),
    );
    assert_eq!(code, 1, "{timed}");
    assert_eq!(timed["structured"]["timed_out"], true, "{timed}");
    assert!(text(&timed).contains("before"), "{timed}");
    // Nothing of it is left: not pwsh (bash here), not the sleep it started.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&root.display().to_string()) || c.trim() == "sleep 31")
        .collect();
    assert!(left.iter().all(|c| !c.contains("sleep 31")), "{left:?}");

    let mut child = toolbelt(&root, Some(&bin))
        .args(["batch", "--allow", "PowerShell"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for call in [
        json!({"id": "1", "name": "PowerShell", "input": {"command": "Write-Output started; sleep 0.3; Write-Output done", "run_in_background": true}}),
        json!({"id": "2", "name": "TaskOutput", "input": {"task_id": "pwsh_1", "block": true, "timeout": 10000}}),
        json!({"id": "3", "name": "BackgroundTasks", "input": {}}),
    ] {
        writeln!(stdin, "{call}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let results: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(results[0]["structured"]["task_id"], "pwsh_1", "{results:?}");
    assert!(text(&results[1]).contains("started\ndone"), "{results:?}");
    // Listed by the script the call gave, not by the encoded line.
    assert!(text(&results[2]).contains("Write-Output started; sleep 0.3"), "{results:?}");
    assert!(!text(&results[2]).contains("EncodedCommand"), "{results:?}");
}

#[test]
fn the_sandbox_holds_and_an_old_powershell_is_refused() {
    let (_dir, root, bin) = project();
    // The git configuration is read-only in the sandbox, as for Bash; the workspace is not.
    let (confined, _) = call(
        &root,
        Some(&bin),
        &["--allow", "PowerShell"],
        json!({"command": "echo '[core]' > .git/config; echo inside > inside.txt"}),
    );
    assert!(!root.join(".git/config").exists(), "wrote a protected file: {confined}");
    assert!(text(&confined).contains("Read-only file system") || text(&confined).contains("denied"), "{confined}");
    assert_eq!(std::fs::read_to_string(root.join("inside.txt")).unwrap(), "inside\n", "{confined}");

    let mut cmd = toolbelt(&root, Some(&bin));
    cmd.env("FAKE_PWSH_VERSION", "5");
    let out =
        cmd.args(["call", "--allow", "PowerShell", "PowerShell", r#"{"command":"Write-Output hi"}"#]).output().unwrap();
    assert!(!out.status.success());
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("this is PowerShell 5.1; the PowerShell tool needs PowerShell 7 or later"), "{said}");
    assert!(said.contains("install PowerShell 7"), "{said}");
}
