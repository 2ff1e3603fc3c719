//! Scheduled jobs through the real `toolbelt` binary: a durable job surviving a restart of
//! `toolbelt cron serve`, a missed firing run once, tool jobs under the policy with nobody to
//! approve, a prompt job run by an agent on the scripted loopback model (whose run cannot
//! schedule jobs), incoming triggers over HTTP refusing a missing token, and, over MCP, the
//! Python SDK client told of each run with a log notification.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.md"), "status: draft\n").unwrap();
    (dir, root)
}

/// `toolbelt [args] call --json TOOL INPUT`: the result and the exit code.
fn call(root: &Path, args: &[&str], tool: &str, input: &Value) -> (Value, Option<i32>) {
    let out = hermetic::toolbelt(root).args(args).args(["call", "--json", tool, &input.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    (
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text} {}", String::from_utf8_lossy(&out.stderr))),
        out.status.code(),
    )
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// Schedules a durable `every_seconds` tool job with `cron add`; its id.
fn every(root: &Path, name: &str, seconds: u64, tool: &str, input: Value) -> String {
    let (added, code) = call(
        root,
        &["--allow", "cron"],
        "cron",
        &json!({"action": "add", "name": name, "every_seconds": seconds, "tool": tool, "input": input}),
    );
    assert_eq!(code, Some(0), "{added}");
    added["structured"]["job"]["id"].as_str().unwrap().to_string()
}

/// `toolbelt cron list --json`.
fn jobs(root: &Path) -> Vec<Value> {
    let out = hermetic::toolbelt(root).args(["cron", "list", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap().as_array().unwrap().clone()
}

/// A process whose stdout lines are collected as they come.
struct Watched {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Watched {
    fn start(mut cmd: Command) -> Watched {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let collected = Arc::clone(&lines);
        let pipe = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in pipe.lines().map_while(Result::ok) {
                collected.lock().unwrap().push(line);
            }
        });
        Watched { child, lines }
    }

    /// Waits until some line satisfies `pred`; all the lines.
    fn wait_for(&self, what: &str, pred: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if pred(&lines) {
                return lines;
            }
            assert!(Instant::now() < deadline, "no {what}: {lines:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops it as a service manager would (SIGTERM), and waits.
    fn stop(mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

fn completed(lines: &[String]) -> usize {
    lines.iter().filter(|l| l.contains("completed:")).count()
}

#[test]
fn a_durable_job_survives_a_restart_of_cron_serve() {
    let (_dir, root) = project();
    let id = every(&root, "scan", 1, "Glob", json!({"pattern": "*.md"}));
    let serve = || {
        let mut cmd = hermetic::toolbelt(&root);
        cmd.args(["cron", "serve"]);
        Watched::start(cmd)
    };
    let first = serve();
    let lines = first.wait_for("run", |l| completed(l) >= 2);
    assert!(lines.iter().any(|l| l.contains(&format!("{id}.1 job `scan` started (schedule)"))), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(&format!("{id}.1 job `scan` completed: notes.md"))), "{lines:?}");
    first.stop();
    let before = jobs(&root)[0]["runs"].as_u64().unwrap();
    assert!(before >= 2, "{before}");

    // A new process picks the job up where the store left it: the next run has the next number.
    let second = serve();
    let next = format!("{id}.{} job `scan` completed", before + 1);
    second.wait_for("run after the restart", |l| l.iter().any(|l| l.contains(&next)));
    second.stop();
    let job = &jobs(&root)[0];
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["durable"], true);
    assert_eq!(job["last_run"]["status"], "completed", "{job}");
    // Its output stays readable by run id.
    let (read, _) = call(&root, &[], "TaskOutput", &json!({"task_id": format!("{id}.1")}));
    assert_eq!(read["structured"]["status"], "completed", "{read}");
    assert!(read["structured"]["output"].as_str().unwrap().contains("notes.md"), "{read}");
}

#[test]
fn a_missed_firing_runs_once_not_once_per_slot() {
    let (_dir, root) = project();
    let id = every(&root, "scan", 1, "Glob", json!({"pattern": "*.md"}));
    // Nothing serves the project for several periods.
    std::thread::sleep(Duration::from_millis(3500));
    let out = hermetic::toolbelt(&root).args(["cron", "serve", "--once"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let runs: Vec<&str> = stdout.lines().filter(|l| l.contains("completed:")).collect();
    assert_eq!(runs.len(), 1, "{stdout}");
    assert!(runs[0].contains(&format!("{id}.1")), "{stdout}");
    let job = &jobs(&root)[0];
    assert_eq!(job["runs"], 1, "{job}");
    // Its next firing is the first slot after now, not one of the missed ones.
    let next: jiff::Timestamp = job["next_run"].as_str().unwrap().parse().unwrap();
    assert!(next > jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1), "{job}");
    // Run again at once: nothing is due.
    let again = hermetic::toolbelt(&root).args(["cron", "serve", "--once"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout).lines().filter(|l| l.contains("completed:")).count(), 0);
}

#[test]
fn a_tool_job_runs_under_the_policy_with_nobody_to_approve() {
    let (_dir, root) = project();
    // The session that scheduled it may write; the job runs later, where nobody is asked.
    let out = hermetic::toolbelt(&root)
        .env("TZ", "Asia/Tokyo")
        .args(["--allow", "CronCreate", "--allow", "Bash(touch *)", "call", "--json", "CronCreate"])
        .arg(json!({"cron": "0 0 1 1 *", "recurring": false, "tool": "Bash", "input": {"command": "touch made"}, "durable": true, "name": "toucher"}).to_string())
        .output()
        .unwrap();
    let (made, code): (Value, _) = (serde_json::from_slice(&out.stdout).unwrap(), out.status.code());
    assert_eq!(code, Some(0), "{made}");
    // "Local time" is the creator's zone, written down (TZ here).
    assert_eq!(made["structured"]["job"]["when"], "cron `0 0 1 1 *` (Asia/Tokyo)");
    let run_now = |root: &Path| hermetic::toolbelt(root).args(["cron", "run-now", "toucher"]).output().unwrap();
    let out = run_now(&root);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("failed") && stdout.contains("nobody is available to approve"), "{stdout}");
    assert!(!root.join("made").exists());
    // A rule in the user's settings allows it.
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[permissions]\nallow = [\"Bash(touch *)\"]\n").unwrap();
    let out = run_now(&root);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(root.join("made").exists());
    // Removed, it is gone from the list; its runs stay readable.
    let out = hermetic::toolbelt(&root).args(["cron", "remove", "toucher"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Deleted job_"), "{out:?}");
    assert!(jobs(&root).is_empty());
}

#[test]
fn what_cannot_run_is_refused_when_scheduled() {
    let (_dir, root) = project();
    let create = |args: &[&str], input: Value| call(&root, args, "CronCreate", &input);
    let allow = ["--allow", "CronCreate"];
    let cases = [
        // A session job in a one-shot call would end with it.
        (json!({"cron": "* * * * *", "tool": "Glob", "input": {"pattern": "*"}}), "durable: true"),
        (json!({"cron": "* * *", "tool": "Glob", "durable": true}), "5-field cron expression"),
        (json!({"cron": "0 9 30 2 *", "tool": "Glob", "durable": true}), "never matches"),
        (json!({"cron": "0 9 * * *", "tz": "Mars/Base", "tool": "Glob", "durable": true}), "IANA"),
        (json!({"cron": "0 9 * * *", "tool": "Globb", "durable": true}), "Glob"),
        (json!({"cron": "0 9 * * *", "tool": "Read", "input": {}, "durable": true}), "file_path"),
        (json!({"cron": "0 9 * * *", "tool": "cron", "input": {"action": "list"}, "durable": true}), "no job creates"),
        (json!({"cron": "0 9 * * *", "prompt": "hi", "durable": true}), "model provider"),
        (json!({"cron": "0 9 * * *", "durable": true}), "say what the job does"),
        // A yearly job would expire (7 days) before it first fired.
        (json!({"cron": "0 0 1 1 *", "tool": "Glob", "input": {"pattern": "*"}, "durable": true}), "cron.max_age_days"),
    ];
    for (input, says) in cases {
        let (refused, code) = create(&allow, input.clone());
        assert_eq!(code, Some(1), "{input}: {refused}");
        assert!(text(&refused).contains(says), "{input}: {refused}");
    }
    // A durable job asks; plan mode refuses it.
    let durable = json!({"cron": "0 9 * * *", "tool": "Glob", "input": {"pattern": "*"}, "durable": true});
    let (asked, _) = create(&[], durable.clone());
    assert!(text(&asked).contains("--allow 'CronCreate'"), "{asked}");
    let (planned, _) = create(&["--mode", "plan"], durable);
    assert!(text(&planned).contains("plan mode is read-only"), "{planned}");
    assert!(jobs(&root).is_empty());
}

#[test]
fn a_prompt_job_runs_as_an_agent_that_cannot_schedule_jobs() {
    let (_dir, root) = project();
    let server = ScriptedServer::openai([
        Turn::tool_call("c1", "CronCreate", json!({"cron": "* * * * *", "prompt": "again", "durable": true})),
        Turn::tool_call("d1", "CronDelete", json!({"id": "summary"})),
        Turn::tool_call("r1", "Read", json!({"file_path": "notes.md"})),
        Turn::text("The notes say draft."),
    ])
    .unwrap();
    let toolbelt = |args: &[&str]| {
        let mut cmd = hermetic::toolbelt(&root);
        cmd.envs(server.env()).args(args).output().unwrap()
    };
    let made = toolbelt(&[
        "--allow",
        "CronCreate",
        "call",
        "CronCreate",
        &json!({"cron": "30 8 * * 1-5", "tz": "Europe/Paris", "prompt": "Summarize notes.md", "durable": true, "name": "summary"})
            .to_string(),
    ]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stdout));
    let out = toolbelt(&["cron", "run-now", "summary", "--allow", "CronCreate"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("The notes say draft."), "{stdout}");
    let requests = server.requests();
    assert_eq!(requests[0].messages().iter().find(|m| m["role"] == "user").unwrap()["content"], "Summarize notes.md");
    // The agent's CronCreate and CronDelete were refused, whatever the rules: no job creates
    // or changes jobs.
    for (i, id) in [(1, "c1"), (2, "d1")] {
        let answer = requests[i].messages().iter().rev().find(|m| m["role"] == "tool").unwrap().clone();
        assert_eq!(answer["tool_call_id"], id);
        assert!(answer["content"].as_str().unwrap().contains("run cannot schedule, change or list jobs"), "{answer}");
    }
    assert_eq!(jobs(&root).len(), 1);
    // "Local time" was written down as the creator's zone.
    assert_eq!(jobs(&root)[0]["when"], "cron `30 8 * * 1-5` (Europe/Paris)");
}

/// `toolbelt mcp --http` on a free loopback port, with `env`.
struct Http {
    child: Child,
    port: u16,
}

impl Http {
    fn start(root: &Path, env: &[(&str, &str)]) -> Http {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = hermetic::toolbelt(root)
            .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Http { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// `POST path` with `headers`: the status and the body.
    fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.port,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        (head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0), body.to_string())
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_incoming_trigger_starts_its_job_and_refuses_a_missing_token() {
    let (_dir, root) = project();
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[cron.triggers.build]\ntoken_env = \"BUILD_TRIGGER_TOKEN\"\ntool = \"Glob\"\ninput = { pattern = \"*.md\" }\n",
    )
    .unwrap();
    let server = Http::start(&root, &[("BUILD_TRIGGER_TOKEN", "s3cret-token")]);
    let (status, body) = server.post("/triggers/build", &[], "");
    assert_eq!(status, 401, "{body}");
    let (status, _) = server.post("/triggers/build", &[("Authorization", "Bearer s3cret-tokem")], "");
    assert_eq!(status, 401);
    let (status, _) = server.post("/triggers/deploy", &[("Authorization", "Bearer s3cret-token")], "");
    assert_eq!(status, 404);
    // The MCP endpoint's gate does not guard the trigger, and the trigger's token opens no MCP.
    let (status, body) =
        server.post("/triggers/build", &[("Authorization", "Bearer s3cret-token")], "{\"ref\":\"main\"}");
    assert_eq!(status, 202, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["trigger"], "build");
    let run_id = answer["run_id"].as_str().unwrap().to_string();
    assert!(run_id.starts_with("job_trigger_build."), "{answer}");
    let (read, _) = call(&root, &[], "TaskOutput", &json!({"task_id": run_id, "timeout": 10000}));
    assert_eq!(read["structured"]["status"], "completed", "{read}");
    assert!(read["structured"]["output"].as_str().unwrap().contains("notes.md"), "{read}");
    assert_eq!(read["structured"]["job_run"]["reason"], "trigger build", "{read}");
}

#[test]
fn the_python_sdk_client_is_told_of_each_run_of_its_session_job() {
    let Some(peers) = peers::Peers::find() else { return };
    let (_dir, root) = project();
    let mut cmd = Command::new(peers.python());
    cmd.arg(peers::script("cron_client.py")).arg(peers::toolbelt()).arg(&root);
    let seen = peers::run(cmd, &root, "");
    let job = seen["added"]["job"].clone();
    assert_eq!(job["durable"], false, "{seen}");
    let id = job["id"].as_str().unwrap();
    let logs = seen["logs"].as_array().unwrap();
    let ended: Vec<&Value> = logs.iter().filter(|l| l["data"]["kind"] == "ended").collect();
    assert!(!ended.is_empty(), "{seen}");
    assert_eq!(ended[0]["logger"], format!("toolbelt/{id}.1"), "{seen}");
    assert_eq!(ended[0]["data"]["exit_code"], 0, "{seen}");
    assert!(ended[0]["data"]["text"].as_str().unwrap().contains("notes.md"), "{seen}");
    // The run reads back by its id; the session's job is listed, then removed.
    assert_eq!(seen["read"]["status"], "completed", "{seen}");
    assert!(seen["listed"]["jobs"].as_array().unwrap().iter().any(|j| j["id"] == id), "{seen}");
    assert_eq!(seen["removed"]["job"]["id"], id, "{seen}");
    // Session jobs never reach the project's store.
    assert!(jobs(&root).is_empty());
}

#[test]
fn a_session_job_a_sub_agent_schedules_belongs_to_the_top_session() {
    let (_dir, root) = project();
    let server = ScriptedServer::openai([
        Turn::tool_call("a1", "Agent", json!({"description": "schedule", "prompt": "Schedule the hourly scan."})),
        Turn::tool_call(
            "s1",
            "cron",
            json!({"action": "add", "name": "hourly", "every_seconds": 3600, "tool": "Glob", "input": {"pattern": "*"}, "durable": false}),
        ),
        Turn::text("Scheduled."),
        Turn::tool_call("l1", "CronList", json!({})),
        Turn::tool_call("d1", "CronDelete", json!({"id": "hourly"})),
        Turn::text("Listed and deleted."),
    ])
    .unwrap();
    let out =
        hermetic::toolbelt(&root).envs(server.env()).args(["agent", "Schedule it, then check."]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    let answer =
        |i: usize| requests[i].messages().iter().rev().find(|m| m["role"] == "tool").unwrap()["content"].clone();
    assert!(answer(2).as_str().unwrap().contains("Added job_"), "{}", answer(2));
    // The top session lists the job its sub-agent made, and can delete it.
    assert!(answer(4).as_str().unwrap().contains("`hourly`"), "{}", answer(4));
    assert!(answer(5).as_str().unwrap().starts_with("Deleted job_"), "{}", answer(5));
}
