//! Running the binary with a real pseudo-terminal as its controlling terminal (Python's
//! `pty`), so the questions it asks at a terminal can be answered in tests.

use std::path::Path;

/// Runs toolbelt with `args` in `cwd` under a pseudo-terminal, with `env` set (and `CI` and
/// `TOOLBELT_MANAGED_CONFIG` removed), typing `answers` line by line once `prompt` appears;
/// returns everything it printed and its exit status.
pub fn toolbelt_in_pty(args: &[&str], cwd: &Path, env: &[(&str, &Path)], prompt: &str, answers: &str) -> (String, i32) {
    let script = r#"
import os, pty, sys, json, time
args = json.loads(sys.argv[1]); prompt = sys.argv[2].encode(); answers = sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
out = b""; sent = False; deadline = time.time() + 30
while time.time() < deadline:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not sent and prompt in out:
        for line in answers.splitlines(True):
            os.write(fd, line.encode()); time.sleep(0.2)
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let mut argv = vec![assert_cmd::cargo::cargo_bin("toolbelt").display().to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let mut command = std::process::Command::new("python3");
    command
        .args(["-c", script, &serde_json::to_string(&argv).unwrap_or_default(), prompt, answers])
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("TOOLBELT_MANAGED_CONFIG");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap_or_else(|e| panic!("python3 could not run: {e}"));
    (String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"), out.status.code().unwrap_or(-1))
}
