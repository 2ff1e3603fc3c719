//! Settings applied to a running server without a restart. The settings files (every
//! layer's, Claude Code's included) and the plugin folders are looked at every second; when
//! one changed, the settings are read again and, when they are valid, what changed is applied:
//!
//! - the tools the settings and plugins define (`[tools.command.*]`, `[tools.http.*]`): a
//!   removed or changed one leaves the registry, a new or changed one joins it;
//! - `[tools] enabled` / `disabled`: every tool is judged again;
//! - the hooks (the settings' and the enabled plugins'), swapped whole;
//! - the upstream MCP servers (`[mcp.servers.*]`, `.mcp.json`, the plugins'): when their set
//!   or any one's settings changed, the gateway is started again with the new set.
//!
//! A registry change reaches every MCP client as `notifications/tools/list_changed`. A call
//! already running keeps the tool and hooks it started with. Settings with a problem are not
//! applied at all: the problem is said (stderr) and the previous settings stay in force until
//! a valid change. The permission rules, the sandbox, the language servers and the skills and
//! agents are read once, at start: those apply from the next start.
//!
//! Why polling and not file notifications: a handful of small files, looked at once a second,
//! costs nothing measurable, needs no extra crate, and sees a file replaced by a rename (an
//! editor's save), a folder made later, and a network file system alike.

mod hooks;
mod watch;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolbelt_mcp::client::Gateway;
use toolbelt_policy::PermissionEngine;
use toolbelt_runtime::Runtime;

pub use hooks::LiveHooks;

use crate::assemble::Assembly;
use crate::settings::{Locations, Settings, ToolFilter, custom_tools};

/// How often the files are looked at.
pub const EVERY: Duration = Duration::from_secs(1);

/// A running server's settings, kept in step with its files.
pub struct Live {
    state: Mutex<State>,
    runtime: Arc<Runtime>,
    /// The rules the runtime judges with (read at start): they hide the tools a bare deny
    /// rule names, new ones included.
    engine: PermissionEngine,
    gateway: tokio::sync::Mutex<Option<Gateway>>,
    reload: Box<dyn Fn() -> Assembly + Send + Sync>,
}

/// The settings in force and the files as they were when read.
struct State {
    applied: Settings,
    loc: Locations,
    seen: watch::Fingerprint,
    /// The defined tools this server registered (a refused one is not here: removing it
    /// must not remove the tool that holds its name).
    registered: BTreeSet<String>,
}

/// What one look at the files did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Nothing changed.
    None,
    /// The new settings apply; what changed, in words.
    Applied(Vec<String>),
    /// The new settings have problems: nothing of them applies.
    Refused(Vec<String>),
}

impl Live {
    /// Keeps `runtime` (built from `applied`) and `gateway` in step with the settings files.
    pub fn new(applied: &Assembly, runtime: Arc<Runtime>, gateway: Option<Gateway>) -> Arc<Self> {
        let seen = watch::Fingerprint::of(&applied.loc);
        let registered = applied
            .settings
            .custom_tools
            .iter()
            .map(|d| d.name.clone())
            .filter(|name| runtime.registry().entry(name).is_some())
            .collect();
        let state = State { applied: applied.settings.clone(), loc: applied.loc.clone(), seen, registered };
        Arc::new(Self {
            state: Mutex::new(state),
            runtime,
            engine: applied.engine(),
            gateway: tokio::sync::Mutex::new(gateway),
            reload: Box::new(applied.reloader()),
        })
    }

    /// Looks at the files every [`EVERY`] until `stop`, applying what changed.
    pub fn watch(self: &Arc<Self>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let live = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(EVERY) => {}
                }
                match live.check().await {
                    Change::None => {}
                    Change::Applied(what) => tracing::info!("settings changed; applied: {}", what.join("; ")),
                    Change::Refused(problems) => {
                        tracing::warn!(
                            "settings changed but were not applied (the previous settings stay in force): {}",
                            problems.join("; ")
                        );
                    }
                }
            }
        })
    }

    /// Looks at the files once; applies the settings when they changed and are valid.
    pub async fn check(&self) -> Change {
        // The files as they are before they are read: an edit made while this one applies
        // is seen at the next look.
        let known_problems = {
            let Ok(mut state) = self.state.lock() else { return Change::None };
            let now = watch::Fingerprint::of(&state.loc);
            if now == state.seen {
                return Change::None;
            }
            state.seen = now;
            state.applied.tool_problems.clone()
        };
        let next = (self.reload)();
        // A definition that became invalid is refused too: the tool it defined stays as it was.
        let new_problems: Vec<String> = next
            .settings
            .tool_problems
            .iter()
            .filter(|p| !known_problems.contains(p))
            .map(ToString::to_string)
            .collect();
        if !next.problems.is_empty() || !new_problems.is_empty() {
            let all = next.problems.iter().map(ToString::to_string).chain(new_problems);
            return Change::Refused(all.collect());
        }
        let what = self.apply(&next).await;
        if let Ok(mut state) = self.state.lock() {
            state.applied = next.settings.clone();
            state.loc = next.loc.clone();
        }
        Change::Applied(what)
    }

    /// Applies what differs between the settings in force and `next`.
    async fn apply(&self, next: &Assembly) -> Vec<String> {
        let registry = self.runtime.registry();
        let (old_tools, old_filter, old_hooks, old_servers) = {
            let Ok(state) = self.state.lock() else { return Vec::new() };
            let s = &state.applied;
            (
                s.custom_tools.clone(),
                s.tool_filter.clone(),
                (s.hooks.clone(), s.project_hooks.clone()),
                s.mcp_servers.clone(),
            )
        };
        let new = &next.settings;
        let mut what = Vec::new();

        let changed: Vec<&str> =
            old_tools.iter().filter(|d| !new.custom_tools.contains(d)).map(|d| d.name.as_str()).collect();
        let added: Vec<_> = new.custom_tools.iter().filter(|d| !old_tools.contains(d)).cloned().collect();
        if let Ok(mut state) = self.state.lock() {
            for name in &changed {
                if state.registered.remove(*name) {
                    registry.unregister(name);
                }
            }
            let refused = custom_tools::register(registry, &added);
            for (name, why) in &refused {
                tracing::warn!("the tool `{name}` the settings define is left out: {why}");
            }
            let joined = added.iter().filter(|d| !refused.iter().any(|(n, _)| *n == d.name));
            state.registered.extend(joined.map(|d| d.name.clone()));
        }
        if !changed.is_empty() || !added.is_empty() {
            let names: Vec<&str> = added.iter().map(|d| d.name.as_str()).collect();
            what.push(format!("tools out: [{}], in: [{}]", changed.join(", "), names.join(", ")));
        }
        if old_filter != new.tool_filter || !added.is_empty() {
            refilter(registry, &new.tool_filter);
            self.engine.hide_denied(registry);
        }
        if old_filter != new.tool_filter {
            // Tools joining later (an upstream's) are judged by the new filter too.
            let (engine, filter) = (next.engine(), new.tool_filter.clone());
            let tool_words = filter.tool_words(registry);
            registry.hide_joining(move |spec| match engine.hiding_rule(spec) {
                Some(_) => Some(String::new()),
                None => filter.reason(spec, &|w| tool_words.contains(&w.to_ascii_lowercase())),
            });
            what.push("tools.enabled / tools.disabled".into());
        }
        if old_hooks != (new.hooks.clone(), new.project_hooks.clone()) {
            match (next.hook_set(&self.engine), self.runtime.services().get::<LiveHooks>()) {
                (Ok(hooks), Some(live)) => {
                    live.replace(hooks);
                    what.push("hooks".into());
                }
                (Err(e), _) => tracing::warn!("the changed hooks are not applied: {e}"),
                (Ok(_), None) => {}
            }
        }
        if old_servers != new.mcp_servers {
            self.restart_gateway(next).await;
            let names: Vec<&str> = new.mcp_servers.iter().map(|(n, _)| n.as_str()).collect();
            what.push(format!("MCP servers restarted: [{}]", names.join(", ")));
        }
        what
    }

    /// Stops the upstream servers (their tools leave the registry) and starts those `next`
    /// configures.
    async fn restart_gateway(&self, next: &Assembly) {
        let registry = self.runtime.registry();
        let mut slot = self.gateway.lock().await;
        if let Some(old) = slot.take() {
            for status in old.statuses() {
                for name in status.tool_names {
                    registry.unregister(&name);
                }
            }
            for name in ["ListMcpResources", "ReadMcpResource"] {
                registry.unregister(name);
            }
            old.shutdown().await;
        }
        *slot = next.gateway(registry).await;
    }

    /// Stops the upstream servers.
    pub async fn shutdown(&self) {
        if let Some(gateway) = self.gateway.lock().await.take() {
            gateway.shutdown().await;
        }
    }
}

/// Judges every tool again under `filter`: the ones an earlier filter left out come back,
/// then those this one leaves out go.
fn refilter(registry: &toolbelt_core::Registry, filter: &ToolFilter) {
    for entry in registry.entries() {
        if entry.disabled_reason().is_some_and(ToolFilter::is_its_reason) {
            registry.set_enabled(&entry.spec().name, true);
        }
    }
    filter.apply(registry);
}
