//! Upstream servers' OAuth tokens in the shared database: kept, replaced and forgotten by
//! key; and a turn at changing them held by one replica at a time, let go when dropped (from
//! any thread), waited for by the others.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use toolbelt_tools::storage::{SharedStorage, TokenTable};

fn replica(url: &str) -> TokenTable {
    TokenTable::new(Arc::new(SharedStorage::new(url, None, 2).unwrap()))
}

#[test]
fn tokens_are_kept_by_key_and_one_replica_at_a_time_changes_them() {
    let Some(url) = common::postgres_url() else { return };
    let url = common::postgres_schema(&url, "tokens_turns");
    let (a, b) = (replica(&url), replica(&url));
    assert_eq!(a.read("docs-0123").unwrap(), None);
    a.write("docs-0123", "https://docs.example/mcp", "{\"v\":1}").unwrap();
    b.write("docs-0123", "https://docs.example/mcp", "{\"v\":2}").unwrap();
    assert_eq!(a.read("docs-0123").unwrap().as_deref(), Some("{\"v\":2}"));
    assert_eq!(b.read("other-4567").unwrap(), None);

    // A holds the turn; B waits for it until A's turn is dropped, on another thread.
    let held = a.lock("docs-0123").unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&released);
    let waiter = std::thread::spawn(move || {
        let turn = b.lock("docs-0123").unwrap();
        (seen.load(Ordering::SeqCst), turn)
    });
    std::thread::sleep(Duration::from_millis(300));
    // Another server's turn is not this one's.
    drop(a.lock("other-4567").unwrap());
    released.store(true, Ordering::SeqCst);
    std::thread::spawn(move || drop(held)).join().unwrap();
    let (after_release, _turn) = waiter.join().unwrap();
    assert!(after_release, "B took the turn while A held it");

    assert!(a.delete("docs-0123").unwrap());
    assert!(!a.delete("docs-0123").unwrap());
    assert_eq!(a.read("docs-0123").unwrap(), None);
}
