//! Running the binary with a real pseudo-terminal as its controlling terminal (Python's
//! `pty`), so the questions it asks at a terminal can be answered in tests.
#![allow(dead_code)]

use std::path::Path;

/// The harness: forks a child whose controlling terminal is a new pseudo-terminal (it leads
/// the terminal's session, as a login shell does), runs argv there, and types `answers` line
/// by line `delay` seconds after `prompt` first appears; prints everything the terminal showed
/// and exits as the child did (killing its process group after 60 s).
const HARNESS: &str = r#"
import os, pty, select, signal, sys, json, time
args = json.loads(sys.argv[1]); prompt = sys.argv[2].encode(); answers = sys.argv[3]; delay = float(sys.argv[4])
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
out = b""; sent = False; deadline = time.time() + 60
while True:
    left = deadline - time.time()
    if left <= 0:
        out += b"\n[the terminal harness gave up after 60 s]\n"
        os.killpg(pid, signal.SIGKILL)
        break
    if not select.select([fd], [], [], left)[0]:
        continue
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not sent and prompt in out:
        time.sleep(delay)
        for line in answers.splitlines(True):
            os.write(fd, line.encode()); time.sleep(0.2)
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;

/// Runs toolbelt with `args` in `cwd` under a pseudo-terminal, with `env` set (and `CI` and
/// `TOOLBELT_MANAGED_CONFIG` removed), typing `answers` line by line once `prompt` appears;
/// returns everything it printed and its exit status.
pub fn toolbelt_in_pty(args: &[&str], cwd: &Path, env: &[(&str, &Path)], prompt: &str, answers: &str) -> (String, i32) {
    let mut argv = vec![assert_cmd::cargo::cargo_bin("toolbelt").display().to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let env: Vec<(&str, &std::ffi::OsStr)> = env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    in_pty(&argv, cwd, &env, prompt, answers, 0.0)
}

/// Runs `argv` in `cwd` under a pseudo-terminal it leads, with `env` set (and `CI` and
/// `TOOLBELT_MANAGED_CONFIG` removed), typing `answers` line by line `delay` seconds after
/// `prompt` first appears; returns everything the terminal showed and the exit status.
pub fn in_pty(
    argv: &[String],
    cwd: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    prompt: &str,
    answers: &str,
    delay: f64,
) -> (String, i32) {
    let mut command = std::process::Command::new("python3");
    command
        .args(["-c", HARNESS, &serde_json::to_string(argv).unwrap_or_default(), prompt, answers, &delay.to_string()])
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
