//! Tools the settings define (`[tools.command.NAME]`, `[tools.http.NAME]`) through the real
//! binary: listed and exported, their input validated against their schema, a command tool's
//! arguments filled one value per argument (no shell reads them), its input on stdin, JSON
//! output structured, its permissions judged (asked about, allowed by its name, denied); an
//! HTTP tool against a loopback server with its secret from the environment, judged by
//! `WebFetch(domain:…)` rules and stopped by the private-network guard; both over batch and
//! MCP; a bad definition named with its file and line while the others still work; a
//! project's definitions waiting for trust.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use toolbelt_tools::web::testing::{Reply, Server};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/stdio_mcp.rs"]
mod stdio_mcp;

use stdio_mcp::StdioMcp;

const COMMANDS: &str = r#"
[tools.command.args]
description = "Prints each argument in brackets"
command = "printf"
args = ["[%s]\n", "{word}", "--n={n}", "{list}"]
input_schema = { type = "object", properties = { word = { type = "string" }, n = { type = "integer" }, list = { type = "array", items = { type = "string" } } }, required = ["word"] }

[tools.command.echo_json]
description = "Gives its input back as JSON"
command = "cat"
stdin = "json"
output = "json"
output_schema = { type = "object" }
input_schema = { type = "object", properties = { city = { type = "string" }, days = { type = "integer" } }, required = ["city"] }

[tools.command.mk]
description = "Makes a folder"
command = "mkdir"
args = ["-p", "{dir}"]
writes = ["{dir}"]

[tools.command.fail]
description = "Fails"
command = "sh"
args = ["-c", "echo broken >&2; exit 3"]

[tools.command.slow]
description = "Sleeps"
command = "sleep"
args = ["30"]
timeout = 1
"#;

fn project(extra: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), format!("{COMMANDS}\n{extra}")).unwrap();
    (dir, root)
}

fn run(root: &Path, args: &[&str]) -> (String, String, Option<i32>) {
    let out = hermetic::toolbelt(root).env("TB_WEATHER_TOKEN", "wx-SECRET").args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn call(root: &Path, flags: &[&str], tool: &str, input: Value) -> (Value, Option<i32>) {
    let mut args: Vec<&str> = flags.to_vec();
    let input = input.to_string();
    args.extend(["call", "--json", tool, &input]);
    let (out, err, code) = run(root, &args);
    (serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")), code)
}

fn text(result: &Value) -> String {
    result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_command_tool_gets_each_value_as_one_argument_and_its_input_on_stdin() {
    let (_dir, root) = project("");
    let (out, _, code) = run(&root, &["tools", "--format", "names"]);
    assert_eq!(code, Some(0));
    for name in ["args", "echo_json", "mk", "fail", "slow"] {
        assert!(out.lines().any(|l| l == name), "{name}: {out}");
    }
    // Every export has them, with their own schema.
    for format in ["openai", "anthropic", "mcp", "json"] {
        let (out, _, _) = run(&root, &["tools", "--format", format]);
        let tools: Value = serde_json::from_str(&out).unwrap();
        let text = tools.to_string();
        assert!(text.contains("Prints each argument in brackets") && text.contains(r#""list""#), "{format}");
    }
    // A value with spaces, quotes and a command substitution stays one argument, as written;
    // an absent optional value drops its whole argument; a list gives one argument per item.
    let evil = "a b'; touch pwned; $(touch pwned2)";
    let (result, code) = call(&root, &[], "args", json!({"word": evil, "list": ["x y", "z"]}));
    assert_eq!(code, Some(0), "{result}");
    assert_eq!(text(&result).trim(), format!("[{evil}]\n[x y]\n[z]"), "{result}");
    assert!(!root.join("pwned").exists() && !root.join("pwned2").exists());
    let (result, _) = call(&root, &[], "args", json!({"word": "w", "n": 7}));
    assert_eq!(text(&result).trim(), "[w]\n[--n=7]");
    assert_eq!(result["structured"]["exit_code"], 0, "{result}");

    // The input is validated against the schema before anything runs.
    let (out, err, code) = run(&root, &["call", "args", r#"{"n": "seven"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    let err = format!("{out}{err}");
    assert!(err.contains("word") && err.contains("n"), "{err}");

    // stdin = "json" and output = "json": the structured result is the program's JSON.
    let (result, code) = call(&root, &[], "echo_json", json!({"city": "Zürich", "days": 3}));
    assert_eq!(code, Some(0), "{result}");
    assert_eq!(result["structured"], json!({"city": "Zürich", "days": 3}), "{result}");

    // A failing exit is an error result with what it printed; a time limit kills it.
    let (result, _) = call(&root, &["--allow", "fail"], "fail", json!({}));
    assert_eq!(result["is_error"], true, "{result}");
    assert!(text(&result).contains("broken") && text(&result).contains('3'), "{result}");
    let started = std::time::Instant::now();
    let (result, _) = call(&root, &["--allow", "slow"], "slow", json!({}));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "the sleep was not killed");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(text(&result).to_lowercase().contains("timed out"), "{result}");
    // The advice is the tool's: its own time limit, not Bash's `timeout` or background tasks.
    assert!(text(&result).contains("the `timeout` of `slow`"), "{result}");
    assert!(!text(&result).contains("run_in_background"), "{result}");
}

#[test]
fn a_command_tool_is_judged_by_what_it_runs_and_declares() {
    let (_dir, root) = project("");
    // `mkdir` is no read-only command: it asks, and with nobody to answer nothing runs.
    let (out, err, code) = run(&root, &["call", "mk", r#"{"dir": "made"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(!root.join("made").exists());
    // A rule naming the tool allows it; a deny rule on the path it declares refuses it.
    let (result, code) = call(&root, &["--allow", "mk"], "mk", json!({"dir": "made"}));
    assert_eq!(code, Some(0), "{result}");
    assert!(root.join("made").is_dir());
    let (out, err, code) =
        run(&root, &["--allow", "mk", "--deny", "Edit(/secret/**)", "call", "mk", r#"{"dir": "secret/x"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(!root.join("secret").exists(), "{out}{err}");
    // A protected place holds whatever rule allowed the tool: nothing is made in git's hooks.
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    let (out, err, code) = run(&root, &["--allow", "mk", "call", "mk", r#"{"dir": ".git/hooks/pre-commit.d"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(!root.join(".git/hooks/pre-commit.d").exists(), "{out}{err}");
    // A bare deny rule hides it.
    let (out, _, _) = run(&root, &["--deny", "mk", "tools", "--format", "names"]);
    assert!(!out.lines().any(|l| l == "mk"), "{out}");
}

struct Weather {
    server: Server,
    _runtime: tokio::runtime::Runtime,
}

/// A weather service: `GET /v1/weather?q=CITY` and `POST /v1/alerts` with the right token.
fn weather() -> Weather {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(Server::start(|req| {
            if req.header("authorization") != Some("Bearer wx-SECRET") {
                return Reply::status(401, "application/json", r#"{"message":"Bad credentials"}"#);
            }
            match req.path() {
                p if p.starts_with("/v1/weather") => {
                    let q = req.query("q").unwrap_or_default();
                    Reply::ok("application/json", json!({"query": q, "temp": 21}).to_string())
                }
                "/v1/alerts" => Reply::ok("application/json", json!({"got": req.json()}).to_string()),
                _ => Reply::status(404, "text/plain", "no such page"),
            }
        }))
        .unwrap();
    Weather { server, _runtime: runtime }
}

fn http_tools(weather: &Weather, open: bool) -> String {
    let base = weather.server.url("");
    let base = base.trim_end_matches('/');
    let web = if open { "[web]\nallowed_private_hosts = [\"127.0.0.1\"]\n" } else { "" };
    format!(
        "{web}\n[tools.http.weather]\ndescription = \"Current weather\"\nurl = \"{base}/v1/weather?q={{city}}\"\n\
         headers = {{ Authorization = \"Bearer ${{TB_WEATHER_TOKEN}}\" }}\noutput = \"json\"\n\
         output_schema = {{ type = \"object\" }}\n\
         [tools.http.alert]\ndescription = \"Raise an alert\"\nmethod = \"POST\"\nurl = \"{base}/v1/alerts\"\n\
         headers = {{ Authorization = \"Bearer ${{TB_WEATHER_TOKEN}}\" }}\n\
         input_schema = {{ type = \"object\", properties = {{ level = {{ type = \"integer\" }} }}, required = [\"level\"] }}\n"
    )
}

#[test]
fn an_http_tool_sends_its_request_with_the_secret_and_is_judged_by_its_host() {
    let weather = weather();
    let (_dir, root) = project(&http_tools(&weather, true));
    // GET asks in default mode like a fetch; a rule allowing fetches from the host does not
    // allow it (an HTTP tool may carry a secret there); its own name does.
    let (out, err, code) = run(&root, &["call", "weather", r#"{"city": "São Paulo/x?y"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    let (out, err, code) =
        run(&root, &["--allow", "WebFetch(domain:127.0.0.1)", "call", "weather", r#"{"city": "x"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    let allow = ["--allow", "weather(domain:127.0.0.1)"];
    let (result, code) = call(&root, &allow, "weather", json!({"city": "São Paulo/x?y"}));
    assert_eq!(code, Some(0), "{result}");
    // The value is one query value, percent-encoded; the token came from the environment.
    assert_eq!(result["structured"]["query"], "São Paulo/x?y", "{result}");
    let sent = weather.server.requests();
    assert!(sent.iter().any(|r| r.path().starts_with("/v1/weather")), "one query value, not a path");
    assert!(!result.to_string().contains("wx-SECRET"), "{result}");
    // POST without a body template sends the input as JSON; its own name allows it.
    let (result, code) = call(&root, &["--allow", "alert"], "alert", json!({"level": 3}));
    assert_eq!(code, Some(0), "{result}");
    assert!(text(&result).starts_with("HTTP 200") && text(&result).contains(r#""level":3"#), "{result}");
    // A deny written for fetches catches it, whatever allows the tool by name.
    let (out, err, code) =
        run(&root, &["--allow", "alert", "--deny", "WebFetch(domain:127.0.0.1)", "call", "alert", r#"{"level": 1}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(format!("{out}{err}").contains("WebFetch(domain:127.0.0.1)"), "{out}{err}");
    let (out, err, code) = run(&root, &["--allow", "alert", "--deny", "WebFetch", "call", "alert", r#"{"level": 1}"#]);
    assert_ne!(code, Some(0), "a bare WebFetch deny catches it: {out}{err}");
    // Without the secret the call says which variable to set, never sending a request.
    let out =
        hermetic::toolbelt(&root).args(["--allow", "alert", "call", "alert", r#"{"level": 1}"#]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("TB_WEATHER_TOKEN"), "{said}");
}

#[test]
fn an_http_tool_is_stopped_by_the_private_network_guard() {
    let weather = weather();
    let (_dir, root) = project(&http_tools(&weather, false));
    let (result, _) = call(&root, &["--allow", "weather"], "weather", json!({"city": "x"}));
    assert_eq!(result["is_error"], true, "{result}");
    assert!(text(&result).contains("private"), "{result}");
}

#[test]
fn defined_tools_run_in_a_batch_and_over_mcp() {
    let weather = weather();
    let (_dir, root) = project(&http_tools(&weather, true));
    let lines = [
        json!({"id": 1, "name": "args", "input": {"word": "one"}}),
        json!({"id": 2, "name": "weather", "input": {"city": "Oslo"}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut child = hermetic::toolbelt(&root)
        .env("TB_WEATHER_TOKEN", "wx-SECRET")
        .args(["--allow", "weather", "--allow", "fail", "batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let results: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].to_string().contains("[one]"), "{}", results[0]);
    assert!(results[1].to_string().contains("Oslo"), "{}", results[1]);

    let mut cmd = hermetic::toolbelt(&root);
    cmd.env("TB_WEATHER_TOKEN", "wx-SECRET").args(["--allow", "weather", "mcp"]);
    let mut mcp = StdioMcp::start(cmd);
    let weather_tool = mcp.tool("weather");
    assert_eq!(weather_tool["inputSchema"]["required"], json!(["city"]), "{weather_tool}");
    let called = mcp.call("weather", json!({"city": "Oslo"}));
    assert_eq!(called["result"]["structuredContent"]["query"], "Oslo", "{called}");
    let called = mcp.call("echo_json", json!({"city": "Rome"}));
    assert_eq!(called["result"]["structuredContent"]["city"], "Rome", "{called}");
    assert!(called["result"]["content"][0]["text"].as_str().unwrap().contains("Rome"), "{called}");
}

#[test]
fn a_bad_definition_is_named_with_its_file_and_line_and_the_rest_still_works() {
    let bad = "[tools.command.spaced]\ndescription = \"x\"\ncommand = \"git log\"\n\n\
               [tools.http.anywhere]\ndescription = \"y\"\nurl = \"https://{host}/x\"\n\n\
               [tools.command.Read]\ndescription = \"z\"\ncommand = \"true\"\n";
    let (_dir, root) = project(bad);
    let file = root.join(".test-home/.config/toolbelt/config.toml");
    let line_of = |needle: &str| {
        let text = std::fs::read_to_string(&file).unwrap();
        text.lines().position(|l| l.contains(needle)).unwrap() + 1
    };
    let (out, err, code) = run(&root, &["config", "check"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let at = |name: &str, line: usize| format!("{}:{line}: {name}", file.display());
    assert!(out.contains(&at("tools.command.spaced", line_of("[tools.command.spaced]"))), "{out}");
    assert!(out.contains("put its arguments in `args`"), "{out}");
    assert!(out.contains(&at("tools.http.anywhere", line_of("[tools.http.anywhere]"))), "{out}");
    assert!(out.contains(&at("tools.command.Read", line_of("[tools.command.Read]"))), "{out}");
    assert!(out.contains("never replaces a built-in one"), "{out}");
    // Never fatal: the good ones are there, the bad left out, Read still the built-in one.
    let (names, err, code) = run(&root, &["tools", "--format", "names"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(names.lines().any(|l| l == "args") && !names.lines().any(|l| l == "spaced"), "{names}");
    assert!(err.contains("tools.command.spaced"), "the left-out tool is said: {err}");
    let (result, code) = call(&root, &[], "args", json!({"word": "still"}));
    assert_eq!(code, Some(0), "{result}");
}

#[test]
fn a_project_s_tools_wait_for_trust() {
    let (_dir, root) = project("");
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        "[tools.command.build]\ndescription = \"Builds\"\ncommand = \"touch\"\nargs = [\"built\"]\n",
    )
    .unwrap();
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(!names.lines().any(|l| l == "build"), "{names}");
    let (out, err, code) = run(&root, &["trust"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(names.lines().any(|l| l == "build"), "{names}");
}

#[test]
fn a_shell_line_reads_its_input_whole_and_gets_each_value_as_one_word() {
    let (_dir, root) = project(
        "[tools.command.shout]\ndescription = \"Upper-cases its input\"\ncommand = \"cat | tr a-z A-Z\"\nshell = true\nstdin = \"json\"\n\
         input_schema = { type = \"object\", properties = { word = { type = \"string\" } } }\n\
         [tools.command.count]\ndescription = \"Counts its words\"\ncommand = \"printf '%s|' {words} && echo\"\nshell = true\n\
         input_schema = { type = \"object\", properties = { words = { type = \"array\", items = { type = \"string\" } } } }\n",
    );
    let (result, code) = call(&root, &["--allow", "shout"], "shout", json!({"word": "quiet"}));
    assert_eq!(code, Some(0), "{result}");
    assert!(text(&result).contains(r#"{"WORD":"QUIET"}"#), "{result}");
    let (result, code) = call(&root, &["--allow", "count"], "count", json!({"words": ["a b", "c;d", "$HOME"]}));
    assert_eq!(code, Some(0), "{result}");
    assert!(text(&result).contains("a b|c;d|$HOME|"), "{result}");
}
