//! OAuth sign-in to HTTP upstream servers, against the official conformance suite's client
//! mode: its mock authorization servers and MCP servers speak the real protocol on loopback,
//! and it runs our command with the server's URL. Skipped when the peers are not installed
//! (`.ci/run` installs them).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;

use peers::{Peers, project, script, toolbelt};

/// The suite (its next release) run as one scenario's server, `command` as the client;
/// results in `out`. Returns whether it passed, and what it printed.
fn scenario(
    peers: &Peers,
    command: &str,
    name: &str,
    version: &str,
    out: &Path,
    env: &[(&str, &Path)],
) -> (bool, String) {
    let mut cmd = Command::new(peers.node());
    cmd.arg(peers.module("conformance-next/dist/index.js"))
        .args(["client", "--command", command, "--scenario", name, "--spec-version", version, "-o"])
        .arg(out)
        .env("NO_COLOR", "1");
    for (key, value) in env {
        cmd.env(key, value);
    }
    let done = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    (done.status.success() && text.contains("OVERALL: PASSED"), text)
}

/// Every `auth/*` client scenario the suite requires of 2025-11-25 and of 2026-07-28 passes
/// against `toolbelt mcp-servers login` and the gateway (driven as a user would by
/// `peers/oauth_conformance_client.py`), without a failure or a warning in its checks.
#[test]
fn the_conformance_suite_s_auth_scenarios_pass() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let command = format!(
        "{} {} {}",
        peers.python().display(),
        script("oauth_conformance_client.py").display(),
        toolbelt().display()
    );
    let mut runs: Vec<(String, String)> = Vec::new();
    for version in ["2025-11-25", "2026-07-28"] {
        let listed = Command::new(peers.node())
            .arg(peers.module("conformance-next/dist/index.js"))
            .args(["list", "--client", "--requirements", version])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&listed.stdout).into_owned();
        // The required scenarios come before the ones "run and reported, but never scored".
        let required = text.split("never scored").next().unwrap_or_default();
        let names = required.lines().filter_map(|l| l.trim().strip_prefix("- ")).filter(|n| n.starts_with("auth/"));
        runs.extend(names.map(|name| (version.to_string(), name.to_string())));
    }
    assert!(runs.len() >= 30, "{runs:?}");
    let queue = Mutex::new(runs.clone());
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while let Some((version, name)) = queue.lock().unwrap().pop() {
                    let out = root.join(format!("{version}-{}", name.replace('/', "-")));
                    let (passed, text) = scenario(&peers, &command, &name, &version, &out, &[]);
                    let checks: Vec<Value> = walk_checks(&out);
                    let flagged: Vec<&Value> =
                        checks.iter().filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING").collect();
                    if !passed || checks.is_empty() || !flagged.is_empty() {
                        failed.lock().unwrap().push(format!("{version} {name}: {flagged:#?}\n{text}"));
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    assert!(failed.is_empty(), "{} of {} failed:\n{}", failed.len(), runs.len(), failed.join("\n\n"));
}

/// The checks of every `checks.json` under `dir`.
fn walk_checks(dir: &Path) -> Vec<Value> {
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            checks.extend(walk_checks(&path));
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            let found: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            checks.extend(found.as_array().cloned().unwrap_or_default());
        }
    }
    checks
}

/// A person signing in (`peers/oauth_user.py`, against the suite's `auth/metadata-default`):
/// the server waits for a sign-in and says what to run; `--no-browser` prints the address; a
/// redirect with a forged state is turned away; the tokens are kept owner-only and never
/// logged; a call goes through; a project naming the server at another address gets no
/// token; sign-out forgets them.
#[test]
fn a_person_signs_in_uses_the_server_and_signs_out() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let command =
        format!("{} {} {}", peers.python().display(), script("oauth_user.py").display(), toolbelt().display());
    let report = root.join("report.json");
    let out = root.join("out");
    let (passed, text) =
        scenario(&peers, &command, "auth/metadata-default", "2025-11-25", &out, &[("OAUTH_USER_REPORT", &report)]);
    assert!(passed, "{text}");
    let seen: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(seen["before"][1], "needs_login", "{seen}");
    assert!(seen["before"][2].as_str().unwrap().contains("`toolbelt mcp-servers login s`"), "{seen}");
    assert!(seen["unknown"].as_str().unwrap().contains("no MCP server is named `nope`; the configured ones are"));
    assert!(seen["stdio"].as_str().unwrap().contains("only HTTP servers sign in with OAuth"), "{seen}");
    assert_eq!((seen["forged"].clone(), seen["opened"].clone()), (json!(400), json!(200)), "{seen}");
    assert_eq!(seen["login"][0], 0, "{seen}");
    assert!(seen["login"][1].as_str().unwrap().starts_with("Signed in to MCP server `s` at http://localhost:"));
    assert!(seen["login"][1].as_str().unwrap().contains("Connected: 1 tool."), "{seen}");
    assert_eq!(seen["files"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(seen["modes"], json!(["0o600", "0o700"]), "{seen}");
    assert_eq!(seen["after"][1], "connected", "{seen}");
    assert_eq!(seen["call"], json!([0, false]), "the call went through, and no output showed the token: {seen}");
    assert_eq!(seen["project"], json!(["needs_login", [null]]), "the other address got no token: {seen}");
    assert!(seen["logout"].as_str().unwrap().starts_with("Signed out of MCP server `s`"), "{seen}");
    assert_eq!(seen["signed_out"][1], "needs_login", "{seen}");
}
