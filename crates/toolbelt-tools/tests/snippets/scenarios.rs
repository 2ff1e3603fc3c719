// The snippet tools' scenarios that hold whichever database keeps the snippets: included by
// `snippets.rs` (an SQLite file) and `snippets_shared.rs` (PostgreSQL), each with its own
// `setup` and `cx_for`.

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

