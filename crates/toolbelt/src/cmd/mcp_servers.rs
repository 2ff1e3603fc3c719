//! `toolbelt mcp-servers`: connect every configured upstream MCP server and show its state.

use std::process::ExitCode;
use std::sync::Arc;

use toolbelt_mcp::client::UpstreamState;

use crate::cli::{Global, McpServersArgs};
use crate::cmd::Setup;
use crate::output::line;

/// How many tool names a server's line shows before counting the rest.
const SHOWN_TOOLS: usize = 8;

pub async fn run(global: &Global, args: &McpServersArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    let registry = Arc::new(toolbelt_core::Registry::new());
    let Some(gateway) = setup.gateway(&registry).await else {
        line("No MCP servers are configured: add [mcp.servers.NAME] to .toolbelt/config.toml, or a .mcp.json.")?;
        return Ok(ExitCode::SUCCESS);
    };
    let statuses = gateway.statuses();
    gateway.shutdown().await;
    let failed = statuses.iter().any(|s| matches!(s.state, UpstreamState::Failed { .. }));
    if args.json {
        line(&serde_json::to_string_pretty(&statuses)?)?;
    } else {
        let width = statuses.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
        line(&format!("{:width$}  {:9}  STATE", "NAME", "TRANSPORT"))?;
        for s in &statuses {
            let state = match &s.state {
                UpstreamState::Connected { tools } => {
                    format!("connected, {tools} tool{}", if *tools == 1 { "" } else { "s" })
                }
                UpstreamState::Failed { error } => format!("failed: {error}"),
                UpstreamState::Connecting => "still connecting".into(),
                UpstreamState::Disabled => "disabled".into(),
                UpstreamState::Skipped { reason } => format!("skipped: {reason}"),
            };
            line(&format!("{:width$}  {:9}  {state}", s.name, s.transport))?;
            if !s.tool_names.is_empty() && matches!(s.state, UpstreamState::Connected { .. }) {
                line(&format!("{:width$}  {:9}  {}", "", "", tool_list(&s.tool_names)))?;
            }
        }
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
