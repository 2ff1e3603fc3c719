//! The gateway: upstream MCP servers whose tools join the registry, under the same policy,
//! hooks and audit as the built-in ones.
//!
//! Every configured server is connected concurrently at start, each within its own startup
//! timeout (10 s by default); one that fails is reported ([`Gateway::statuses`]) and retried
//! in the background with backoff, and never holds the others up. A server that crashes is
//! restarted the same way. Its tools are registered as `mcp__<server>__<tool>`
//! ([`names`]), minus those its `enabled_tools` / `disabled_tools` leave out; a built-in
//! tool keeps its name if an upstream one would clash. Each upstream tool is validated
//! against its own input schema by the registry, then authorized, hooked and audited by the
//! runtime like any other; its calls have a timeout of their own (60 s by default), pass
//! progress through and forward cancellation.

mod config;
mod convert;
mod handler;
pub(crate) mod http_client;
mod join;
pub mod lineage;
mod list_resources;
pub mod names;
pub mod oauth;
mod read_resource;
mod servers;
mod tool;
mod upstream;

use std::sync::Arc;

use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;
use toolbelt_core::{Registry, erase};
use toolbelt_policy::confine::Confiner;

pub use config::{UpstreamConfig, UpstreamConfigError, UpstreamProtocol, UpstreamTransport};
pub use join::UnknownToolName;
pub use list_resources::ListMcpResources;
pub use oauth::OAuthSettings;
pub use read_resource::ReadMcpResource;
pub use tool::McpTool;
pub use upstream::{Upstream, UpstreamState};

/// One server's standing, for `toolbelt mcp-servers`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpstreamStatus {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Where it stands.
    #[serde(flatten)]
    pub state: UpstreamState,
    /// The registry names of the tools it contributes (those of its last connection).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_names: Vec<String>,
    /// The revision of MCP spoken with it, while connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

/// The upstream servers, kept connected until dropped or [`Gateway::shutdown`].
pub struct Gateway {
    upstreams: Arc<Vec<Arc<Upstream>>>,
    shutdown: CancellationToken,
    supervisors: Vec<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").field("upstreams", &self.upstreams).finish()
    }
}

impl Gateway {
    /// Starts every server and waits for each one's first attempt (bounded by its startup
    /// timeout); their tools join `registry`, with ListMcpResources and ReadMcpResource.
    pub async fn start(servers: Vec<(String, UpstreamConfig)>, registry: Arc<Registry>) -> Gateway {
        Self::start_confined(servers, registry, |_| None, &[], None).await
    }

    /// [`Gateway::start`], each stdio server started by what `confiner` gives for its name
    /// (a project's servers start in the sandbox, [`toolbelt_policy::confine`]), and `roots`
    /// (the workspace roots) offered to every server that asks for the client's roots, and the
    /// OAuth tokens of HTTP servers kept where `tokens` says ([`oauth::store`]; none kept when
    /// `None`).
    pub async fn start_confined(
        servers: Vec<(String, UpstreamConfig)>,
        registry: Arc<Registry>,
        confiner: impl Fn(&str) -> Option<Arc<dyn Confiner>>,
        roots: &[std::path::PathBuf],
        tokens: Option<&oauth::store::TokenPlace>,
    ) -> Gateway {
        let roots: Arc<[std::path::PathBuf]> = Arc::from(roots);
        let upstreams: Arc<Vec<Arc<Upstream>>> = Arc::new(
            servers
                .into_iter()
                .map(|(name, config)| {
                    let confine = confiner(&name);
                    let upstream = Upstream::new(name, config).confined(confine).offering(Arc::clone(&roots));
                    Arc::new(upstream.keeping_tokens(tokens))
                })
                .collect(),
        );
        let shutdown = CancellationToken::new();
        let mut supervisors = Vec::new();
        for upstream in upstreams.iter() {
            let registry = Arc::clone(&registry);
            let on_connect = move |up: Arc<Upstream>, peer: Peer<RoleClient>| {
                let registry = Arc::clone(&registry);
                async move { join::register_tools(&up, &peer, &registry).await }
            };
            supervisors.push(tokio::spawn(Arc::clone(upstream).supervise(shutdown.clone(), on_connect)));
        }
        let waits = upstreams.iter().map(|u| u.first_attempt());
        futures_util::future::join_all(waits).await;
        if !upstreams.is_empty() {
            let servers = servers::Servers(Arc::clone(&upstreams));
            for tool in [erase(ListMcpResources(servers.clone())), erase(ReadMcpResource(servers))] {
                if let Err(e) = registry.register(tool) {
                    tracing::warn!("{e}");
                }
            }
        }
        Gateway { upstreams, shutdown, supervisors }
    }

    /// Every server's standing.
    pub fn statuses(&self) -> Vec<UpstreamStatus> {
        self.upstreams
            .iter()
            .map(|u| UpstreamStatus {
                name: u.name.clone(),
                transport: u.config.transport.kind(),
                state: u.state(),
                tool_names: u.tool_names(),
                protocol: u.peer().and_then(|p| p.peer_info()).map(|i| i.protocol_version.to_string()),
            })
            .collect()
    }

    /// What the person behind a client should hear about the servers: those not started, and
    /// why (one line each).
    pub fn notices(&self) -> Vec<String> {
        self.upstreams
            .iter()
            .filter_map(|u| match u.state() {
                UpstreamState::Skipped { reason } => {
                    Some(format!("MCP server `{}`{} is not started: {reason}", u.name, u.config.at()))
                }
                _ => None,
            })
            .collect()
    }

    /// The names in the servers' `enabled_tools` and `disabled_tools` that name none of the
    /// tools they list (a server not connected yet is not judged), each with the closest
    /// name it does list: `disabled_tools = ["get_env"]` leaves `get-env` callable.
    pub fn unknown_tool_names(&self) -> Vec<UnknownToolName> {
        self.upstreams.iter().flat_map(|u| join::unknown_tool_names(u)).collect()
    }

    /// Stops every connection (stdio servers are shut down) and waits for it.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        for task in std::mem::take(&mut self.supervisors) {
            let _ = task.await;
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
