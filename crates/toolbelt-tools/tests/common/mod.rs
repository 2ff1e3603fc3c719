//! Helpers for driving built-in tools the way the runtime does: through the registry
//! (schema validation, parameter aliases) and a session rooted in a temp directory.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::{
    CancellationToken, EventSink, Extensions, Limits, Registry, SessionState, ToolContext, ToolError, ToolOutput,
};
use toolbelt_tools::files::JournalDir;
use toolbelt_tools::planning::TaskListStore;
use toolbelt_tools::snippets::SnippetStore;
use toolbelt_tools::storage::SharedStorage;

thread_local! {
    /// The shared storage this thread's task lists are kept in, if [`use_postgres`] chose it.
    static SHARED: std::cell::RefCell<Option<Arc<SharedStorage>>> = const { std::cell::RefCell::new(None) };
}

/// The PostgreSQL database the storage tests may use (`TOOLBELT_TEST_POSTGRES_URL`, which
/// `.ci/run` sets after starting one with `.ci/postgres.sh`); `None` outside CI without it,
/// a failure under CI without it.
pub fn postgres_url() -> Option<String> {
    let url = std::env::var("TOOLBELT_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty());
    if url.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(!ci, "TOOLBELT_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL and sets it");
        eprintln!("skipped: no PostgreSQL (start one with .ci/postgres.sh DIR and set TOOLBELT_TEST_POSTGRES_URL)");
    }
    url
}

/// A schema of the test's own in the test database, made fresh (anything of an earlier run
/// dropped), and the URL that works in it: tables toolbelt makes land there, so tests that
/// count what a whole table holds (the audit chain) do not see each other's rows.
pub fn postgres_schema(url: &str, name: &str) -> String {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}")).unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{name}")
}

/// Keeps this thread's task lists in the test database from now on; false (the test is
/// skipped) without one.
pub fn use_postgres() -> bool {
    let Some(url) = postgres_url() else { return false };
    let shared = Arc::new(SharedStorage::new(&url, None, 4).unwrap());
    SHARED.with(|s| *s.borrow_mut() = Some(shared));
    true
}

/// A session whose cwd is `cwd` and whose roots are `roots` (the cwd when empty).
pub fn session(cwd: &Path, roots: &[&Path]) -> Arc<SessionState> {
    let roots: Vec<PathBuf> = roots.iter().map(|r| r.to_path_buf()).collect();
    Arc::new(SessionState::new("test", cwd.to_path_buf(), roots))
}

/// A call context over `session`. Multi-file commits journal under the system's temp
/// directory, and the task list is a file in the session's working directory (a test's temp
/// directory), never in the user's state directory; so are the snippets, never in the user's
/// data directory.
pub fn cx(session: &Arc<SessionState>) -> ToolContext {
    let mut services = Extensions::default();
    services.insert(JournalDir(journal_dir()));
    let tasks = TaskListStore::project(session.cwd().join(".test-tasks.db"));
    services.insert(match SHARED.with(|s| s.borrow().clone()) {
        Some(shared) => tasks.shared(shared),
        None => tasks,
    });
    services.insert(SnippetStore::project(&session.cwd().join(".test-snippets")));
    cx_with(session, services)
}

/// A call context over `session` with exactly `services` (a test that sets up its own).
pub fn cx_with(session: &Arc<SessionState>, services: Extensions) -> ToolContext {
    ToolContext::new(
        "call",
        Arc::clone(session),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        services,
    )
}

/// Where the tests' contexts keep patch journals.
pub fn journal_dir() -> PathBuf {
    std::env::temp_dir().join("toolbelt-tests-patch-journal")
}

/// Every built-in tool.
pub fn registry() -> Registry {
    let r = Registry::new();
    toolbelt_tools::register_builtin(&r).unwrap();
    r
}

/// Validates `input` against the tool's schema, then runs it (as the runtime would, minus
/// policy): returns the output or the error.
pub async fn call(session: &Arc<SessionState>, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
    let entry = registry().lookup(tool)?;
    let mut prepared = entry.prepare(input)?;
    let cx = cx(session);
    entry.tool().access(&mut prepared, &cx)?;
    entry.tool().call(prepared, cx).await
}

/// The text of a successful call; panics with the error otherwise.
pub async fn ok(session: &Arc<SessionState>, tool: &str, input: Value) -> String {
    match call(session, tool, input).await {
        Ok(out) => out.joined_text(),
        Err(e) => panic!("{tool} failed: {e}"),
    }
}

/// The message of a failed call; panics if it succeeded.
pub async fn err(session: &Arc<SessionState>, tool: &str, input: Value) -> String {
    match call(session, tool, input).await {
        Ok(out) => panic!("{tool} succeeded unexpectedly: {}", out.joined_text()),
        Err(e) => e.to_string(),
    }
}

/// Runs `tool` with `input` in the context `cx` (validated and described as the runtime
/// would, minus policy): the output or the error.
pub async fn call_in(cx: ToolContext, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
    let entry = registry().lookup(tool)?;
    let mut prepared = entry.prepare(input)?;
    entry.tool().access(&mut prepared, &cx)?;
    entry.tool().call(prepared, cx).await
}

/// The text and structured result of a successful [`call_in`]; panics with the error otherwise.
pub async fn ok_in(cx: ToolContext, tool: &str, input: Value) -> (String, Value) {
    match call_in(cx, tool, input).await {
        Ok(out) => (out.joined_text(), out.structured.clone().unwrap_or(Value::Null)),
        Err(e) => panic!("{tool} failed: {e}"),
    }
}

/// The message of a failed [`call_in`]; panics if it succeeded.
pub async fn err_in(cx: ToolContext, tool: &str, input: Value) -> String {
    match call_in(cx, tool, input).await {
        Ok(out) => panic!("{tool} succeeded unexpectedly: {}", out.joined_text()),
        Err(e) => e.to_string(),
    }
}

/// Copies the folder `from` (a fixture project) to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}
