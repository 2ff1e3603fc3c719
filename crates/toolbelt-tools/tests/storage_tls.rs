//! TLS to the shared database (`sslmode=require`): connections are encrypted and the server's
//! certificate is verified, against the system's roots plus `storage.ca_file`; a certificate
//! nobody trusts is refused, naming the server; without `sslmode=require` connections are plain.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use toolbelt_tools::storage::{AuditChain, SharedStorage, StorageError};

/// The test database and the CA its certificate chains to; `None` (skipped) outside CI
/// without them.
fn database() -> Option<(String, std::path::PathBuf)> {
    let url = common::postgres_url()?;
    let ca = std::env::var("TOOLBELT_TEST_POSTGRES_CA").ok().filter(|c| !c.is_empty());
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(ca.is_some() || !ci, "TOOLBELT_TEST_POSTGRES_CA is not set: .ci/run sets it beside the URL");
    Some((url, ca?.into()))
}

fn with_ssl(url: &str) -> String {
    format!("{url}{}sslmode=require", if url.contains('?') { '&' } else { '?' })
}

/// How many of toolbelt's connections to the server are encrypted, as the server sees them.
fn encrypted(url: &str, name: &str) -> i64 {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query_one(
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE s.ssl AND a.application_name = $1",
        &[&name],
    )
    .unwrap()
    .get(0)
}

#[test]
fn sslmode_require_encrypts_and_verifies_the_server() {
    let Some((url, ca)) = database() else { return };
    let schema = common::postgres_schema(&url, "storage_tls");
    // A name of its own, to count this test's connections.
    let url_tls = with_ssl(&format!("{schema}&application_name=toolbelt-tls-test"));
    let shared = Arc::new(SharedStorage::connect_with(&url_tls, None, 2, Some(&ca)).unwrap());
    shared.check().unwrap();
    let chain = AuditChain::new(Arc::clone(&shared));
    chain
        .append(&[("tls:1".into(), br#"{"event":"over tls"}"#.to_vec())], toolbelt_runtime::audit::chain_line)
        .unwrap();
    assert!(encrypted(&url, "toolbelt-tls-test") >= 1, "the pool's connection is encrypted");
    drop(chain);
    drop(shared);

    // The same server without its CA: refused, named, never the password.
    let untrusted = SharedStorage::connect_with(&with_ssl(&url), None, 1, None).unwrap();
    let e = untrusted.check().unwrap_err().to_string();
    assert!(e.starts_with("cannot reach the PostgreSQL server toolbelt@127.0.0.1:"), "{e}");
    assert!(e.contains("certificate"), "{e}");
    assert!(!e.contains("toolbelt-test"), "no password: {e}");

    // A CA file that is not one.
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("ca.pem");
    std::fs::write(&bogus, "not a certificate\n").unwrap();
    let e = SharedStorage::connect_with(&with_ssl(&url), None, 1, Some(&bogus)).unwrap_err();
    assert!(matches!(e, StorageError::Tls(_)), "{e}");
    assert!(e.to_string().contains("holds no PEM certificate"), "{e}");
    let e = SharedStorage::connect_with(&with_ssl(&url), None, 1, Some(&dir.path().join("missing.pem"))).unwrap_err();
    assert!(e.to_string().contains("cannot read storage.ca_file"), "{e}");
}

#[test]
fn without_sslmode_require_connections_are_plain() {
    let Some((url, _)) = database() else { return };
    let plain = SharedStorage::new(&format!("{url}?application_name=toolbelt-plain-test"), None, 1).unwrap();
    plain.check().unwrap();
    let chain_url = common::postgres_schema(&url, "storage_plain");
    let shared =
        Arc::new(SharedStorage::new(&format!("{chain_url}&application_name=toolbelt-plain-test"), None, 1).unwrap());
    AuditChain::new(Arc::clone(&shared))
        .append(&[("plain:1".into(), br#"{"event":"plain"}"#.to_vec())], toolbelt_runtime::audit::chain_line)
        .unwrap();
    assert_eq!(encrypted(&url, "toolbelt-plain-test"), 0);
}
