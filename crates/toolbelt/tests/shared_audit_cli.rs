//! The audit log in the shared database through the real `toolbelt` binary: replicas (homes
//! of their own, as machines have) calling at once keep one hash chain that `toolbelt audit
//! verify` checks and counts by replica; a drain is recorded in it; an edited row is named;
//! a database that cannot be reached costs the call nothing and is said on stderr.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/http_server.rs"]
mod http_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The test database, in a schema of this test's own (made fresh), so the chain holds only
/// this test's records; `None` (skipped) outside CI without one.
fn database(schema: &str) -> Option<String> {
    let Some(url) = std::env::var("TOOLBELT_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(!ci, "TOOLBELT_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it");
        eprintln!("skipped: no PostgreSQL (start one with .ci/postgres.sh DIR and set TOOLBELT_TEST_POSTGRES_URL)");
        return None;
    };
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
    Some(format!("{url}?options=-csearch_path%3D{schema}"))
}

/// A project, and a home per replica whose user settings turn the audit log on and keep it
/// in the database.
fn replicas(url: &str, names: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.txt"), "shared notes\n").unwrap();
    let homes = names
        .iter()
        .map(|name| {
            let home = dir.path().canonicalize().unwrap().join(name);
            std::fs::create_dir_all(home.join(".config/toolbelt")).unwrap();
            let settings = format!("[storage]\nurl = {url:?}\n\n[audit]\nenabled = true\n");
            std::fs::write(home.join(".config/toolbelt/config.toml"), settings).unwrap();
            home
        })
        .collect();
    (dir, root, homes)
}

fn toolbelt(home: &Path, root: &Path) -> Command {
    let mut cmd = hermetic::toolbelt_with_home(root, home);
    cmd.env("TOOLBELT_REPLICA", home.file_name().unwrap());
    cmd
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn verify(home: &Path, root: &Path) -> (bool, Value) {
    let out = toolbelt(home, root).args(["audit", "verify", "--json"]).output().unwrap();
    (out.status.success(), serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out))))
}

#[test]
fn replicas_calling_at_once_keep_one_chain_that_verifies() {
    let Some(url) = database("audit_cli_chain") else { return };
    let (_dir, root, homes) = replicas(&url, &["east", "west"]);

    // Ten one-shot calls on each replica, all at once: each process writes its record before
    // it ends.
    std::thread::scope(|scope| {
        for i in 0..20 {
            let (home, root) = (&homes[i % 2], &root);
            scope.spawn(move || {
                let out =
                    toolbelt(home, root).args(["call", "Read", r#"{"file_path": "notes.txt"}"#]).output().unwrap();
                assert!(out.status.success() && text(&out).contains("shared notes"), "{}", text(&out));
            });
        }
    });
    let (ok, verdict) = verify(&homes[1], &root);
    assert!(ok, "{verdict}");
    assert_eq!((verdict["records"].as_u64(), verdict["last_seq"].as_u64()), (Some(20), Some(20)), "{verdict}");
    assert_eq!(verdict["replicas"], serde_json::json!({"east": 10, "west": 10}), "{verdict}");
    let path = toolbelt(&homes[0], &root).args(["audit", "path"]).output().unwrap();
    assert!(
        text(&path).starts_with("postgres://toolbelt@127.0.0.1:") && text(&path).contains("/audit_log"),
        "{}",
        text(&path)
    );
    // No file: the records are in the database only.
    let files = hermetic::files_below(&homes[0]);
    assert!(!files.iter().any(|p| p.to_string_lossy().contains("audit.jsonl")), "{files:?}");

    // A server drained on SIGTERM records the drain in the same chain.
    let server = http_server::HttpServer::spawn(toolbelt(&homes[0], &root), &[]);
    assert!(server.terminate(), "drained and exited 0");
    let (ok, verdict) = verify(&homes[1], &root);
    assert!(ok, "{verdict}");
    assert_eq!(verdict["replicas"]["east"], 12, "drain_started and stopped: {verdict}");
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let events: Vec<String> = db
        .query("SELECT line::json->>'event' FROM audit_log WHERE line::json->>'event' IS NOT NULL ORDER BY seq", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(events, ["drain_started", "stopped"]);

    // An edited row is named.
    db.execute("UPDATE audit_log SET line = replace(line, 'notes.txt', 'other.txt') WHERE seq = 7", &[]).unwrap();
    let (ok, verdict) = verify(&homes[0], &root);
    assert!(!ok);
    assert_eq!(
        verdict["message"],
        "record seq 7 (table audit_log line 7) was edited: record 8 carries a different digest of it",
        "{verdict}"
    );
}

#[test]
fn a_database_out_of_reach_costs_the_call_nothing() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (_dir, root, homes) = replicas(&format!("postgres://team@127.0.0.1:{port}/tools"), &["lonely"]);
    let out = toolbelt(&homes[0], &root).args(["call", "Read", r#"{"file_path": "notes.txt"}"#]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("shared notes"));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("cannot write the audit log to the shared database (cannot reach the PostgreSQL server team@127.0.0.1:{port}/tools")),
        "{said}"
    );
    assert!(said.contains("1 audit record(s) could not be written"), "{said}");
}
