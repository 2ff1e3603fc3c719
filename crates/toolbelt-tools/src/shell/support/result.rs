//! What a Bash call gives back ([`BashOutput`]): a structured result with each stream, the
//! exit code, the duration and the flags, and the model-facing text it renders — for a
//! foreground command both streams interleaved within the output budget (head and tail when
//! long) with notes after, for a background one the task it started.

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{Content, Render, ToolContext, human_duration};

use crate::fs::shown::shown;
use crate::process::capture::{Spilled, thousands};
use crate::process::foreground::Outcome;

/// Room kept for the note about cut output.
const TRUNCATION_NOTE_ROOM: usize = 500;

/// The structured result of `Bash`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BashOutput {
    /// Standard output (its head and tail when long).
    pub stdout: String,
    /// Standard error (its head and tail when long).
    pub stderr: String,
    /// The exit code; absent when the command was killed by a signal or runs in the
    /// background.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed the command, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The command reached its time limit and was stopped with every process it started.
    pub timed_out: bool,
    /// The call was cancelled and the command stopped with every process it started.
    pub interrupted: bool,
    /// Part of the output was left out of the text (and of `stdout`/`stderr`).
    pub truncated: bool,
    /// The file holding every byte of the output, when it was too long to show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    /// The working directory after the command.
    pub cwd: String,
    /// The background task's id, when the command runs in the background.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The interactive session's id, when the command still runs as one after the call
    /// yielded (`tty` or `yield_time_ms`): WriteStdin types into it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What the model should know besides the output, in order: how the command ended and
    /// what to do about it, where the whole output is, the working directory…; for a
    /// background command, how it was started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What the text shows beyond these fields.
    #[serde(skip)]
    pub(crate) report: Report,
}

/// What the text of a Bash call shows beyond the structured fields.
#[derive(Debug)]
pub(crate) enum Report {
    /// A command that ran in the foreground.
    Ran {
        /// Both streams interleaved as they arrived, within the budget (head and tail when
        /// long); `stdout` and `stderr` hold them apart.
        output: String,
    },
    /// A command started in the background (its id is `task_id`).
    Started {
        /// The command line, on one line and cut.
        command: String,
        /// Its log file, as the model should see it (`output_file` holds its absolute path).
        log: String,
    },
}

impl Render for BashOutput {
    /// A foreground command: its output (or `(no output)`), then each note in brackets. A
    /// background one: its task id, where its output goes and how to read and stop it.
    fn render(&self) -> Vec<Content> {
        let text = match &self.report {
            Report::Ran { output } => {
                let mut text = if output.is_empty() { "(no output)".to_string() } else { output.clone() };
                if !self.notes.is_empty() {
                    if !text.ends_with('\n') {
                        text.push('\n');
                    }
                    for note in &self.notes {
                        text.push_str(&format!("\n[{note}]"));
                    }
                }
                text
            }
            Report::Started { command, log } => {
                let id = self.task_id.as_deref().unwrap_or_default();
                let mut text = format!(
                    "Started in the background as task {id}: `{command}`. Its output goes to {log}. Read it with \
                     TaskOutput (task_id \"{id}\"); stop it with TaskStop. It is stopped when the session ends."
                );
                for note in &self.notes {
                    text.push_str(&format!("\n[{note}]"));
                }
                text
            }
        };
        vec![Content::text(text)]
    }

    /// A command that timed out or was interrupted is a failure, though it carries what it
    /// printed; a non-zero exit is a normal result.
    fn is_error(&self) -> bool {
        self.timed_out || self.interrupted
    }
}

/// Builds the result of a foreground command that ran under `limit`, `max` being the longest
/// a call may ask for. `notices` come first among the notes (the working directory, a deleted
/// cwd…); `sealed` are the directories its sandbox let it make nothing in.
pub async fn finish(
    cx: &ToolContext,
    mut outcome: Outcome,
    limit: Duration,
    max: Duration,
    notices: Vec<String>,
    sealed: &[PathBuf],
) -> BashOutput {
    let mut notes: Vec<String> = Vec::new();
    let code = outcome.status.and_then(|s| s.code());
    let signal = outcome.status.and_then(|s| s.signal());
    let stopped = stopped_what(outcome.held);
    if outcome.timed_out && limit >= max {
        // The cap bound, not the input: a larger `timeout` would not help.
        notes.push(format!(
            "Timed out after {}: {stopped}; above is what it printed until then. That is the most a command may \
             take (`runtime.max_timeout` in the settings): run it with run_in_background and read it with \
             TaskOutput, or ask the user to raise the cap.",
            human_duration(limit)
        ));
    } else if outcome.timed_out {
        notes.push(format!(
            "Timed out after {}: {stopped}; above is what it printed until then. Retry with a larger timeout (at \
             most {} ms), or run it with run_in_background and read it with TaskOutput.",
            human_duration(limit),
            max.as_millis()
        ));
    } else if outcome.interrupted {
        notes.push(format!("Interrupted: the call was cancelled; {stopped}. Above is what it printed until then."));
    } else if let Some(signal) = signal {
        notes.push(format!("Killed by signal {signal}"));
    } else if let Some(code) = code.filter(|&c| c != 0) {
        notes.push(format!("Exit code {code}"));
    }
    if outcome.unread {
        notes.push(
            "A process kept the output open after the command ended and was killed; anything it printed later is \
             not shown. Start long-lived processes with run_in_background."
                .to_string(),
        );
    }
    notes.extend(notices);

    let budget = cx.limits().output_budget;
    let notes_len: usize = notes.iter().map(|n| n.chars().count() + 3).sum();
    // The notes come whole; the output keeps at least two fifths of the budget, so a small
    // budget still shows a head and a tail.
    let room = budget.saturating_sub(notes_len + TRUNCATION_NOTE_ROOM).max(budget * 2 / 5);
    let combined = outcome.capture.combined.render(room);
    // The streams apart share the same room, so the structured result fits the budget too:
    // the shorter one whole when it takes at most half, the longer one the rest.
    let (out_len, err_len) = (outcome.capture.stdout.total(), outcome.capture.stderr.total());
    let shorter = usize::try_from(out_len.min(err_len)).unwrap_or(usize::MAX).min(room / 2);
    let (out_room, err_room) = if err_len <= out_len { (room - shorter, shorter) } else { (shorter, room - shorter) };
    let stdout = outcome.capture.stdout.render(out_room);
    let stderr = outcome.capture.stderr.render(err_room);
    let spilled = outcome.capture.settle(combined.cut).await;
    let mut output_file = None;
    if combined.cut {
        let total = thousands(outcome.capture.combined.total());
        notes.push(match &spilled {
            Spilled::Saved(path) => {
                let shown = shown(cx, path);
                output_file = Some(path.display().to_string());
                format!(
                    "Output too long ({total} bytes): showing its head and tail. Every byte is in {shown}; read it \
                     with Read (offset/limit) or search it with Grep."
                )
            }
            Spilled::Failed(reason) => format!(
                "Output too long ({total} bytes): showing its head and tail. Saving the whole output failed \
                 ({reason}); rerun with the output redirected to a file and read that."
            ),
            Spilled::No => format!("Output too long ({total} bytes): showing its head and tail."),
        });
    }

    if code.is_some_and(|c| c != 0) {
        notes.extend(protected_hint(&combined.text));
        notes.extend(sealed_hint(&combined.text, sealed, &cx.cwd()));
    }
    BashOutput {
        stdout: stdout.text,
        stderr: stderr.text,
        exit_code: code,
        signal,
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        timed_out: outcome.timed_out,
        interrupted: outcome.interrupted,
        truncated: combined.cut || stdout.cut || stderr.cut,
        output_file,
        cwd: cx.session().cwd().display().to_string(),
        task_id: None,
        session_id: None,
        notes,
        report: Report::Ran { output: combined.text },
    }
}

/// What a kill reached, truthfully: with a cgroup, everything; without one, what could be
/// found (a process that left the session and closed every descriptor may survive).
pub fn stopped_what(held: bool) -> &'static str {
    if held {
        "the command and every process it started were stopped"
    } else {
        "the command and every process of it that could be found were stopped (this machine gives toolbelt \
         no cgroup, so a process that left its session and closed its descriptors may still run; `toolbelt \
         sandbox check` says why)"
    }
}

/// When a command failed writing a protected path the sandbox keeps read-only, what the
/// user can do about it.
fn protected_hint(text: &str) -> Option<String> {
    if !text.contains("Read-only file system") {
        return None;
    }
    let name = toolbelt_core::PROTECTED_NAMES.iter().find(|n| text.contains(*n))?;
    Some(format!(
        "`{name}` is read-only in the sandbox (so are .git, .toolbelt, .claude, .mcp.json, .vscode and .idea \
         in the workspace: they decide what runs next). For git commits, the user can set `sandbox.git_writes = \
         true` (git's config and hooks stay read-only); otherwise ask the user to run this command themselves."
    ))
}

/// When a command was refused making something where its sandbox sealed a directory (the home
/// directory is in the workspace): the output names the directory, or the command ran in it.
/// Why, and what to do.
fn sealed_hint(text: &str, sealed: &[PathBuf], cwd: &Path) -> Option<String> {
    if !text.contains("Permission denied") {
        return None;
    }
    let named = |dir: &PathBuf| dir == cwd || dir.to_str().is_some_and(|d| text.contains(d));
    if !sealed.iter().any(named) {
        return None;
    }
    let dirs: Vec<String> = sealed.iter().map(|d| d.display().to_string()).collect();
    Some(format!(
        "The sandbox lets no new file or directory be made directly in {}: it holds the user's own settings \
         (toolbelt's, git's, the agent hosts' and editors'), which a command must not create. Files already there \
         can be written. Work in a subdirectory, or ask the user to run this command themselves.",
        dirs.join(", ")
    ))
}
