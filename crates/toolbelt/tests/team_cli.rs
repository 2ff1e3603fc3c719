//! A team's deployment through the real binary: three `toolbelt mcp --http` replicas behind
//! HAProxy (Debian's package) with affinity on `Mcp-Session-Id`, sharing a PostgreSQL
//! database, driven by the official Python SDK (`tests/peers/team_client.py`): sessions stay on
//! their replica, agents on different replicas share one task list and never both claim a
//! task, a replica killed with SIGKILL mid-call loses only its own calls, a new session goes
//! on elsewhere, and the audit chain they share verifies. Without affinity, a session's
//! requests reach the replica that holds it, and MCP 2026-07-28 requests (no protocol
//! session) are served alike by every replica, from the state they share.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/modern.rs"]
mod modern;
#[path = "common/peers.rs"]
mod peers;

use std::collections::BTreeSet;
use std::process::Command;

/// The test database (in a fresh schema named `schema`), when HAProxy is here too; `None`
/// (skipped) outside CI without them.
fn haproxy_and_postgres(schema: &str) -> Option<String> {
    let haproxy = Command::new("haproxy").arg("-v").output().is_ok_and(|o| o.status.success());
    let url = std::env::var("TOOLBELT_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty());
    if haproxy && let Some(url) = url {
        // A schema of the test's own, made fresh: the audit chain holds only this test's records.
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
        return Some(format!("{url}?options=-csearch_path%3D{schema}"));
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(!ci, "HAProxy and TOOLBELT_TEST_POSTGRES_URL are needed: .ci/run installs one and starts the other");
    eprintln!("skipped: needs haproxy and PostgreSQL (.ci/postgres.sh, TOOLBELT_TEST_POSTGRES_URL)");
    None
}

#[test]
fn three_replicas_behind_haproxy_share_a_task_list_and_survive_a_killed_replica() {
    let Some(peers) = peers::Peers::find() else { return };
    let Some(url) = haproxy_and_postgres("team_cli") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("team_client.py")).arg(peers::toolbelt()).arg(&url).arg(dir.path());
    let seen = peers::run(cmd, dir.path(), "");

    // Spread over the replicas, and each session stays where it opened.
    let placed = &seen["placed"];
    assert_eq!(placed, &seen["placed_again"], "{seen}");
    let replicas: BTreeSet<&str> = ["a", "b", "c"].iter().map(|k| placed[k].as_str().unwrap()).collect();
    assert_eq!(replicas.len(), 3, "round robin over three replicas: {placed}");

    // One list, one claim.
    assert_eq!(seen["listed_on_b"]["tasks"][0]["subject"], "Ship the release", "{seen}");
    let claims = &seen["claims"];
    let won: Vec<&str> = ["agent-a", "agent-b"].into_iter().filter(|a| claims[a]["is_error"] == false).collect();
    assert_eq!(won.len(), 1, "{claims}");
    let lost = if won[0] == "agent-a" { "agent-b" } else { "agent-a" };
    assert!(claims[lost]["text"].as_str().unwrap().contains("task #1 is taken"), "{claims}");
    assert_eq!(seen["owner_seen_by_c"], won[0], "{seen}");

    // Ids name their replica. A background task asked for on another replica is said to run
    // where it started.
    let task_id = seen["background_id"].as_str().unwrap();
    assert_eq!(task_id, format!("bash_1@{}", placed["a"].as_str().unwrap()), "{seen}");
    let elsewhere = &seen["background_elsewhere"];
    assert_eq!(elsewhere["is_error"], true, "{elsewhere}");
    let said = elsewhere["text"].as_str().unwrap();
    let expected = format!(
        "background task `{task_id}` runs on replica {}, and this is replica {}",
        placed["a"].as_str().unwrap(),
        elsewhere["asked_on"].as_str().unwrap()
    );
    assert!(said.contains(&expected), "{said}");

    // The killed replica's call fails, in words; the others go on.
    let killed = &seen["killed"];
    let exception = killed["call"]["exception"].as_str().unwrap_or_default();
    assert!(!exception.is_empty(), "the client got an error, not a result: {killed}");
    assert!(killed["call"]["after_kill"].as_f64().unwrap() < 25.0, "not left hanging: {killed}");
    let survivors = seen["survivors"].as_object().unwrap();
    assert_eq!(survivors.len(), 2, "{seen}");
    for (name, r) in survivors {
        assert_eq!(r["is_error"], false, "{name}: {r}");
    }
    let victim = killed["replica"].as_str().unwrap();
    let fresh = seen["new_session_on"].as_str().unwrap();
    assert_ne!(fresh, victim, "a new session opens on a live replica");
    assert_eq!(seen["listed_on_new"]["tasks"][0]["owner"], won[0], "{seen}");
    // A session the dead replica opened is named as its, and said to be gone with it.
    let session = seen["victim_session"].as_str().unwrap();
    assert!(session.starts_with(&format!("{victim}.")), "{session}");
    let (status, message) = (&seen["victim_session_after"][0], seen["victim_session_after"][1].as_str().unwrap());
    assert_eq!(status, 404, "{seen}");
    assert!(
        message
            .contains(&format!("the session {session} was opened on replica {victim}, and this is replica replica-"))
            && message.contains("is out of reach"),
        "{message}"
    );

    // The one audit chain the replicas share holds, with each replica's records (the killed
    // one's up to where it died).
    let verdict = &seen["verify"];
    assert_eq!(verdict["ok"], true, "{verdict}");
    let by_replica = verdict["replicas"].as_object().unwrap();
    assert_eq!(by_replica.len(), 3, "{verdict}");
    assert!(by_replica.values().all(|n| n.as_u64().unwrap() >= 2), "{verdict}");
}

#[test]
fn without_affinity_a_session_s_requests_are_passed_on_to_the_replica_that_holds_it() {
    let Some(peers) = peers::Peers::find() else { return };
    let Some(url) = haproxy_and_postgres("team_forward") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("team_forward_client.py")).arg(peers::toolbelt()).arg(&url).arg(dir.path());
    let seen = peers::run(cmd, dir.path(), "");

    // Round robin sends the session's requests to every replica; all reach the one that holds
    // it, so its shell always answers from there.
    let answers = seen["shell_answers"].as_array().unwrap();
    assert_eq!(answers.len(), 9, "{seen}");
    assert!(answers.iter().all(|a| a["is_error"] == false), "{seen}");
    let owners: BTreeSet<&str> = answers.iter().map(|a| a["text"].as_str().unwrap()).collect();
    assert_eq!(owners.len(), 1, "one replica holds the session: {seen}");
    // A background task is read back, and its read position kept, across the replicas.
    let background = &seen["background"];
    let outputs = background["outputs"].as_array().unwrap();
    assert!(outputs.iter().all(|o| o["is_error"] == false), "{background}");
    assert!(outputs[0]["text"].as_str().unwrap().contains("done-in-background"), "{background}");
    assert!(
        outputs[1..].iter().all(|o| o["text"].as_str().unwrap().contains("No new output since the last read")),
        "{background}"
    );

    // Asked of another replica, a session's request is passed on, once.
    let session = seen["session"].as_str().unwrap();
    assert!(session.starts_with("replica-0."), "{session}");
    assert_eq!(seen["passed_on"][0], 200, "{seen}");
    assert!(seen["passed_on"][1].as_str().unwrap().contains("\"result\""), "{seen}");
    assert_eq!(seen["passed_on_twice"][0], 404, "{seen}");

    // Its owner killed, the session is gone, in words.
    assert_eq!(seen["after_kill"][0], 404, "{seen}");
    let message = seen["after_kill"][1].as_str().unwrap();
    assert!(
        message
            .contains(&format!("the session {session} was opened on replica replica-0, and this is replica replica-1")),
        "{message}"
    );
    // A replica that stopped is not asked.
    assert_eq!(seen["after_stop"][0], 404, "{seen}");
    assert!(seen["after_stop"][1].as_str().unwrap().contains("was opened on replica replica-2"), "{seen}");

    // In the database: the stopped replica left the table, the killed one could not; the calls
    // passed on are recorded in the owner's audit records with the client's own address.
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let names: Vec<String> =
        db.query("SELECT name FROM team_forward.replicas", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert!(names.contains(&"replica-0".to_string()) && !names.contains(&"replica-2".to_string()), "{names:?}");
    let forwarded: i64 = db
        .query_one(
            "SELECT count(*) FROM team_forward.audit_log WHERE line::json->'client'->>'forwarded_for' LIKE '127.0.0.1:%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(forwarded >= 1, "calls passed on name their client: {forwarded}");
}

#[test]
fn requests_without_a_protocol_session_find_their_state_on_every_replica() {
    let Some(peers) = peers::Peers::find() else { return };
    let Some(url) = haproxy_and_postgres("team_modern") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("team_modern_client.py")).arg(peers::toolbelt()).arg(&url).arg(dir.path());
    let seen = peers::run(cmd, dir.path(), "");
    let root = dir.path().join("app");

    // The whole of a 2026-07-28 session, its requests spread round-robin over three replicas:
    // the Edit after a Read made on another replica, approvals and questions answered in
    // retries that other replicas redeem, once.
    modern::check_modern_session(&seen, &root);

    // A `cd` made on one replica holds on the others, which are all asked.
    assert_eq!(seen["cd"][0], false, "{seen}");
    let pwd = seen["pwd"].as_array().unwrap();
    let sub = root.join("sub").canonicalize().unwrap();
    assert!(pwd.iter().all(|p| p[0] == false && p[1][0] == sub.to_str().unwrap()), "{seen}");
    let replicas: BTreeSet<&str> = pwd.iter().map(|p| p[1][1].as_str().unwrap()).collect();
    assert_eq!(replicas.len(), 3, "{seen}");

    // A grant for the session, given through one replica, holds on every one.
    assert_eq!(seen["granted"][0], false, "{seen}");
    let after = &seen["after_grant"];
    assert_eq!(after["asked"], serde_json::json!([]), "{seen}");
    let answers = after["answers"].as_array().unwrap();
    assert!(answers.iter().all(|a| a[0] == false), "{seen}");
    let served: BTreeSet<&str> = answers.iter().map(|a| a[1].as_str().unwrap()).collect();
    assert_eq!(served.len(), 3, "the grant was used on every replica: {seen}");
    assert!(root.join("sub/granted.txt").exists());

    // A background command started through the proxy runs on one replica; its output is read
    // through the proxy three times, so from every replica: the others pass the call on.
    let background = &seen["background"];
    let id = background["id"].as_str().unwrap();
    assert!(id.starts_with("bash_") && id.contains("@replica-"), "{background}");
    for output in background["outputs"].as_array().unwrap() {
        assert_eq!(output[0], false, "{background}");
    }
    let first = background["outputs"][0][1].as_str().unwrap();
    assert!(
        first.contains("bg-done") && first.contains(&format!("started-on-{}", id.split('@').nth(1).unwrap())),
        "{background}"
    );

    // Files read at once on three replicas all count as read: each is then edited on every
    // replica in turn, each Edit knowing of the reads and edits made on the others.
    let parallel = &seen["parallel"];
    assert!(parallel["reads"].as_object().unwrap().values().all(|e| e == false), "{parallel}");
    let edits = parallel["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 9, "{parallel}");
    assert!(edits.iter().all(|e| e[2] == false), "{parallel}");
    for name in ["a.txt", "b.txt", "c.txt"] {
        assert_eq!(std::fs::read_to_string(root.join("sub").join(name)).unwrap(), format!("v3 {name}\n"));
    }

    // The state is in the database, under what the requests proved (no token here).
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let slots: Vec<String> = db
        .query("SELECT slot FROM team_modern.shared_session_slots WHERE owner = 'token-none' ORDER BY slot", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for slot in ["cwd", "file_ledger", "permission_grants"] {
        assert!(slots.iter().any(|s| s == slot), "{slots:?}");
    }
    let outstanding: i64 = db.query_one("SELECT count(*) FROM team_modern.request_states", &[]).unwrap().get(0);
    assert_eq!(outstanding, 0, "every state issued was redeemed, once");
}
