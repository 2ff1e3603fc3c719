//! `toolbelt permissions explain`: what the rules and the mode decide for one call, and why.

use std::process::ExitCode;

use toolbelt_core::Touch;
use toolbelt_policy::Decision;
use toolbelt_runtime::{Outcome, ToolCall};

use crate::Usage;
use crate::cli::{Global, PermissionsAction, PermissionsArgs};
use crate::cmd::Setup;
use crate::cmd::call::read_input;
use crate::output::{line, write_result_text};
use crate::project::OpenSession;

pub async fn run(global: &Global, args: &PermissionsArgs) -> anyhow::Result<ExitCode> {
    let PermissionsAction::Explain { tool, input, json } = &args.action;
    let input = read_input(input.as_deref(), tool)?;
    let setup = Setup::load(global)?;
    let runtime = setup.runtime(Some(1))?;
    // An upstream server's tool is known once its server is connected, as for `call`.
    let gateway = setup.gateway_for(&runtime, &[(tool.as_str(), &input)]).await;
    let open = OpenSession::open(&setup.ws, None, "explain")?;
    let explained = runtime.explain(&open.session, ToolCall::new("explain", tool, input));
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
    let explanation = match explained {
        Ok(e) => e,
        // An unknown (or otherwise disabled) tool is a usage error, as for `call`.
        Err(result) if matches!(result.outcome, Outcome::UnknownTool | Outcome::Disabled) => {
            return Err(Usage(result.text()).into());
        }
        Err(result) => {
            write_result_text(&result)?;
            return Ok(ExitCode::from(1));
        }
    };
    if *json {
        line(&serde_json::to_string_pretty(&explanation)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let v = &explanation.verdict;
    line(&format!("{} {}", explanation.tool, explanation.input))?;
    let touches: Vec<String> = explanation
        .access
        .touches
        .iter()
        .map(|t| match t {
            Touch::Read(p) => format!("reads {}", p.display()),
            Touch::Write(p) => format!("writes {}", p.display()),
            Touch::Execute(c) => format!("runs `{c}`"),
            Touch::Network(u) => format!("contacts {u}"),
            Touch::State(s) => format!("changes session state ({s})"),
        })
        .collect();
    let alone = if explanation.access.is_shared() { "may run beside other reads" } else { "runs alone" };
    let touches = if touches.is_empty() { "nothing declared".to_string() } else { touches.join(", ") };
    line(&format!("touches:    {touches} ({alone})"))?;
    let decision = match v.decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    };
    line(&format!("decision:   {decision}"))?;
    line(&format!("because:    {}", v.reason))?;
    line(&format!("decided by: {}", v.source))?;
    if let Some(reason) = &explanation.access.approval {
        line(&format!("also asks:  {reason} (the tool asks for this call whatever the rules say)"))?;
    }
    if v.decision != Decision::Allow && !v.allow_rules.is_empty() {
        let flags: Vec<String> = v.allow_rules.iter().map(|r| toolbelt_policy::allow_flag(r)).collect();
        line(&format!(
            "to allow:   {} (or add {} to permissions.allow in {})",
            flags.join(" "),
            if v.allow_rules.len() == 1 { "it" } else { "them" },
            setup.loc.user_file.display()
        ))?;
    }
    for dir in &v.allowed_outside {
        line(&format!("outside:    {} is outside the workspace roots; allowed for this call", dir.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
