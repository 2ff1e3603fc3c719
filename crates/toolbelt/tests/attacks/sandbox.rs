//! The sandbox holds as root: no capability, no device node, no signal or Unix socket outside
//! its own tree and workspace, nothing it starts outlives it, no descriptor of the server's
//! reaches it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::World;

/// Whether the tests run as root (the effective uid in `/proc/self/status`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

/// The pids of processes whose command line starts with `prefix` (`sleep 4101`).
fn running(prefix: &str) -> Vec<String> {
    let out = Command::new("pgrep").args(["-f", &format!("^{prefix}")]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().map(str::to_string).collect()
}

/// Waits (bounded) for every process starting with `prefix` to be gone; what is left.
fn gone(prefix: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = running(prefix);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn project() -> World {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w
}

#[test]
fn a_command_as_root_keeps_no_capability_and_makes_no_device() {
    let w = project();
    if !is_root() {
        eprintln!("skipped: needs root (CI runs as root)");
        return;
    }
    let command = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; mknod blk b 7 0; echo mknod=$?; \
                   mknod chr c 1 3; echo chr=$?; mount -t tmpfs none /mnt; echo mount=$?";
    let (_, out) = w.bash(command, &["--allow", "Bash"]);
    for line in out.lines().filter(|l| l.starts_with("Cap")) {
        assert!(line.ends_with("0000000000000000"), "{line}\n{out}");
    }
    assert_eq!(out.lines().filter(|l| l.starts_with("Cap")).count(), 5, "{out}");
    for refused in ["mknod=1", "chr=1", "mount=32"] {
        assert!(out.contains(refused) || out.contains(&refused.replace("32", "1")), "{refused}: {out}");
    }
    assert!(!w.root.join("blk").exists() && !w.root.join("chr").exists());
}

#[test]
fn calls_a_confined_command_never_needs_are_refused() {
    let w = project();
    let command =
        "unshare -U true; echo unshare=$?; python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)' 2>&1 | tail -1";
    let (_, out) = w.bash(command, &["--allow", "Bash"]);
    assert!(out.contains("unshare=1") && out.contains("Operation not permitted"), "{out}");
}

#[test]
fn signals_reach_only_the_command_s_own_tree() {
    let w = project();
    let mut outsider = Command::new("sleep").arg("4101").stdin(Stdio::null()).spawn().unwrap();
    // The own child sleeps long enough to still be there when it is signalled (a `sleep 0`
    // could be gone first, and `kill` then fails for want of a target, not of a right).
    let command = format!("kill -STOP {pid}; echo outside=$?; sleep 30 & kill $!; echo own=$?", pid = outsider.id());
    let (_, out) = w.bash(&command, &["--allow", "Bash"]);
    let state = std::fs::read_to_string(format!("/proc/{}/stat", outsider.id())).unwrap();
    let _ = outsider.kill();
    let _ = outsider.wait();
    assert!(out.contains("outside=1") && out.contains("own=0"), "{out}");
    assert!(!state.contains(") T "), "the outside process was stopped: {state}");
}

#[test]
fn unix_sockets_outside_the_workspace_are_out_of_reach_with_the_network_off() {
    let w = project();
    let path = w.outside.join("agent.sock");
    let name = format!("toolbelt-test-{}", std::process::id());
    // Beside it, a socket whose name is not UTF-8 (anyone may bind one): reading the socket
    // table must not fail on it, leaving every socket unmasked.
    let server = format!(
        "import os, socket, time\n\
         c = socket.socket(socket.AF_UNIX); c.bind(os.fsencode(os.path.dirname({path:?})) + b'/\\xff odd.sock'); c.listen()\n\
         a = socket.socket(socket.AF_UNIX); a.bind({path:?}); a.listen()\n\
         b = socket.socket(socket.AF_UNIX); b.bind('\\0{name}'); b.listen()\n\
         time.sleep(30)\n",
        path = path.display().to_string()
    );
    let mut listener = Command::new("python3").args(["-c", &server]).stdin(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let client = format!(
        "import socket\n\
         for target in [{path:?}, '\\0{name}']:\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   try:\n\
         \x20       s.connect(target); print('reached', repr(target))\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', repr(target), e)\n",
        path = path.display().to_string()
    );
    let command = format!("python3 -c {}", shell_quote(&client));
    let (_, off) = w.bash(&command, &["--allow", "Bash"]);
    let (_, on) = w.bash(&command, &["--allow", "Bash", "--network"]);
    let _ = listener.kill();
    let _ = listener.wait();
    let count = |text: &str, word: &str| text.lines().filter(|l| l.starts_with(word)).count();
    assert_eq!(count(&off, "refused "), 2, "network off: {off}");
    assert_eq!(count(&on, "reached "), 2, "network on, the same sockets are reached: {on}");
}

#[test]
fn a_flood_of_sockets_outside_the_workspace_does_not_leave_any_reachable() {
    // A background command (or anything else) binds more listening sockets than the sandbox
    // can cover one by one on kernels without Landlock's socket control: the next command is
    // refused rather than started with some of them reachable.
    let w = project();
    let dir = w.outside.join("flood");
    std::fs::create_dir_all(&dir).unwrap();
    let server = format!(
        "import socket, time\n\
         s = []\n\
         for i in range(300):\n\
         \x20   a = socket.socket(socket.AF_UNIX); a.bind({dir:?} + '/s%d' % i); a.listen(); s.append(a)\n\
         open({dir:?} + '/ready', 'w').close()\n\
         time.sleep(30)\n",
        dir = dir.display().to_string()
    );
    let mut listener = Command::new("python3").args(["-c", &server]).stdin(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !dir.join("ready").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let client = format!(
        "import socket\n\
         s = socket.socket(socket.AF_UNIX)\n\
         try:\n\
         \x20   s.connect({last:?}); print('reached')\n\
         except OSError as e:\n\
         \x20   print('refused', e)\n",
        last = dir.join("s299").display().to_string()
    );
    let command = format!("python3 -c {}", shell_quote(&client));
    let (_, out) = w.bash(&command, &["--allow", "Bash", "--if-unsandboxed", "refuse"]);
    let _ = listener.kill();
    let _ = listener.wait();
    assert!(!out.contains("reached"), "{out}");
    assert!(out.contains("refused") || out.contains("Unix sockets are listening outside the workspace"), "{out}");
}

#[test]
fn nothing_a_command_starts_outlives_it() {
    let w = project();
    // A process that leaves the session, drops its tag and closes every descriptor.
    let escape = |n: u32| format!("( setsid env -i bash -c 'exec 0<&- 1>&- 2>&- 98>&-; exec sleep {n}' & )");
    // The timeout.
    let (_, out) = w.call(
        "Bash",
        json!({"command": format!("{}; sleep 30", escape(4102)), "timeout": 1000}),
        &["--allow", "Bash"],
    );
    assert!(out.contains("Timed out"), "{out}");
    assert_eq!(gone("sleep 4102"), Vec::<String>::new(), "escaped the timeout: {out}");
    // TaskStop, and the end of the session.
    let batch = [
        json!({"name": "Bash", "input": {"command": format!("{}; sleep 30", escape(4103)), "run_in_background": true}}),
        json!({"name": "Bash", "input": {"command": "sleep 0.5"}}),
        json!({"name": "TaskStop", "input": {"task_id": "bash_1"}}),
        json!({"name": "Bash", "input": {"command": format!("{}; sleep 30", escape(4104)), "run_in_background": true}}),
        json!({"name": "Bash", "input": {"command": "sleep 0.5"}}),
    ];
    let input: String = batch.iter().map(|l| format!("{l}\n")).collect();
    let mut child =
        w.toolbelt().args(["batch", "--allow", "Bash"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Stopped task bash_1") && text.contains("every process it started"), "{text}");
    assert_eq!(gone("sleep 4103"), Vec::<String>::new(), "escaped TaskStop");
    assert_eq!(gone("sleep 4104"), Vec::<String>::new(), "escaped the end of the session");
    // SIGTERM to the CLI while the command runs.
    let mut call = w
        .toolbelt()
        .args([
            "call",
            "Bash",
            &json!({"command": format!("{}; sleep 30", escape(4105))}).to_string(),
            "--allow",
            "Bash",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while running("sleep 4105").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!running("sleep 4105").is_empty(), "the command started");
    Command::new("kill").args(["-TERM", &call.id().to_string()]).status().unwrap();
    let _ = call.wait();
    assert_eq!(gone("sleep 4105"), Vec::<String>::new(), "escaped SIGTERM to the CLI");
}

#[test]
fn the_mcp_server_takes_its_commands_with_it() {
    let w = project();
    let mut mcp = w.mcp(&["--allow", "Bash"]);
    let command = "( setsid env -i bash -c 'exec 0<&- 1>&- 2>&- 98>&-; exec sleep 4106' & ); sleep 30";
    let (is_error, text) = mcp.call("Bash", json!({"command": command, "run_in_background": true}));
    assert!(!is_error, "{text}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while running("sleep 4106").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!running("sleep 4106").is_empty());
    mcp.terminate();
    assert_eq!(gone("sleep 4106"), Vec::<String>::new(), "escaped SIGTERM to the server");
}

#[test]
fn inherited_descriptors_never_reach_a_command() {
    let w = project();
    let leak = w.outside.join("leak.txt");
    std::fs::write(&leak, "").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("toolbelt");
    for sandbox in ["workspace-write", "danger-full-access"] {
        let input = json!({"command": "echo leaked >&7; echo status=$?"}).to_string();
        let launcher = format!(
            "exec 7>>{leak}; exec {bin} call Bash {input} --allow Bash --sandbox {sandbox}",
            leak = shell_quote(&leak.display().to_string()),
            bin = shell_quote(&bin.display().to_string()),
            input = shell_quote(&input),
        );
        let out = w.toolbelt_env(Command::new("bash").args(["-c", &launcher])).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Bad file descriptor"), "{sandbox}: {text}");
        assert_eq!(std::fs::read_to_string(&leak).unwrap(), "", "{sandbox}: the command wrote through fd 7");
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
