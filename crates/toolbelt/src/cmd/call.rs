//! `toolbelt call`: one call through the full pipeline.

use std::io::Read as _;
use std::process::ExitCode;

use serde_json::Value;
use toolbelt_core::{CancellationToken, EventSink};
use toolbelt_runtime::{ToolCall, ToolResult};

use crate::Usage;
use crate::cli::{CallArgs, Global};
use crate::cmd::Setup;
use crate::output::{call_json, line, write_result_text};
use crate::project::OpenSession;

pub async fn run(global: &Global, args: &CallArgs) -> anyhow::Result<ExitCode> {
    let input = read_input(args.input.as_deref())?;
    let setup = Setup::load_asking_trust(global)?;
    let runtime = setup.runtime(Some(1))?;
    let gateway = match setup.needs_gateway(&[args.tool.as_str()]) {
        true => setup.gateway(runtime.registry()).await,
        false => None,
    };
    let open = OpenSession::open(&setup.ws, args.session.session.as_deref(), "call")?;
    let call = ToolCall::new("call-1", &args.tool, input);
    // A name that does not resolve is refused before the session starts; the runtime still
    // records the refused call in the audit log. An unknown name is a usage error; a tool a
    // deny rule hides is a denial like any other (exit 1, naming the rule).
    if runtime.registry().lookup(&args.tool).is_err() {
        let refused = runtime.call(&open.session, call, &EventSink::none(), &CancellationToken::new()).await;
        if refused.outcome != "denied" {
            return Err(Usage(refused.text()).into());
        }
        return print(&refused, args.json);
    }
    super::probe_sandbox_for(&setup.sandbox(), &runtime, &[args.tool.as_str()]);
    open.start(&runtime).await;
    let cancel = super::cancel_on_stop();
    let result = runtime.call(&open.session, call, &EventSink::none(), &cancel).await;
    open.close(&runtime).await?;
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
    print(&result, args.json)
}

/// Prints the result; the exit status says whether it is an error (as `--json`'s `is_error`).
fn print(result: &ToolResult, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        line(&serde_json::to_string(&call_json(result))?)?;
    } else {
        write_result_text(result)?;
    }
    Ok(if result.is_error { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The input argument as JSON: absent → `{}`, `-` → stdin.
pub fn read_input(arg: Option<&str>) -> anyhow::Result<Value> {
    let text = match arg {
        None => return Ok(Value::Object(Default::default())),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Usage(format!("cannot read the input from stdin: {e}")))?;
            s
        }
        Some(s) => s.to_string(),
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_str(&text).map_err(|e| {
        Usage(format!("the input is not valid JSON ({e}); pass a JSON object such as '{{\"todos\": []}}'")).into()
    })
}
