//! `toolbelt batch`: JSON Lines of calls in, one result line per call out, in order.

use std::collections::VecDeque;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use toolbelt_core::{Content, EventSink};
use toolbelt_runtime::{Outcome, ToolCall, ToolResult};

use crate::Usage;
use crate::cli::{BatchArgs, Global};
use crate::cmd::Setup;
use crate::output::{batch_json, line};
use crate::project::OpenSession;

/// One input line. `id` defaults to the line number.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    id: Option<Value>,
    name: String,
    #[serde(default)]
    input: Value,
}

pub async fn run(global: &Global, args: &BatchArgs) -> anyhow::Result<ExitCode> {
    let text = match args.file.as_deref() {
        None => read_stdin()?,
        Some(p) if p == Path::new("-") => read_stdin()?,
        Some(p) => std::fs::read_to_string(p).map_err(|e| Usage(format!("cannot read {}: {e}", p.display())))?,
    };
    let Lines { calls, mut malformed } = parse(&text);
    let setup = Setup::load_asking_trust(global)?;
    let runtime = setup.runtime_unattended(args.concurrency.map(usize::from))?;
    let names: Vec<&str> = calls.iter().map(|(_, c)| c.name.as_str()).collect();
    let inputs: Vec<(&str, &Value)> = calls.iter().map(|(_, c)| (c.name.as_str(), &c.input)).collect();
    let gateway = setup.gateway_for(&runtime, &inputs).await;
    super::probe_sandbox_for(&setup.sandbox(), &runtime, &names);
    let open = OpenSession::open(&setup.ws, args.session.session.as_deref(), "batch")?;
    open.start(&runtime).await;
    let cancel = super::cancel_on_stop();

    let events = if args.events {
        EventSink::new(|event| {
            if let Ok(json) = serde_json::to_string(event) {
                // A closed stdout ends the command when the results are written; ignore here.
                let _ = line(&json);
            }
        })
    } else {
        EventSink::none()
    };
    // What background tasks (monitors) report between and after calls: event lines too.
    open.session
        .state()
        .slot::<toolbelt_core::TaskEvents>()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .set(events.clone());
    let mut any_error = false;
    let mut write_error = None;
    let mut write = |result: &ToolResult| {
        any_error |= result.is_error;
        if write_error.is_none()
            && let Err(e) =
                serde_json::to_string(&batch_json(result)).map_err(std::io::Error::from).and_then(|s| line(&s))
        {
            write_error = Some(e);
        }
    };
    // A malformed line's result goes out in its place among the others.
    let lines: Vec<usize> = calls.iter().map(|(n, _)| *n).collect();
    let calls: Vec<ToolCall> = calls.into_iter().map(|(_, call)| call).collect();
    let mut next = lines.into_iter();
    runtime
        .batch_streaming(&open.session, calls, &events, &cancel, |result| {
            let at = next.next().unwrap_or(usize::MAX);
            while malformed.front().is_some_and(|(n, _)| *n < at) {
                if let Some((_, refused)) = malformed.pop_front() {
                    write(&refused);
                }
            }
            write(&result);
        })
        .await;
    for (_, refused) in malformed {
        write(&refused);
    }
    open.close(&runtime).await?;
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
    if let Some(e) = write_error {
        return Err(e.into());
    }
    Ok(if any_error { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn read_stdin() -> anyhow::Result<String> {
    std::io::read_to_string(std::io::stdin()).map_err(|e| Usage(format!("cannot read stdin: {e}")).into())
}

/// The lines of a batch, each with its line number.
struct Lines {
    /// The call of every well-formed line.
    calls: Vec<(usize, ToolCall)>,
    /// An error result for each malformed line, in the `batch` output's shape (so it takes
    /// its place among the others).
    malformed: VecDeque<(usize, ToolResult)>,
}

/// Reads every line: a malformed one is that line's error, not the batch's.
fn parse(text: &str) -> Lines {
    let mut calls = Vec::new();
    let mut malformed = VecDeque::new();
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        if raw.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(raw) {
            Ok(parsed) => calls.push((n, ToolCall::new(id_of(parsed.id, n), parsed.name, parsed.input))),
            Err(e) => {
                // Its id, when the line is an object that has one, so the caller can match it.
                let id = serde_json::from_str::<Value>(raw).ok().and_then(|v| v.get("id").cloned());
                let message = format!(
                    "line {n} is not a call ({e}); each line must be {{\"id\": \"…\", \"name\": \"Tool\", \"input\": \
                     {{…}}}}, and nothing else. The other lines ran."
                );
                malformed.push_back((n, invalid_line(id_of(id, n), message)));
            }
        }
    }
    Lines { calls, malformed }
}

/// A line's id: the one it gives, else its line number.
fn id_of(id: Option<Value>, line: usize) -> String {
    match id {
        None | Some(Value::Null) => line.to_string(),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
    }
}

/// The result of a line that is not a call.
fn invalid_line(id: String, message: String) -> ToolResult {
    ToolResult {
        id,
        tool: None,
        content: vec![Content::text(message)],
        structured: None,
        is_error: true,
        outcome: Outcome::InvalidLine,
        duration: Duration::ZERO,
    }
}
