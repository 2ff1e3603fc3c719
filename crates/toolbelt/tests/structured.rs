//! Every built-in tool, called over MCP through the real binary: its `structuredContent`
//! arrives and validates against the `outputSchema` the same server listed for it.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn start_with(root: &Path, args: &[&str], env: Vec<(String, String)>) -> Self {
        let mut child = hermetic::toolbelt(root)
            .envs(env)
            .args(args)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server { child, stdin, stdout, next: 1 };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"}}),
        );
        writeln!(server.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        server
    }

    /// Sends a request and returns its result, skipping notifications on the way.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "elicitation/create" {
                let answer =
                    json!({"action": "accept", "content": first_choices(&message["params"]["requestedSchema"])});
                writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": message["id"], "result": answer})).unwrap();
                self.stdin.flush().unwrap();
                continue;
            }
            if message["id"] == json!(id) {
                assert!(message["error"].is_null(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

/// The answer a person picking the first choice of every question would give: each choice
/// field's first value (a list of it for a multiple choice); free-text fields left out.
fn first_choices(schema: &Value) -> Value {
    let mut answer = serde_json::Map::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let first = |options: &Value| options[0]["const"].clone();
        if field["type"] == "array" {
            answer.insert(name.clone(), json!([first(&field["items"]["anyOf"])]));
        } else if field["oneOf"].is_array() {
            answer.insert(name.clone(), first(&field["oneOf"]));
        } else if field["enum"].is_array() {
            answer.insert(name.clone(), field["enum"][0].clone());
        } else if field["type"] == "boolean" {
            answer.insert(name.clone(), json!(true));
        }
    }
    Value::Object(answer)
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_builtin_tool_returns_structured_content_matching_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    // For LSP and Diagnostics: clangd serves C (.ci/run installs it).
    std::fs::write(root.join("calc.c"), "int twice(int v) {\n    return v * 2;\n}\n").unwrap();
    // For Lint: a shell script shellcheck has something to say about (.ci/run installs it).
    std::fs::write(root.join("deploy.sh"), "#!/bin/sh\ncd /srv\n").unwrap();
    let notebook = json!({"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "x = 1",
        "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    std::fs::write(root.join("nb.ipynb"), notebook.to_string()).unwrap();
    // A real repository with a commit, for EnterWorktree; git without the machine's configuration.
    let git_env = [("GIT_CONFIG_GLOBAL", "/dev/null"), ("GIT_CONFIG_NOSYSTEM", "1")];
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x"],
    ] {
        let out = std::process::Command::new("git").args(args).current_dir(&root).envs(git_env).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    // A page for WebFetch, on loopback (which the web tools reach only when allowed).
    let web = tokio::runtime::Runtime::new().unwrap();
    let site = web
        .block_on(toolbelt_tools::web::testing::Server::start(|req| match req.path() {
            // A search provider (Brave's API shape) for WebSearch.
            "/res/v1/web/search" => toolbelt_tools::web::testing::Reply::ok(
                "application/json",
                json!({"web": {"results": [{"title": "Hello", "url": "https://example.com/hello",
                    "description": "A page about hello."}]}})
                .to_string(),
            ),
            _ => toolbelt_tools::web::testing::Reply::ok(
                "text/html",
                "<html><head><title>T</title></head><body><p>hello web</p></body></html>",
            ),
        }))
        .unwrap();
    let settings = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("config.toml"),
        format!(
            "[web.search]\nprovider = \"brave\"\n[web.search.brave]\nbase_url = \"{}\"\napi_key_env = \"TB_TEST_SEARCH_KEY\"\n",
            site.url("/res/v1/web/search")
        ),
    )
    .unwrap();
    let mut open = vec![
        ("TOOLBELT_WEB__ALLOW_PRIVATE_NETWORK".to_string(), "true".to_string()),
        ("TB_TEST_SEARCH_KEY".to_string(), "test-key".to_string()),
    ];
    open.extend(git_env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let skill = root.join(".claude/skills/notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\ndescription: Tidy the notes\n---\nTidy $ARGUMENTS.\n").unwrap();
    let mut server =
        Server::start_with(&root, &["--mode", "bypassPermissions", "--sandbox", "danger-full-access"], open);
    // The deferred tools are listed once loaded.
    let loaded = server.call("ToolSearch", json!({"query": "select:Config,EnterWorktree,ExitWorktree,snippet_save,snippet_load,snippet_list,snippet_delete"}));
    assert_eq!(loaded["structuredContent"]["tools"].as_array().map(Vec::len), Some(7), "{loaded}");
    let listed = server.request("tools/list", json!({}));
    let schemas: std::collections::BTreeMap<String, Value> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["outputSchema"].clone()))
        .collect();

    let background = server.call("Bash", json!({"command": "sleep 30", "run_in_background": true}));
    let task = background["structuredContent"]["task_id"].as_str().unwrap_or_default().to_string();
    assert!(!task.is_empty(), "a background Bash call names its task: {background}");
    let calls: Vec<(&str, Value)> = vec![
        ("Read", json!({"file_path": "notes.txt"})),
        ("Write", json!({"file_path": "new.txt", "content": "one\ntwo\n"})),
        ("Edit", json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"})),
        (
            "MultiEdit",
            json!({"file_path": "notes.txt", "edits": [{"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "gamma", "new_string": "GAMMA"}]}),
        ),
        ("Read", json!({"file_path": "nb.ipynb"})),
        ("NotebookEdit", json!({"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x = 2"})),
        ("ApplyPatch", json!({"input": "*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n"})),
        ("ListDir", json!({"path": "."})),
        ("Glob", json!({"pattern": "*.txt"})),
        ("Grep", json!({"pattern": "BETA"})),
        ("Grep", json!({"pattern": "a", "output_mode": "content"})),
        ("Bash", json!({"command": "echo hello"})),
        ("BackgroundTasks", json!({})),
        ("TaskOutput", json!({"task_id": task, "block": false})),
        ("TaskStop", json!({"task_id": task})),
        ("TodoWrite", json!({"todos": [{"content": "check", "status": "pending", "activeForm": "Checking"}]})),
        ("TaskCreate", json!({"subject": "Check", "description": "check it", "activeForm": "Checking"})),
        ("TaskCreate", json!({"subject": "Ship", "description": "ship it", "metadata": {"k": 1}})),
        ("TaskUpdate", json!({"taskId": "2", "status": "in_progress", "owner": "a", "addBlockedBy": ["1"]})),
        ("TaskGet", json!({"taskId": "2"})),
        ("TaskList", json!({})),
        ("TaskUpdate", json!({"taskId": "1", "status": "deleted"})),
        (
            "snippet_save",
            json!({"name": "greet", "code": "echo hi", "language": "sh", "description": "Say hi", "tags": ["demo"]}),
        ),
        ("snippet_save", json!({"name": "greet", "code": "echo hello"})),
        ("snippet_load", json!({"name": "greet"})),
        ("snippet_list", json!({"query": "hello", "limit": 5})),
        ("snippet_list", json!({"query": "((("})),
        ("snippet_delete", json!({"name": "greet"})),
        ("WebFetch", json!({"url": site.url("/page")})),
        ("WebFetch", json!({"url": site.url("/page"), "max_chars": 100, "prompt": "hello"})),
        ("WebSearch", json!({"query": "hello world"})),
        ("Think", json!({"thought": "The notes are edited; next, the plan."})),
        ("Brief", json!({"message": "Notes edited.", "attachments": ["notes.txt"], "status": "normal"})),
        (
            "AskUserQuestion",
            json!({"questions": [{"question": "Which format?", "header": "Format", "multiSelect": false,
                "options": [{"label": "Markdown", "description": "notes.md"}, {"label": "Text", "description": "as is"}]}]}),
        ),
        ("Config", json!({"setting": "runtime.output_budget"})),
        ("ToolSearch", json!({"query": "worktree"})),
        ("code_query", json!({"query": "notes", "type": "all"})),
        ("LSP", json!({"operation": "documentSymbol", "filePath": "calc.c"})),
        ("LSP", json!({"operation": "hover", "filePath": "calc.c", "line": 1, "character": 5})),
        ("Diagnostics", json!({"path": "calc.c"})),
        ("Diagnostics", json!({})),
        ("Lint", json!({"path": "deploy.sh"})),
        ("Skill", json!({"skill": "notes", "args": "notes.txt"})),
        ("EnterPlanMode", json!({})),
        ("ExitPlanMode", json!({"plan": "1. Rename notes.txt to notes.md."})),
        // Last: they move the session's working directory and back.
        ("EnterWorktree", json!({"name": "structured"})),
        ("ExitWorktree", json!({"action": "remove"})),
    ];
    let mut seen = std::collections::BTreeSet::from(["Bash".to_string()]);
    for (tool, arguments) in calls {
        let result = server.call(tool, arguments.clone());
        assert_eq!(result["isError"], json!(false), "{tool} {arguments}: {result}");
        let schema = &schemas[tool];
        assert_eq!(schema["type"], "object", "{tool} lists an object output schema: {schema}");
        let structured = &result["structuredContent"];
        assert!(structured.is_object(), "{tool} sends structuredContent: {result}");
        let validator = jsonschema::draft202012::new(schema).unwrap();
        let errors: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool}: {structured} does not match {schema}: {errors:?}");
        assert!(result["content"][0]["text"].is_string(), "{tool} still sends text: {result}");
        seen.insert(tool.to_string());
    }
    // Every built-in tool was exercised (tools from upstream servers are not built in).
    let builtin: std::collections::BTreeSet<String> = schemas.keys().cloned().collect();
    assert_eq!(seen, builtin, "a built-in tool without a round trip here");
}

#[test]
fn every_agent_tool_returns_structured_content_matching_its_schema() {
    use toolbelt_agent::testing::{ScriptedServer, Turn};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let model = ScriptedServer::openai((1..=8).map(|n| Turn::text(format!("answer {n}")))).unwrap();
    let mut server = Server::start_with(&root, &[], model.env());
    let loaded = server.call("ToolSearch", json!({"query": "select:TeamCreate,TeamDelete,TaskBroadcast"}));
    assert_eq!(loaded["structuredContent"]["tools"].as_array().map(Vec::len), Some(3), "{loaded}");
    let listed = server.request("tools/list", json!({}));
    let schemas: std::collections::BTreeMap<String, Value> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["outputSchema"].clone()))
        .collect();
    let check = |server: &mut Server, tool: &str, arguments: Value| -> Value {
        let result = server.call(tool, arguments.clone());
        assert_eq!(result["isError"], json!(false), "{tool} {arguments}: {result}");
        let structured = result["structuredContent"].clone();
        let validator = jsonschema::draft202012::new(&schemas[tool]).unwrap();
        let errors: Vec<String> = validator.iter_errors(&structured).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool}: {structured} does not match its schema: {errors:?}");
        structured
    };
    check(&mut server, "TeamCreate", json!({"team_name": "t", "description": "a team"}));
    let done = check(&mut server, "Agent", json!({"description": "one", "prompt": "Answer."}));
    assert_eq!(done["status"], "completed");
    let member = check(&mut server, "Agent", json!({"prompt": "Answer too.", "team_name": "t", "name": "alice"}));
    let id = member["agent_id"].as_str().unwrap().to_string();
    assert_eq!(check(&mut server, "TaskOutput", json!({"task_id": id}))["status"], "completed");
    check(&mut server, "SendMessage", json!({"to": "alice", "message": "More."}));
    check(&mut server, "TaskOutput", json!({"task_id": id}));
    check(&mut server, "TaskBroadcast", json!({"team_name": "t", "message": "All of you."}));
    let read = check(&mut server, "TaskOutput", json!({"task_id": id}));
    assert_eq!(read["agent"]["name"], "alice");
    check(&mut server, "TaskStop", json!({"task_id": id}));
    check(&mut server, "TeamDelete", json!({"team_name": "t"}));
    check(&mut server, "BackgroundTasks", json!({}));
    assert!(model.requests().len() >= 4, "{:?}", model.requests().len());
}
