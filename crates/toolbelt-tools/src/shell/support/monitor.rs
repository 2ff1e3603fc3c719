//! A monitor's pump: the task that reads a `Monitor` command's output while it runs.
//!
//! Each line the command prints on stdout is an event; lines that come within
//! [`BATCH_WINDOW`] of the first of them travel together, as one
//! [`ToolEvent::Task`] of kind `lines`, to the session's task-event sink (event lines in
//! `batch --events`, log notifications over MCP) and into the task's log, where `TaskOutput`
//! reads them. stderr goes to the log only. A command that floods (more than
//! [`MAX_LINES_PER_SECOND`] lines or [`MAX_BYTES_PER_SECOND`] bytes a second, sustained past a
//! burst) is stopped with a notice, since nobody can read that many events; its end — exit,
//! timeout, flood or `TaskStop` — is an `ended` event with the exit code when there is one.

use std::io::Write as _;
use std::time::{Duration, Instant};

use toolbelt_core::{EventSink, TaskEventKind, ToolEvent, human_duration};

use crate::process::foreground::read_some;
use crate::shell::support::background::{Pump, Task};
use crate::tasks::TaskStatus;

/// Lines that come within this long of the first of a batch are sent with it.
pub const BATCH_WINDOW: Duration = Duration::from_millis(200);
/// The sustained line rate past which a monitor is stopped.
pub const MAX_LINES_PER_SECOND: f64 = 100.0;
/// The sustained byte rate past which a monitor is stopped.
pub const MAX_BYTES_PER_SECOND: f64 = 256.0 * 1024.0;
/// How many seconds of the most a burst may be before the rates bind.
const BURST_SECONDS: f64 = 10.0;
/// How long output may stay open after the command ended before its holders are killed again
/// (and, after as long again, abandoned).
const GRACE: Duration = Duration::from_millis(500);
/// The longest line an event carries whole (the log keeps it all).
const MAX_LINE: usize = 16 * 1024;

/// A rate allowed in bursts: `capacity` at once, refilled at `rate` per second.
struct Bucket {
    level: f64,
    rate: f64,
    at: Instant,
}

impl Bucket {
    fn new(rate: f64) -> Self {
        Self { level: rate * BURST_SECONDS, rate, at: Instant::now() }
    }

    /// Takes `n`; false when the bucket ran dry.
    fn take(&mut self, n: f64) -> bool {
        let now = Instant::now();
        self.level =
            (self.level + now.duration_since(self.at).as_secs_f64() * self.rate).min(self.rate * BURST_SECONDS);
        self.at = now;
        self.level -= n;
        self.level >= 0.0
    }
}

/// Lines waiting to be sent, and the stdout line still being written.
struct Batch {
    lines: Vec<String>,
    partial: Vec<u8>,
    since: Option<Instant>,
}

impl Batch {
    /// Adds what stdout gave; returns how many whole lines it held.
    fn add(&mut self, bytes: &[u8]) -> usize {
        self.partial.extend_from_slice(bytes);
        let mut count = 0;
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.push(&line[..line.len() - 1]);
            count += 1;
        }
        count
    }

    fn push(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut text = String::from_utf8_lossy(line).into_owned();
        if text.len() > MAX_LINE {
            let mut cut = MAX_LINE;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str(" …[line cut; whole in the log]");
        }
        self.lines.push(text);
        self.since.get_or_insert_with(Instant::now);
    }

    /// The line left without its newline at the end of the output.
    fn close(&mut self) {
        if !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            self.push(&rest);
        }
    }
}

/// Starts the pump of a monitor's task ([`Pumping::start`]).
pub fn start(pump: Pump) {
    tokio::spawn(run(pump));
}

/// Runs the pump until the command and its output are over; then records how it ended.
async fn run(pump: Pump) {
    let Pump { task, mut stdout, mut stderr, mut log, mut child, mut control, limits, events } = pump;
    let started = Instant::now();
    let deadline = limits.timeout.map(|t| tokio::time::Instant::from_std(started + t));
    let timer = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(timer);
    let mut batch = Batch { lines: Vec::new(), partial: Vec::new(), since: None };
    let (mut lines_left, mut bytes_left) = (Bucket::new(MAX_LINES_PER_SECOND), Bucket::new(MAX_BYTES_PER_SECOND));
    let (mut out_buf, mut err_buf) = (Vec::with_capacity(64 * 1024), Vec::with_capacity(16 * 1024));
    let mut status = None;
    let mut waited = false;
    let (mut stopped, mut timed_out, mut flooded) = (false, false, false);
    // Once the command has exited or been stopped, what still holds its output open gets
    // GRACE, then one more kill, then GRACE again; then the pump gives up on it.
    let grace = tokio::time::sleep(std::time::Duration::ZERO);
    tokio::pin!(grace);
    let (mut grace_armed, mut killed_again) = (false, false);
    while stdout.is_some() || stderr.is_some() || !waited {
        let flush_at = batch.since.map(|s| tokio::time::Instant::from_std(s + BATCH_WINDOW));
        if (waited || stopped) && !grace_armed {
            grace.as_mut().reset(tokio::time::Instant::now() + GRACE);
            grace_armed = true;
        }
        tokio::select! {
            biased;
            () = &mut timer, if !stopped && !waited => {
                timed_out = true;
                stopped = true;
                task.tree().kill();
            },
            () = &mut grace, if grace_armed => {
                if killed_again {
                    break;
                }
                killed_again = true;
                task.tree().kill();
                grace.as_mut().reset(tokio::time::Instant::now() + GRACE);
            },
            () = sleep_until(flush_at) => send(&task, &mut batch, &mut log, &events),
            s = child.wait(), if !waited => {
                waited = true;
                status = s.ok();
                if !stopped {
                    // Nothing it started outlives it, as for any command.
                    task.tree().leftovers(control.held());
                }
            },
            n = read_some(&mut stdout, &mut out_buf) => match n {
                Some(n) => {
                    let lines = batch.add(&out_buf[..n]);
                    let within = lines_left.take(lines as f64) & bytes_left.take(n as f64);
                    if !within && !stopped {
                        flooded = true;
                        stopped = true;
                        task.tree().kill();
                    }
                }
                None => stdout = None,
            },
            n = read_some(&mut stderr, &mut err_buf) => match n {
                Some(n) => {
                    let _ = log.write_all(&err_buf[..n]);
                    task.tell_news();
                    if !bytes_left.take(n as f64) && !stopped {
                        flooded = true;
                        stopped = true;
                        task.tree().kill();
                    }
                }
                None => stderr = None,
            },
        }
    }
    batch.close();
    send(&task, &mut batch, &mut log, &events);
    task.tree().retire();
    let code = status.and_then(|s| s.code());
    let ran = human_duration(started.elapsed());
    let (state, why) = if flooded {
        let why = format!(
            "stopped after {ran}: it printed more than {MAX_LINES_PER_SECOND} lines (or {} KiB) a second, more than \
             anyone can follow; filter its output (`grep --line-buffered PATTERN`) and start it again",
            MAX_BYTES_PER_SECOND / 1024.0
        );
        (TaskStatus::Killed, why)
    } else if timed_out {
        let limit = limits.timeout.map(human_duration).unwrap_or_default();
        (
            TaskStatus::Killed,
            format!("timed out after {limit} and was stopped (`persistent: true` runs until TaskStop)"),
        )
    } else {
        let status = if code == Some(0) { TaskStatus::Completed } else { TaskStatus::Failed };
        let why = match code {
            Some(code) => format!("exited with code {code} after {ran}"),
            None => format!("was ended by a signal after {ran}"),
        };
        (status, why)
    };
    let news = task.record_end(state, code);
    let (kind, text) = match (news, flooded) {
        (true, true) => (TaskEventKind::Notice, why),
        (true, false) => (TaskEventKind::Ended, why),
        (false, _) => (TaskEventKind::Ended, format!("stopped after {ran}")),
    };
    if news && (flooded || timed_out) {
        let _ = writeln!(log, "[toolbelt] monitor {text}");
    }
    emit(&events, &task, kind, text.clone(), code);
    if kind == TaskEventKind::Notice {
        emit(&events, &task, TaskEventKind::Ended, text, code);
    }
    task.settle();
    task.mark_done();
}

fn emit(events: &EventSink, task: &Task, kind: TaskEventKind, text: String, exit_code: Option<i32>) {
    if events.is_listening() {
        events.emit(&ToolEvent::Task { task_id: task.id.clone(), kind, text, exit_code });
    }
}

/// Sends the batch: one event, and its lines to the log.
fn send(task: &Task, batch: &mut Batch, log: &mut std::fs::File, events: &EventSink) {
    batch.since = None;
    if batch.lines.is_empty() {
        return;
    }
    let text = std::mem::take(&mut batch.lines).join("\n");
    let _ = writeln!(log, "{text}");
    task.tell_news();
    emit(events, task, TaskEventKind::Lines, text, None);
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_across_reads_and_carriage_returns_dropped() {
        let mut batch = Batch { lines: Vec::new(), partial: Vec::new(), since: None };
        assert_eq!(batch.add(b"one\r\ntw"), 1);
        assert_eq!(batch.add(b"o\nthree"), 1);
        batch.close();
        assert_eq!(batch.lines, ["one", "two", "three"]);
        assert!(batch.since.is_some());
    }

    #[test]
    fn a_burst_passes_and_a_flood_does_not() {
        let mut bucket = Bucket::new(MAX_LINES_PER_SECOND);
        assert!(bucket.take(900.0));
        assert!(!bucket.take(200.0));
    }
}
