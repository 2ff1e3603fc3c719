//! `code_query` on real source in each supported language (fixtures under
//! `tests/fixtures/code`), with the index in a temp cache directory: definitions found by
//! name with their kind, first line and enclosing definition; ranking exact > prefix >
//! substring > close; `type` and `path` filters; files by path; the index refreshed when a
//! file changes and when one is deleted; a file that does not parse counted, not fatal;
//! .gitignore'd files left out; two processes' worth of refreshes at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use toolbelt_core::{Extensions, SessionState, ToolContext};
use toolbelt_tools::code::index::CodeIndexDir;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
}

fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/code");
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), root.join("src").join(entry.file_name())).unwrap();
    }
    Project { _dir: dir, root, cache: base.join("cache") }
}

impl Project {
    fn cx(&self) -> ToolContext {
        let session = Arc::new(SessionState::new("t", self.root.clone(), vec![self.root.clone()]));
        let mut services = Extensions::default();
        services.insert(CodeIndexDir(self.cache.clone()));
        common::cx_with(&session, services)
    }

    async fn query(&self, input: Value) -> Value {
        let (text, structured) = common::ok_in(self.cx(), "code_query", input.clone()).await;
        assert!(!text.is_empty());
        structured
    }

    async fn first(&self, input: Value) -> Value {
        self.query(input).await["matches"][0].clone()
    }
}

#[tokio::test]
async fn definitions_in_every_language_are_found_with_kind_line_and_scope() {
    let p = project();
    let cases: &[(&str, &str, &str, u64, &str)] = &[
        ("parse_config", "src/config.rs", "function", 8, "pub fn parse_config(text: &str) -> Config {"),
        ("Config", "src/config.rs", "class", 3, "pub struct Config {"),
        ("MAX_RETRIES", "src/config.rs", "variable", 1, "pub const MAX_RETRIES: u32 = 3;"),
        ("UserService", "src/service.py", "class", 4, "class UserService:"),
        ("find_user", "src/service.py", "function", 5, "def find_user(self, user_id):"),
        ("TIMEOUT_SECONDS", "src/service.py", "variable", 1, "TIMEOUT_SECONDS = 30"),
        ("HttpServer", "src/app.js", "class", 3, "class HttpServer {"),
        ("startServer", "src/app.js", "function", 9, "function startServer() {"),
        ("AccountStore", "src/model.ts", "class", 5, "export class AccountStore {"),
        ("Account", "src/model.ts", "class", 1, "export interface Account {"),
        ("createStore", "src/model.ts", "function", 11, "export function createStore(): AccountStore {"),
        ("RenderWidget", "src/widget.tsx", "function", 1, "export function RenderWidget(props: { title: string }) {"),
        ("WidgetFrame", "src/widget.tsx", "class", 5, "export class WidgetFrame {"),
        ("NewWorker", "src/main.go", "function", 15, "func NewWorker(id int) *Worker {"),
        ("RunJob", "src/main.go", "function", 11, "func (w *Worker) RunJob(name string) error {"),
        ("MaxWorkers", "src/main.go", "variable", 3, "const MaxWorkers = 4"),
        ("Inventory", "src/Inventory.java", "class", 1, "public class Inventory {"),
        ("addItem", "src/Inventory.java", "function", 4, "public void addItem(String name) {"),
        ("Stockable", "src/Inventory.java", "class", 9, "interface Stockable {"),
        (
            "ring_buffer_push",
            "src/buffer.c",
            "function",
            9,
            "void ring_buffer_push(struct ring_buffer *b, int value) {",
        ),
        ("buffer_capacity", "src/buffer.c", "variable", 3, "int buffer_capacity = 64;"),
        ("GraphNode", "src/graph.cpp", "class", 5, "class GraphNode {"),
        ("shortestPath", "src/graph.cpp", "function", 10, "int shortestPath(const GraphNode &a, const GraphNode &b) {"),
    ];
    for (query, path, kind, line, text) in cases {
        let m = p.first(json!({"query": query})).await;
        assert_eq!(
            (m["path"].as_str(), m["kind"].as_str(), m["line"].as_u64(), m["text"].as_str(), m["matched"].as_str()),
            (Some(*path), Some(*kind), Some(*line), Some(*text), Some("exact")),
            "{query}: {m}"
        );
    }
    // The definition a method is inside.
    let m = p.first(json!({"query": "find_user"})).await;
    assert_eq!(m["scope"], "class UserService");
    assert_eq!((m["column"].as_u64()), Some(9));
    let m = p.first(json!({"query": "addItem"})).await;
    assert_eq!(m["scope"], "class Inventory");
}

#[tokio::test]
async fn ranking_types_paths_and_files() {
    let p = project();
    let names = |v: &Value| -> Vec<(String, String)> {
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["name"].as_str().unwrap().to_string(), m["matched"].as_str().unwrap().to_string()))
            .collect()
    };
    // Exact, then prefix, then containing.
    let got = names(&p.query(json!({"query": "account", "type": "class"})).await);
    assert_eq!(got[0], ("Account".into(), "exact".into()), "{got:?}");
    assert_eq!(got[1], ("AccountStore".into(), "prefix".into()), "{got:?}");
    let got = names(&p.query(json!({"query": "server", "type": "function"})).await);
    assert_eq!(got, [("startServer".to_string(), "substring".to_string())]);
    // A misspelling still finds it.
    let m = p.first(json!({"query": "parse_confg"})).await;
    assert_eq!((m["name"].as_str(), m["matched"].as_str()), (Some("parse_config"), Some("fuzzy")));
    // `type` narrows by kind; `path` by place.
    let got = names(&p.query(json!({"query": "Worker", "type": "function"})).await);
    assert_eq!(got[0].0, "NewWorker");
    let v = p.query(json!({"query": "config", "path": "src/service.py"})).await;
    assert_eq!(v["matches"].as_array().unwrap().len(), 0, "{v}");
    // Files by path, any language.
    std::fs::write(p.root.join("README.md"), "# readme\n").unwrap();
    let got = names(&p.query(json!({"query": "readme", "type": "file"})).await);
    assert_eq!(got, [("README.md".to_string(), "exact".to_string())]);
    let v = p.query(json!({"query": "widget", "limit": 2})).await;
    assert_eq!(v["matches"].as_array().unwrap().len(), 2);
    // The same query answers the same way.
    assert_eq!(p.query(json!({"query": "e"})).await["matches"], p.query(json!({"query": "e"})).await["matches"]);
}

#[tokio::test]
async fn the_index_follows_changes_deletions_ignores_and_bad_files() {
    let p = project();
    let v = p.query(json!({"query": "good_function"})).await;
    assert_eq!(v["matches"][0]["path"], "src/broken.py", "{v}");
    assert_eq!(v["parse_errors"], 1, "the broken file is counted, its good part kept: {v}");
    assert_eq!(v["updated"], 10);
    let again = p.query(json!({"query": "good_function"})).await;
    assert_eq!(again["updated"], 0, "nothing re-read when nothing changed");

    // A change: the old name gone, the new one found.
    let path = p.root.join("src/service.py");
    let text = std::fs::read_to_string(&path).unwrap().replace("handle_request", "serve_request");
    std::fs::write(&path, text).unwrap();
    let v = p.query(json!({"query": "serve_request"})).await;
    assert_eq!(v["matches"][0]["line"], 9, "{v}");
    assert_eq!(v["updated"], 1);
    let v = p.query(json!({"query": "handle_request"})).await;
    assert_eq!(v["matches"].as_array().unwrap().len(), 0, "{v}");
    // A deletion.
    std::fs::remove_file(p.root.join("src/main.go")).unwrap();
    let v = p.query(json!({"query": "NewWorker"})).await;
    assert!(v["matches"].as_array().unwrap().iter().all(|m| m["path"] != "src/main.go"), "{v}");
    // .gitignore'd files are left out.
    std::fs::write(p.root.join(".gitignore"), "src/graph.cpp\n").unwrap();
    let v = p.query(json!({"query": "GraphNode"})).await;
    assert_eq!(v["matches"].as_array().unwrap().len(), 0, "{v}");
    // The database is in the cache directory given, not in the project.
    assert!(
        std::fs::read_dir(&p.cache).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("proj-"))
    );
}

#[tokio::test]
async fn refreshes_running_at_once_agree() {
    let p = project();
    for i in 0..20 {
        std::fs::write(p.root.join(format!("src/gen{i}.rs")), format!("pub fn generated_{i}() {{}}\n")).unwrap();
    }
    let mut handles = Vec::new();
    for _ in 0..4 {
        let cx = p.cx();
        handles
            .push(tokio::spawn(async move { common::ok_in(cx, "code_query", json!({"query": "generated_1"})).await }));
    }
    for h in handles {
        let (_, v) = h.await.unwrap();
        assert_eq!(v["matches"][0]["name"], "generated_1", "{v}");
    }
    let v = p.query(json!({"query": "generated", "limit": 100})).await;
    assert_eq!(v["matches"].as_array().unwrap().len(), 20);
    assert_eq!(v["updated"], 0);
}
