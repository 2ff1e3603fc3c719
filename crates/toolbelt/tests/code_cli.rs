//! `code_query` through the real `toolbelt` binary: one process builds the index, the next
//! finds a change; and on this repository's own source.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

fn query(base: &Path, cwd: &Path, input: Value) -> Value {
    let out = hermetic::toolbelt(base)
        .current_dir(cwd)
        .args(["call", "--json", "code_query", &input.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["structured"].clone()
}

#[test]
fn the_index_is_built_once_and_follows_edits_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub struct Engine;\n\nimpl Engine {\n    pub fn start(&self) {}\n}\n")
        .unwrap();
    let v = query(&base, &root, json!({"query": "start"}));
    assert_eq!(v["matches"][0]["path"], "src/lib.rs", "{v}");
    assert_eq!(v["matches"][0]["line"], 4);
    assert_eq!(v["updated"], 1);
    // Kept in the user's cache directory, not in the project.
    let cache = base.join(".test-home/.cache/toolbelt/code-index");
    assert!(std::fs::read_dir(&cache).unwrap().count() >= 1);
    assert!(!root.join(".toolbelt").exists());
    std::fs::write(root.join("src/lib.rs"), "pub struct Engine;\n\nimpl Engine {\n    pub fn stop(&self) {}\n}\n")
        .unwrap();
    let v = query(&base, &root, json!({"query": "stop", "type": "function"}));
    assert_eq!((v["matches"][0]["name"].as_str(), v["updated"].as_u64()), (Some("stop"), Some(1)), "{v}");
    assert_eq!(v["matches"][0]["scope"], json!(null), "{v}");
    let v = query(&base, &root, json!({"query": "start", "type": "function"}));
    assert_eq!(v["matches"].as_array().unwrap().len(), 0, "{v}");
}

#[test]
fn it_finds_definitions_in_this_repository() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let v = query(&base, &repo, json!({"query": "InputValidator", "type": "class", "limit": 3}));
    assert_eq!(v["matches"][0]["path"], "crates/toolbelt-core/src/validate.rs", "{v}");
    assert_eq!(v["matches"][0]["matched"], "exact");
    let v =
        query(&base, &repo, json!({"query": "builtin_registry_with", "type": "function", "path": "crates/toolbelt"}));
    assert_eq!(v["matches"][0]["path"], "crates/toolbelt/src/lib.rs", "{v}");
}
