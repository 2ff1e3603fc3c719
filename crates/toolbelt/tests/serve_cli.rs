//! `toolbelt mcp --http` as an operator runs it, through the real binary: `/healthz`,
//! `/readyz`, `/metrics` (read with the official Prometheus parser) and the drain on SIGTERM,
//! with the official Python SDK as the clients.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/http_server.rs"]
mod http_server;
#[path = "common/peers.rs"]
mod peers;

use std::process::Command;

use serde_json::Value;

/// The value of a sample as the Prometheus parser read it (`name{label=value,…}`, labels
/// sorted), or 0.
fn sample(metrics: &Value, key: &str) -> f64 {
    metrics[key].as_f64().unwrap_or(0.0)
}

#[test]
fn an_operator_probes_reads_metrics_and_drains_on_sigterm() {
    let Some(peers) = peers::Peers::find() else { return };
    let (_dir, root) = peers::project();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("serve_client.py")).arg(peers::toolbelt()).arg(&root);
    let seen = peers::run(cmd, &root, "");
    let log = seen["server_log"].as_str().unwrap_or_default();

    // The probes.
    assert_eq!(seen["healthz"], serde_json::json!([200, "ok\n"]), "{seen}");
    assert_eq!(seen["readyz"], serde_json::json!([200, "ready\n"]), "{seen}");

    // The metrics, as the Prometheus parser reads them.
    let before = &seen["before"];
    assert_eq!(sample(before, "toolbelt_calls_total{outcome=ok,tool=Read}"), 1.0, "{before}");
    assert_eq!(sample(before, "toolbelt_calls_total{outcome=denied,tool=Bash}"), 1.0, "{before}");
    assert_eq!(sample(before, "toolbelt_calls_total{outcome=ok,tool=Bash}"), 1.0, "{before}");
    // A name no tool has is counted, but never becomes a label.
    assert_eq!(sample(before, "toolbelt_calls_total{outcome=unknown_tool,tool=(unknown)}"), 1.0, "{before}");
    assert!(!before.to_string().contains("NoSuchTool_x1"), "{before}");
    assert_eq!(sample(before, "toolbelt_decisions_total{decision=deny,source=rule}"), 1.0, "{before}");
    assert_eq!(sample(before, "toolbelt_call_duration_seconds_count{tool=Bash}"), 2.0, "{before}");
    assert_eq!(sample(before, "toolbelt_call_duration_seconds_bucket{le=+Inf,tool=Bash}"), 2.0, "{before}");
    assert_eq!(sample(before, "toolbelt_mcp_sessions_open{}"), 2.0, "{before}");
    assert_eq!(sample(before, "toolbelt_processes_running{}"), 1.0, "the background command: {before}");
    assert_eq!(sample(before, "toolbelt_storage_errors_total{store=audit}"), 0.0, "{before}");
    assert!(sample(before, "process_resident_memory_bytes{}") > 1e6, "{before}");
    let during = &seen["during"];
    assert_eq!(sample(during, "toolbelt_calls_running{}"), 2.0, "{during}");
    assert_eq!(sample(during, "toolbelt_processes_running{}"), 3.0, "{during}");

    // Draining: not ready, still alive, no new session, no new call.
    assert_eq!(seen["readyz_draining"][0], 503, "{seen}");
    assert!(seen["readyz_draining"][1].as_str().unwrap().contains("draining"), "{seen}");
    assert_eq!(seen["healthz_draining"][0], 200, "{seen}");
    assert_eq!(seen["metrics_draining"], 1.0, "{seen}");
    assert_eq!(seen["new_session"][0], 503, "{seen}");
    assert!(seen["new_session"][1].as_str().unwrap().contains("shutting down"), "{seen}");
    assert!(seen["refused"]["exception"].as_str().unwrap().contains("the call was not run"), "{seen}");

    // The call that fits in the grace period (2 s) finishes; the other is cut, and says why.
    let calls = &seen["calls"];
    assert_eq!(calls["short"]["is_error"], false, "{calls}");
    assert_eq!(calls["short"]["text"], "finished\n", "{calls}");
    assert_eq!(calls["long"]["is_error"], true, "{calls}");
    assert!(calls["long"]["text"].as_str().unwrap().contains("shutting down and cut this call"), "{calls}");
    let cut_at = calls["long"]["after_term"].as_f64().unwrap();
    assert!((1.8..10.0).contains(&cut_at), "cut after the grace period, not before: {calls}");

    // Then the server is gone, exit 0, and so is the background command.
    assert_eq!(seen["exit"], 0, "{log}");
    assert!(seen["exit_after_term"].as_f64().unwrap() < 12.0, "{seen}");
    assert_eq!(seen["background_alive"], false, "{seen}");

    // The audit log tells the drain, each call with its end, and still verifies.
    assert_eq!(seen["verify"]["ok"], true, "{seen}");
    let audit = seen["audit"].as_array().unwrap();
    let events: Vec<&Value> = audit.iter().filter(|r| r.get("event").is_some()).collect();
    assert_eq!(events.len(), 2, "{audit:?}");
    assert_eq!(events[0]["event"], "drain_started");
    assert_eq!(events[0]["signal"], "terminated");
    assert_eq!(events[0]["calls_running"], 2);
    assert_eq!(events[0]["grace_s"], 2);
    assert_eq!(events[1]["event"], "stopped");
    assert_eq!(events[1]["calls_cut"], 1);
    assert_eq!(events[1]["why"], "grace period ended");
    assert!(events[1]["processes_killed"].as_u64().unwrap() >= 1, "{audit:?}");
    let long = audit.iter().find(|r| r["input"]["command"] == "sleep 60; echo never").unwrap();
    assert_eq!(long["outcome"], "cancelled", "{long}");
    let short = audit.iter().find(|r| r["input"]["command"] == "sleep 1.2; echo finished").unwrap();
    assert_eq!(short["outcome"], "ok", "{short}");
    assert!(audit.last().unwrap()["event"] == "stopped", "the stop is the last record: {audit:?}");
}

#[test]
fn a_second_signal_cuts_at_once() {
    let Some(peers) = peers::Peers::find() else { return };
    let (_dir, root) = peers::project();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("serve_client.py")).arg(peers::toolbelt()).arg(&root).arg("twice");
    let seen = peers::run(cmd, &root, "");
    assert_eq!(seen["still_running"], true, "the first signal drains (60 s of grace): {seen}");
    assert_eq!(seen["call"]["is_error"], true, "{seen}");
    assert!(seen["call"]["text"].as_str().unwrap().contains("shutting down"), "{seen}");
    assert_eq!(seen["exit"], 0, "{seen}");
    assert!(seen["exit_after_second"].as_f64().unwrap() < 8.0, "{seen}");
    let audit = seen["audit"].as_array().unwrap();
    let stopped = audit.iter().find(|r| r["event"] == "stopped").unwrap();
    assert_eq!(stopped["why"], "terminated", "{stopped}");
    assert_eq!(stopped["calls_cut"], 1, "{stopped}");
    assert_eq!(seen["verify"]["ok"], true, "{seen}");
}

/// `GET` `path` of the server at `base`, with `headers`: the status and the body.
fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut request = reqwest::Client::new().get(format!("{base}{path}"));
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    })
}

#[test]
fn metrics_take_the_token_and_a_loopback_host_while_probes_take_neither() {
    let (_dir, root) = peers::project();
    let server =
        http_server::HttpServer::start_env(&root, &["--token-env", "SERVE_TOKEN"], &[("SERVE_TOKEN", "s3cret")]);
    let base = server.url.trim_end_matches("/mcp").to_string();
    assert_eq!(get(&base, "/healthz", &[]), (200, "ok\n".into()));
    assert_eq!(get(&base, "/readyz", &[]), (200, "ready\n".into()));
    assert_eq!(get(&base, "/metrics", &[]).0, 401, "no token");
    assert_eq!(get(&base, "/metrics", &[("authorization", "Bearer wrong")]).0, 401);
    let (status, body) = get(&base, "/metrics", &[("authorization", "Bearer s3cret")]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("# TYPE toolbelt_calls_total counter"), "{body}");
    drop(server);

    // Without a token on loopback, a page that rebinds its name to 127.0.0.1 cannot read it.
    let server = http_server::HttpServer::start(&root);
    let base = server.url.trim_end_matches("/mcp").to_string();
    assert_eq!(get(&base, "/metrics", &[]).0, 200);
    assert_eq!(get(&base, "/metrics", &[("host", "evil.example")]).0, 403);
    assert_eq!(get(&base, "/metrics", &[("origin", "http://evil.example")]).0, 403);
    assert_eq!(get(&base, "/healthz", &[("host", "evil.example")]).0, 200, "a probe tells nothing");
}

#[test]
fn a_session_this_server_does_not_hold_is_answered_404_in_words() {
    let (_dir, root) = peers::project();
    let server = http_server::HttpServer::start(&root);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (status, body) = runtime.block_on(async {
        let ping = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let response = reqwest::Client::new()
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", "opened-on-another-replica")
            .json(&ping)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    });
    assert_eq!(status, 404, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("the session opened-on-another-replica is not open on this server"), "{message}");
    assert!(message.contains("start a new session with initialize"), "{message}");
}
