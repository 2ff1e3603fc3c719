//! The snippet tools through the registry, on a database in a temp directory: the round trip,
//! replacing by name, full-text search (words, prefixes, phrases, hostile punctuation), tag
//! and language filters, missing snippets and bad input answered with what to do, owner-only
//! and damaged files, many writers at once, and what the tools declare to the policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::Arc;

use common::{call_in, err_in, ok_in, session};
use serde_json::{Value, json};
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, SessionState, ToolContext, Touch};
use toolbelt_policy::rules::RuleEnv;
use toolbelt_policy::{Authorizer as _, CallInfo, Decision, PermissionEngine, PermissionMode, PermissionRules};
use toolbelt_tools::snippets::SnippetStore;

/// A call context working on `store`.
fn cx_for(s: &Arc<SessionState>, store: &SnippetStore) -> ToolContext {
    let mut services = Extensions::default();
    services.insert(store.clone());
    ToolContext::new("call", Arc::clone(s), CancellationToken::new(), EventSink::none(), Limits::default(), services)
}

/// A session and a store of the user's kind, both in `dir`.
fn setup(dir: &Path) -> (Arc<SessionState>, SnippetStore) {
    (session(dir, &[]), SnippetStore::user(&dir.join("data/toolbelt")))
}

include!("snippets/scenarios.rs");

#[tokio::test]
async fn bad_input_is_refused_with_what_to_send() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    let refused = |input: Value| err_in(cx_for(&s, &store), "snippet_save", input);
    let e = refused(json!({"name": "", "code": "x"})).await;
    assert!(e.starts_with("the snippet name is empty: give a short name such as `retry-with-backoff`"), "{e}");
    let e = refused(json!({"name": "   ", "code": "x"})).await;
    assert!(e.starts_with("the snippet name is empty"), "{e}");
    let e = refused(json!({"name": "n".repeat(129), "code": "x"})).await;
    assert!(e.starts_with("the snippet name is 129 characters long, over the limit of 128"), "{e}");
    let e = refused(json!({"name": "two\nlines", "code": "x"})).await;
    assert!(e.contains("line break"), "{e}");
    let e = refused(json!({"name": "huge", "code": "y".repeat((1 << 20) + 1)})).await;
    assert!(e.starts_with("`code` is 1048577 bytes, over the limit of 1048576 bytes (1 MiB) per snippet"), "{e}");
    assert!(e.len() < 400, "the code is not repeated: {} bytes", e.len());
    let e = refused(json!({"name": "blank", "code": " \n\t"})).await;
    assert_eq!(e, "`code` is empty: give the code to save");
    let e = refused(json!({"name": "d", "code": "x", "description": "d".repeat(4_001)})).await;
    assert!(e.starts_with("`description` is 4001 characters long, over the limit of 4000"), "{e}");
    let e = refused(json!({"name": "t", "code": "x", "tags": ["a b"]})).await;
    assert!(e.contains("has a space or comma in it"), "{e}");
    let e = refused(json!({"name": "l", "code": "x", "language": "x".repeat(41)})).await;
    assert!(e.contains("is too long: at most 40 characters"), "{e}");
    let e = refused(json!({"name": "x", "code": "x", "colour": "red"})).await;
    assert!(e.contains("unknown field `colour`"), "{e}");
    assert!(!store.path.exists(), "nothing refused was written");
    // Exactly at the limits is fine.
    save(&s, &store, json!({"name": "n".repeat(128), "code": "y".repeat(1 << 20)})).await;

    let e = err_in(cx_for(&s, &store), "snippet_load", json!({})).await;
    assert_eq!(e, "give snippet_load the snippet's `name` or its `id` (snippet_list shows both)");
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"name": "a", "id": 1})).await;
    assert_eq!(e, "give snippet_load `name` or `id`, not both: either one finds the snippet");
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"id": 0})).await;
    assert!(e.contains("id"), "{e}");
    let e = err_in(cx_for(&s, &store), "snippet_delete", json!({"name": ""})).await;
    assert!(e.starts_with("the snippet name is empty"), "{e}");
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn the_database_is_owner_only_and_made_by_the_first_save() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let data = dir.path().join("data/toolbelt");
    let store = SnippetStore::user(&data);
    assert_eq!(store.path, data.join("snippets.db"));
    ok_in(cx_for(&s, &store), "snippet_list", json!({"query": "x", "tags": ["y"]})).await;
    assert!(!data.exists(), "reading creates nothing");
    save(&s, &store, json!({"name": "a", "code": "x"})).await;
    assert_eq!(mode_of(&data), 0o700);
    assert_eq!(mode_of(&store.path), 0o600);
    for side in ["snippets.db-wal", "snippets.db-shm"] {
        let path = data.join(side);
        if path.exists() {
            assert_eq!(mode_of(&path), 0o600, "{side}");
        }
    }
    let journal: String =
        rusqlite::Connection::open(&store.path).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
    // A looser file and directory are tightened.
    std::fs::set_permissions(&store.path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    save(&s, &store, json!({"name": "b", "code": "y"})).await;
    assert_eq!((mode_of(&store.path), mode_of(&data)), (0o600, 0o700));
    // A project's snippets are another file, beside its task list.
    let project = SnippetStore::project(&dir.path().join("state/projects/app-0123"));
    assert_eq!(project.path, dir.path().join("state/projects/app-0123/snippets.db"));
    let (text, saved) = ok_in(cx_for(&s, &project), "snippet_save", json!({"name": "a", "code": "z"})).await;
    assert_eq!(text, "Saved snippet #1 `a` (1 line) in this project's snippets.");
    assert_eq!(saved["scope"], "project");
    assert_eq!(names(&s, &store, json!({})).await, ["a", "b"]);
}

#[tokio::test]
async fn a_damaged_or_foreign_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let garbage = SnippetStore::user(&dir.path().join("garbage"));
    std::fs::create_dir_all(garbage.path.parent().unwrap()).unwrap();
    std::fs::write(&garbage.path, "this is not a database, just text that is long enough to fill a header....")
        .unwrap();
    for (tool, input) in [
        ("snippet_list", json!({})),
        ("snippet_list", json!({"query": "x"})),
        ("snippet_load", json!({"name": "a"})),
        ("snippet_save", json!({"name": "a", "code": "x"})),
        ("snippet_delete", json!({"name": "a"})),
    ] {
        let e = err_in(cx_for(&s, &garbage), tool, input).await;
        assert!(e.contains("is damaged or holds something else") && e.contains("snippets.db"), "{tool}: {e}");
        assert!(e.contains("move it aside"), "{e}");
    }

    let foreign = SnippetStore::user(&dir.path().join("foreign"));
    std::fs::create_dir_all(foreign.path.parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(&foreign.path).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    drop(conn);
    let e = err_in(cx_for(&s, &foreign), "snippet_save", json!({"name": "a", "code": "x"})).await;
    assert!(e.contains("it holds tables of another program"), "{e}");

    let newer = SnippetStore::user(&dir.path().join("newer"));
    std::fs::create_dir_all(newer.path.parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(&newer.path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let e = err_in(cx_for(&s, &newer), "snippet_list", json!({})).await;
    assert!(e.contains("has schema version 99, newer than this toolbelt knows (1); use a newer toolbelt"), "{e}");

    // Rows edited into nonsense: reported, not a panic.
    let edited = SnippetStore::user(&dir.path().join("edited"));
    save(&s, &edited, json!({"name": "a", "code": "x"})).await;
    let conn = rusqlite::Connection::open(&edited.path).unwrap();
    conn.execute("UPDATE snippets SET created_ms = 'yesterday'", []).unwrap();
    drop(conn);
    let e = err_in(cx_for(&s, &edited), "snippet_load", json!({"name": "a"})).await;
    assert!(e.contains("is damaged or holds something else"), "{e}");

    // A directory where the file should be.
    let dir_store = SnippetStore { path: dir.path().to_path_buf(), ..SnippetStore::user(dir.path()) };
    let e = err_in(cx_for(&s, &dir_store), "snippet_list", json!({})).await;
    assert!(e.contains("cannot open the snippets database") || e.contains("not a regular file"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_writers_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    const WRITERS: usize = 8;
    const EACH: usize = 15;
    let mut handles = Vec::new();
    for w in 0..WRITERS {
        let (s, store) = (Arc::clone(&s), store.clone());
        handles.push(tokio::spawn(async move {
            for i in 0..EACH {
                let own = json!({"name": format!("w{w}-{i}"), "code": format!("writer {w} item {i}"),
                    "tags": [format!("w{w}")]});
                call_in(cx_for(&s, &store), "snippet_save", own).await.unwrap();
                // Everyone also saves one shared name: it stays one snippet.
                let shared = json!({"name": "shared", "code": format!("last written by {w}")});
                call_in(cx_for(&s, &store), "snippet_save", shared).await.unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let (_, listed) = ok_in(cx_for(&s, &store), "snippet_list", json!({"limit": 500})).await;
    assert_eq!(listed["total"], 1 + WRITERS * EACH);
    let (_, shared) = ok_in(cx_for(&s, &store), "snippet_load", json!({"name": "shared"})).await;
    assert!(shared["snippet"]["code"].as_str().unwrap().starts_with("last written by "));
    for w in 0..WRITERS {
        let mine = names(&s, &store, json!({"tags": [format!("w{w}")], "query": format!("writer {w}")})).await;
        assert_eq!(mine.len(), EACH, "writer {w}: {mine:?}");
    }
}

#[tokio::test]
async fn the_tools_declare_a_state_change_every_mode_allows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let s = session(&root, &[]);
    let store = SnippetStore::project(&root.join("state"));
    save(&s, &store, json!({"name": "a", "code": "x"})).await;
    let registry = common::registry();
    let calls = [
        ("snippet_save", json!({"name": "b", "code": "y"})),
        ("snippet_delete", json!({"name": "b"})),
        ("snippet_load", json!({"name": "a"})),
        ("snippet_list", json!({"query": "x"})),
    ];
    for (tool, input) in calls {
        let entry = registry.lookup(tool).unwrap();
        let mut prepared = entry.prepare(input).unwrap();
        let access = entry.tool().access(&mut prepared, &cx_for(&s, &store)).unwrap();
        match tool {
            "snippet_save" | "snippet_delete" => {
                assert!(!access.is_shared(), "{tool} changes the snippets alone");
                assert_eq!(access.touches, vec![Touch::State("this project's snippets".into())]);
            }
            _ => assert!(access.is_shared() && access.touches.is_empty(), "{tool}"),
        }
        for mode in PermissionMode::ALL {
            let engine = PermissionEngine::new(
                PermissionRules { mode, ..PermissionRules::default() },
                RuleEnv { home: root.clone(), cwd: root.clone() },
            );
            let info = CallInfo {
                session: &s,
                call_id: "c",
                cwd: &root,
                tool: entry.spec(),
                input: prepared.json(),
                access: &access,
            };
            let verdict = engine.authorize(&info);
            assert_eq!(verdict.decision, Decision::Allow, "{tool} in {mode}: {}", verdict.reason);
        }
    }
    // The names models commonly use instead are accepted.
    for alias in ["SnippetSave", "save_snippet", "load_snippet", "list_snippets", "search_snippets", "delete_snippet"] {
        assert!(registry.lookup(alias).is_ok(), "{alias}");
    }
}
