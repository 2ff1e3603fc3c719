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

/// Every string and number in `value`, one per line: what a reader of it can find.
fn strings(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => items.iter().map(strings).collect::<Vec<_>>().join("\n"),
        Value::Object(map) => map.values().map(strings).collect::<Vec<_>>().join("\n"),
        Value::Bool(_) | Value::Null => String::new(),
    }
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
            "[web.search]\nprovider = \"brave\"\n[web.search.brave]\nbase_url = \"{}\"\napi_key_env = \"TB_TEST_SEARCH_KEY\"\n\
             [message.channels.notes]\nkind = \"file\"\npath = \"~/notes.md\"\n\
             [triggers.ping]\nmethod = \"GET\"\nurl = \"{}\"\n",
            site.url("/res/v1/web/search"),
            site.url("/page")
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
    let loaded = server.call("ToolSearch", json!({"query": "select:Config,EnterWorktree,ExitWorktree,snippet_save,snippet_load,snippet_list,snippet_delete,Process,Monitor,Message,RemoteTrigger,CronCreate,CronList,CronDelete,cron"}));
    assert_eq!(loaded["structuredContent"]["tools"].as_array().map(Vec::len), Some(15), "{loaded}");
    let listed = server.request("tools/list", json!({}));
    let schemas: std::collections::BTreeMap<String, Value> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["outputSchema"].clone()))
        .collect();

    let background = server.call("Bash", json!({"command": "sleep 30.5", "run_in_background": true}));
    let task = background["structuredContent"]["task_id"].as_str().unwrap_or_default().to_string();
    assert!(!task.is_empty(), "a background Bash call names its task: {background}");
    let task_named = [task.as_str()];
    let task_sleeping = ["sleep 30", task.as_str()];
    // Each call with what the model must find in its result — in the text and, for a client
    // that shows it the structured result instead, in `structuredContent` too: the payload
    // (a file's lines, a page's text, a command's output), notices, how to get the rest.
    let calls: Vec<(&str, Value, &[&str])> = vec![
        ("Read", json!({"file_path": "notes.txt"}), &["     2\tbeta"]),
        ("Write", json!({"file_path": "new.txt", "content": "one\ntwo\n"}), &["new.txt"]),
        ("Edit", json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}), &["     2\tBETA"]),
        (
            "MultiEdit",
            json!({"file_path": "notes.txt", "edits": [{"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "gamma", "new_string": "GAMMA"}]}),
            &["     1\tALPHA", "     3\tGAMMA"],
        ),
        ("Read", json!({"file_path": "nb.ipynb"}), &["x = 1", "<cell 0 id=\"c1\""]),
        ("NotebookEdit", json!({"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x = 2"}), &["x = 2"]),
        (
            "ApplyPatch",
            json!({"input": "*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n"}),
            &["patched.txt"],
        ),
        ("ListDir", json!({"path": "."}), &["patched.txt", "calc.c"]),
        ("Glob", json!({"pattern": "*.txt"}), &["new.txt"]),
        ("Glob", json!({"pattern": "*.nothing"}), &["No files found matching `*.nothing`"]),
        ("Grep", json!({"pattern": "BETA"}), &["notes.txt"]),
        ("Grep", json!({"pattern": "a", "output_mode": "content"}), &["\"cell_type\":\"code\""]),
        ("Grep", json!({"pattern": "nowhere-to-be-found"}), &["No matches found for `nowhere-to-be-found`"]),
        ("Bash", json!({"command": "echo hello; echo oops >&2; exit 3"}), &["hello", "oops", "Exit code 3"]),
        ("BackgroundTasks", json!({}), &["sleep 30"]),
        ("TaskOutput", json!({"task_id": task, "block": false}), &task_named),
        ("Process", json!({"action": "list", "name": "sleep 30.5"}), &task_sleeping),
        ("Process", json!({"action": "info", "name": "sleep 30.5"}), &task_sleeping),
        ("TaskStop", json!({"task_id": task}), &["sleep 30"]),
        ("Monitor", json!({"command": "echo watched", "description": "echo"}), &["echo watched", "monitor_1"]),
        ("Bash", json!({"command": "cat", "yield_time_ms": 100}), &["session_1"]),
        (
            "WriteStdin",
            json!({"session_id": "session_1", "chars": "typed line\n", "yield_time_ms": 500}),
            &["typed line"],
        ),
        ("Message", json!({"channel": "notes", "content": "Done."}), &["notes", "notes.md"]),
        ("RemoteTrigger", json!({"trigger": "ping"}), &["ping", "hello web"]),
        ("RemoteTrigger", json!({"action": "list"}), &["ping", "GET"]),
        (
            "CronCreate",
            json!({"cron": "0 0 1 1 *", "recurring": false, "tool": "Glob", "input": {"pattern": "*"}, "name": "yearly"}),
            &["yearly", "cron `0 0 1 1 *`"],
        ),
        ("CronList", json!({}), &["yearly"]),
        ("CronDelete", json!({"id": "yearly"}), &["yearly"]),
        (
            "cron",
            json!({"action": "add", "name": "later", "at": "2099-01-01T00:00:00Z", "tool": "Glob", "input": {"pattern": "*"}, "durable": false}),
            &["later", "once at 2099-01-01T00:00:00Z"],
        ),
        ("cron", json!({"action": "disable", "job_id": "later"}), &["later"]),
        ("cron", json!({"action": "list"}), &["later"]),
        ("cron", json!({"action": "remove", "job_id": "later"}), &["later"]),
        (
            "TodoWrite",
            json!({"todos": [{"content": "check", "status": "pending", "activeForm": "Checking"}]}),
            &["1 added", "no task is in progress"],
        ),
        ("TaskCreate", json!({"subject": "Check", "description": "check it", "activeForm": "Checking"}), &["Check"]),
        ("TaskCreate", json!({"subject": "Ship", "description": "ship it", "metadata": {"k": 1}}), &["Ship"]),
        (
            "TaskUpdate",
            json!({"taskId": "2", "status": "in_progress", "owner": "a", "addBlockedBy": ["1"]}),
            &["still blocked by #1"],
        ),
        ("TaskGet", json!({"taskId": "2"}), &["ship it"]),
        ("TaskList", json!({}), &["Ship", "Check"]),
        ("TaskUpdate", json!({"taskId": "1", "status": "deleted"}), &["deleted"]),
        (
            "snippet_save",
            json!({"name": "greet", "code": "echo hi", "language": "sh", "description": "Say hi", "tags": ["demo"]}),
            &["greet"],
        ),
        ("snippet_save", json!({"name": "greet", "code": "echo hello"}), &["greet"]),
        ("snippet_load", json!({"name": "greet"}), &["echo hello"]),
        ("snippet_list", json!({"query": "hello", "limit": 5}), &["greet"]),
        ("snippet_list", json!({"query": "((("}), &["has no word"]),
        ("snippet_delete", json!({"name": "greet"}), &["greet"]),
        ("WebFetch", json!({"url": site.url("/page")}), &["hello web"]),
        ("WebFetch", json!({"url": site.url("/page"), "max_chars": 100, "prompt": "hello"}), &["hello web"]),
        ("WebSearch", json!({"query": "hello world"}), &["A page about hello.", "https://example.com/hello"]),
        // An acknowledgement: nothing beyond it to carry.
        ("Think", json!({"thought": "The notes are edited; next, the plan."}), &[]),
        ("Brief", json!({"message": "Notes edited.", "attachments": ["notes.txt"], "status": "normal"}), &[]),
        (
            "AskUserQuestion",
            json!({"questions": [{"question": "Which format?", "header": "Format", "multiSelect": false,
                "options": [{"label": "Markdown", "description": "notes.md"}, {"label": "Text", "description": "as is"}]}]}),
            &["Which format?", "Markdown"],
        ),
        ("Config", json!({"setting": "runtime.output_budget"}), &["characters of text per result"]),
        ("ToolSearch", json!({"query": "worktree"}), &["EnterWorktree", "discard_changes"]),
        ("code_query", json!({"query": "notes", "type": "all"}), &["notes.txt"]),
        ("LSP", json!({"operation": "documentSymbol", "filePath": "calc.c"}), &["twice"]),
        ("LSP", json!({"operation": "hover", "filePath": "calc.c", "line": 1, "character": 5}), &["int v"]),
        ("Diagnostics", json!({"path": "calc.c"}), &["clangd"]),
        ("Diagnostics", json!({}), &["clangd"]),
        ("Lint", json!({"path": "deploy.sh"}), &["SC2164", "Use 'cd ... || exit'"]),
        ("Skill", json!({"skill": "notes", "args": "notes.txt"}), &["Tidy notes.txt."]),
        ("EnterPlanMode", json!({}), &["bypassPermissions"]),
        ("ExitPlanMode", json!({"plan": "1. Rename notes.txt to notes.md."}), &["bypassPermissions"]),
        // Last: they move the session's working directory and back.
        ("EnterWorktree", json!({"name": "structured"}), &["worktrees/structured"]),
        ("ExitWorktree", json!({"action": "remove"}), &["worktrees/structured"]),
    ];
    let mut seen = std::collections::BTreeSet::from(["Bash".to_string()]);
    let mut missing = Vec::new();
    for (tool, arguments, payload) in calls {
        let result = server.call(tool, arguments.clone());
        assert_eq!(result["isError"], json!(false), "{tool} {arguments}: {result}");
        let schema = &schemas[tool];
        assert_eq!(schema["type"], "object", "{tool} lists an object output schema: {schema}");
        let structured = &result["structuredContent"];
        assert!(structured.is_object(), "{tool} sends structuredContent: {result}");
        let validator = jsonschema::draft202012::new(schema).unwrap();
        let errors: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool}: {structured} does not match {schema}: {errors:?}");
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{tool} still sends text: {result}"));
        let data = strings(structured);
        for needle in payload {
            assert!(text.contains(needle), "{tool} {arguments}: the text lacks {needle:?}: {text}");
            if !data.contains(needle) {
                missing.push(format!("{tool} {arguments}: {needle:?} is in the text, not in {structured}"));
            }
        }
        seen.insert(tool.to_string());
    }
    assert!(missing.is_empty(), "structuredContent lacks what the text tells the model:\n{}", missing.join("\n"));
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
    assert_eq!((done["status"].as_str(), done["text"].as_str()), (Some("completed"), Some("answer 1")));
    let member = check(&mut server, "Agent", json!({"prompt": "Answer too.", "team_name": "t", "name": "alice"}));
    let id = member["agent_id"].as_str().unwrap().to_string();
    let first = check(&mut server, "TaskOutput", json!({"task_id": id}));
    assert_eq!(first["status"], "completed");
    // Its answer comes once, as `output`, not again in the report.
    assert_eq!(first["output"], "answer 2", "{first}");
    assert_eq!(first.to_string().matches("answer 2").count(), 1, "{first}");
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

/// The schema `tools/list` gives each tool.
fn output_schemas(server: &mut Server) -> std::collections::BTreeMap<String, Value> {
    let listed = server.request("tools/list", json!({}));
    let tools = listed["tools"].as_array().unwrap().iter();
    tools.map(|t| (t["name"].as_str().unwrap().to_string(), t["outputSchema"].clone())).collect()
}

fn assert_valid(schemas: &std::collections::BTreeMap<String, Value>, tool: &str, structured: &Value) {
    let validator = jsonschema::draft202012::new(&schemas[tool]).unwrap();
    let errors: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{tool}: {structured:#} does not match its schema: {errors:?}");
}

/// The spill file a text's truncation notice names.
fn spill_named(text: &str) -> String {
    let after = text.split("The full output was saved to ").nth(1).unwrap_or_else(|| panic!("no spill in {text}"));
    after.split("; read it").next().unwrap().to_string()
}

#[test]
fn a_result_over_the_budget_is_cut_in_structured_content_too_and_says_where_the_rest_is() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let big: String = (1..=3_000).map(|n| format!("line {n} of the big file\n")).collect();
    std::fs::write(root.join("big.txt"), &big).unwrap();
    // A PostToolUse hook of the user's that adds context to every Read.
    let settings = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&settings).unwrap();
    let said = r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"mind the style guide"}}"#;
    std::fs::write(
        settings.join("config.toml"),
        format!(
            "[[hooks.PostToolUse]]\nmatcher = \"Read\"\nhooks = [{{ type = \"command\", command = {:?} }}]\n",
            format!("echo '{said}'")
        ),
    )
    .unwrap();
    let budget = 2_000;
    let env = vec![("TOOLBELT_RUNTIME__OUTPUT_BUDGET".to_string(), budget.to_string())];
    let mut server = Server::start_with(&root, &["--sandbox", "danger-full-access"], env);
    let schemas = output_schemas(&mut server);

    // Read: the text keeps its head and tail and names the spill file; the structured result
    // keeps the same head and tail of `content` and names the same file.
    let result = server.call("Read", json!({"file_path": "big.txt"}));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("     1\tline 1 of the big file\n") && text.contains("characters cut …]"), "{text}");
    let spill = spill_named(text);
    let structured = &result["structuredContent"];
    assert_valid(&schemas, "Read", structured);
    let content = structured["content"].as_str().unwrap();
    assert!(content.starts_with("     1\tline 1 of the big file\n"), "{content}");
    // Read shows 2,000 lines at a time, and says how to go on.
    assert!(content.contains("  2000\tline 2000 of the big file"), "the tail is kept: {content}");
    assert_eq!(structured["notes"], json!(["Showing lines 1-2000 of 3000. Continue with offset=2001 to read more."]));
    assert!(content.contains("characters cut …]"), "{content}");
    assert!(content.chars().count() < budget + 100, "{} characters", content.chars().count());
    assert_eq!(structured["truncation"]["full_output"], spill.as_str());
    let notice = structured["truncation"]["notice"].as_str().unwrap();
    assert!(
        notice.starts_with("Output truncated to the output budget of 2,000 characters: `content` keeps the first "),
        "{notice}"
    );
    assert!(notice.contains(&spill) && notice.contains("read it with Read (offset/limit)"), "{notice}");
    // The spill holds every line, and the hook's context reached both forms.
    assert!(std::fs::read_to_string(&spill).unwrap().contains("  1500\tline 1500 of the big file"));
    assert_eq!(structured["hook_context"], json!(["mind the style guide"]));
    assert_eq!(result["content"].as_array().unwrap().last().unwrap()["text"], "mind the style guide");

    // Grep: the structured list stops within the budget and says where to go on.
    let result = server.call("Grep", json!({"pattern": "big file", "output_mode": "content"}));
    let structured = &result["structuredContent"];
    assert_valid(&schemas, "Grep", structured);
    let matches = structured["matches"].as_array().unwrap();
    assert!(!matches.is_empty() && matches.len() < 3_000, "{}", matches.len());
    assert_eq!(structured["next_offset"], matches.len());
    assert_eq!(structured["total"], 3_000);

    // Bash: both streams within the budget, and the note saying where every byte is.
    let result = server.call("Bash", json!({"command": "seq 1 100000; echo done >&2"}));
    let structured = &result["structuredContent"];
    assert_valid(&schemas, "Bash", structured);
    let stdout = structured["stdout"].as_str().unwrap();
    assert!(stdout.chars().count() <= budget, "{}", stdout.chars().count());
    assert!(stdout.starts_with("1\n2\n") && stdout.ends_with("100000\n"), "{stdout}");
    assert_eq!(structured["stderr"], "done\n");
    let notes = structured["notes"].as_array().unwrap();
    let file = structured["output_file"].as_str().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("Every byte is in ")), "{structured:#}");
    assert!(std::fs::read_to_string(file).unwrap().ends_with("100000\ndone\n"));
}

#[test]
fn call_json_prints_the_same_structured_result() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let big: String = (1..=3_000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(root.join("big.txt"), &big).unwrap();
    std::fs::write(root.join("small.txt"), "alpha\nbeta\n").unwrap();
    let call = |file: &str| -> Value {
        let out = hermetic::toolbelt(&root)
            .env("TOOLBELT_RUNTIME__OUTPUT_BUDGET", "1000")
            .args(["call", "Read", &json!({"file_path": file}).to_string(), "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let small = call("small.txt");
    assert_eq!(small["structured"]["content"], "     1\talpha\n     2\tbeta");
    let big = call("big.txt");
    let content = big["structured"]["content"].as_str().unwrap();
    assert!(content.starts_with("     1\tline 1\n") && content.contains("  2000\tline 2000"), "{content}");
    let text = big["content"][0]["text"].as_str().unwrap();
    assert_eq!(big["structured"]["truncation"]["full_output"], spill_named(text).as_str());
}
