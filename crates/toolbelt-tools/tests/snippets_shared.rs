//! The snippet tools on a team's shared database (PostgreSQL): the same scenarios as on an
//! SQLite file (`snippets/scenarios.rs`: the round trip, replacing by name, full-text search
//! with hostile punctuation, filters, missing snippets), each in a schema of its own; and what
//! only a shared database shows: replicas saving at once, and the scopes kept apart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{call_in, err_in, ok_in, session};
use serde_json::{Value, json};
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, SessionState, ToolContext};
use toolbelt_tools::snippets::SnippetStore;
use toolbelt_tools::storage::SharedStorage;

/// A call context working on `store`.
fn cx_for(s: &Arc<SessionState>, store: &SnippetStore) -> ToolContext {
    let mut services = Extensions::default();
    services.insert(store.clone());
    ToolContext::new("call", Arc::clone(s), CancellationToken::new(), EventSink::none(), Limits::default(), services)
}

/// A fresh schema of the test database, for one test.
fn database() -> Option<String> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let url = common::postgres_url()?;
    let schema = format!("snippets_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    // The blocking client makes the schema on a thread of its own: tests run in a runtime.
    Some(std::thread::spawn(move || common::postgres_schema(&url, &schema)).join().unwrap())
}

/// A session and the user's snippets kept in a fresh schema of the test database (in the
/// SQLite file in `dir` when there is no test database outside CI: skipped, in effect).
fn setup(dir: &Path) -> (Arc<SessionState>, SnippetStore) {
    let store = SnippetStore::user(&dir.join("data/toolbelt"));
    let store = match database() {
        Some(url) => store.kept_in(Arc::new(SharedStorage::new(&url, None, 4).unwrap())),
        None => store,
    };
    (session(dir, &[]), store)
}

include!("snippets/scenarios.rs");

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_saving_at_once_all_land_and_one_name_is_one_snippet() {
    let Some(url) = database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    // Four replicas, each with a pool of its own, save 10 snippets each, and all the same name.
    let stores: Vec<SnippetStore> = (0..4)
        .map(|_| SnippetStore::user(dir.path()).kept_in(Arc::new(SharedStorage::new(&url, None, 2).unwrap())))
        .collect();
    let mut saves = Vec::new();
    for (r, store) in stores.iter().enumerate() {
        for n in 0..10 {
            let (s, store) = (Arc::clone(&s), store.clone());
            saves.push(tokio::spawn(async move {
                save(&s, &store, json!({"name": format!("r{r}-{n}"), "code": format!("fn r{r}_{n}() {{}}")})).await;
                save(&s, &store, json!({"name": "shared", "code": format!("// by replica {r}")})).await;
            }));
        }
    }
    for save in saves {
        save.await.unwrap();
    }
    let (_, listed) = ok_in(cx_for(&s, &stores[0]), "snippet_list", json!({"limit": 100})).await;
    assert_eq!(listed["total"], 41, "{listed}");
    let (_, one) = ok_in(cx_for(&s, &stores[3]), "snippet_load", json!({"name": "shared"})).await;
    assert!(one["snippet"]["code"].as_str().unwrap().starts_with("// by replica "), "{one}");

    // A project's own snippets are apart from the user's (the team's), and from another
    // project's.
    let shared = Arc::new(SharedStorage::new(&url, None, 2).unwrap());
    let project = SnippetStore::project(&dir.path().join("state/projects/app-0123")).kept_in(Arc::clone(&shared));
    let other = SnippetStore::project(&dir.path().join("state/projects/web-4567")).kept_in(shared);
    save(&s, &project, json!({"name": "mine", "code": "x"})).await;
    assert_eq!(names(&s, &project, json!({})).await, ["mine"]);
    assert_eq!(names(&s, &other, json!({})).await, Vec::<String>::new());
    let e = err_in(cx_for(&s, &stores[0]), "snippet_load", json!({"name": "mine"})).await;
    assert!(e.starts_with("there is no snippet named `mine`"), "{e}");
}
