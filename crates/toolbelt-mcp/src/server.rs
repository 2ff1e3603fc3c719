//! The MCP server: one [`McpServer`] per connection, over a shared runtime.

mod call;
mod inline;
mod params;
mod progress;
mod prompts;
mod result;
mod roots;
mod sampling;
mod stdio;
mod task_events;
mod tools;

pub use inline::InlineSessions;
pub use sampling::SamplingProvider;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt as _};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use toolbelt_agent::{Provider as _, SessionProvider};
use toolbelt_runtime::{ClientInfo, Runtime, Session, StartSource, Transport};

use self::inline::Seat;
use crate::approve::{Elicitor, SessionApprovers};
use crate::ask::{ClientAsker, SessionAskers};
use crate::http::HttpClient;

/// What every connection of a server shares.
#[derive(Debug)]
pub struct ServerOptions {
    /// The working directory of a new session.
    pub cwd: PathBuf,
    /// The workspace roots of a new session until its client offers roots (`--root`, or the
    /// cwd and `--add-dir`s).
    pub roots: Vec<PathBuf>,
    /// Where sessions keep their files (spilled output): `<dir>/<session id>/`.
    pub sessions_dir: PathBuf,
    /// The runtime's approver, to which each connection registers its elicitor.
    pub approvers: Arc<SessionApprovers>,
    /// The runtime's asker (its `People` service), to which each connection registers its
    /// client: questions become elicitations, messages log notifications.
    pub askers: Arc<SessionAskers>,
    /// Instructions for the client's model, sent with `initialize`.
    pub instructions: Option<String>,
    /// What the person behind each client should know about how the server was set up (a
    /// project's settings ignored until it is trusted, an upstream server not started):
    /// sent to every client as a warning log message once it is initialized. Stderr, where
    /// the server logs, is rarely in front of anyone when a host started the server.
    pub notices: Vec<String>,
    /// The sessions of HTTP requests that come without a protocol session (2026-07-28).
    pub inline: InlineSessions,
    /// How the server stops when told to (HTTP): calls refused once it drains, and cut when
    /// its grace period ends. `None`: the server stops at once (stdio).
    pub drain: Option<Arc<crate::drain::Drain>>,
    /// On a team: the storage every replica shares, where requests without a protocol session
    /// keep their session's state and request states ([`crate::team`]). `None`: one server.
    pub team: Option<Arc<crate::team::Team>>,
}

/// One MCP connection: an rmcp `ServerHandler` whose calls run in a session of their own.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Arc<Runtime>,
    options: Arc<ServerOptions>,
    /// The connection's own session, made when first needed: an HTTP request without a
    /// protocol session runs in its token's ([`InlineSessions`]) and never needs one.
    own: OnceLock<Arc<Seat>>,
    /// Whether `initialize` was answered (a second one is refused).
    initialized: AtomicBool,
    /// Whether the client's roots are still on their way.
    roots: roots::RootsGate,
    /// Changes to the tool list, watched from `initialize` on (taken once the client is
    /// initialized, by the task that announces them).
    tool_changes: Mutex<Option<watch::Receiver<u64>>>,
    /// Ends the connection's own tasks.
    stop: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
        let Some(own) = self.own.get() else { return };
        self.options.approvers.unregister(own.session().id());
        self.options.askers.unregister(own.session().id());
        // The session's background tasks end with it (their slot kills them on drop); the
        // SessionEnd hooks still get to run if a runtime is around.
        own.end(&self.runtime);
    }
}

impl McpServer {
    /// A connection, whose session is made fresh when first needed.
    pub fn new(runtime: Arc<Runtime>, options: Arc<ServerOptions>) -> Self {
        let inner = Inner {
            runtime,
            options,
            own: OnceLock::new(),
            initialized: AtomicBool::new(false),
            roots: roots::RootsGate::new(),
            tool_changes: Mutex::new(None),
            stop: CancellationToken::new(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// The connection's session.
    pub fn session(&self) -> &Arc<Session> {
        self.own().session()
    }

    fn own(&self) -> &Arc<Seat> {
        self.inner.own.get_or_init(|| Arc::new(self.new_seat()))
    }

    /// The session a request runs in: the connection's, or, for an HTTP request without a
    /// protocol session (2026-07-28), its token's; started with the first request when no
    /// `initialize` started it ([`inline`]).
    async fn seat_for(&self, context: &RequestContext<RoleServer>) -> Arc<Seat> {
        self.seat_in(context, inline::is_inline(context)).await
    }

    /// [`Self::seat_for`] a request known to be a 2026-07-28 one, or not (`inline`).
    async fn seat_in(&self, context: &RequestContext<RoleServer>, inline: bool) -> Arc<Seat> {
        if !inline::is_sessionless(context, inline) {
            return Arc::clone(self.own());
        }
        let http = http_client(&context.extensions);
        let seat = match http {
            Some(http) => {
                let token = http.token_id.as_deref();
                self.inner.options.inline.seat(&self.inner.runtime, token, || self.new_inline_seat(token))
            }
            None => Arc::clone(self.own()),
        };
        // Boxed, as what follows: rmcp's request future holds every handler's future inline and
        // is moved several times per request, so a large one costs every request a copy.
        Box::pin(seat.start(&self.inner.runtime, context, http)).await;
        seat
    }

    fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// Sends `notifications/tools/list_changed` whenever the registry's tools change (an
    /// upstream server's tools joining late, or leaving), until the connection ends.
    fn announce_tool_changes(&self, peer: Peer<RoleServer>) {
        let taken = self.inner.tool_changes.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some(mut changes) = taken else { return };
        let stop = self.inner.stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { return },
                    () = stop.cancelled() => return,
                }
                changes.mark_unchanged();
                if let Err(e) = peer.notify_tool_list_changed().await {
                    if peer.is_transport_closed() {
                        return;
                    }
                    tracing::debug!("could not announce the changed tool list: {e}");
                }
            }
        });
    }

    /// Lets the session's agents use the client's model (its `sampling`), unless the session
    /// already has a provider of its own.
    fn adopt_sampling(&self, peer: &Peer<RoleServer>) {
        let Some(provider) = SamplingProvider::offered_by(peer) else { return };
        let tools = provider.supports_tools();
        let adopted = self.session().state().with_slot::<SessionProvider, _>(|slot| {
            if slot.provider.is_some() {
                return false;
            }
            slot.provider = Some(Arc::new(provider));
            true
        });
        if adopted {
            tracing::info!(tools, "agents in this session use the client's model (MCP sampling)");
        }
    }

    /// Names the session's client for the audit log: what it said in `initialize`, and over
    /// HTTP where the request came from and with which token.
    fn identify(&self, name: &str, version: &str, http: Option<&HttpClient>) {
        let transport = if http.is_some() { Transport::Http } else { Transport::Stdio };
        let mut client = ClientInfo::mcp(transport, name, version);
        if let Some(http) = http {
            client.peer = http.peer.map(|p| p.to_string());
            client.token_id.clone_from(&http.token_id);
        }
        self.session().set_client(client);
    }
}

/// What `initialize` answers: toolbelt serves tools, says when their list changes, and sends
/// log messages (what `Brief` tells the user; logging is deprecated by the 2026-07-28 revision
/// but still served).
#[allow(deprecated)]
fn server_config(instructions: Option<&str>, prompts: bool) -> ServerConfig {
    let mut capabilities =
        ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_logging().build();
    if prompts {
        // The skills found where a session works; they change with it, unannounced.
        capabilities.prompts = Some(rmcp::model::PromptsCapability::default());
    }
    let mut config = ServerConfig::new(capabilities)
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .with_server_info(Implementation::new("toolbelt", env!("CARGO_PKG_VERSION")).with_title("toolbelt"));
    config.instructions = instructions.map(str::to_string);
    config
}

/// The HTTP request's client, when the message came over HTTP.
fn http_client(extensions: &rmcp::model::Extensions) -> Option<&HttpClient> {
    extensions.get::<axum::http::request::Parts>().and_then(|parts| parts.extensions.get::<HttpClient>())
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        server_config(self.inner.options.instructions.as_deref(), prompts::source(self.runtime()).is_some())
    }

    /// Up to 2026-07-28: with `initialize` up to 2025-11-25, and from 2026-07-28 without it
    /// (questions come back as `input_required` results, [`crate::round`]).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.inner.initialized.swap(true, Ordering::AcqRel) {
            return Err(McpError::invalid_request(
                "this connection is already initialized: send initialize once; the session goes on serving \
                 (over HTTP, a POST without Mcp-Session-Id starts a new session)",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.identify(&request.client_info.name, &request.client_info.version, http_client(&context.extensions));
        let elicits = request.capabilities.elicitation.is_some();
        if elicits {
            let elicitor = Arc::new(Elicitor::new(context.peer.clone()));
            self.inner.options.approvers.register(self.session().id(), elicitor);
        }
        let samples = request.capabilities.sampling.is_some();
        let asker = Arc::new(ClientAsker::new(context.peer.clone(), elicits, samples));
        self.inner.options.askers.register(self.session().id(), Arc::clone(&asker));
        task_events::forward(self.session().state(), asker, self.inner.stop.clone());
        if request.capabilities.sampling.is_some() {
            self.adopt_sampling(&context.peer);
        }
        if request.capabilities.roots.is_some() {
            // Asked for once the client says it is initialized; calls wait for the answer.
            self.inner.roots.expect();
        }
        *self.inner.tool_changes.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(self.runtime().registry().subscribe());
        let result = self.negotiate_initialize(&request)?;
        if self.own().start_by_initialize() {
            self.runtime().start_session(self.session(), StartSource::Startup).await;
        }
        Ok(result)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(asker) = self.inner.options.askers.get(self.session().id()) {
            for notice in &self.inner.options.notices {
                toolbelt_core::Asker::tell(&*asker, self.session().state(), notice, toolbelt_core::Tone::Warning).await;
            }
        }
        self.announce_tool_changes(context.peer.clone());
        roots::sync(self.session(), &context.peer).await;
        self.inner.roots.settle();
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.inner.roots.expect();
        roots::sync(self.session(), &context.peer).await;
        self.inner.roots.settle();
    }

    #[allow(deprecated)] // logging: see `crate::ask`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if inline::is_inline(&context)
            && let Some(refusal) = inline::removed("logging/setLevel")
        {
            return Err(refusal);
        }
        if let Some(asker) = self.inner.options.askers.get(self.session().id()) {
            asker.set_level(request.level);
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let seat = self.seat_for(&context).await;
        // On a team: the tools the session loaded on other replicas too.
        self.pull_shared(&seat).await?;
        // The agent tools only where agents can run (a provider, or the client's sampling).
        let agents = tools::agents_run_in(self.runtime(), seat.session());
        // Deferred tools only once the session loaded them (ToolSearch lists the rest).
        let tools = self
            .runtime()
            .tools_for(seat.session().state())
            .iter()
            .filter(|spec| agents || !tools::is_agent_tool(&spec.name))
            .map(tools::to_mcp)
            .collect::<Result<_, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        let seat = self.seat_for(&context).await;
        // Skills are found from the working directory, which may have moved on another replica.
        self.pull_shared(&seat).await?;
        self.inner.roots.wait(roots::ROOTS_WAIT).await;
        Ok(prompts::list(self.runtime(), seat.session()))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        let seat = self.seat_for(&context).await;
        self.pull_shared(&seat).await?;
        self.inner.roots.wait(roots::ROOTS_WAIT).await;
        Ok(prompts::get(self.runtime(), seat.session(), &request)?.into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Boxed: rmcp moves each request's future into a task of its own and again as it
        // completes, and the call's state machine inline would make that a copy of kilobytes
        // per call, several times over (once most of a small call's cost).
        Box::pin(self.call(request, context)).await
    }

    /// This server serves no resources (its tools read files): whatever is asked for is not
    /// found, with its URI (from 2026-07-28 as invalid params, as that revision says).
    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        Err(McpError::resource_not_found(
            format!(
                "no resource `{}` here: this server has no resources; its tools (Read, Glob, Grep) read files",
                request.uri
            ),
            Some(serde_json::json!({"uri": request.uri})),
        ))
    }

    /// `subscriptions/listen` (2026-07-28): the tool list's changes.
    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// Announces every change of the registry's tools and of the tools the session loaded,
    /// until the client cancels the subscription or the server stops.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        Box::pin(async move {
            let seat = self.seat_for(subscription.request_context()).await;
            inline::listen(self.runtime(), &seat, &subscription).await;
            Ok(())
        })
        .await
    }

    /// A method rmcp does not know, or a known one whose params it could not read (rmcp
    /// falls back to a custom request then): the latter is `invalid_params`, saying why; in a
    /// 2026-07-28 request, one that revision removed is not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if inline::is_inline(&context)
            && let Some(refusal) = inline::removed(&request.method)
        {
            return Err(refusal);
        }
        Err(params::refuse(&request.method, request.params.as_ref()))
    }
}

/// Serves one connection on stdin/stdout until the client disconnects. Each line is judged
/// first: one that is not JSON, not a message or too long is answered with a JSON-RPC error
/// and the connection goes on (a line may be up to 16 MiB).
///
/// When stdin and stdout are pipes (as MCP hosts start servers), they are driven by the
/// event loop directly; tokio's own stdin/stdout go through its blocking thread pool, which
/// costs two thread hand-offs per message (a third of a small call's latency).
pub async fn serve_stdio(server: McpServer) -> std::io::Result<()> {
    match pipes() {
        Some((stdin, stdout)) => serve_lines(server, stdin, stdout).await,
        None => serve_lines(server, tokio::io::stdin(), tokio::io::stdout()).await,
    }
}

/// Serves one connection as [`serve_stdio`] does, over any reader and writer (a child
/// process's pipes, a socket) until the client disconnects.
pub async fn serve_lines<R, W>(server: McpServer, read: R, write: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let fail = |what: &str, e: &dyn std::fmt::Display| std::io::Error::other(format!("the MCP {what} failed: {e}"));
    let running = server.serve(stdio::Lines::new(read, write)).await.map_err(|e| fail("handshake", &e))?;
    running.waiting().await.map_err(|e| fail("connection", &e))?;
    Ok(())
}

/// Stdin and stdout as non-blocking pipes, when both are pipes. Both are checked before
/// either is converted: converting makes the pipe non-blocking for every holder of it, and a
/// stdin left non-blocking beside a stdout that is a file would fail tokio's blocking reads
/// (`toolbelt mcp > log` died of EAGAIN when its client was slow to write).
fn pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    let is_pipe = |fd: &std::os::fd::OwnedFd| {
        fd.try_clone().map(std::fs::File::from).and_then(|f| f.metadata()).is_ok_and(|m| m.file_type().is_fifo())
    };
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    if !is_pipe(&stdin) || !is_pipe(&stdout) {
        return None;
    }
    let receiver = tokio::net::unix::pipe::Receiver::from_owned_fd(stdin).ok()?;
    let sender = tokio::net::unix::pipe::Sender::from_owned_fd(stdout).ok()?;
    Some((receiver, sender))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_says_who_serves_what() {
        for instructions in [None, Some("Use Read before Edit.")] {
            let expected = json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"logging": {}, "tools": {"listChanged": true}},
                "serverInfo": {"name": "toolbelt", "title": "toolbelt", "version": env!("CARGO_PKG_VERSION")},
                "instructions": instructions,
            });
            let read: ServerConfig = serde_json::from_value(expected).unwrap();
            let config = server_config(instructions, false);
            assert_eq!(serde_json::to_string(&config).unwrap(), serde_json::to_string(&read).unwrap());
        }
    }
}
