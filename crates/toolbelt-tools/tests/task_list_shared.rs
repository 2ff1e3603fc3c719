//! The task list under many writers at once, on both backends: an SQLite file several
//! processes open, and a PostgreSQL database several machines share (each writer with a pool
//! of its own, as each replica has). A task is claimed by one writer only; changes made at
//! the same moment all land; a database a newer toolbelt migrated is refused; the list is the
//! same list from every replica.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{call_in, ok_in, session};
use serde_json::{Value, json};
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, SessionState, ToolContext};
use toolbelt_tools::planning::TaskListStore;
use toolbelt_tools::storage::SharedStorage;

/// How many writers race.
const WRITERS: usize = 8;

/// Where the list is kept: a file, or the shared database.
#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A store of the list in `dir` as one writer (one replica) sees it: the same file, or the
/// same list in the database through a pool of its own.
fn store(backend: Backend, dir: &std::path::Path, url: Option<&str>) -> TaskListStore {
    // A project of the test's own (its temp directory's name), in the file or the database.
    let project = dir.file_name().unwrap().to_string_lossy().into_owned();
    let store = TaskListStore::project(dir.join("state/projects").join(project).join("tasks.db"));
    match (backend, url) {
        (Backend::Postgres, Some(url)) => store.shared(Arc::new(SharedStorage::new(url, None, 2).unwrap())),
        _ => store,
    }
}

fn cx_for(s: &Arc<SessionState>, store: &TaskListStore) -> ToolContext {
    let mut services = Extensions::default();
    services.insert(store.clone());
    ToolContext::new("call", Arc::clone(s), CancellationToken::new(), EventSink::none(), Limits::default(), services)
}

/// The database for `backend`: `Some(None)` for SQLite, `Some(url)` for PostgreSQL, `None`
/// when the test is skipped.
fn url_for(backend: Backend) -> Option<Option<String>> {
    match backend {
        Backend::Sqlite => Some(None),
        Backend::Postgres => common::postgres_url().map(Some),
    }
}

/// Runs `WRITERS` calls of `tool` at once, writer `i` with `input(i)`, each on a thread of
/// its own through its own store: what each got (Ok text or error).
fn race(
    backend: Backend,
    dir: &std::path::Path,
    url: Option<&str>,
    tool: &'static str,
    input: impl Fn(usize) -> Value,
) -> Vec<Result<String, String>> {
    let barrier = Arc::new(std::sync::Barrier::new(WRITERS));
    let handles: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (store, input, barrier) = (store(backend, dir, url), input(i), Arc::clone(&barrier));
            let dir = dir.to_path_buf();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                let s = session(&dir, &[]);
                barrier.wait();
                runtime.block_on(async {
                    call_in(cx_for(&s, &store), tool, input).await.map(|o| o.joined_text()).map_err(|e| e.to_string())
                })
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

async fn one_writer_claims_a_task(backend: Backend) {
    let Some(url) = url_for(backend) else { return };
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let first = store(backend, dir.path(), url.as_deref());
    ok_in(cx_for(&s, &first), "TaskCreate", json!({"subject": "Ship", "description": "ship it"})).await;
    let outcomes = race(
        backend,
        dir.path(),
        url.as_deref(),
        "TaskUpdate",
        |i| json!({"taskId": "1", "owner": format!("agent-{i}"), "status": "in_progress"}),
    );
    let won: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "exactly one claim wins: {outcomes:?}");
    for lost in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert!(lost.contains("task #1 is taken: its owner is `agent-"), "{lost}");
    }
    let (_, got) = ok_in(cx_for(&s, &first), "TaskGet", json!({"taskId": "1"})).await;
    let owner = got["task"]["owner"].as_str().unwrap().to_string();
    let winner = outcomes.iter().position(Result::is_ok).unwrap();
    assert_eq!(owner, format!("agent-{winner}"), "{got}");
    // The owner may change hands once it is cleared.
    ok_in(cx_for(&s, &first), "TaskUpdate", json!({"taskId": "1", "owner": ""})).await;
    ok_in(cx_for(&s, &first), "TaskUpdate", json!({"taskId": "1", "owner": "lead"})).await;
}

async fn changes_made_at_once_all_land(backend: Backend) {
    let Some(url) = url_for(backend) else { return };
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let first = store(backend, dir.path(), url.as_deref());
    for n in 0..=WRITERS {
        let input = json!({"subject": format!("task {n}"), "description": "x"});
        ok_in(cx_for(&s, &first), "TaskCreate", input).await;
    }
    // Every writer merges a key into #1 and makes #1 wait for a task of its own, at once.
    let outcomes = race(
        backend,
        dir.path(),
        url.as_deref(),
        "TaskUpdate",
        |i| json!({"taskId": "1", "metadata": {format!("k{i}"): i}, "addBlockedBy": [(i + 2).to_string()]}),
    );
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    let (_, got) = ok_in(cx_for(&s, &first), "TaskGet", json!({"taskId": "1"})).await;
    let metadata = got["task"]["metadata"].as_object().unwrap();
    assert_eq!(metadata.len(), WRITERS, "no merge lost: {got}");
    assert_eq!(got["task"]["blockedBy"].as_array().unwrap().len(), WRITERS, "no blocker lost: {got}");
    // Creations at once get distinct ids, in one sequence.
    let outcomes = race(
        backend,
        dir.path(),
        url.as_deref(),
        "TaskCreate",
        |i| json!({"subject": format!("late {i}"), "description": "x"}),
    );
    let mut ids: Vec<String> = outcomes.into_iter().map(Result::unwrap).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), WRITERS, "{ids:?}");
    let (_, listed) = ok_in(cx_for(&s, &first), "TaskList", json!({})).await;
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 2 * WRITERS + 1, "{listed}");
}

macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test]
            async fn sqlite() {
                super::$case(super::Backend::Sqlite).await;
            }

            #[tokio::test]
            async fn postgres() {
                super::$case(super::Backend::Postgres).await;
            }
        }
    )*};
}

on_both_backends!(one_writer_claims_a_task, changes_made_at_once_all_land);

/// `url` with the search path set to `schema`: a database of the test's own in the shared
/// server.
fn in_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}")
}

/// Runs `f` on a runtime of its own (the test's PostgreSQL client blocks, so the tests that
/// use it are not async themselves).
fn on_runtime<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

#[test]
fn postgres_a_database_a_newer_toolbelt_migrated_is_refused() {
    let Some(url) = common::postgres_url() else { return };
    let schema = format!("newer_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
             CREATE TABLE {schema}.toolbelt_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL); \
             INSERT INTO {schema}.toolbelt_schema VALUES ('task_lists', 99);"
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path(), &[]);
    let shared = Arc::new(SharedStorage::new(&in_schema(&url, &schema), None, 1).unwrap());
    let store = TaskListStore::project(dir.path().join("p/tasks.db")).shared(shared);
    let e = on_runtime(call_in(cx_for(&s, &store), "TaskList", json!({}))).unwrap_err().to_string();
    assert!(e.contains("holds task_lists at schema version 99, newer than this toolbelt knows (1)"), "{e}");
    client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
}

#[test]
fn postgres_a_fresh_database_is_migrated_by_replicas_starting_together() {
    let Some(url) = common::postgres_url() else { return };
    let schema = format!("fresh_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let scoped = in_schema(&url, &schema);
    // Every writer is a replica meeting an empty database: they migrate it once, together.
    let outcomes = race(
        Backend::Postgres,
        dir.path(),
        Some(&scoped),
        "TaskCreate",
        |i| json!({"subject": format!("first {i}"), "description": "x"}),
    );
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    let version: i32 = client
        .query_one(&format!("SELECT version FROM {schema}.toolbelt_schema WHERE component = 'task_lists'"), &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 1);
    client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
}
