//! One upstream MCP server: its connection, and the supervisor that keeps it connected
//! (restarting a crashed server with backoff).

mod call;
mod http;
mod listen;
mod probe;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient};
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;
use toolbelt_core::ToolError;
use toolbelt_core::vars::{expand_env, unset_env_vars};
use toolbelt_policy::confine::{Confined, Confiner};

use super::config::{UpstreamConfig, UpstreamProtocol, UpstreamTransport};
use super::handler::UpstreamHandler;
use super::lineage;

/// Where an upstream server stands.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UpstreamState {
    /// Not connected yet.
    Connecting,
    /// Connected, with this many tools in the registry.
    Connected {
        /// Tools it contributes.
        tools: usize,
    },
    /// The last attempt failed (or the server exited); it is retried with backoff.
    Failed {
        /// What went wrong.
        error: String,
    },
    /// The server asks to be signed in to (OAuth): `toolbelt mcp-servers login NAME`. It is
    /// retried with backoff, so a sign-in made elsewhere is picked up.
    NeedsLogin {
        /// What it said, and what to run.
        error: String,
    },
    /// `enabled = false`.
    Disabled,
    /// Not started, and never retried: its command is toolbelt itself, or this toolbelt is
    /// too many gateways deep ([`super::lineage`]).
    Skipped {
        /// Why.
        reason: String,
    },
}

/// One upstream server and its live connection.
pub struct Upstream {
    /// The server's name in settings.
    pub name: String,
    /// Its settings.
    pub config: UpstreamConfig,
    state: RwLock<UpstreamState>,
    peer: RwLock<Option<Peer<RoleClient>>>,
    handler: UpstreamHandler,
    /// The last lines a stdio server wrote to stderr (shown when it fails).
    stderr: Arc<Mutex<VecDeque<String>>>,
    attempted: tokio::sync::Notify,
    /// The tools it contributed: each one's name on the server and in the registry.
    pub(super) registered: Mutex<Vec<Registered>>,
    /// Every tool it listed last (by its own name), once it listed them.
    pub(super) listed: Mutex<Option<Vec<String>>>,
    /// What a stdio server starts under (a project's servers: the sandbox).
    confine: Option<Arc<dyn Confiner>>,
    /// The running confined server's process id and what to do once it has ended.
    watch: Mutex<Option<(Option<u32>, Confined)>>,
    /// Where an HTTP server's OAuth tokens are kept, when toolbelt keeps any.
    tokens: Option<Arc<super::oauth::store::TokenFile>>,
}

/// Why connecting failed.
#[derive(Debug)]
pub(super) struct Unconnected {
    pub(super) error: String,
    /// The server refused for want of a sign-in.
    login: bool,
}

impl Unconnected {
    fn refused(server: &str, refusal: super::oauth::Refusal) -> Self {
        Self { error: refusal.explain(server), login: true }
    }
}

impl From<String> for Unconnected {
    fn from(error: String) -> Self {
        Self { error, login: false }
    }
}

/// One tool of an upstream server in the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Registered {
    /// Its name on the server.
    pub(super) remote: String,
    /// Its name in the registry.
    pub(super) name: String,
    /// Whether it is listed and callable (not left out by `enabled_tools`/`disabled_tools`).
    pub(super) shown: bool,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream").field("name", &self.name).field("state", &self.state()).finish()
    }
}

impl Upstream {
    pub(super) fn new(name: String, config: UpstreamConfig) -> Self {
        let state = match lineage::skip_reason(&config) {
            _ if !config.enabled => UpstreamState::Disabled,
            Some(reason) => {
                tracing::warn!("MCP server `{name}`{} is not started: {reason}", config.at());
                UpstreamState::Skipped { reason }
            }
            None => {
                warn_unset_vars(&name, &config);
                UpstreamState::Connecting
            }
        };
        let mut handler = UpstreamHandler::new(&name);
        if let UpstreamProtocol::Initialize(version) = config.protocol {
            handler.initialize_version = Some(version);
        }
        Self {
            name,
            config,
            state: RwLock::new(state),
            peer: RwLock::new(None),
            handler,
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            attempted: tokio::sync::Notify::new(),
            registered: Mutex::new(Vec::new()),
            confine: None,
            watch: Mutex::new(None),
            tokens: None,
            listed: Mutex::new(None),
        }
    }

    /// The server as a person deciding on a call of its tools should know it: "the MCP server
    /// `fs` (`npx`, a program toolbelt started)", "the MCP server `docs` at
    /// https://docs.example.com/mcp" (no query: it may hold a key).
    pub fn described(&self) -> String {
        match &self.config.transport {
            UpstreamTransport::Stdio { command, .. } => {
                format!("the MCP server `{}` (`{command}`, a program toolbelt started)", self.name)
            }
            UpstreamTransport::Http { url, .. } => {
                format!("the MCP server `{}` at {}{}", self.name, url.origin().ascii_serialization(), url.path())
            }
        }
    }

    /// A stdio server started by `confine` ([`toolbelt_policy::confine`]), when given.
    pub(super) fn confined(mut self, confine: Option<Arc<dyn Confiner>>) -> Self {
        self.confine = confine;
        self
    }

    /// Offers `roots` to the server when it asks for the client's roots.
    pub(super) fn offering(mut self, roots: Arc<[std::path::PathBuf]>) -> Self {
        self.handler.roots = roots;
        self
    }

    /// Where it stands now.
    pub fn state(&self) -> UpstreamState {
        self.state.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set_state(&self, state: UpstreamState) {
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = state;
    }

    /// The connection, when connected.
    pub fn peer(&self) -> Option<Peer<RoleClient>> {
        self.peer.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set_peer(&self, peer: Option<Peer<RoleClient>>) {
        *self.peer.write().unwrap_or_else(PoisonError::into_inner) = peer;
    }

    /// The registry names of the tools it contributes, in the server's order.
    pub fn tool_names(&self) -> Vec<String> {
        let registered = self.registered.lock().unwrap_or_else(PoisonError::into_inner);
        registered.iter().filter(|r| r.shown).map(|r| r.name.clone()).collect()
    }

    /// Every tool it listed last, by its own names; `None` before it listed any.
    pub fn listed(&self) -> Option<Vec<String>> {
        self.listed.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Waits for the end of the first connection attempt, at most its startup timeout (the
    /// attempt is bounded by the same timeout, so it has ended by then, or is reported as
    /// failed here).
    pub(super) async fn first_attempt(&self) {
        // Waiting from before the look at the state: an attempt that ends in between still
        // wakes us.
        let attempted = self.attempted.notified();
        if self.state() != UpstreamState::Connecting {
            return;
        }
        let limit = self.config.startup_timeout;
        if tokio::time::timeout(limit, attempted).await.is_err() && self.state() == UpstreamState::Connecting {
            self.set_state(UpstreamState::Failed { error: self.no_answer() });
        }
    }

    fn no_answer(&self) -> String {
        format!("no answer within {} s{}", self.config.startup_timeout.as_secs_f64(), self.stderr_tail())
    }

    /// Keeps the server connected until `shutdown`: connects, hands the connection to
    /// `on_connect` (which registers its tools), waits for it to end, and reconnects after
    /// 1 s, 2 s, 4 s … up to 60 s (back to 1 s after a connection that lasted a minute).
    pub(super) async fn supervise<F, Fut>(self: Arc<Self>, shutdown: CancellationToken, on_connect: F)
    where
        F: Fn(Arc<Upstream>, Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<usize, Unconnected>>,
    {
        if matches!(self.state(), UpstreamState::Disabled | UpstreamState::Skipped { .. }) {
            self.attempted.notify_waiters();
            return;
        }
        let mut backoff = Duration::from_secs(1);
        loop {
            let started = Instant::now();
            // Connecting and listing the tools, together within the startup timeout: a server
            // that answers `initialize` but never lists its tools is as dead as a silent one.
            let attempt = async {
                let running = self.connect().await?;
                let listed = on_connect(Arc::clone(&self), running.peer().clone()).await;
                Ok::<_, Unconnected>((running, listed))
            };
            let attempt = tokio::select! {
                r = tokio::time::timeout(self.config.startup_timeout, attempt) => r,
                () = shutdown.cancelled() => {
                    self.server_ended();
                    return;
                }
            };
            match attempt {
                Ok(Ok((running, listed))) => {
                    let peer = running.peer().clone();
                    match listed {
                        Ok(tools) => {
                            self.set_peer(Some(peer.clone()));
                            self.set_state(UpstreamState::Connected { tools });
                            tracing::info!(server = %self.name, tools, "MCP server connected");
                        }
                        Err(Unconnected { error, login: true }) => self.set_state(UpstreamState::NeedsLogin { error }),
                        Err(Unconnected { error, .. }) => self.set_state(UpstreamState::Failed { error }),
                    }
                    self.attempted.notify_waiters();
                    let _listening = self.listen_for_changes(&peer);
                    let waiting = running.waiting();
                    tokio::pin!(waiting);
                    let ended = loop {
                        tokio::select! {
                            r = &mut waiting => {
                                break r.map(|reason| format!("{reason:?}")).unwrap_or_else(|e| e.to_string());
                            }
                            () = self.handler.tools_changed.notified() => self.relist(&on_connect, &peer).await,
                            () = shutdown.cancelled() => {
                                self.server_ended();
                                return;
                            }
                        }
                    };
                    self.server_ended();
                    self.set_peer(None);
                    let error = format!("the connection ended ({ended}){}; restarting", self.stderr_tail());
                    tracing::warn!(server = %self.name, "{error}");
                    self.set_state(UpstreamState::Failed { error });
                    if started.elapsed() > Duration::from_secs(60) {
                        backoff = Duration::from_secs(1);
                    }
                }
                Ok(Err(Unconnected { error, login: true })) => {
                    self.server_ended();
                    tracing::warn!(server = %self.name, "{error}");
                    self.set_state(UpstreamState::NeedsLogin { error });
                    self.attempted.notify_waiters();
                }
                Ok(Err(Unconnected { error, login: false })) => {
                    self.server_ended();
                    let error = format!("{error}{}", self.stderr_tail());
                    tracing::warn!(server = %self.name, "cannot connect: {error}");
                    self.set_state(UpstreamState::Failed { error });
                    self.attempted.notify_waiters();
                }
                Err(_) => {
                    self.server_ended();
                    let error = self.no_answer();
                    tracing::warn!(server = %self.name, "cannot connect: {error}");
                    self.set_state(UpstreamState::Failed { error });
                    self.attempted.notify_waiters();
                }
            }
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = shutdown.cancelled() => return,
            }
            backoff = (backoff * 2).min(Duration::from_secs(60));
        }
    }

    /// Lists the connected server's tools again after it said they changed: those it added
    /// join the registry, those it dropped leave it (and the clients are told, as when a
    /// server connects).
    async fn relist<F, Fut>(self: &Arc<Self>, on_connect: &F, peer: &Peer<RoleClient>)
    where
        F: Fn(Arc<Upstream>, Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<usize, Unconnected>>,
    {
        match tokio::time::timeout(self.config.startup_timeout, on_connect(Arc::clone(self), peer.clone())).await {
            Ok(Ok(tools)) => {
                tracing::info!(server = %self.name, tools, "MCP server's tools listed again");
                self.set_state(UpstreamState::Connected { tools });
            }
            Ok(Err(e)) => tracing::warn!(server = %self.name, "listing its changed tools failed: {}", e.error),
            Err(_) => {
                tracing::warn!(server = %self.name, "listing its changed tools took over {:?}", self.config.startup_timeout)
            }
        }
    }

    async fn connect(&self) -> Result<RunningService<RoleClient, UpstreamHandler>, Unconnected> {
        match &self.config.transport {
            UpstreamTransport::Http { url, headers, bearer_token_env, .. } => {
                self.connect_http(url, headers, bearer_token_env.as_deref()).await
            }
            UpstreamTransport::Stdio { command, args, env, cwd } => {
                Ok(self.connect_stdio(command, args, env, cwd.as_deref()).await?)
            }
        }
    }

    async fn connect_stdio(
        &self,
        program: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&Path>,
    ) -> Result<RunningService<RoleClient, UpstreamHandler>, String> {
        let mut command = tokio::process::Command::new(program);
        command.args(args).envs(env.iter().map(|(k, v)| (k, expand_env(v))));
        // After the server's own `env`, which cannot lower it.
        command.env(lineage::DEPTH_VAR, lineage::child_depth());
        // A session of its own, without the person's terminal (`toolbelt_core::process`).
        toolbelt_core::process::new_session(command.as_std_mut());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let confined = match &self.confine {
            Some(confine) => {
                confine.confine(&mut command).map_err(|why| format!("`{program}` was not started: {why}"))?
            }
            None => Confined::default(),
        };
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{program}`: {e}"))?;
        *self.watch.lock().unwrap_or_else(PoisonError::into_inner) = Some((transport.id(), confined));
        if let Some(stderr) = stderr {
            let (tail, name) = (Arc::clone(&self.stderr), self.name.clone());
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(server = %name, "{line}");
                    let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                    if tail.len() == 20 {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
        }
        let transport = probe::Probed::new(transport, self.config.protocol == UpstreamProtocol::Auto);
        self.handler.clone().serve_with_lifecycle(transport, self.lifecycle()).await.map_err(|e| e.to_string())
    }

    /// How a connection starts, by the server's `protocol` setting.
    pub(super) fn lifecycle(&self) -> ClientLifecycleMode {
        self.config.protocol.lifecycle()
    }

    /// A stdio server's connection ended (or toolbelt is shutting down): its process group is
    /// killed, so nothing of it runs on, and what it made that the sandbox could not hold is
    /// looked for ([`Confined::ended`]).
    fn server_ended(&self) {
        let Some((pid, confined)) = self.watch.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
        if let Some(pid) = pid {
            toolbelt_core::process::kill_group(pid);
        }
        confined.ended(&format!("the MCP server `{}`", self.name));
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        match tail.back() {
            Some(last) => format!("; its stderr ended with: {last}"),
            None => String::new(),
        }
    }

    pub(super) fn unavailable(&self) -> ToolError {
        let why = match self.state() {
            UpstreamState::Failed { error } => error,
            UpstreamState::NeedsLogin { error } => {
                return ToolError::failed(format!("{error}, then try again"));
            }
            UpstreamState::Disabled => "it is disabled in the settings".into(),
            UpstreamState::Skipped { reason } => format!("it is not started: {reason}"),
            _ => "it is still connecting".into(),
        };
        ToolError::failed(format!(
            "MCP server `{}` is not connected ({why}); it is restarted automatically, so try again shortly, \
             or check it with `toolbelt mcp-servers`",
            self.name
        ))
    }
}

/// Warns once about each `${VAR}` of the server's `env` and `headers` that is not set: it
/// would be passed as an empty value.
fn warn_unset_vars(server: &str, config: &UpstreamConfig) {
    let (table, fields) = match &config.transport {
        UpstreamTransport::Stdio { env, .. } => ("env", env),
        UpstreamTransport::Http { headers, .. } => ("headers", headers),
    };
    for (key, value) in fields {
        for var in unset_env_vars(value) {
            tracing::warn!(
                "MCP server `{server}`: {table}.{key} uses ${{{var}}}, which is not set, so it is passed as empty; \
                 export {var} before starting toolbelt"
            );
        }
    }
}
