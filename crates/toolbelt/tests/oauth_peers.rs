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
/// logged; a call goes through; a project naming the server at another address cannot sign
/// in before it is trusted, and after gets no token; sign-out forgets them.
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
    assert!(seen["untrusted"].as_str().unwrap().contains("not trusted yet"), "{seen}");
    let heard = seen["project"][1].as_array().unwrap();
    assert_eq!(seen["project"][0], "needs_login", "{seen}");
    assert!(!heard.is_empty() && heard.iter().all(Value::is_null), "the other address got no token: {seen}");
    assert!(seen["logout"].as_str().unwrap().starts_with("Signed out of MCP server `s`"), "{seen}");
    assert_eq!(seen["signed_out"][1], "needs_login", "{seen}");
}

/// `peers/oauth_server.py` (the Python SDK's authorization server, tokens living `expiry`
/// seconds) on a free loopback port; killed when dropped.
struct AuthServer {
    child: std::process::Child,
    port: u16,
}

impl AuthServer {
    fn start(peers: &Peers, port: u16, args: &[&str]) -> AuthServer {
        let child = Command::new(peers.python())
            .arg(script("oauth_server.py"))
            .arg(port.to_string())
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < std::time::Duration::from_secs(20), "the OAuth peer did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        AuthServer { child, port }
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A token about to expire is refreshed by the next process that uses it (sending the
/// `resource` of the sign-in, keeping the rotated refresh token), once; processes meeting it
/// together take turns, none losing the sign-in; a refresh the
/// authorization server refuses leaves the server waiting for a sign-in, at once, and a
/// registration it no longer knows is made anew by that sign-in.
#[test]
fn tokens_are_refreshed_and_a_refused_refresh_asks_for_a_sign_in() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let port = free_port();
    let server = AuthServer::start(&peers, port, &["3600"]);
    let config = root.join("home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[permissions]\nallow = [\"mcp__auth\"]\n\n[mcp.servers.auth]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
        ),
    )
    .unwrap();
    let browser = format!("{} {} --browse", peers.python().display(), script("oauth_conformance_client.py").display());
    let toolbelt_in = |args: &[&str]| {
        let mut cmd = Command::new(toolbelt());
        cmd.args(args).current_dir(&root);
        let out = hermetic::isolate(&mut cmd, &root.join("home")).env("BROWSER", &browser).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = toolbelt_in(&["mcp-servers", "login", "auth"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Connected: 1 tool."), "{out}");
    assert_eq!(toolbelt_in(&["call", "mcp__auth__grants", "{}"]).1.trim(), "authorization_code");

    // 3,590 of its 3,600 seconds gone: the next use refreshes it first.
    let dir = root.join("home/.local/state/toolbelt/oauth");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .unwrap()
        .path();
    let age = |seconds: u64| {
        let mut saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let received = saved["credentials"]["token_received_at"].as_u64().unwrap();
        saved["credentials"]["token_received_at"] = json!(received - seconds);
        std::fs::write(&file, serde_json::to_vec(&saved).unwrap()).unwrap();
        saved["credentials"]["token_response"]["refresh_token"].clone()
    };
    let refresh_before = age(3590);
    let resource = format!("refresh_token resource=http://127.0.0.1:{}/mcp", server.port);
    let (_, out, err) = toolbelt_in(&["call", "mcp__auth__grants", "{}"]);
    assert_eq!(out.trim(), format!("authorization_code\n{resource}"), "{err}");
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_ne!(saved["credentials"]["token_response"]["refresh_token"], refresh_before, "the rotated token was kept");
    // A fresh token is not refreshed again.
    assert_eq!(toolbelt_in(&["call", "mcp__auth__grants", "{}"]).1.trim(), format!("authorization_code\n{resource}"));
    // Processes meeting the same expiring token take turns refreshing it: each one that
    // refreshes spends the refresh token the one before it kept (without the lock, two would
    // spend the same one, and the authorization server refuses the second: a sign-in lost).
    age(3590);
    let all: Vec<_> = (0..4)
        .map(|_| {
            let mut cmd = Command::new(toolbelt());
            cmd.args(["call", "mcp__auth__grants", "{}"]).current_dir(&root);
            let cmd = hermetic::isolate(&mut cmd, &root.join("home"));
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for child in all {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (code, out, err) = toolbelt_in(&["mcp-servers", "--json"]);
    assert_eq!(code, Some(0), "still signed in: {out}{err}");

    // The authorization server forgets every token and refuses refreshes.
    drop(server);
    let _server = AuthServer::start(&peers, port, &["3600", "--refuse-refresh"]);
    age(3590);
    let started = std::time::Instant::now();
    let (code, out, err) = toolbelt_in(&["mcp-servers", "--json"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(9), "it waited for nothing");
    let listed: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    assert_eq!((code, listed[0]["state"].clone()), (Some(1), json!("needs_login")), "{listed}");
    let (code, out, err) = toolbelt_in(&["call", "mcp__auth__grants", "{}"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("ask the user to run `toolbelt mcp-servers login auth`"), "{out}{err}");
    // It no longer knows toolbelt's client either: the next sign-in registers anew.
    let (code, out, err) = toolbelt_in(&["mcp-servers", "login", "auth", "--timeout", "20"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("client registered now"), "{out}");
    assert_eq!(toolbelt_in(&["call", "mcp__auth__grants", "{}"]).1.trim(), "authorization_code");
}

/// A team's replicas (homes of their own, one shared database): a person signs in once, on
/// one replica, and every replica uses the tokens; a token about to expire is refreshed by
/// replicas meeting it at once in turn, none losing the sign-in; signing out on one signs
/// out all. No token is written to a replica's disk.
#[test]
fn one_sign_in_serves_every_replica_of_a_team() {
    let Some(peers) = Peers::find() else { return };
    let Some(url) = std::env::var("TOOLBELT_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(!ci, "TOOLBELT_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it");
        return;
    };
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    db.batch_execute("DROP SCHEMA IF EXISTS team_oauth CASCADE; CREATE SCHEMA team_oauth").unwrap();
    let storage = format!("{url}?options=-csearch_path%3Dteam_oauth");
    let (_dir, root) = project();
    let port = free_port();
    let server = AuthServer::start(&peers, port, &["3600"]);
    let homes: Vec<_> = (0..2).map(|i| root.join(format!("replica-{i}"))).collect();
    for home in &homes {
        let config = home.join(".config/toolbelt");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            format!(
                "[storage]\nurl = {storage:?}\n\n[permissions]\nallow = [\"mcp__auth\"]\n\n\
                 [mcp.servers.auth]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
            ),
        )
        .unwrap();
    }
    let browser = format!("{} {} --browse", peers.python().display(), script("oauth_conformance_client.py").display());
    let run = |home: &Path, args: &[&str]| {
        let mut cmd = Command::new(toolbelt());
        cmd.args(args).current_dir(&root);
        let out = hermetic::isolate(&mut cmd, home).env("BROWSER", &browser).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&homes[0], &["mcp-servers", "login", "auth"]);
    assert_eq!(code, Some(0), "{out}{err}");
    // The other replica never signed in, and uses the server.
    assert_eq!(run(&homes[1], &["call", "mcp__auth__grants", "{}"]).1.trim(), "authorization_code");
    for home in &homes {
        let files = hermetic::files_below(home);
        assert!(!files.iter().any(|f| f.to_string_lossy().contains("/oauth/")), "{files:?}");
    }

    // 3,590 of its 3,600 seconds gone; four processes on both replicas meet it at once.
    let age = |db: &mut postgres::Client| {
        let text: String = db.query_one("SELECT value FROM team_oauth.oauth_tokens", &[]).unwrap().get(0);
        let mut saved: Value = serde_json::from_str(&text).unwrap();
        let received = saved["credentials"]["token_received_at"].as_u64().unwrap();
        saved["credentials"]["token_received_at"] = json!(received - 3590);
        db.execute("UPDATE team_oauth.oauth_tokens SET value = $1", &[&saved.to_string()]).unwrap();
        saved["credentials"]["token_response"]["refresh_token"].clone()
    };
    let before = age(&mut db);
    let all: Vec<_> = (0..4)
        .map(|i| {
            let mut cmd = Command::new(toolbelt());
            cmd.args(["call", "mcp__auth__grants", "{}"]).current_dir(&root);
            let cmd = hermetic::isolate(&mut cmd, &homes[i % 2]);
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for child in all {
        let out = child.wait_with_output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{said}");
        assert!(said.contains("refresh_token resource="), "each used a refreshed token: {said}");
    }
    let text: String = db.query_one("SELECT value FROM team_oauth.oauth_tokens", &[]).unwrap().get(0);
    let saved: Value = serde_json::from_str(&text).unwrap();
    assert_ne!(saved["credentials"]["token_response"]["refresh_token"], before, "the rotated token was kept");
    assert!(!text.is_empty() && saved["url"] == format!("http://127.0.0.1:{}/mcp", server.port), "{saved}");

    // Signed out on one replica: signed out on both.
    let (code, out, _) = run(&homes[1], &["mcp-servers", "logout", "auth"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("Signed out of MCP server `auth`"), "{out}");
    let (_, out, _) = run(&homes[0], &["mcp-servers", "--json"]);
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed[0]["state"], "needs_login", "{listed}");
}
