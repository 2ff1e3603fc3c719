//! The state of requests without a protocol session in a shared database, as replicas (each
//! with a pool of its own) use it: writes that name a version another replica moved past are
//! refused and lose nothing; every replica reads the same sealing key; a request state is
//! spent once, however many replicas try at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use toolbelt_tools::storage::{SessionTable, SharedStorage};

fn replica(url: &str) -> Arc<SharedStorage> {
    Arc::new(SharedStorage::new(url, None, 2).unwrap())
}

fn slots(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn a_write_from_a_stale_version_is_refused_and_what_changed_since_is_read_in_order() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "sessions_versions");
    let (a, b) = (replica(&url), replica(&url));
    let (a, b) = (SessionTable::new(&a), SessionTable::new(&b));

    assert_eq!(a.write("token-x", 0, &slots(&[("cwd", "\"/w\""), ("todos", "[]")])).unwrap(), Ok(1));
    // B has not seen version 1: its write is refused, whole.
    assert_eq!(b.write("token-x", 0, &slots(&[("cwd", "\"/elsewhere\"")])).unwrap(), Err(1));
    let seen = b.changed_since("token-x", 0).unwrap();
    assert_eq!(
        seen.iter().map(|s| (s.slot.as_str(), s.version, s.value.as_str())).collect::<Vec<_>>(),
        [("cwd", 1, "\"/w\""), ("todos", 1, "[]")]
    );
    assert_eq!(b.write("token-x", 1, &slots(&[("cwd", "\"/w/sub\"")])).unwrap(), Ok(2));
    // Only what changed after the version a replica saw; another owner's state is apart.
    let after = a.changed_since("token-x", 1).unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!((after[0].slot.as_str(), after[0].version, after[0].value.as_str()), ("cwd", 2, "\"/w/sub\""));
    assert!(a.changed_since("token-y", 0).unwrap().is_empty());
}

#[test]
fn replicas_writing_at_once_each_land_once_in_version_order() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "sessions_race");
    // Eight replicas each write 10 times, each write naming the version it last saw and
    // trying again (having read what came in between) when it was refused.
    let threads: Vec<_> = (0..8)
        .map(|r| {
            let shared = replica(&url);
            std::thread::spawn(move || {
                let table = SessionTable::new(&shared);
                let mut seen = 0;
                for n in 0..10 {
                    loop {
                        let value = format!("\"{r}-{n}\"");
                        match table.write("token-race", seen, &slots(&[(&format!("r{r}"), &value)])).unwrap() {
                            Ok(v) => {
                                seen = v;
                                break;
                            }
                            Err(current) => {
                                let newest = table.changed_since("token-race", seen).unwrap().last().unwrap().version;
                                assert!(newest >= current, "{newest} < {current}");
                                seen = current;
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let table_owner = replica(&url);
    let all = SessionTable::new(&table_owner).changed_since("token-race", 0).unwrap();
    assert_eq!(all.len(), 8);
    assert!(all.iter().all(|s| s.value.ends_with("-9\"")), "{all:?}");
    // 80 writes, 80 versions: none lost, none twice.
    assert_eq!(all.iter().map(|s| s.version).max(), Some(80));
}

#[test]
fn every_replica_seals_with_one_key_and_a_state_is_spent_once() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "sessions_rounds");
    let replicas: Vec<_> = (0..4).map(|_| replica(&url)).collect();
    let keys: Vec<Vec<u8>> = replicas.iter().map(|r| SessionTable::new(r).sealing_key().unwrap()).collect();
    assert_eq!(keys[0].len(), 32);
    assert!(keys.iter().all(|k| *k == keys[0]));

    SessionTable::new(&replicas[0]).issue("n1", Duration::from_secs(600)).unwrap();
    // Four replicas redeem the same state at once: one wins.
    let spent: Vec<bool> = std::thread::scope(|s| {
        let tries: Vec<_> =
            replicas.iter().map(|r| s.spawn(move || SessionTable::new(r).spend("n1").unwrap())).collect();
        tries.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(spent.iter().filter(|s| **s).count(), 1, "{spent:?}");
    // Never issued, or lapsed: not spent.
    assert!(!SessionTable::new(&replicas[1]).spend("never").unwrap());
    SessionTable::new(&replicas[1]).issue("n2", Duration::ZERO).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!SessionTable::new(&replicas[2]).spend("n2").unwrap());
}
