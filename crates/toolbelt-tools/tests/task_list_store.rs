//! The task list's database: where the `TaskListStore` service puts it, owner-only files,
//! damaged or foreign files reported (never a panic), many writers at once losing nothing,
//! and what the tools declare (the policy allows them in every mode, as it does TodoWrite).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::Arc;

use common::{call_in, err_in, ok_in, session};
use serde_json::json;
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, SessionState, ToolContext, Touch};
use toolbelt_policy::rules::RuleEnv;
use toolbelt_policy::{Authorizer as _, CallInfo, Decision, PermissionEngine, PermissionMode, PermissionRules};
use toolbelt_tools::planning::TaskListStore;

/// A call context working on `store`.
fn cx_for(s: &Arc<SessionState>, store: &TaskListStore) -> ToolContext {
    let mut services = Extensions::default();
    services.insert(store.clone());
    ToolContext::new("call", Arc::clone(s), CancellationToken::new(), EventSink::none(), Limits::default(), services)
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn a_named_list_is_a_file_of_its_own_and_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let lists = dir.path().join("state/task-lists");
    let sprint = TaskListStore::named(&lists, "sprint").unwrap();
    assert_eq!(sprint.path, lists.join("sprint.db"));
    // Reading a list nobody wrote to creates nothing.
    let (text, listed) = ok_in(cx_for(&s, &sprint), "TaskList", json!({})).await;
    assert_eq!(text, "No tasks in the task list `sprint`. Add one with TaskCreate.");
    assert_eq!(listed["list"], "sprint");
    assert!(!lists.exists());

    ok_in(cx_for(&s, &sprint), "TaskCreate", json!({"subject": "A", "description": "a"})).await;
    assert_eq!(mode_of(&lists), 0o700);
    assert_eq!(mode_of(&sprint.path), 0o600);
    for side in ["sprint.db-wal", "sprint.db-shm"] {
        let path = lists.join(side);
        if path.exists() {
            assert_eq!(mode_of(&path), 0o600, "{side}");
        }
    }
    // Another list in the same directory is another list.
    let other = TaskListStore::named(&lists, "other").unwrap();
    let (text, _) = ok_in(cx_for(&s, &other), "TaskList", json!({})).await;
    assert!(text.starts_with("No tasks"), "{text}");
    let e = err_in(cx_for(&s, &sprint), "TaskGet", json!({"taskId": "2"})).await;
    assert_eq!(e, "there is no task #2 in the task list `sprint`; its tasks are #1");

    // A looser file and directory (an older version's, a hand-made one) are tightened.
    std::fs::set_permissions(&sprint.path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&lists, std::fs::Permissions::from_mode(0o755)).unwrap();
    ok_in(cx_for(&s, &sprint), "TaskUpdate", json!({"taskId": "1", "status": "completed"})).await;
    assert_eq!(mode_of(&sprint.path), 0o600);
    assert_eq!(mode_of(&lists), 0o700);
    assert!(TaskListStore::named(&lists, "../escape").is_err());
}

#[tokio::test]
async fn a_damaged_or_foreign_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let garbage = TaskListStore::project(dir.path().join("garbage.db"));
    std::fs::write(&garbage.path, "this is not a database, just text that is long enough to fill a header....")
        .unwrap();
    for (tool, input) in [
        ("TaskList", json!({})),
        ("TaskGet", json!({"taskId": "1"})),
        ("TaskCreate", json!({"subject": "A", "description": "a"})),
        ("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
    ] {
        let e = err_in(cx_for(&s, &garbage), tool, input).await;
        assert!(e.contains("is damaged or is not a task list") && e.contains("garbage.db"), "{tool}: {e}");
        assert!(e.contains("move it aside"), "{e}");
    }

    let foreign = TaskListStore::project(dir.path().join("foreign.db"));
    let conn = rusqlite::Connection::open(&foreign.path).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    drop(conn);
    let e = err_in(cx_for(&s, &foreign), "TaskCreate", json!({"subject": "A", "description": "a"})).await;
    assert!(e.contains("it holds tables of another program"), "{e}");

    let newer = TaskListStore::project(dir.path().join("newer.db"));
    let conn = rusqlite::Connection::open(&newer.path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let e = err_in(cx_for(&s, &newer), "TaskList", json!({})).await;
    assert!(e.contains("has schema version 99, newer than this toolbelt knows (1)"), "{e}");

    // A task list whose rows were edited into nonsense: reported, not a panic.
    let edited = TaskListStore::project(dir.path().join("edited.db"));
    ok_in(cx_for(&s, &edited), "TaskCreate", json!({"subject": "A", "description": "a"})).await;
    let conn = rusqlite::Connection::open(&edited.path).unwrap();
    conn.execute("UPDATE tasks SET metadata = '[1, 2]'", []).unwrap();
    drop(conn);
    let e = err_in(cx_for(&s, &edited), "TaskGet", json!({"taskId": "1"})).await;
    assert!(e.contains("task #1's metadata is not a JSON object"), "{e}");

    // A directory where the file should be.
    let dir_store = TaskListStore::project(dir.path().to_path_buf());
    let e = err_in(cx_for(&s, &dir_store), "TaskList", json!({})).await;
    assert!(e.contains("cannot open the task list database") || e.contains("not a regular file"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_writers_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let store = TaskListStore::project(dir.path().join("busy.db"));
    ok_in(cx_for(&s, &store), "TaskCreate", json!({"subject": "shared", "description": "everyone writes here"})).await;
    const WRITERS: usize = 8;
    const EACH: usize = 15;
    let mut handles = Vec::new();
    for w in 0..WRITERS {
        let (s, store) = (Arc::clone(&s), store.clone());
        handles.push(tokio::spawn(async move {
            for i in 0..EACH {
                let key = format!("w{w}-{i}");
                call_in(cx_for(&s, &store), "TaskUpdate", json!({"taskId": "1", "metadata": {key: i}})).await.unwrap();
                let made = call_in(
                    cx_for(&s, &store),
                    "TaskCreate",
                    json!({"subject": format!("w{w}-{i}"),
                    "description": ""}),
                )
                .await
                .unwrap();
                let id = made.structured.unwrap()["task"]["id"].as_str().unwrap().to_string();
                call_in(cx_for(&s, &store), "TaskUpdate", json!({"taskId": "1", "addBlocks": [id]})).await.unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let (_, shared) = ok_in(cx_for(&s, &store), "TaskGet", json!({"taskId": "1"})).await;
    assert_eq!(shared["task"]["metadata"].as_object().unwrap().len(), WRITERS * EACH);
    assert_eq!(shared["task"]["blocks"].as_array().unwrap().len(), WRITERS * EACH);
    let (_, listed) = ok_in(cx_for(&s, &store), "TaskList", json!({})).await;
    let tasks = listed["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1 + WRITERS * EACH);
    let ids: Vec<u64> = tasks.iter().map(|t| t["id"].as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(ids, (1..=(1 + WRITERS * EACH) as u64).collect::<Vec<_>>(), "ids in order, none skipped");
}

#[tokio::test]
async fn the_tools_declare_a_state_change_every_mode_allows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let s = session(&root, &[]);
    let store = TaskListStore::named(&root.join("lists"), "team").unwrap();
    ok_in(cx_for(&s, &store), "TaskCreate", json!({"subject": "A", "description": "a"})).await;
    let registry = common::registry();
    let calls = [
        ("TaskCreate", json!({"subject": "B", "description": "b"})),
        ("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
        ("TaskGet", json!({"taskId": "1"})),
        ("TaskList", json!({})),
        ("TodoWrite", json!({"todos": []})),
    ];
    for (tool, input) in calls {
        let entry = registry.lookup(tool).unwrap();
        let mut prepared = entry.prepare(input).unwrap();
        let access = entry.tool().access(&mut prepared, &cx_for(&s, &store)).unwrap();
        match tool {
            "TaskCreate" | "TaskUpdate" => {
                assert!(!access.is_shared(), "{tool} changes the list alone");
                assert_eq!(access.touches, vec![Touch::State("the task list `team`".into())]);
            }
            "TaskGet" | "TaskList" => assert!(access.is_shared() && access.touches.is_empty(), "{tool}"),
            _ => {}
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
}
