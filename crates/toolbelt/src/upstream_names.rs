//! Names in the settings that match no tool of a connected upstream MCP server.
//!
//! `disabled_tools = ["get_env"]` for a server whose tool is `get-env`, or a deny rule
//! `mcp__fs__write-file` for a tool named `write_file`, is valid settings: nothing can tell
//! it names nothing until the server lists its tools. Then it leaves the tool live while the
//! settings say otherwise, so once servers are connected these names are reported with the
//! closest real one (`toolbelt mcp-servers`, `toolbelt config check --connect`, and the MCP
//! server's notices to its clients). Only servers that are connected are judged, and only
//! rules naming one tool (`mcp__srv__tool`): `mcp__srv` and `mcp__srv__*` name the server.

use std::sync::Arc;

use toolbelt_core::Registry;
use toolbelt_mcp::client::names::{closest, sanitize, servers_of};
use toolbelt_mcp::client::{Gateway, UpstreamState};
use toolbelt_policy::rules::{Rule, RuleOrigin};

use crate::assemble::Assembly;
use crate::settings::Problem;
use crate::settings::schema::Key;

/// A name in the settings that names no tool of a connected upstream server.
#[derive(Debug, Clone, PartialEq)]
pub struct NameProblem {
    /// The server whose tool it should name.
    pub server: String,
    /// Where it is written, the key and what is wrong (with the closest real name).
    pub problem: Problem,
}

/// Every name of `asm`'s settings — the servers' `enabled_tools` and `disabled_tools`, the
/// permission rules — that names none of the tools `gateway`'s connected servers listed
/// (in `registry`, where their tools joined).
pub fn check(asm: &Assembly, gateway: &Gateway, registry: &Registry) -> Vec<NameProblem> {
    let mut out: Vec<NameProblem> = gateway
        .unknown_tool_names()
        .into_iter()
        .filter_map(|unknown| {
            let key = Key::MCP_SERVERS.named(&unknown.server);
            // The table that counts: the highest layer's.
            let entry = asm.loaded.entries.iter().filter(|e| e.key == key).max_by_key(|e| e.origin.layer)?;
            let problem = Problem { origin: entry.origin.clone(), key, message: unknown.message() };
            Some(NameProblem { server: unknown.server, problem })
        })
        .collect();
    let connected: Vec<String> = gateway
        .statuses()
        .into_iter()
        .filter(|s| matches!(s.state, UpstreamState::Connected { .. }))
        .map(|s| s.name)
        .collect();
    let entries = registry.entries();
    for entry in asm.loaded.entries.iter() {
        let effect = match Key::parse(&entry.key) {
            Some(Key::PERMISSIONS_ALLOW) => "allows",
            Some(Key::PERMISSIONS_ASK) => "asks about",
            Some(Key::PERMISSIONS_DENY) => "denies",
            _ => continue,
        };
        let Some(text) = entry.value.as_str() else { continue };
        let origin = Arc::new(RuleOrigin::new(entry.origin.to_string(), asm.loc.project.clone()));
        let Ok(rule) = Rule::parse(text, origin, &asm.rule_env) else { continue };
        let Some(name) = rule.tool_name().filter(|n| n.starts_with("mcp__")) else { continue };
        let servers = servers_of(name, connected.iter().map(String::as_str));
        if servers.is_empty() || entries.iter().any(|e| rule.names_tool(e.spec())) {
            continue;
        }
        // Compared without the `mcp__srv__` they share, which would make every name look alike.
        let prefix = format!("mcp__{}__", sanitize(servers[0]));
        let tail = |n: &str| n.get(prefix.len()..).unwrap_or(n).to_string();
        let theirs: Vec<String> = entries
            .iter()
            .map(|e| e.spec().name.as_str())
            .filter(|n| n.to_ascii_lowercase().starts_with(&prefix.to_ascii_lowercase()))
            .map(tail)
            .collect();
        let hint = closest(&tail(name), theirs.iter().map(String::as_str))
            .map(|c| format!("; did you mean `{prefix}{c}`?"))
            .unwrap_or_default();
        let server = servers.join("`, `");
        out.push(NameProblem {
            server: servers[0].to_string(),
            problem: Problem {
                origin: entry.origin.clone(),
                key: entry.key.clone(),
                message: format!("rule `{text}` names no tool of MCP server `{server}`, so it {effect} nothing{hint}"),
            },
        });
    }
    out
}
