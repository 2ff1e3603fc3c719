//! `toolbelt mcp-servers`: connect every configured upstream MCP server and show its state,
//! the names in the settings that match none of its tools, and the project's servers that
//! wait for trust.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use toolbelt::upstream_names::{self, NameProblem};
use toolbelt_mcp::client::UpstreamState;

use crate::cli::{Global, McpServersAction, McpServersArgs};
use crate::cmd::Setup;
use crate::output::line;

/// How many tool names a server's line shows before counting the rest.
const SHOWN_TOOLS: usize = 8;

pub async fn run(global: &Global, args: &McpServersArgs) -> anyhow::Result<ExitCode> {
    match &args.action {
        Some(McpServersAction::Login(login)) => return super::mcp_login::login(global, login, args.json).await,
        Some(McpServersAction::Logout { name }) => return super::mcp_login::logout(global, name, args.json),
        None => {}
    }
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    let waiting = setup.waiting_for_trust();
    let registry = Arc::new(toolbelt_core::Registry::new());
    let (statuses, problems) = match setup.gateway(&registry).await {
        Some(gateway) => {
            let checked = (gateway.statuses(), upstream_names::check(&setup, &gateway, &registry));
            gateway.shutdown().await;
            checked
        }
        None => (Vec::new(), Vec::new()),
    };
    let failed =
        statuses.iter().any(|s| matches!(s.state, UpstreamState::Failed { .. } | UpstreamState::NeedsLogin { .. }));
    let problems_of = |server: &str| -> Vec<&NameProblem> { problems.iter().filter(|p| p.server == server).collect() };
    if args.json {
        let mut all: Vec<Value> = Vec::new();
        for status in &statuses {
            let mut value = serde_json::to_value(status)?;
            let found: Vec<String> = problems_of(&status.name).iter().map(|p| p.problem.to_string()).collect();
            if !found.is_empty() {
                value["problems"] = json!(found);
            }
            all.push(value);
        }
        all.extend(waiting.iter().map(|name| json!({"name": name, "state": "waiting_for_trust"})));
        line(&serde_json::to_string_pretty(&all)?)?;
        return Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS });
    }
    if statuses.is_empty() && waiting.is_empty() {
        line("No MCP servers are configured: add [mcp.servers.NAME] to .toolbelt/config.toml, or a .mcp.json.")?;
        return Ok(ExitCode::SUCCESS);
    }
    if !statuses.is_empty() {
        let width = statuses.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
        line(&format!("{:width$}  {:9}  STATE", "NAME", "TRANSPORT"))?;
        for s in &statuses {
            let state = match &s.state {
                UpstreamState::Connected { tools } => {
                    let protocol = s.protocol.as_deref().map(|p| format!(" (MCP {p})")).unwrap_or_default();
                    format!("connected, {tools} tool{}{protocol}", if *tools == 1 { "" } else { "s" })
                }
                UpstreamState::Failed { error } => format!("failed: {error}"),
                UpstreamState::NeedsLogin { .. } => format!("needs login: run `toolbelt mcp-servers login {}`", s.name),
                UpstreamState::Connecting => "still connecting".into(),
                UpstreamState::Disabled => "disabled".into(),
                UpstreamState::Skipped { reason } => format!("skipped: {reason}"),
            };
            line(&format!("{:width$}  {:9}  {state}", s.name, s.transport))?;
            if !s.tool_names.is_empty() && matches!(s.state, UpstreamState::Connected { .. }) {
                line(&format!("{:width$}  {:9}  {}", "", "", tool_list(&s.tool_names)))?;
            }
            for found in problems_of(&s.name) {
                line(&format!("{:width$}  {:9}  warning: {}", "", "", found.problem))?;
            }
        }
    }
    if !waiting.is_empty() {
        let (servers, wait) = if waiting.len() == 1 { ("server", "waits") } else { ("servers", "wait") };
        line(&format!(
            "This project's MCP {servers} {} {wait} for trust and {} not started: review the project's settings \
             with `toolbelt trust --show`, and start them with `toolbelt trust`.",
            waiting.join(", "),
            if waiting.len() == 1 { "is" } else { "are" },
        ))?;
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The first tool names, and how many more there are.
fn tool_list(names: &[String]) -> String {
    let shown = names.iter().take(SHOWN_TOOLS).map(String::as_str).collect::<Vec<_>>().join(", ");
    match names.len().saturating_sub(SHOWN_TOOLS) {
        0 => shown,
        more => format!("{shown}, and {more} more (--json lists them all)"),
    }
}
