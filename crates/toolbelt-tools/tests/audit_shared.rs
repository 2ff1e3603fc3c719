//! The audit log's chain in a shared database: replicas (each with a pool of its own)
//! appending at once make one chain with no gap and no fork, which the same check as a file's
//! verifies; an edited, removed or reordered row is found and named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use toolbelt_runtime::audit::{Anchor, Broken, ChainCheck, Summary, chain_line};
use toolbelt_tools::storage::{AuditChain, SharedStorage};

/// How many replicas append at once, and how many batches each.
const REPLICAS: usize = 8;
const BATCHES: usize = 25;

fn chain(url: &str) -> AuditChain {
    AuditChain::new(Arc::new(SharedStorage::new(url, None, 2).unwrap()))
}

fn verify(chain: &AuditChain) -> Result<Summary, Broken> {
    let check = std::cell::RefCell::new(ChainCheck::new("table audit_log", "table audit_head"));
    let mut broken = None;
    let mut at = 0;
    chain
        .read(
            &mut |h| check.borrow_mut().anchor(Anchor { seq: h.seq, sha256: h.sha256, first: h.first }),
            &mut |line| {
                at += 1;
                broken = check.borrow_mut().line(line.as_bytes(), at).err();
                broken.is_none()
            },
        )
        .unwrap();
    match broken {
        Some(b) => Err(b),
        None => check.into_inner().finish(),
    }
}

fn body(replica: usize, n: usize) -> (String, Vec<u8>) {
    let body = format!(r#"{{"replica":"r{replica}","time":"2026-11-30T00:00:00.000Z","call_id":"{n}"}}"#);
    (format!("r{replica}:{n}"), body.into_bytes())
}

#[test]
fn replicas_appending_at_once_make_one_chain_without_gaps_or_forks() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "audit_concurrent");
    let threads: Vec<_> = (0..REPLICAS)
        .map(|r| {
            let url = url.clone();
            std::thread::spawn(move || {
                // Each replica has its own pool, as each machine has.
                let chain = chain(&url);
                let mut written = 0;
                for b in 0..BATCHES {
                    let bodies: Vec<(String, Vec<u8>)> = (0..=b % 4).map(|i| body(r, b * 10 + i)).collect();
                    chain.append(&bodies, chain_line).unwrap();
                    written += bodies.len();
                }
                written
            })
        })
        .collect();
    let written: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let summary = verify(&chain(&url)).unwrap();
    assert_eq!((summary.records, summary.first_seq, summary.last_seq), (written as u64, 1, written as u64));
    assert_eq!(summary.replicas.len(), REPLICAS, "{summary:?}");
    assert!(summary.replicas.values().all(|&n| n as usize == written / REPLICAS), "{summary:?}");
}

#[test]
fn an_edited_removed_or_reordered_row_is_named() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "audit_tampered");
    let log = chain(&url);
    for n in 0..5 {
        log.append(&[body(0, n)], chain_line).unwrap();
    }
    assert_eq!(verify(&log).unwrap().records, 5);
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();

    // An edited record: the next one carries another digest of it.
    db.execute(
        "UPDATE audit_log SET line = replace(line, '\"call_id\":\"2\"', '\"call_id\":\"x\"') WHERE seq = 3",
        &[],
    )
    .unwrap();
    let e = verify(&log).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record seq 3 (table audit_log line 3) was edited: record 4 carries a different digest of it"
    );
    db.execute(
        "UPDATE audit_log SET line = replace(line, '\"call_id\":\"x\"', '\"call_id\":\"2\"') WHERE seq = 3",
        &[],
    )
    .unwrap();
    assert!(verify(&log).is_ok());

    // A record removed from the middle, then the last one.
    let row = db.query_one("SELECT line, rid FROM audit_log WHERE seq = 3", &[]).unwrap();
    let (third, third_id): (String, String) = (row.get(0), row.get(1));
    db.execute("DELETE FROM audit_log WHERE seq = 3", &[]).unwrap();
    assert!(matches!(verify(&log), Err(Broken::Missing { first: 3, last: 3, .. })), "{:?}", verify(&log));
    db.execute("INSERT INTO audit_log (seq, line, rid) VALUES (3, $1, $2)", &[&third, &third_id]).unwrap();
    let row = db.query_one("SELECT line, rid FROM audit_log WHERE seq = 5", &[]).unwrap();
    let (last, last_id): (String, String) = (row.get(0), row.get(1));
    db.execute("DELETE FROM audit_log WHERE seq = 5", &[]).unwrap();
    assert_eq!(verify(&log).unwrap_err().to_string(), "the last record is missing: the head anchor says seq 5");

    // Two rows swapped (their seq columns), so they are read out of order.
    db.execute("INSERT INTO audit_log (seq, line, rid) VALUES (5, $1, $2)", &[&last, &last_id]).unwrap();
    db.batch_execute("UPDATE audit_log SET seq = -1 WHERE seq = 2; UPDATE audit_log SET seq = 2 WHERE seq = 4; UPDATE audit_log SET seq = 4 WHERE seq = -1")
        .unwrap();
    assert!(matches!(verify(&log), Err(Broken::OutOfOrder { .. } | Broken::Missing { .. })), "{:?}", verify(&log));

    // Appends go on after the anchor whatever rows say: the chain is the anchor's.
    db.batch_execute("UPDATE audit_log SET seq = -1 WHERE seq = 2; UPDATE audit_log SET seq = 2 WHERE seq = 4; UPDATE audit_log SET seq = 4 WHERE seq = -1")
        .unwrap();
    assert_eq!(log.append(&[body(0, 9)], chain_line).unwrap(), 1);
    assert_eq!(verify(&log).unwrap().last_seq, 6);

    // A batch sent again (its commit's answer lost) is not written twice: what landed is
    // skipped, what did not is appended.
    assert_eq!(log.append(&[body(0, 9), body(0, 10)], chain_line).unwrap(), 1);
    let summary = verify(&log).unwrap();
    assert_eq!((summary.records, summary.last_seq), (7, 7));
}

#[test]
fn a_chain_made_before_record_ids_goes_on() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "audit_version_1");
    // The chain as the first version made it: no record ids.
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    db.batch_execute(
        "CREATE TABLE toolbelt_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
         INSERT INTO toolbelt_schema VALUES ('audit', 1);
         CREATE TABLE audit_log (seq BIGINT PRIMARY KEY, line TEXT NOT NULL);
         CREATE TABLE audit_head (id SMALLINT PRIMARY KEY CHECK (id = 1), seq BIGINT NOT NULL, sha256 TEXT NOT NULL, first BIGINT NOT NULL);
         INSERT INTO audit_head VALUES (1, 0, repeat('0', 64), 0);",
    )
    .unwrap();
    let log = chain(&url);
    assert_eq!(log.append(&[body(0, 1), body(0, 2)], chain_line).unwrap(), 2);
    assert_eq!(verify(&log).unwrap().records, 2);
    let version: i32 =
        db.query_one("SELECT version FROM toolbelt_schema WHERE component = 'audit'", &[]).unwrap().get(0);
    assert_eq!(version, 2);
}
