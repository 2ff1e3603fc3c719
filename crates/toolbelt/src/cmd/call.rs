//! `toolbelt call`: one call through the full pipeline.

use std::io::Read as _;
use std::process::ExitCode;

use serde_json::{Map, Value, json};
use toolbelt_core::{CancellationToken, EventSink};
use toolbelt_runtime::{Outcome, ToolCall, ToolResult};

use crate::Usage;
use crate::cli::{CallArgs, Global};
use crate::cmd::Setup;
use crate::output::{call_json, line, write_result_text};
use crate::project::OpenSession;

pub async fn run(global: &Global, args: &CallArgs) -> anyhow::Result<ExitCode> {
    let input = read_input(args.input.as_deref(), &args.tool)?;
    let setup = Setup::load_asking_trust(global)?;
    let runtime = setup.runtime(Some(1))?;
    let gateway = setup.gateway_for(&runtime, &[(args.tool.as_str(), &input)]).await;
    let open = OpenSession::open(&setup.ws, args.session.session.as_deref(), "call")?;
    let call = ToolCall::new("call-1", &args.tool, input);
    // A name that does not resolve is refused before the session starts; the runtime still
    // records the refused call in the audit log. An unknown name is a usage error; a tool a
    // deny rule hides is a denial like any other (exit 1, naming the rule).
    if runtime.registry().lookup(&args.tool).is_err() {
        // An agent tool, absent because agents cannot run here: why, not "unknown tool".
        if let Some(tool) = toolbelt::agents::AgentSetup::agent_tool(&args.tool) {
            let agents = setup.agents();
            if !agents.available() {
                return Err(Usage(format!(
                    "`{tool}` is not available: agents are unavailable: {} (`toolbelt config check` says what is \
                     in force)",
                    agents.why_unavailable()
                ))
                .into());
            }
        }
        let refused = runtime.call(&open.session, call, &EventSink::none(), &CancellationToken::new()).await;
        if refused.outcome != Outcome::Denied {
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

/// The input argument of a call of `tool` as JSON: absent → `{}`, `-` → stdin. Invalid JSON
/// is a usage error whose hint is the tool's own smallest input (for a built-in tool).
pub fn read_input(arg: Option<&str>, tool: &str) -> anyhow::Result<Value> {
    let text = match arg {
        None => return Ok(Value::Object(Map::new())),
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
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(&text).map_err(|e| {
        let hint = match toolbelt::builtin_registry().lookup(tool) {
            Ok(entry) => format!("pass a JSON object such as '{}'", minimal_input(&entry.spec().input_schema)),
            Err(_) => "pass a JSON object of the tool's input (`toolbelt tools --format json` shows its schema)".into(),
        };
        Usage(format!("the input is not valid JSON ({e}); {hint}")).into()
    })
}

/// The smallest input a schema accepts, as far as its required fields say: each required
/// property with a placeholder of its type (`{"file_path": "…"}` for Read).
pub fn minimal_input(schema: &Value) -> Value {
    let required = schema["required"].as_array().map(Vec::as_slice).unwrap_or_default();
    let fields = required.iter().filter_map(Value::as_str).map(|name| {
        let property = &schema["properties"][name];
        let kind = match &property["type"] {
            Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null"),
            other => other.as_str(),
        };
        let placeholder = match (property["enum"].get(0), kind) {
            (Some(first), _) => first.clone(),
            (None, Some("integer" | "number")) => json!(0),
            (None, Some("boolean")) => json!(false),
            (None, Some("array")) => json!([]),
            (None, Some("object")) => json!({}),
            (None, _) => json!("…"),
        };
        (name.to_string(), placeholder)
    });
    Value::Object(fields.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_inputs_follow_the_required_fields() {
        let registry = toolbelt::builtin_registry();
        let minimal = |name: &str| minimal_input(&registry.lookup(name).unwrap().spec().input_schema).to_string();
        assert_eq!(minimal("Read"), r#"{"file_path":"…"}"#);
        assert_eq!(minimal("TodoWrite"), r#"{"todos":[]}"#);
        assert_eq!(minimal("Edit"), r#"{"file_path":"…","old_string":"…","new_string":"…"}"#);
        assert_eq!(minimal("BackgroundTasks"), "{}");
        assert_eq!(minimal("TaskList"), "{}");
        assert_eq!(minimal("TaskGet"), r#"{"taskId":"…"}"#);
    }
}
