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

async fn save(s: &Arc<SessionState>, store: &SnippetStore, input: Value) -> Value {
    ok_in(cx_for(s, store), "snippet_save", input).await.1
}

/// The names `snippet_list` gives for `input`, in order.
async fn names(s: &Arc<SessionState>, store: &SnippetStore, input: Value) -> Vec<String> {
    let (_, listed) = ok_in(cx_for(s, store), "snippet_list", input).await;
    listed["snippets"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap().to_string()).collect()
}

/// A few snippets to search.
async fn library(s: &Arc<SessionState>, store: &SnippetStore) {
    let snippets = [
        json!({"name": "retry-with-backoff", "description": "Retry an async call with exponential backoff",
               "language": "Rust", "tags": ["async", "#Retry", "net"],
               "code": "async fn retry<F>(f: F) {\n    tokio::time::sleep(delay).await;\n}\n"}),
        json!({"name": "open-file-safely", "description": "Open a file, creating its directory",
               "language": "python", "tags": ["fs"],
               "code": "def open_file(path):\n    os.makedirs(os.path.dirname(path), exist_ok=True)\n    return open(path, 'w')\n"}),
        json!({"name": "parse-args", "description": "Parse command-line arguments with clap",
               "language": "rust", "tags": ["cli"],
               "code": "let args = Args::parse();\nprintln!(\"{:?}\", args.file);\n"}),
        json!({"name": "sql-upsert", "description": "Insert or update a row",
               "language": "sql", "tags": ["db", "retry"],
               "code": "INSERT INTO t (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = excluded.v;"}),
    ];
    for snippet in snippets {
        save(s, store, snippet).await;
    }
}

#[tokio::test]
async fn save_load_list_and_delete_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    let (text, _) = ok_in(cx_for(&s, &store), "snippet_list", json!({})).await;
    assert_eq!(text, "No snippets saved yet. Save one with snippet_save.");
    assert!(!store.path.exists(), "reading creates nothing");

    let (text, saved) = ok_in(
        cx_for(&s, &store),
        "snippet_save",
        json!({"name": " retry-with-backoff ", "code": "loop {\n    try_it()?;\n}\n", "language": "Rust",
               "description": "Retry until it works", "tags": ["Net", "#retry", "net"]}),
    )
    .await;
    assert_eq!(text, "Saved snippet #1 `retry-with-backoff` (rust, 3 lines) in your snippets.");
    assert_eq!(saved["type"], "created");
    assert_eq!(saved["tags"], json!(["net", "retry"]), "lower-cased, `#` dropped, each once, sorted");
    assert_eq!(saved["scope"], "user");
    assert_eq!((saved["lines"].as_u64(), saved["bytes"].as_u64()), (Some(3), Some(24)));
    save(&s, &store, json!({"name": "hello", "code": "echo hello"})).await;

    let (text, by_name) = ok_in(cx_for(&s, &store), "snippet_load", json!({"name": "retry-with-backoff"})).await;
    let created = by_name["snippet"]["created_at"].as_str().unwrap().to_string();
    assert_eq!(
        text,
        format!(
            "Snippet #1 `retry-with-backoff`: Retry until it works\nLanguage: rust. Tags: #net #retry. Saved \
             {created}.\n```rust\nloop {{\n    try_it()?;\n}}\n```"
        )
    );
    assert_eq!(by_name["snippet"]["code"], "loop {\n    try_it()?;\n}\n", "the code comes back exactly");
    let (_, by_id) = ok_in(cx_for(&s, &store), "snippet_load", json!({"id": 1})).await;
    assert_eq!(by_id, by_name);
    let (text, _) = ok_in(cx_for(&s, &store), "snippet_load", json!({"snippet_id": 2})).await;
    assert!(text.starts_with("Snippet #2 `hello`\nSaved "), "{text}");
    assert!(text.ends_with("\n```\necho hello\n```"), "no language, a bare fence: {text}");

    let (text, listed) = ok_in(cx_for(&s, &store), "snippet_list", json!({})).await;
    assert_eq!(text, "hello\nretry-with-backoff — Retry until it works [rust] #net #retry");
    assert_eq!(listed["total"], 2);
    assert_eq!(
        listed["snippets"][1],
        json!({"id": 1, "name": "retry-with-backoff", "description": "Retry until it works", "language": "rust",
               "tags": ["net", "retry"]})
    );

    let (text, deleted) = ok_in(cx_for(&s, &store), "snippet_delete", json!({"name": "hello"})).await;
    assert_eq!(text, "Deleted snippet #2 `hello` from your snippets.");
    assert_eq!(deleted, json!({"id": 2, "name": "hello", "scope": "user"}));
    assert_eq!(names(&s, &store, json!({})).await, ["retry-with-backoff"]);
    assert_eq!(names(&s, &store, json!({"query": "echo"})).await, Vec::<String>::new(), "gone from the index too");
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"id": 2})).await;
    assert_eq!(e, "there is no snippet #2; 1 snippet exists: `retry-with-backoff`");
}

#[tokio::test]
async fn saving_a_name_again_replaces_it_keeping_id_and_creation_time() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    let first = save(
        &s,
        &store,
        json!({"name": "greet", "code": "print('hi')", "language": "python",
        "description": "Say hi", "tags": ["demo", "io"]}),
    )
    .await;
    save(&s, &store, json!({"name": "other", "code": "x"})).await;
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (text, second) = ok_in(
        cx_for(&s, &store),
        "snippet_save",
        json!({"name": "greet", "code": "println!(\"hello\");", "language": "rust", "tags": ["demo"]}),
    )
    .await;
    assert_eq!(second["type"], "replaced");
    assert_eq!(second["id"], first["id"]);
    assert_eq!(second["created_at"], first["created_at"]);
    assert!(second["updated_at"].as_str() > first["updated_at"].as_str(), "{first} {second}");
    assert_eq!(
        text,
        format!(
            "Replaced snippet #1 `greet` (rust, 1 line) in your snippets. First saved {}.",
            first["created_at"].as_str().unwrap()
        )
    );
    // Replaced whole: the description and the tag it no longer has are gone, and so is the old
    // code from the index.
    let (_, loaded) = ok_in(cx_for(&s, &store), "snippet_load", json!({"name": "greet"})).await;
    assert_eq!(loaded["snippet"]["code"], "println!(\"hello\");");
    assert_eq!(loaded["snippet"].get("description"), None);
    assert_eq!(loaded["snippet"]["tags"], json!(["demo"]));
    assert_eq!(names(&s, &store, json!({"tags": ["io"]})).await, Vec::<String>::new());
    assert_eq!(names(&s, &store, json!({"query": "print"})).await, Vec::<String>::new());
    assert_eq!(names(&s, &store, json!({"query": "println"})).await, ["greet"]);
    assert_eq!(names(&s, &store, json!({})).await, ["greet", "other"], "still two snippets");
}

#[tokio::test]
async fn full_text_search_finds_words_prefixes_and_phrases() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    library(&s, &store).await;
    let found = |q: &str| names(&s, &store, json!({"query": q}));
    // Words, in any of name, description and code; all of them must match.
    assert_eq!(found("backoff").await, ["retry-with-backoff"]);
    assert_eq!(found("tokio sleep").await, ["retry-with-backoff"]);
    assert_eq!(found("makedirs").await, ["open-file-safely"]);
    assert_eq!(found("clap").await, ["parse-args"]);
    assert_eq!(found("tokio makedirs").await, Vec::<String>::new());
    // Case and diacritics do not matter.
    assert_eq!(found("BACKOFF").await, ["retry-with-backoff"]);
    assert_eq!(found("Pàrse Árguments").await, ["parse-args"]);
    // Prefixes.
    assert_eq!(found("expon*").await, ["retry-with-backoff"]);
    assert_eq!(found("upd*").await, ["sql-upsert"]);
    // Phrases: the words next to each other, in order.
    assert_eq!(found("\"exponential backoff\"").await, ["retry-with-backoff"]);
    assert_eq!(found("\"backoff exponential\"").await, Vec::<String>::new());
    assert_eq!(found("\"open a fi\"*").await, ["open-file-safely"]);
    // Names weigh most: "retry" is in one name and one tag, and in another's code.
    let retry = found("retry").await;
    assert_eq!(retry.first().map(String::as_str), Some("retry-with-backoff"), "{retry:?}");
    // Either word; a word left out.
    let mut either = found("clap OR makedirs").await;
    either.sort();
    assert_eq!(either, ["open-file-safely", "parse-args"]);
    assert_eq!(found("async -backoff").await, Vec::<String>::new());
    assert_eq!(found("-async").await, ["open-file-safely", "parse-args", "sql-upsert"], "all but the one with it");
    // A word nothing has: an empty list that says how many snippets there are.
    let (text, listed) = ok_in(cx_for(&s, &store), "snippet_list", json!({"query": "kubernetes"})).await;
    assert_eq!(listed["total"], 0);
    assert_eq!(listed["saved"], 4);
    assert!(text.starts_with("No snippet matches; 4 snippets are saved."), "{text}");
}

#[tokio::test]
async fn fts_syntax_in_a_query_is_searched_as_text_never_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    library(&s, &store).await;
    let hostile = [
        "\"",
        "\"\"",
        "\"\"\"",
        "*",
        "**",
        "-",
        "--",
        ":",
        "(",
        ")",
        "()",
        "^",
        "+",
        "a\"b",
        "\"unclosed",
        "name:retry",
        "code:(tokio",
        "NEAR(retry backoff)",
        "NEAR",
        "AND",
        "OR",
        "NOT",
        "retry AND",
        "OR retry",
        "retry OR",
        "retry NOT",
        "retry -",
        "-retry -",
        "- - -",
        "*retry",
        "re*try",
        "retry**",
        "{retry}",
        "[retry]",
        "retry;DROP TABLE snippets;--",
        "' OR 1=1 --",
        "\\",
        "\0",
        "\u{0}",
        "🦀",
        "日本語",
        "a:b:c",
        "col:",
        ":col",
        "std::fs::read",
        "Args::parse()",
        "println!(\"{:?}\")",
        "ON CONFLICT (k)",
        "x = excluded.v;",
    ];
    for query in hostile {
        let result = call_in(cx_for(&s, &store), "snippet_list", json!({"query": query})).await;
        assert!(result.is_ok(), "{query:?}: {:?}", result.err().map(|e| e.to_string()));
    }
    // Punctuation around words is searched as those words.
    let found = |q: &str| names(&s, &store, json!({"query": q}));
    assert_eq!(found("Args::parse()").await, ["parse-args"]);
    assert_eq!(found("println!(\"{:?}\"").await, ["parse-args"]);
    assert_eq!(found("std::fs::read").await, Vec::<String>::new());
    assert_eq!(found("ON CONFLICT (k)").await, ["sql-upsert"]);
    assert_eq!(found("name:retry").await, Vec::<String>::new(), "no column filter: the phrase `name retry`");
    assert_eq!(found("tokio::time::sleep").await, ["retry-with-backoff"]);
    // A query with no word in it matches nothing, and says why.
    let (text, listed) = ok_in(cx_for(&s, &store), "snippet_list", json!({"query": "(((\"*"})).await;
    assert_eq!(listed["snippets"], json!([]));
    assert!(text.starts_with("Note: the query `(((\"*` has no word (letters or digits) to search for"), "{text}");
}

#[tokio::test]
async fn tags_and_language_narrow_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    library(&s, &store).await;
    let listed = |input: Value| names(&s, &store, input);
    assert_eq!(listed(json!({"language": "rust"})).await, ["parse-args", "retry-with-backoff"]);
    assert_eq!(listed(json!({"language": " RUST "})).await, ["parse-args", "retry-with-backoff"]);
    assert_eq!(listed(json!({"language": "go"})).await, Vec::<String>::new());
    assert_eq!(listed(json!({"tags": ["retry"]})).await, ["retry-with-backoff", "sql-upsert"]);
    assert_eq!(listed(json!({"tags": ["#Retry", "net"]})).await, ["retry-with-backoff"], "every tag must match");
    assert_eq!(listed(json!({"tags": ["retry", "fs"]})).await, Vec::<String>::new());
    assert_eq!(listed(json!({"tag": ["fs"]})).await, ["open-file-safely"], "`tag` is read as `tags`");
    assert_eq!(listed(json!({"tags": ["retry"], "language": "sql"})).await, ["sql-upsert"]);
    assert_eq!(listed(json!({"query": "update OR async", "tags": ["retry"], "language": "sql"})).await, ["sql-upsert"]);
    assert_eq!(listed(json!({"query": "-insert", "tags": ["retry"]})).await, ["retry-with-backoff"]);
    // The limit cuts the list and says how many there are.
    let (text, cut) = ok_in(cx_for(&s, &store), "snippet_list", json!({"limit": 2})).await;
    assert_eq!(cut["total"], 4);
    assert_eq!(cut["snippets"].as_array().unwrap().len(), 2);
    assert!(text.ends_with("(2 of 4 shown: narrow the list with query, tags or language, or raise limit.)"), "{text}");
    let (text, _) = ok_in(cx_for(&s, &store), "snippet_list", json!({"tags": ["zzz"]})).await;
    assert!(text.starts_with("No snippet matches; 4 snippets are saved."), "{text}");
    let e = err_in(cx_for(&s, &store), "snippet_list", json!({"tags": ["two words"]})).await;
    assert!(e.contains("the tag `two words` has a space or comma in it"), "{e}");
}

#[tokio::test]
async fn a_missing_snippet_names_what_exists_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (s, store) = setup(dir.path());
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"name": "anything"})).await;
    assert_eq!(e, "there is no snippet named `anything`: no snippets are saved yet (snippet_save saves one)");
    let e = err_in(cx_for(&s, &store), "snippet_delete", json!({"name": "anything"})).await;
    assert_eq!(e, "there is no snippet named `anything`: no snippets are saved yet (snippet_save saves one)");
    library(&s, &store).await;
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"name": "Parse-Args"})).await;
    assert_eq!(
        e,
        "there is no snippet named `Parse-Args`; did you mean `parse-args`? 4 snippets exist: `open-file-safely`, \
         `parse-args`, `retry-with-backoff` and `sql-upsert`"
    );
    let e = err_in(cx_for(&s, &store), "snippet_delete", json!({"name": "retry"})).await;
    assert!(e.starts_with("there is no snippet named `retry`; did you mean `retry-with-backoff`?"), "{e}");
    assert_eq!(names(&s, &store, json!({})).await.len(), 4, "nothing deleted");
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"id": 99})).await;
    assert!(e.starts_with("there is no snippet #99; 4 snippets exist: "), "{e}");
    // Many snippets: some named, the rest counted.
    for i in 0..30 {
        save(&s, &store, json!({"name": format!("extra-{i:02}"), "code": "x"})).await;
    }
    let e = err_in(cx_for(&s, &store), "snippet_load", json!({"name": "nothing-like-it"})).await;
    assert!(
        e.starts_with("there is no snippet named `nothing-like-it`; 34 snippets exist, among them `extra-00`"),
        "{e}"
    );
    assert!(e.ends_with(", and 14 more; snippet_list searches them by words, tags or language"), "{e}");
}

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
