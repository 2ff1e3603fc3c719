//! `toolbelt batch`: JSON Lines of calls in, one result line per call out, in order.

use std::path::Path;
use std::process::ExitCode;

use serde::Deserialize;
use serde_json::Value;
use toolbelt_core::EventSink;
use toolbelt_runtime::ToolCall;

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
    let calls = parse(&text)?;
    let setup = Setup::load_asking_trust(global)?;
    let runtime = setup.runtime(args.concurrency.map(usize::from))?;
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    let gateway = match setup.needs_gateway(&names) {
        true => setup.gateway(runtime.registry()).await,
        false => None,
    };
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
    let mut any_error = false;
    let mut write_error = None;
    runtime
        .batch_streaming(&open.session, calls, &events, &cancel, |result| {
            any_error |= result.is_error;
            if write_error.is_none()
                && let Err(e) =
                    serde_json::to_string(&batch_json(&result)).map_err(std::io::Error::from).and_then(|s| line(&s))
            {
                write_error = Some(e);
            }
        })
        .await;
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

/// Parses every line first, so a malformed batch runs nothing.
fn parse(text: &str) -> anyhow::Result<Vec<ToolCall>> {
    let mut calls = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(raw).map_err(|e| {
            Usage(format!(
                "line {n}: not a call ({e}); each line must be {{\"id\": \"…\", \"name\": \"Tool\", \"input\": {{…}}}}"
            ))
        })?;
        let id = match parsed.id {
            None | Some(Value::Null) => n.to_string(),
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
        };
        calls.push(ToolCall::new(id, parsed.name, parsed.input));
    }
    Ok(calls)
}
