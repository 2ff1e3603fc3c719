//! Running one planned linter as Bash runs a command: `bash -c` in its folder, under the
//! session's sandbox, with Bash's environment (secrets removed, pagers and colours off), its
//! time limit and the kill of its whole process tree. Its stdout goes to a file of ours in
//! a private temporary folder (stderr still streams to the caller as output), so a large
//! report is read whole from the file, never held in a pipe's buffer.

use std::io::Read as _;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use toolbelt_core::{ToolContext, ToolError};

use super::Planned;
use super::formats::{self, Finding};
use crate::process::cgroup::CommandCgroup;
use crate::process::confine::Confining;
use crate::process::env;
use crate::process::foreground;
use crate::process::made::PlacesWatch;
use crate::process::spawn::Setup;

/// The variable naming the file a linter's stdout goes to.
const OUTPUT_VAR: &str = "TOOLBELT_LINT_OUTPUT";

/// Most of a linter's report read (a larger one is cut, and said to be).
const MAX_REPORT: u64 = 64 * 1024 * 1024;

/// How one linter run went.
#[derive(Debug)]
pub struct Ran {
    /// Its findings, with absolute paths.
    pub findings: Vec<Finding>,
    /// Its exit code (None when it was killed).
    pub exit_code: Option<i32>,
    /// Why it gave no usable report, when it did not.
    pub failure: Option<String>,
    /// How long it took.
    pub duration: Duration,
    /// Notices to pass on (it ran without the sandbox; it made a protected place).
    pub notices: Vec<String>,
}

/// How the linters of a call run, as the call was judged: confined so, with the environment
/// of these shell settings.
#[derive(Debug)]
pub struct Under {
    /// The sandbox.
    pub confining: Confining,
    /// The shell settings (the environment: secrets removed, pagers off).
    pub shell: crate::process::config::BashConfig,
}

/// Runs `planned`'s line from `start` (the working directory it was planned from) for at
/// most `limit`, `under` the sandbox and environment judged.
pub async fn run(
    cx: &ToolContext,
    planned: &Planned,
    start: &Path,
    limit: Duration,
    under: &Under,
) -> Result<Ran, ToolError> {
    let started = Instant::now();
    let scratch = Scratch::new()?;
    let report = scratch.0.join("report");
    let redirect = if planned.format.reads_stderr() { " 2>&1" } else { "" };
    let script = format!("{{ {}\n}} > \"${OUTPUT_VAR}\"{redirect}", planned.line);
    let (confinement, notice) = under.confining.confinement(cx)?;
    let watch = PlacesWatch::of(confinement.as_ref());
    let mut changes = env::changes(&under.shell);
    changes.push((OUTPUT_VAR.into(), Some(report.clone().into_os_string())));
    let setup = Setup { env: changes, confinement, control_room: None };
    cx.progress(format!("{}: {}", planned.linter, planned.line), None);
    let outcome = foreground::run(cx, &script, start, limit, CommandCgroup::for_command(), setup).await?;
    let mut notices: Vec<String> = notice.into_iter().collect();
    notices.extend(watch.settle(cx).await);
    if outcome.interrupted {
        return Err(ToolError::Cancelled);
    }
    let exit_code = outcome.status.and_then(|s| s.code());
    let stderr = outcome.capture.stderr.render(8_000).text;
    let (stdout, cut) = read_report(&scratch.1);
    // A text-lines linter's stderr went to the report with its stdout.
    let said = if planned.format.reads_stderr() { stdout.as_str() } else { stderr.as_str() };
    let mut ran = Ran { findings: Vec::new(), exit_code, failure: None, duration: started.elapsed(), notices };
    if outcome.timed_out {
        ran.failure = Some(format!(
            "stopped after {} s, the time limit (lint a smaller `path`, or raise `lint.timeout`)",
            limit.as_secs()
        ));
        return Ok(ran);
    }
    match formats::parse(planned.format, &stdout, &stderr) {
        Ok(findings) => {
            ran.findings = findings
                .into_iter()
                .map(|f| Finding { path: formats::resolve(&planned.cwd, &f.path).to_string_lossy().into_owned(), ..f })
                .collect();
            // Nothing found and a failing exit: it did not get as far as linting.
            if ran.findings.is_empty() && exit_code != Some(0) {
                ran.failure = Some(failure(planned, exit_code, said));
            }
        }
        Err(_) if cut => {
            ran.failure = Some(format!("its report is over {} MiB; lint a smaller `path`", MAX_REPORT / 1024 / 1024));
        }
        Err(unreadable) if succeeded(planned, exit_code) || exit_code == Some(1) => {
            ran.failure = Some(format!("{}; {}", unreadable.0, tail(said)));
        }
        Err(_) => ran.failure = Some(failure(planned, exit_code, said)),
    }
    Ok(ran)
}

/// Whether an exit code says the linter ran through: 0, or 1, which ruff, eslint and
/// shellcheck use for "found something" (and cargo does not use).
fn succeeded(planned: &Planned, code: Option<i32>) -> bool {
    code == Some(0) || (code == Some(1) && planned.format != formats::Format::Cargo)
}

/// Why a run gave nothing usable, from its exit and the end of its stderr, with what to do
/// where the cause is known.
fn failure(planned: &Planned, code: Option<i32>, stderr: &str) -> String {
    let exit = code.map_or_else(|| "was killed by a signal".to_owned(), |c| format!("exited with {c}"));
    let hint = if stderr.contains("no such command: `clippy`") || stderr.contains("no such subcommand: `clippy`") {
        " Clippy is not installed: `rustup component add clippy`."
    } else if stderr.contains("failed to download") || stderr.contains("Could not resolve host") {
        " It needed the network, which the sandbox turns off: fetch the dependencies first (`cargo fetch`), or \
         allow the network in the sandbox settings."
    } else {
        ""
    };
    format!("`{}` {exit} without a report.{hint}\n{}", planned.line, tail(stderr))
}

/// The last lines of a linter's stderr, for a message.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    let start = lines.len().saturating_sub(15);
    let text = lines[start..].join("\n");
    if text.is_empty() { "It printed nothing on stderr.".to_owned() } else { format!("The end of its stderr:\n{text}") }
}

/// The report's text (at most [`MAX_REPORT`] bytes), and whether it was cut. Opened beneath
/// the folder's handle, as a regular file only: the linter, which may write there, cannot
/// make us read something else through a link, nor block us on a pipe.
fn read_report(dir: &cap_std::fs::Dir) -> (String, bool) {
    let Ok(file) = crate::fs::regular::open_regular(dir, Path::new("report")) else {
        return (String::new(), false);
    };
    let mut bytes = Vec::new();
    let _ = file.take(MAX_REPORT + 1).read_to_end(&mut bytes);
    let cut = bytes.len() as u64 > MAX_REPORT;
    bytes.truncate(usize::try_from(MAX_REPORT).unwrap_or(usize::MAX));
    (String::from_utf8_lossy(&bytes).into_owned(), cut)
}

/// A private temporary folder (0700) for one run's report, and a handle on it; removed
/// when dropped.
struct Scratch(PathBuf, cap_std::fs::Dir);

impl Scratch {
    fn new() -> Result<Scratch, ToolError> {
        let base = std::env::temp_dir();
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        for n in 0..100u32 {
            let dir = base.join(format!("toolbelt-lint-{}-{stamp:x}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => {
                    let handle = cap_std::fs::Dir::open_ambient_dir(&dir, cap_std::ambient_authority())
                        .map_err(|e| ToolError::failed(format!("cannot open {}: {e}", dir.display())))?;
                    return Ok(Scratch(dir, handle));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(ToolError::failed(format!(
                        "cannot make a temporary folder in {} for the linter's report: {e}",
                        base.display()
                    )));
                }
            }
        }
        Err(ToolError::failed(format!("cannot make a temporary folder in {} for the linter's report", base.display())))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
