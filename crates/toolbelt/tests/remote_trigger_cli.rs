//! `RemoteTrigger` through the real binary against a loopback server playing a CI service:
//! the request built from the trigger's template (payload values escaped for where they go,
//! secrets from the environment, never from the payload), the answer returned, failures
//! named, `list`, and `RemoteTrigger(NAME)` rules matching the trigger.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbelt_tools::web::testing::{Reply, Server};

#[path = "common/hermetic.rs"]
mod hermetic;

struct Ci {
    server: Server,
    _runtime: tokio::runtime::Runtime,
}

/// A CI service: `POST /repos/acme/app/dispatches` with the right token starts a run.
fn ci() -> Ci {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(Server::start(|req| {
            if req.header("authorization") != Some("Bearer ci-SECRET-token") {
                return Reply::status(401, "application/json", r#"{"message":"Bad credentials"}"#);
            }
            match req.path() {
                "/repos/acme/app/dispatches" => match req.json()["ref"].as_str() {
                    Some("main") => Reply::ok("application/json", r#"{"run_id":4242,"state":"queued"}"#),
                    _ => Reply::status(422, "application/json", r#"{"message":"No ref found"}"#),
                },
                "/hooks/build" => Reply::status(202, "text/plain", ""),
                _ => Reply::status(404, "application/json", r#"{"message":"Not Found"}"#),
            }
        }))
        .unwrap();
    Ci { server, _runtime: runtime }
}

fn project(ci: &Ci) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    let base = ci.server.url("");
    let base = base.trim_end_matches('/');
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[triggers.deploy]\ndescription = \"Deploy a ref\"\nurl = \"{base}/repos/{{owner}}/app/dispatches\"\n\
             headers = {{ Authorization = \"Bearer ${{TB_CI_TOKEN}}\" }}\n\
             body = '{{\"ref\": \"{{ref}}\", \"note\": \"{{note}}\"}}'\n\
             [triggers.build]\nurl = \"{base}/hooks/build\"\nheaders = {{ Authorization = \"Bearer ${{TB_CI_TOKEN}}\" }}\n"
        ),
    )
    .unwrap();
    (dir, root)
}

fn trigger(root: &Path, args: &[&str], input: Value) -> (Value, i32) {
    let out = hermetic::toolbelt(root)
        .env("TB_CI_TOKEN", "ci-SECRET-token")
        .args(args)
        .args(["call", "--json", "RemoteTrigger", &input.to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    (serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}")), out.status.code().unwrap_or(-1))
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_trigger_is_called_with_its_template_filled_and_its_answer_returned() {
    let ci = ci();
    let (_dir, root) = project(&ci);
    let allow = ["--allow", "RemoteTrigger"];
    let payload = json!({"owner": "acme", "ref": "main", "note": "ship \"it\" ${TB_CI_TOKEN}"});
    let (ran, code) = trigger(&root, &allow, json!({"trigger": "deploy", "payload": payload}));
    assert_eq!(code, 0, "{ran}");
    assert_eq!(ran["structured"]["status"], 200);
    assert!(text(&ran).contains(r#"{"run_id":4242,"state":"queued"}"#), "{ran}");
    let sent = &ci.server.requests()[0];
    // The body is the template, the payload escaped into it; `${…}` in the payload stays text.
    assert_eq!(sent.json(), json!({"ref": "main", "note": "ship \"it\" ${TB_CI_TOKEN}"}));
    assert_eq!(sent.header("content-type"), Some("application/json"));

    // Without a body template, the payload is the body.
    let (built, code) = trigger(&root, &allow, json!({"trigger": "build", "payload": {"sha": "abc"}}));
    assert_eq!(code, 0, "{built}");
    assert_eq!(text(&built), "Trigger `build` answered HTTP 202 (no body)");
    assert_eq!(ci.server.requests()[1].json(), json!({"sha": "abc"}));

    // A refusal gives the status and the service's answer; a missing field is named first.
    let (refused, code) =
        trigger(&root, &allow, json!({"trigger": "deploy", "payload": {"owner": "acme", "ref": "x", "note": ""}}));
    assert_eq!(code, 1);
    assert!(text(&refused).contains(r#"trigger `deploy` answered HTTP 422: {"message":"No ref found"}"#), "{refused}");
    let (missing, code) = trigger(&root, &allow, json!({"trigger": "deploy", "payload": {"owner": "acme"}}));
    assert_eq!(code, 1);
    assert!(text(&missing).contains("payload.ref is missing"), "{missing}");
    assert_eq!(ci.server.requests().len(), 3, "the incomplete call reached the service");
    // A payload value cannot move the request elsewhere: it is escaped into the path.
    let (escaped, _) = trigger(
        &root,
        &allow,
        json!({"trigger": "deploy", "payload": {"owner": "../../hooks/build?", "ref": "main", "note": ""}}),
    );
    assert!(text(&escaped).contains("HTTP 404"), "{escaped}");
    assert!(
        ci.server.requests()[3].path().starts_with("/repos/..%2F..%2Fhooks%2Fbuild%3F/app/"),
        "{}",
        ci.server.requests()[3].path()
    );
    for result in [&ran, &built, &refused, &missing, &escaped] {
        assert!(!result.to_string().contains("ci-SECRET-token"), "{result}");
    }
}

#[test]
fn triggers_are_listed_and_a_rule_names_one() {
    let ci = ci();
    let (_dir, root) = project(&ci);
    let (listed, code) = trigger(&root, &[], json!({"action": "list"}));
    assert_eq!(code, 0, "{listed}");
    let origin = ci.server.url("").trim_end_matches('/').to_string();
    assert_eq!(
        text(&listed),
        format!("2 trigger(s):\nbuild: POST {origin}\ndeploy: POST {origin}; payload: owner, ref, note — Deploy a ref")
    );

    let (asked, code) = trigger(&root, &[], json!({"trigger": "build"}));
    assert_eq!(code, 1);
    assert!(text(&asked).contains(&format!("contacts {origin}")), "{asked}");
    let (allowed, code) = trigger(&root, &["--allow", "RemoteTrigger(build)"], json!({"trigger": "build"}));
    assert_eq!(code, 0, "{allowed}");
    let (other, code) = trigger(
        &root,
        &["--allow", "RemoteTrigger(build)"],
        json!({"trigger": "deploy", "payload": {"owner": "build"}}),
    );
    assert_eq!(code, 1, "{other}");
    let (unknown, _) = trigger(&root, &["--allow", "RemoteTrigger"], json!({"trigger": "nope"}));
    assert!(text(&unknown).contains("no trigger `nope`; the configured ones are build, deploy"), "{unknown}");
}
