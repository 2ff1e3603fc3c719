//! The task list tools through the registry, on a real SQLite file in a temp directory and
//! on a real PostgreSQL database (a list of the test's own in it):
//! create, get, update, list; metadata merged and keys removed by null; blockers in both
//! directions with open ones shown; cycles refused (direct, through others, self) with
//! nothing applied; deleted tasks gone and their ids never given again; statuses checked;
//! unknown ids named with what exists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{err, ok, session};
use serde_json::{Value, json};
use toolbelt_core::SessionState;

/// Each case runs twice: on an SQLite file, and on the PostgreSQL database several machines
/// share (skipped without one, outside CI).
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test]
            async fn sqlite() {
                super::$case().await;
            }

            #[tokio::test]
            async fn postgres() {
                if super::common::use_postgres() {
                    super::$case().await;
                }
            }
        }
    )*};
}

on_both_backends!(
    create_get_update_and_list,
    metadata_is_merged_and_null_removes_a_key,
    blockers_in_both_directions_and_only_open_ones_listed,
    cycles_are_refused_and_nothing_of_the_call_applies,
    deleted_tasks_are_gone_for_good,
    statuses_and_ids_are_checked,
    structured_results_match_the_output_schemas
);

fn list_in(dir: &Path) -> Arc<SessionState> {
    session(dir, &[])
}

/// The structured result of a successful call.
async fn st(s: &Arc<SessionState>, tool: &str, input: Value) -> Value {
    match common::call(s, tool, input).await {
        Ok(out) => out.structured.unwrap(),
        Err(e) => panic!("{tool} failed: {e}"),
    }
}

async fn create(s: &Arc<SessionState>, subject: &str) -> String {
    let out = st(s, "TaskCreate", json!({"subject": subject, "description": format!("do {subject}")})).await;
    out["task"]["id"].as_str().unwrap().to_string()
}

async fn create_get_update_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    assert_eq!(ok(&s, "TaskList", json!({})).await, "No tasks. Add one with TaskCreate.");

    let text = ok(
        &s,
        "TaskCreate",
        json!({"subject": "Write the parser", "description": "A recursive-descent parser for the config",
               "activeForm": "Writing the parser"}),
    )
    .await;
    assert_eq!(text, "Task #1 created: Write the parser");
    assert_eq!(create(&s, "Test the parser").await, "2");
    assert_eq!(create(&s, "Ship it").await, "3");

    let got = st(&s, "TaskGet", json!({"taskId": "1"})).await;
    assert_eq!(got["task"]["subject"], "Write the parser");
    assert_eq!(got["task"]["description"], "A recursive-descent parser for the config");
    assert_eq!(got["task"]["activeForm"], "Writing the parser");
    assert_eq!(got["task"]["status"], "pending");
    assert_eq!(got["task"]["metadata"], json!({}));
    assert!(got["task"].get("owner").is_none(), "{got}");

    let text = ok(&s, "TaskUpdate", json!({"taskId": "1", "status": "in_progress", "owner": "alice"})).await;
    assert_eq!(text, "Updated task #1: owner, status (pending → in_progress).");
    let updated = st(&s, "TaskUpdate", json!({"taskId": "#2", "subject": "Test the parser well"})).await;
    assert_eq!(updated["updatedFields"], json!(["subject"]));
    assert!(updated.get("statusChange").is_none(), "{updated}");
    assert_eq!(updated["task"]["subject"], "Test the parser well");

    let text = ok(&s, "TaskGet", json!({"taskId": "1"})).await;
    assert_eq!(
        text,
        "Task #1: Write the parser\nStatus: in_progress\nOwner: alice\nActive form: Writing the parser\n\
         Description: A recursive-descent parser for the config"
    );
    assert_eq!(
        ok(&s, "TaskList", json!({})).await,
        "#1 [in_progress] Write the parser (owner: alice)\n#2 [pending] Test the parser well\n#3 [pending] Ship it"
    );
    let listed = st(&s, "TaskList", json!({})).await;
    assert_eq!(
        listed["tasks"][0],
        json!({"id": "1", "subject": "Write the parser", "status": "in_progress",
        "owner": "alice", "blockedBy": []})
    );
    assert!(listed.get("list").is_none(), "a project's own list has no name: {listed}");

    // An empty owner clears it; the old snake_case spellings are accepted.
    let cleared = st(&s, "TaskUpdate", json!({"task_id": "1", "owner": "", "active_form": "Parsing"})).await;
    assert!(cleared["task"].get("owner").is_none(), "{cleared}");
    assert_eq!(cleared["task"]["activeForm"], "Parsing");
    ok(&s, "task_list", json!({})).await;
}

async fn metadata_is_merged_and_null_removes_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    let made = st(
        &s,
        "TaskCreate",
        json!({"subject": "A", "description": "", "metadata": {"a": 1, "gone": null, "nested": {"x": [1, 2]}}}),
    )
    .await;
    assert_eq!(made["task"]["metadata"], json!({"a": 1, "nested": {"x": [1, 2]}}));
    let merged = st(&s, "TaskUpdate", json!({"taskId": "1", "metadata": {"b": "two", "a": null}})).await;
    assert_eq!(merged["task"]["metadata"], json!({"nested": {"x": [1, 2]}, "b": "two"}));
    assert_eq!(merged["updatedFields"], json!(["metadata"]));
    let merged = st(&s, "TaskUpdate", json!({"taskId": "1", "metadata": {"nested": {"y": true}}})).await;
    assert_eq!(merged["task"]["metadata"], json!({"nested": {"y": true}, "b": "two"}), "values are replaced whole");
    let got = ok(&s, "TaskGet", json!({"taskId": "1"})).await;
    assert!(got.ends_with(r#"Metadata: {"b":"two","nested":{"y":true}}"#), "keys in order: {got}");
}

async fn blockers_in_both_directions_and_only_open_ones_listed() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    for subject in ["Design", "Build", "Test", "Ship"] {
        create(&s, subject).await;
    }
    // #1 blocks #2 (said from #1), #3 is blocked by #2 (said from #3), #4 waits for #2 and #3.
    ok(&s, "TaskUpdate", json!({"taskId": "1", "addBlocks": ["2"]})).await;
    ok(&s, "TaskUpdate", json!({"taskId": "3", "addBlockedBy": ["2"]})).await;
    let both = st(&s, "TaskUpdate", json!({"taskId": "4", "addBlockedBy": ["2", "#3", "2"]})).await;
    assert_eq!(both["task"]["blockedBy"], json!(["2", "3"]));
    assert_eq!(both["updatedFields"], json!(["blockedBy"]));

    let build = st(&s, "TaskGet", json!({"taskId": "2"})).await;
    assert_eq!(build["task"]["blockedBy"], json!(["1"]));
    assert_eq!(build["task"]["openBlockers"], json!(["1"]));
    assert_eq!(build["task"]["blocks"], json!(["3", "4"]));
    assert_eq!(
        ok(&s, "TaskList", json!({})).await,
        "#1 [pending] Design\n#2 [pending] Build [blocked by #1]\n#3 [pending] Test [blocked by #2]\n\
         #4 [pending] Ship [blocked by #2, #3]"
    );

    // Starting a blocked task is allowed, with a note.
    let text = ok(&s, "TaskUpdate", json!({"taskId": "2", "status": "in_progress"})).await;
    assert!(
        text.ends_with("Note: task #2 is still blocked by #1 (pending): finish those first, or mark them completed."),
        "{text}"
    );

    // A completed blocker no longer blocks: it leaves the list's blockers, and TaskGet marks it done.
    ok(&s, "TaskUpdate", json!({"taskId": "1", "status": "completed"})).await;
    let build = st(&s, "TaskGet", json!({"taskId": "2"})).await;
    assert_eq!(build["task"]["blockedBy"], json!(["1"]));
    assert_eq!(build["task"]["openBlockers"], json!([]));
    assert!(ok(&s, "TaskGet", json!({"taskId": "2"})).await.contains("Blocked by: #1 (done)\nBlocks: #3, #4"));
    let listed = st(&s, "TaskList", json!({})).await;
    assert_eq!(listed["tasks"][1]["blockedBy"], json!([]));
    assert_eq!(listed["tasks"][3]["blockedBy"], json!(["2", "3"]));
    let ship = ok(&s, "TaskGet", json!({"taskId": "4"})).await;
    assert!(ship.contains("Blocked by: #2 (open), #3 (open)"), "{ship}");
}

async fn cycles_are_refused_and_nothing_of_the_call_applies() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    for subject in ["A", "B", "C"] {
        create(&s, subject).await;
    }
    ok(&s, "TaskUpdate", json!({"taskId": "1", "addBlocks": ["2"]})).await;
    // Direct, said either way round.
    let e = err(&s, "TaskUpdate", json!({"taskId": "2", "addBlocks": ["1"]})).await;
    assert_eq!(
        e,
        "refused: that makes a cycle of blockers, #2 blocks #1 blocks #2 (none of them could ever start); nothing \
         was changed"
    );
    let e = err(&s, "TaskUpdate", json!({"taskId": "1", "addBlockedBy": ["2"]})).await;
    assert!(e.contains("#2 blocks #1 blocks #2"), "{e}");
    // Itself.
    let e = err(&s, "TaskUpdate", json!({"taskId": "3", "addBlockedBy": ["3"]})).await;
    assert!(e.contains("cycle of blockers, #3 blocks #3"), "{e}");
    // Through another task, with other changes in the same call: none of them lands.
    ok(&s, "TaskUpdate", json!({"taskId": "3", "addBlockedBy": ["2"]})).await;
    let e = err(
        &s,
        "TaskUpdate",
        json!({"taskId": "3", "subject": "C renamed", "status": "in_progress", "metadata": {"k": 1},
               "addBlocks": ["1"]}),
    )
    .await;
    assert!(e.contains("#3 blocks #1 blocks #2 blocks #3"), "{e}");
    let c = st(&s, "TaskGet", json!({"taskId": "3"})).await;
    assert_eq!(c["task"]["subject"], "C");
    assert_eq!(c["task"]["status"], "pending");
    assert_eq!(c["task"]["metadata"], json!({}));
    assert_eq!(c["task"]["blocks"], json!([]));
    // A blocker already completed still counts: the order is what would be circular.
    ok(&s, "TaskUpdate", json!({"taskId": "1", "status": "completed"})).await;
    let e = err(&s, "TaskUpdate", json!({"taskId": "3", "addBlocks": ["1"]})).await;
    assert!(e.contains("#3 blocks #1 blocks #2 blocks #3"), "{e}");
}

async fn deleted_tasks_are_gone_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    for subject in ["A", "B", "C"] {
        create(&s, subject).await;
    }
    ok(&s, "TaskUpdate", json!({"taskId": "2", "addBlocks": ["3"]})).await;
    let out = st(&s, "TaskUpdate", json!({"taskId": "2", "status": "deleted"})).await;
    assert_eq!(out["task"]["status"], "deleted");
    assert_eq!(out["statusChange"], json!({"from": "pending", "to": "deleted"}));
    assert_eq!(ok(&s, "TaskUpdate", json!({"taskId": "3", "status": "deleted"})).await, "Task #3 deleted.");
    assert_eq!(ok(&s, "TaskList", json!({})).await, "#1 [pending] A");

    let e = err(&s, "TaskGet", json!({"taskId": "2"})).await;
    assert_eq!(e, "task #2 was deleted in this project's task list; its tasks are #1");
    let e = err(&s, "TaskUpdate", json!({"taskId": "3", "status": "pending"})).await;
    assert!(e.starts_with("task #3 was deleted"), "{e}");
    let e = err(&s, "TaskUpdate", json!({"taskId": "1", "addBlocks": ["2"]})).await;
    assert!(e.starts_with("task #2 was deleted"), "{e}");
    // Ids are never given again.
    assert_eq!(create(&s, "D").await, "4");
    assert_eq!(ok(&s, "TaskList", json!({})).await, "#1 [pending] A\n#4 [pending] D");
}

async fn statuses_and_ids_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    let e = err(&s, "TaskGet", json!({"taskId": "1"})).await;
    assert_eq!(e, "there is no task #1: this project's task list is empty (TaskCreate adds tasks)");
    for subject in ["A", "B", "C", "D", "E"] {
        create(&s, subject).await;
    }
    ok(&s, "TaskUpdate", json!({"taskId": "4", "status": "deleted"})).await;

    let e = err(&s, "TaskUpdate", json!({"taskId": "1", "status": "done"})).await;
    assert!(e.contains("status") && e.contains("in_progress"), "{e}");
    let e = err(&s, "TaskUpdate", json!({"taskId": "1"})).await;
    assert!(e.starts_with("nothing to update"), "{e}");
    let e = err(&s, "TaskGet", json!({"taskId": "9"})).await;
    assert_eq!(e, "there is no task #9 in this project's task list; its tasks are #1–#3, #5");
    let e = err(&s, "TaskGet", json!({"taskId": "first"})).await;
    assert_eq!(e, "`first` is not a task id: ids are numbers such as \"3\" (TaskList shows them)");
    let e = err(&s, "TaskUpdate", json!({"taskId": "1", "owner": "bob", "addBlockedBy": ["2", "12"]})).await;
    assert!(e.starts_with("there is no task #12"), "{e}");
    assert!(st(&s, "TaskGet", json!({"taskId": "1"})).await["task"].get("owner").is_none(), "nothing applied");
    let e = err(&s, "TaskCreate", json!({"subject": "", "description": "x"})).await;
    assert!(e.contains("subject"), "{e}");
    let e = err(&s, "TaskCreate", json!({"subject": "x", "description": "y", "priority": 1})).await;
    assert!(e.contains("priority"), "{e}");
}

async fn structured_results_match_the_output_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let s = list_in(dir.path());
    let registry = common::registry();
    create(&s, "A").await;
    for (tool, input) in [
        ("TaskCreate", json!({"subject": "B", "description": "b", "activeForm": "Bing", "metadata": {"k": [1]}})),
        ("TaskUpdate", json!({"taskId": "2", "status": "in_progress", "owner": "x", "addBlockedBy": ["1"]})),
        ("TaskGet", json!({"taskId": "2"})),
        ("TaskList", json!({})),
        ("TaskUpdate", json!({"taskId": "1", "status": "deleted"})),
    ] {
        let spec = registry.lookup(tool).unwrap().spec().clone();
        let validator =
            toolbelt_core::InputValidator::compile(tool, spec.output_schema.as_ref().unwrap(), &[]).unwrap();
        let structured = st(&s, tool, input.clone()).await;
        if let Err(e) = validator.check(structured.clone()) {
            panic!("{tool} {input}: {e}\n{structured}");
        }
    }
}
