//! Running one handler: a shell command, an HTTP endpoint, or an in-process hook. Each
//! answers with a [`Response`]; what it means is decided per event in `protocol.rs`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use toolbelt_core::BoxFuture;
use toolbelt_core::vars::expand_env;

use crate::confine::Confiner;

/// Why an in-process hook failed: any error of its own (a `String` converts too, with `.into()`).
pub type InProcessHookError = Box<dyn std::error::Error + Send + Sync>;

/// A hook implemented in Rust by a library user. It takes the same input JSON a command hook
/// reads on stdin and returns the same output JSON a command hook prints (return
/// `{"hookSpecificOutput": {"permissionDecision": "deny", …}}` to deny, `{}` for no decision);
/// an `Err` is a non-blocking error, logged.
pub trait InProcessHook: Send + Sync {
    /// A name for logs and the audit log.
    fn name(&self) -> &str;

    /// Runs the hook.
    fn run<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<Value, InProcessHookError>>;
}

/// What a handler answered.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Response {
    /// Exit 0 (or a 2xx answer) with a JSON object.
    Json(Value),
    /// Exit 0 with plain text (not JSON).
    Text(String),
    /// Exit 0 with nothing to say.
    Nothing,
    /// Exit 2: block, with stderr as the reason.
    Block(String),
    /// It ran past its timeout (a non-blocking error).
    TimedOut(Duration),
    /// Anything else: a non-blocking error, described.
    Failed(String),
}

/// How much of a hook's stdout and stderr is kept.
const OUTPUT_CAP: usize = 1024 * 1024;

/// One handler, ready to run.
#[derive(Clone)]
pub(super) enum Handler {
    /// A shell command; `confine` puts it under the sandbox (a project's hooks).
    Command {
        command: String,
        timeout: Duration,
        confine: Option<Arc<dyn Confiner>>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        timeout: Duration,
    },
    InProcess(Arc<dyn InProcessHook>),
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Handler {
    /// `command ./check.sh`, `http http://…`, `in-process NAME`.
    pub fn describe(&self) -> String {
        match self {
            Handler::Command { command, .. } => format!("command {command}"),
            Handler::Http { url, .. } => format!("http {url}"),
            Handler::InProcess(hook) => format!("in-process {}", hook.name()),
        }
    }

    /// Runs the handler with `input`; never fails, never outlives its timeout.
    pub async fn run(&self, input: &Value, cwd: &Path, project_dir: Option<&Path>) -> Response {
        match self {
            Handler::Command { command, timeout, confine } => {
                let started = Started { cwd, project: project_dir, confine: confine.as_deref() };
                run_command(command, *timeout, input, started).await
            }
            Handler::Http { url, headers, timeout } => run_http(url, headers, *timeout, input).await,
            Handler::InProcess(hook) => match hook.run(input).await {
                Ok(Value::Null) => Response::Nothing,
                Ok(Value::Object(map)) if map.is_empty() => Response::Nothing,
                Ok(v @ Value::Object(_)) => Response::Json(v),
                Ok(other) => Response::Failed(format!("answered {other}, not a JSON object")),
                Err(e) => Response::Failed(e.to_string()),
            },
        }
    }
}

/// Where and how a command hook starts.
struct Started<'a> {
    cwd: &'a Path,
    project: Option<&'a Path>,
    confine: Option<&'a dyn Confiner>,
}

async fn run_command(command: &str, timeout: Duration, input: &Value, started: Started<'_>) -> Response {
    let Started { cwd, project, confine } = started;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // A session of its own: its own process group (killed below) and no controlling terminal.
    toolbelt_core::process::new_session(cmd.as_std_mut());
    if let Some(dir) = project {
        cmd.env("TOOLBELT_PROJECT_DIR", dir).env("CLAUDE_PROJECT_DIR", dir);
    }
    let confined = match confine.map(|c| c.confine(&mut cmd)).transpose() {
        Ok(confined) => confined.unwrap_or_default(),
        Err(why) => return Response::Failed(format!("not started: {why}")),
    };
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return Response::Failed(format!("cannot start `sh -c {command}`: {e}")),
    };
    let group = child.id();
    let body = serde_json::to_vec(input).unwrap_or_default();
    // Written on its own task: a hook that never reads its stdin must not block us.
    if let Some(mut stdin) = child.stdin.take() {
        tokio::spawn(async move {
            let _ = stdin.write_all(&body).await;
        });
    }
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Response::Failed("the hook's output pipes could not be opened".into());
    };
    let finished = async {
        let (out, err, status) = tokio::join!(read_capped(stdout), read_capped(stderr), child.wait());
        (out, err, status)
    };
    let (out, err, status) = match tokio::time::timeout(timeout, finished).await {
        Ok(done) => done,
        Err(_) => {
            kill_group(group);
            confined.ended(&format!("the hook `{command}`"));
            return Response::TimedOut(timeout);
        }
    };
    // The hook is done; anything it left running in its group goes with it.
    kill_group(group);
    confined.ended(&format!("the hook `{command}`"));
    let status = match status {
        Ok(s) => s,
        Err(e) => return Response::Failed(format!("waiting for the hook failed: {e}")),
    };
    match status.code() {
        Some(0) => interpret_stdout(&out),
        Some(2) => Response::Block(err.trim().to_string()),
        Some(code) => Response::Failed(format!("exit status {code}{}", first_line(&err))),
        None => Response::Failed(format!("killed by a signal{}", first_line(&err))),
    }
}

fn kill_group(group: Option<u32>) {
    // The child leads its own session and process group (`new_session`), so this never
    // reaches us.
    if let Some(pid) = group {
        toolbelt_core::process::kill_group(pid);
    }
}

/// Reads a stream to its end, keeping at most [`OUTPUT_CAP`] bytes (the rest is drained, so
/// the hook never blocks on a full pipe).
async fn read_capped(mut stream: impl AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

fn first_line(stderr: &str) -> String {
    match stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) => format!(": {line}"),
        None => String::new(),
    }
}

/// Exit 0's stdout: JSON when it looks like JSON (an invalid one is an error), else text.
fn interpret_stdout(out: &str) -> Response {
    let trimmed = out.trim();
    if trimmed.is_empty() {
        return Response::Nothing;
    }
    if trimmed.starts_with('{') {
        return match serde_json::from_str::<Value>(trimmed) {
            Ok(v) => Response::Json(v),
            Err(e) => Response::Failed(format!("printed invalid JSON ({e})")),
        };
    }
    Response::Text(trimmed.to_string())
}

/// The HTTP client, made once. reqwest is built without a bundled TLS provider (no C build),
/// so ring is installed as the process's provider before the first client: idempotent, and
/// toolbelt never configures another.
fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder().build().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

async fn run_http(url: &str, headers: &BTreeMap<String, String>, timeout: Duration, input: &Value) -> Response {
    let client = match client() {
        Ok(c) => c,
        Err(e) => return Response::Failed(format!("cannot make an HTTP client: {e}")),
    };
    let mut request = client.post(url).timeout(timeout).json(input);
    for (name, value) in headers {
        request = request.header(name, expand_env(value));
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) if e.is_timeout() => return Response::TimedOut(timeout),
        Err(e) => return Response::Failed(format!("request failed: {e}")),
    };
    let status = response.status();
    let body = match response.text().await {
        Ok(b) => b,
        Err(e) => return Response::Failed(format!("reading the answer failed: {e}")),
    };
    if !status.is_success() {
        return Response::Failed(format!("HTTP {status}{}", first_line(&body)));
    }
    interpret_stdout(&body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_is_json_text_or_nothing() {
        assert_eq!(interpret_stdout("  \n"), Response::Nothing);
        assert_eq!(interpret_stdout("{\"a\":1}\n"), Response::Json(serde_json::json!({"a": 1})));
        assert!(matches!(interpret_stdout("{oops"), Response::Failed(m) if m.contains("invalid JSON")));
        assert_eq!(interpret_stdout("checked 3 files"), Response::Text("checked 3 files".into()));
    }
}
