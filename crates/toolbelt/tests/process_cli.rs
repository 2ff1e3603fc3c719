//! `Process` through the real `toolbelt` binary, on real processes: a background task's
//! process listed and marked as the session's own, shown in full and signalled without
//! approval; a process the session did not start signalled only when a rule allows it (and
//! never in plan mode); toolbelt and the processes above it never signalled; unknown and
//! ambiguous targets answered with what to do.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// A project (a `.git` directory) in a temp directory, canonical.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// `toolbelt [args…] call --json Process INPUT`: the result object and the exit code.
fn process(root: &Path, args: &[&str], input: Value) -> (Value, i32) {
    let out =
        hermetic::toolbelt(root).args(args).args(["call", "--json", "Process", &input.to_string()]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}\nstdout: {stdout}\nstderr: {}", String::from_utf8_lossy(&out.stderr)));
    (result, out.status.code().unwrap_or(-1))
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// Runs `calls` as one `toolbelt batch` session; the results by id.
fn batch(root: &Path, args: &[&str], calls: &[Value]) -> Vec<Value> {
    let mut child = hermetic::toolbelt(root)
        .arg("batch")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for call in calls {
        writeln!(stdin, "{call}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A `sleep` this test starts (so toolbelt did not), killed when dropped.
struct Sleeper(std::process::Child);

impl Sleeper {
    fn start(root: &Path, marker: &str) -> Self {
        // `exec -a` gives it a command line no other process here has.
        let child = Command::new("bash").arg("-c").arg(format!("exec -a {marker} sleep 300")).current_dir(root).spawn();
        let sleeper = Self(child.unwrap());
        // Until the exec, the process is still bash.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let cmdline = std::fs::read(format!("/proc/{}/cmdline", sleeper.pid())).unwrap_or_default();
            if cmdline.starts_with(marker.as_bytes()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        sleeper
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_background_task_is_listed_as_the_session_s_own_shown_and_signalled_without_asking() {
    let (_dir, root) = project();
    let results = batch(
        &root,
        &["--allow", "Bash(sleep *)"],
        &[
            json!({"id": "start", "name": "Bash", "input": {"command": "sleep 297", "run_in_background": true}}),
            json!({"id": "list", "name": "Process", "input": {"action": "list", "name": "sleep 297"}}),
            json!({"id": "all", "name": "Process", "input": {"action": "list"}}),
            json!({"id": "info", "name": "Process", "input": {"action": "info", "name": "sleep 297"}}),
            json!({"id": "signal", "name": "Process", "input": {"action": "signal", "name": "sleep 297"}}),
            json!({"id": "tasks", "name": "BackgroundTasks", "input": {}}),
        ],
    );
    let by_id = |id: &str| results.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no {id}: {results:?}"));
    for id in ["start", "list", "all", "info", "signal", "tasks"] {
        assert_eq!(by_id(id)["is_error"], false, "{id}: {}", by_id(id));
    }

    // Listed, marked with its task; toolbelt's own command line (which holds the name) is not.
    let list = &by_id("list")["structured"];
    let rows = list["processes"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{list}");
    assert_eq!(rows[0]["command"], "sleep 297");
    assert_eq!(rows[0]["task_id"], "bash_1");
    let pid = rows[0]["pid"].as_i64().unwrap();
    assert!(text(by_id("list")).contains("* bash_1"), "{}", text(by_id("list")));
    // The whole list puts the session's own first: toolbelt itself and the task.
    let all = by_id("all")["structured"]["processes"].as_array().unwrap().clone();
    let own: Vec<&str> =
        all.iter().take_while(|r| r["task_id"].is_string()).map(|r| r["task_id"].as_str().unwrap()).collect();
    assert!(own.contains(&"toolbelt") && own.contains(&"bash_1"), "{own:?}");

    // In full: its command, its working directory (the workspace), its parent.
    let info = &by_id("info")["structured"]["process"];
    assert_eq!(info["pid"].as_i64(), Some(pid));
    assert_eq!(info["command"], "sleep 297");
    assert_eq!(info["cwd"], root.display().to_string());
    assert_eq!(info["task_id"], "bash_1");
    assert!(info["rss_kib"].as_u64().unwrap() > 0, "{info}");
    assert!(text(by_id("info")).contains(&format!("cwd: {}", root.display())), "{}", text(by_id("info")));

    // Signalled in default mode with no rule: it is the session's own.
    let signalled = &by_id("signal")["structured"]["signalled"];
    assert_eq!(signalled["pid"].as_i64(), Some(pid));
    assert_eq!(signalled["signal"], "SIGTERM");
    assert_eq!(signalled["outcome"], "exited");
    assert_eq!(signalled["task_id"], "bash_1");
    assert!(by_id("tasks")["structured"]["running"] == 0, "{}", by_id("tasks"));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z")
    );
}

#[test]
fn a_process_the_session_did_not_start_is_signalled_only_when_a_rule_allows_it() {
    let (_dir, root) = project();
    let mut sleeper = Sleeper::start(&root, "outsider-4711");
    let pid = sleeper.pid();

    // Shown freely.
    let (info, code) = process(&root, &[], json!({"action": "info", "pid": pid}));
    assert_eq!(code, 0, "{info}");
    assert_eq!(info["structured"]["process"]["command"], "outsider-4711 300");
    assert!(info["structured"]["process"].get("task_id").is_none(), "{info}");

    // Default mode, nobody to ask: refused, naming the rule that would allow it.
    let (refused, code) = process(&root, &[], json!({"action": "signal", "pid": pid}));
    assert_eq!(code, 1, "{refused}");
    let message = text(&refused);
    assert!(message.contains("needs approval"), "{message}");
    assert!(message.contains(&format!("sends SIGTERM to process {pid} (`sleep`")), "{message}");
    assert!(message.contains("which this session did not start"), "{message}");
    assert!(message.contains("--allow 'Process'"), "{message}");
    // Plan mode refuses it: plan mode is read-only.
    let (planned, code) = process(&root, &["--mode", "plan"], json!({"action": "signal", "pid": pid}));
    assert_eq!(code, 1, "{planned}");
    assert!(text(&planned).contains("plan mode is read-only"), "{}", text(&planned));
    assert!(sleeper.0.try_wait().unwrap().is_none(), "the process was signalled");

    // Allowed by a rule: signalled, and its parent sees how it ended. (KILL: a process
    // started in the background by a non-interactive shell ignores INT and QUIT, and may
    // have inherited that.)
    let (sent, code) =
        process(&root, &["--allow", "Process"], json!({"action": "signal", "pid": pid, "signal": "KILL"}));
    assert_eq!(code, 0, "{sent}");
    assert_eq!(sent["structured"]["signalled"]["signal"], "SIGKILL");
    assert_eq!(sent["structured"]["signalled"]["outcome"], "exited", "{sent}");
    let status = sleeper.0.wait().unwrap();
    assert_eq!(status.signal(), Some(SIGKILL), "{status:?}");
}

const SIGKILL: i32 = 9;

#[test]
fn toolbelt_and_the_processes_above_it_are_never_signalled() {
    let (_dir, root) = project();
    // This test process is toolbelt's parent: signalling it would end the session's host.
    let me = std::process::id();
    for (pid, said) in [(me, "a process toolbelt runs under"), (1, "init")] {
        let (refused, code) =
            process(&root, &["--mode", "bypassPermissions"], json!({"action": "signal", "pid": pid, "signal": "KILL"}));
        assert_eq!(code, 1, "{refused}");
        assert!(text(&refused).contains(said), "{}", text(&refused));
    }
}

#[test]
fn unknown_and_ambiguous_targets_say_what_to_do() {
    let (_dir, root) = project();
    let _a = Sleeper::start(&root, "twin-8812");
    let _b = Sleeper::start(&root, "twin-8812");

    let (both, code) = process(&root, &[], json!({"action": "info", "name": "twin-8812"}));
    assert_eq!(code, 1, "{both}");
    assert!(text(&both).contains("2 processes match `twin-8812`"), "{}", text(&both));
    assert!(text(&both).contains("give the `pid`"), "{}", text(&both));

    let (listed, _) = process(&root, &[], json!({"action": "list", "name": "TWIN-8812"}));
    assert_eq!(listed["structured"]["processes"].as_array().unwrap().len(), 2, "{listed}");

    let (none, code) = process(&root, &[], json!({"action": "signal", "name": "no-such-program-5521"}));
    assert_eq!(code, 1, "{none}");
    assert!(text(&none).contains("no process's command holds"), "{}", text(&none));

    let (gone, code) = process(&root, &[], json!({"action": "info", "pid": 999_999_999}));
    assert_eq!(code, 1, "{gone}");
    assert!(text(&gone).contains("no process 999999999"), "{}", text(&gone));

    let (unsure, code) = process(&root, &[], json!({"action": "info"}));
    assert_eq!(code, 1, "{unsure}");
    assert!(text(&unsure).contains("give `pid`"), "{}", text(&unsure));

    let (both, code) = process(&root, &[], json!({"action": "signal", "pid": 1, "name": "twin-8812"}));
    assert_eq!(code, 1, "{both}");
    assert!(text(&both).contains("give `pid` or `name`, not both"), "{}", text(&both));

    let (misplaced, code) = process(&root, &[], json!({"action": "list", "signal": "KILL"}));
    assert_eq!(code, 1, "{misplaced}");
    assert!(text(&misplaced).contains("goes with action \"signal\""), "{}", text(&misplaced));
}
