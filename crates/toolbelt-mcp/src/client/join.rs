//! How a server's tools join the registry, and which names in its settings match none.
//!
//! A tool the server's `enabled_tools` / `disabled_tools` leave out still joins, disabled
//! with the reason ([`Registry::register_disabled`]): it is never listed nor callable, but
//! a call by its name is told which setting leaves it out and where, rather than that no
//! such tool exists.
//!
//! Names in those lists are matched exactly, as the server spells them. Matching `-` and `_`
//! alike would be kinder to a typo but could join two distinct tools (`get-env` and `get_env`
//! can both exist, and `enabled_tools` would then let through one nobody named); instead a
//! name that matches nothing is reported with the closest real one, once the server has
//! listed its tools ([`unknown_tool_names`]).

use std::sync::{Arc, PoisonError};

use super::upstream::Unconnected;

use rmcp::{Peer, RoleClient};
use toolbelt_core::Registry;

use super::names;
use super::tool::McpTool;
use super::upstream::{Registered, Upstream};

/// A name in a server's `enabled_tools` or `disabled_tools` that the server does not list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UnknownToolName {
    /// The server.
    pub server: String,
    /// `enabled_tools` or `disabled_tools`.
    pub list: &'static str,
    /// The name as written.
    pub name: String,
    /// The closest name the server lists, if one is close.
    pub closest: Option<String>,
}

impl UnknownToolName {
    /// What is wrong, and the name meant when it can be told:
    /// "`disabled_tools` names `get_env`, which MCP server `fs` does not list; did you mean
    /// `get-env`?".
    pub fn message(&self) -> String {
        let effect = match self.list {
            "disabled_tools" => "so it disables nothing",
            _ => "so it enables nothing",
        };
        let hint = self.closest.as_ref().map(|c| format!("; did you mean `{c}`?")).unwrap_or_default();
        format!(
            "`{}` names `{}`, which MCP server `{}` does not list, {effect}{hint}",
            self.list, self.name, self.server
        )
    }
}

/// The names of `up`'s `enabled_tools` and `disabled_tools` that match none of the tools it
/// listed last; nothing before it listed any.
pub(super) fn unknown_tool_names(up: &Upstream) -> Vec<UnknownToolName> {
    let Some(listed) = up.listed() else { return Vec::new() };
    let lists = [
        ("enabled_tools", up.config.enabled_tools.clone().unwrap_or_default()),
        ("disabled_tools", up.config.disabled_tools.clone()),
    ];
    let mut out = Vec::new();
    for (list, written) in lists {
        for name in written.into_iter().filter(|n| !listed.contains(n)) {
            let closest = names::closest(&name, listed.iter().map(String::as_str)).map(str::to_string);
            out.push(UnknownToolName { server: up.name.clone(), list, name, closest });
        }
    }
    out
}

/// Brings the server's tools into the registry as it lists them now: new ones registered
/// (those its settings leave out, disabled with the reason), those it no longer lists (after
/// a restart) removed; returns how many it contributes.
pub(super) async fn register_tools(
    up: &Arc<Upstream>,
    peer: &Peer<RoleClient>,
    registry: &Registry,
) -> Result<usize, Unconnected> {
    let tools = peer.list_all_tools().await.map_err(|e| match up.refused(&e) {
        Some(refused) => refused,
        None => Unconnected::from(format!("listing its tools failed: {e}")),
    })?;
    let before: Vec<Registered> = up.registered.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let mut now: Vec<Registered> = Vec::new();
    let mut listed: Vec<String> = Vec::new();
    for tool in tools {
        let remote = tool.name.to_string();
        if listed.contains(&remote) {
            continue;
        }
        listed.push(remote.clone());
        if let Some(known) = before.iter().find(|r| r.remote == remote) {
            now.push(known.clone());
            continue;
        }
        let mut name = names::tool_name(&up.name, &remote);
        if registry.entry(&name).is_some() || registry.lookup(&name).is_ok() {
            // Taken (a built-in, or another server's tool sanitized alike): a hashed suffix.
            name = names::with_suffix(&name, &up.name, &remote);
        }
        let joining = Arc::new(McpTool::new(name.clone(), &tool, Arc::clone(up)));
        let left_out = up.config.left_out(&up.name, &remote);
        let shown = left_out.is_none();
        let joined = match left_out {
            None => registry.register(joining),
            Some(reason) => registry.register_disabled(joining, reason),
        };
        match joined {
            Ok(()) => now.push(Registered { remote, name, shown }),
            Err(e) => tracing::warn!(server = %up.name, tool = %remote, "not registered: {e}"),
        }
    }
    for gone in before.iter().filter(|r| !now.iter().any(|n| n.remote == r.remote)) {
        tracing::info!(server = %up.name, tool = %gone.remote, "the server no longer lists it; removed");
        registry.unregister(&gone.name);
    }
    let count = now.iter().filter(|r| r.shown).count();
    *up.registered.lock().unwrap_or_else(PoisonError::into_inner) = now;
    *up.listed.lock().unwrap_or_else(PoisonError::into_inner) = Some(listed);
    Ok(count)
}
