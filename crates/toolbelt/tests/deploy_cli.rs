//! The container image and the Kubernetes manifests (`Dockerfile`, `deploy/kubernetes/`),
//! used as far as this machine can without a container engine or a cluster
//! (`tests/peers/deploy_client.py`): the manifests validate against the Kubernetes schemas and
//! fit together, the Dockerfile passes hadolint, and the Deployment's container, run as the pod
//! runs it, answers its probes, serves the official Python SDK under the Ingress's host, names
//! its sessions after its pod and drains on SIGTERM.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;

use std::path::Path;
use std::process::Command;

#[test]
fn the_manifests_validate_fit_together_and_run_as_a_pod_runs_them() {
    let Some(peers) = peers::Peers::find() else { return };
    let Some(url) = std::env::var("TOOLBELT_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(!ci, "TOOLBELT_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it");
        eprintln!("skipped: no PostgreSQL (start one with .ci/postgres.sh DIR and set TOOLBELT_TEST_POSTGRES_URL)");
        return;
    };
    // A schema of the test's own, made fresh: the audit chain and the replicas table are this test's.
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute("DROP SCHEMA IF EXISTS deploy_cli CASCADE; CREATE SCHEMA deploy_cli").unwrap();
    let url = format!("{url}?options=-csearch_path%3Ddeploy_cli");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("deploy_client.py")).arg(peers::toolbelt()).arg(&repo).arg(&url).arg(dir.path());
    let seen = peers::run(cmd, dir.path(), "");
    let log = seen["server_log"].as_str().unwrap_or_default();

    // Valid against the schemas; a broken manifest is not.
    assert_eq!(
        seen["kinds"],
        serde_json::json!(["ConfigMap", "Deployment", "Ingress", "PodDisruptionBudget", "Secret", "Service"])
    );
    assert_eq!(seen["validate"]["ok"], true, "{}", seen["validate"]);
    assert_eq!(seen["validate_broken"]["ok"], false, "{}", seen["validate_broken"]);
    assert_eq!(seen["hadolint"]["ok"], true, "{}", seen["hadolint"]);

    // The pieces fit.
    let fit = &seen["fit"];
    for key in [
        "deployment_selects_pods",
        "service_selects_pods",
        "pdb_selects_pods",
        "service_port_named",
        "ingress_names_service",
        "probes_on_port",
        "args_are_cmd",
    ] {
        assert_eq!(fit[key], true, "{key}: {fit}");
    }
    assert_eq!(fit["secret_keys"], fit["secret_has"], "{fit}");
    assert_eq!(fit["configmap_mounted_at"], "/etc/toolbelt", "where managed settings are read: {fit}");
    assert!(
        fit["grace_s"].as_u64().unwrap() >= fit["drain_s"].as_u64().unwrap() + 5,
        "the drain ends within the grace period: {fit}"
    );
    assert_eq!(seen["config_check"]["code"], 0, "{}", seen["config_check"]);

    // The container as the pod runs it.
    assert_eq!(seen["probes"]["readinessProbe"], serde_json::json!([200, "ready\n"]), "{seen}\n{log}");
    assert_eq!(seen["probes"]["livenessProbe"], serde_json::json!([200, "ok\n"]), "{seen}\n{log}");
    assert_eq!(seen["session"][0], 200, "{seen}\n{log}");
    assert!(
        seen["session"][1].as_str().unwrap().starts_with("toolbelt-7d9f8c6b5-x2k4q."),
        "named after the pod: {seen}"
    );
    assert_eq!(seen["other_host"][0], 403, "a Host it was not given: {seen}");
    assert_eq!(seen["read"]["is_error"], false, "{seen}\n{log}");
    assert!(seen["read"]["text"].as_str().unwrap().contains("deployed"), "{seen}");
    assert!(seen["advertised"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{seen}");
    assert_eq!(seen["exit"], 0, "drained and exited 0: {seen}\n{log}");
    // It recorded its calls in the shared audit chain, under its pod's name, and said where it
    // was while it served (and that it left when it stopped).
    let audit = client
        .query_one(
            "SELECT count(*) FROM deploy_cli.audit_log WHERE line::json->>'replica' = 'toolbelt-7d9f8c6b5-x2k4q'",
            &[],
        )
        .unwrap()
        .get::<_, i64>(0);
    assert!(audit >= 3, "a call, the drain and the stop: {audit}");
    let left: i64 = client.query_one("SELECT count(*) FROM deploy_cli.replicas", &[]).unwrap().get(0);
    assert_eq!(left, 0, "the stopped replica left the table");
}
