//! The web tools' HTTP: one client per runtime, connecting through the guarded resolver,
//! redirects followed by hand, bodies streamed up to a cap, errors that say what happened.

use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use toolbelt_core::{Access, ToolContext, ToolError, human_size};
use url::Url;

use super::cache::Cache;
use super::config::WebConfig;
use super::fetched::{Fetched, Page};
use super::guard::{HostPatterns, check_parsed, opened_for_port_only, private_allowed, same_site};
use super::resolver::{GuardedResolver, Ports, resolve};

/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 10;
/// Bytes of a body read at most; the rest is cut with a notice.
pub const MAX_BODY: usize = 10 * 1024 * 1024;
/// The longest a connection takes to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How toolbelt introduces itself.
const USER_AGENT: &str = concat!("Mozilla/5.0 (compatible; toolbelt/", env!("CARGO_PKG_VERSION"), ")");

/// Reads an environment variable by name: `None` when it is unset.
pub(crate) type Vars = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The web tools' shared state: the settings, the variables they read, the HTTP client (made
/// on first use) and the cache of recent pages. Whoever builds the runtime puts one among its
/// services; without one the tools use a process-wide one with the default settings.
pub struct Web {
    config: Arc<WebConfig>,
    vars: Arc<Vars>,
    client: OnceLock<Result<reqwest::Client, String>>,
    /// The client for URLs a private host is open to on their port only
    /// ([`opened_for_port_only`]), made on first use.
    port_client: OnceLock<Result<reqwest::Client, String>>,
    /// The client for the user's own endpoints (Message's channels, RemoteTrigger's
    /// triggers), whose hosts may be private; made on first use.
    endpoint_client: OnceLock<Result<reqwest::Client, String>>,
    cache: Cache,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The variables are never shown: they hold the search providers' keys.
        f.debug_struct("Web").field("config", &self.config).field("cache", &self.cache).finish_non_exhaustive()
    }
}

static DEFAULT: LazyLock<Arc<Web>> = LazyLock::new(|| Arc::new(Web::new(WebConfig::default())));

impl Web {
    /// The web tools' state under `config`, reading variables (search keys, proxies) from the
    /// process environment.
    pub fn new(config: WebConfig) -> Self {
        Self {
            config: Arc::new(config),
            vars: Arc::new(|name: &str| std::env::var(name).ok()),
            client: OnceLock::new(),
            port_client: OnceLock::new(),
            endpoint_client: OnceLock::new(),
            cache: Cache::default(),
        }
    }

    /// The same state reading variables through `vars` instead of the process environment:
    /// the search providers' keys (the variables `api_key_env` names) and the proxy
    /// variables (`HTTPS_PROXY`, `NO_PROXY`…).
    ///
    /// Keys are named by variable in the settings so that they never sit in a settings file;
    /// where the variables come from is the embedder's choice. A host with its own secret
    /// store hands them over here, and a test gives each case its own variables without
    /// touching the process environment, which cannot be changed safely while other threads
    /// read it (`std::env::set_var` is `unsafe`, and this workspace denies `unsafe`).
    pub fn with_vars(mut self, vars: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.vars = Arc::new(vars);
        self
    }

    /// The value of variable `name`, when it is set and not blank.
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        (self.vars)(name).filter(|v| !v.trim().is_empty())
    }

    /// The settings.
    pub fn config(&self) -> &WebConfig {
        &self.config
    }

    /// The service of `cx`'s runtime, else the process-wide default.
    pub(crate) fn of(cx: &ToolContext) -> Arc<Web> {
        cx.service::<Web>().unwrap_or_else(|| Arc::clone(&DEFAULT))
    }

    /// The cache of recent pages.
    pub(crate) fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The HTTP client, made on first use.
    pub(crate) fn client(&self) -> Result<&reqwest::Client, ToolError> {
        self.client
            .get_or_init(|| build_client(&self.config, &*self.vars, Ports::Every, false))
            .as_ref()
            .map_err(|e| ToolError::failed(format!("cannot make an HTTP client: {e}")))
    }

    /// The HTTP client for the user's own endpoints: the channels' and triggers' hosts are
    /// open to it, private or not (the user chose them); every other host as for the web
    /// tools. WebFetch never uses it, so a channel's host opens nothing to fetches.
    pub(crate) fn endpoint_client(&self) -> Result<&reqwest::Client, ToolError> {
        self.endpoint_client
            .get_or_init(|| build_client(&self.config, &*self.vars, Ports::Every, true))
            .as_ref()
            .map_err(|e| ToolError::failed(format!("cannot make an HTTP client: {e}")))
    }

    /// The HTTP client for `url`: the one whose resolver opens the hosts the settings allow
    /// on one port when `url` reaches its host only through such an entry, else
    /// [`Web::client`].
    pub(crate) fn client_for(&self, url: &Url) -> Result<&reqwest::Client, ToolError> {
        if !opened_for_port_only(url, &self.config) {
            return self.client();
        }
        self.port_client
            .get_or_init(|| build_client(&self.config, &*self.vars, Ports::Listed, false))
            .as_ref()
            .map_err(|e| ToolError::failed(format!("cannot make an HTTP client: {e}")))
    }

    /// The proxy in force, as configured or from the environment.
    pub(crate) fn proxy(&self) -> Option<Proxies> {
        Proxies::of(&self.config, &*self.vars)
    }
}

/// The proxies requests go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proxies {
    /// For https URLs.
    pub https: Option<String>,
    /// For http URLs.
    pub http: Option<String>,
    /// Hosts reached directly (`NO_PROXY`'s syntax).
    pub no_proxy: Option<String>,
}

impl Proxies {
    /// The settings' proxy, else the environment's; `None` when there is none.
    pub fn of(config: &WebConfig, env: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        let var = |names: &[&str]| names.iter().find_map(|n| env(n)).filter(|v| !v.trim().is_empty());
        let no_proxy = config.no_proxy.clone().or_else(|| var(&["NO_PROXY", "no_proxy"]));
        if let Some(proxy) = &config.proxy {
            return Some(Self { https: Some(proxy.clone()), http: Some(proxy.clone()), no_proxy });
        }
        let all = var(&["ALL_PROXY", "all_proxy"]);
        let https = var(&["HTTPS_PROXY", "https_proxy"]).or_else(|| all.clone());
        let http = var(&["HTTP_PROXY", "http_proxy"]).or(all);
        (https.is_some() || http.is_some()).then_some(Self { https, http, no_proxy })
    }

    /// The proxies' hosts, which the resolver lets be private (a proxy usually is).
    fn hosts(&self) -> Vec<String> {
        [&self.https, &self.http]
            .into_iter()
            .flatten()
            .filter_map(|p| Url::parse(p).ok().and_then(|u| u.host_str().map(str::to_string)))
            .collect()
    }
}

fn build_client(
    config: &Arc<WebConfig>,
    vars: &Vars,
    ports: Ports,
    endpoints: bool,
) -> Result<reqwest::Client, String> {
    // rustls needs a process-wide crypto provider; the binary installs one, an embedder may
    // not have.
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let proxies = Proxies::of(config, vars);
    let mut exempt: Vec<String> = proxies.as_ref().map(Proxies::hosts).unwrap_or_default();
    // The search endpoints the settings name are the user's choice, private or not.
    for kind in super::config::SearchProviderKind::ALL {
        if let Some(host) =
            config.search.of(kind).base_url.and_then(|u| Url::parse(&u).ok()?.host_str().map(str::to_string))
        {
            exempt.push(host);
        }
    }
    // For the user's endpoints, so are the channels `Message` sends to and the triggers'
    // hosts (only the user's settings define them).
    if endpoints {
        for channel in config.channels.values() {
            exempt.extend(channel_host(channel, vars));
        }
        for trigger in config.triggers.values() {
            exempt.extend(Url::parse(&trigger.url).ok().and_then(|u| u.host_str().map(str::to_string)));
        }
    }
    let resolver = GuardedResolver::new(Arc::clone(config), HostPatterns::new(exempt), ports);
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .dns_resolver(Arc::new(resolver))
        .no_proxy();
    if let Some(p) = proxies {
        let no_proxy = || p.no_proxy.as_deref().and_then(reqwest::NoProxy::from_string);
        if let Some(https) = &p.https {
            builder = builder
                .proxy(reqwest::Proxy::https(https).map_err(|e| format!("proxy `{https}`: {e}"))?.no_proxy(no_proxy()));
        }
        if let Some(http) = &p.http {
            builder = builder
                .proxy(reqwest::Proxy::http(http).map_err(|e| format!("proxy `{http}`: {e}"))?.no_proxy(no_proxy()));
        }
    }
    builder.build().map_err(|e| e.to_string())
}

/// The host a channel's messages go to, when it is reached over HTTP.
fn channel_host(channel: &super::channels::ChannelConfig, vars: &Vars) -> Option<String> {
    use super::channels::{ChannelConfig, Secret};
    let url = match channel {
        ChannelConfig::Webhook { url, .. } | ChannelConfig::Slack { url } | ChannelConfig::Discord { url } => match url
        {
            Secret::Plain(url) => url.clone(),
            Secret::Env(var) => vars(var)?,
        },
        ChannelConfig::Telegram { api_base, .. } => api_base.clone(),
        ChannelConfig::File { .. } | ChannelConfig::Email(_) => return None,
    };
    Url::parse(url.trim()).ok()?.host_str().map(str::to_string)
}

/// Fetches `url` (already checked): same-site redirects followed (up to [`MAX_REDIRECTS`],
/// a `www.` variant of the host judged by the runtime first), others returned; the body
/// read up to `max_body`; all within the settings' timeout.
pub(crate) async fn fetch(
    web: &Web,
    cx: &ToolContext,
    url: Url,
    accept: &str,
    max_body: usize,
) -> Result<Fetched, ToolError> {
    let limit = web.config().timeout;
    match tokio::time::timeout(limit, follow(web, cx, url.clone(), accept, max_body)).await {
        Ok(fetched) => fetched,
        Err(_) => Err(ToolError::failed(format!(
            "fetching {url} took longer than {} (`web.timeout` in the settings) and was given up; the site may be slow \
             or down: try again later",
            toolbelt_core::human_duration(limit)
        ))),
    }
}

async fn follow(web: &Web, cx: &ToolContext, url: Url, accept: &str, max_body: usize) -> Result<Fetched, ToolError> {
    let proxied = web.proxy().is_some();
    let first_host = url.host_str().unwrap_or_default().to_string();
    let mut judged = vec![first_host.to_ascii_lowercase()];
    let mut seen = vec![url.clone()];
    let mut current = url;
    for _ in 0..=MAX_REDIRECTS {
        if proxied {
            precheck(web.config(), &current).await?;
        }
        let client = web.client_for(&current)?;
        let response =
            client.get(current.clone()).header(ACCEPT, accept).send().await.map_err(|e| explain(&e, &current))?;
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(LOCATION)
        {
            let location = location.to_str().unwrap_or_default();
            let next = current.join(location).map_err(|e| {
                ToolError::failed(format!("{current} redirected to `{location}`, which is not a URL ({e})"))
            })?;
            check_parsed(&next, web.config())
                .map_err(|e| ToolError::failed(format!("{current} redirected to {next}, which is not fetched: {e}")))?;
            let (from_host, to_host) = (current.host_str().unwrap_or_default(), next.host_str().unwrap_or_default());
            if next.scheme() != current.scheme() || !same_site(from_host, to_host) {
                return Ok(Fetched::Redirect { status: status.as_u16(), from: current, to: next });
            }
            if seen.contains(&next) {
                return Err(ToolError::failed(format!(
                    "{} redirects in a loop ({} → {next}); the site is misconfigured, or wants cookies this tool does \
                     not keep",
                    seen[0], current
                )));
            }
            let host = to_host.to_ascii_lowercase();
            if !judged.contains(&host) {
                // `www.` of the host, or the host without it: another name, judged by the runtime.
                cx.authorize(Access::shared().contacts(next.as_str())).await?;
                judged.push(host);
            }
            seen.push(next.clone());
            current = next;
            continue;
        }
        let page = read(response, current, max_body, judged.split_off(1)).await?;
        return Ok(Fetched::Page(Arc::new(page)));
    }
    Err(ToolError::failed(format!(
        "{} redirected more than {MAX_REDIRECTS} times (last to {current}); give up on it or try the last URL",
        seen[0]
    )))
}

/// Behind a proxy the proxy resolves the host, so it is resolved here too: a host that
/// resolves to a private address is refused. One that does not resolve here is left to the
/// proxy (behind many proxies only the proxy can resolve outside names).
async fn precheck(config: &WebConfig, url: &Url) -> Result<(), ToolError> {
    let host = url.host_str().unwrap_or_default();
    if url.host().is_some_and(|h| matches!(h, url::Host::Domain(_)))
        && !private_allowed(host, url.port_or_known_default(), config)
    {
        match resolve(host, false).await {
            Err(e) if e.downcast_ref::<super::guard::PrivateAddress>().is_some() => {
                return Err(ToolError::failed(e.to_string()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The body of `response`, read up to `max_body` bytes.
pub(crate) async fn read(
    mut response: reqwest::Response,
    url: Url,
    max_body: usize,
    other_hosts: Vec<String>,
) -> Result<Page, ToolError> {
    let header = |name| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let content_type = header(CONTENT_TYPE);
    let retry_after = header(RETRY_AFTER);
    let status = response.status();
    let mut body = Vec::new();
    let mut truncated = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = max_body - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    truncated = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) if !body.is_empty() && e.is_body() => {
                return Err(ToolError::failed(format!(
                    "the connection to {} broke after {} of the body ({e}); try again",
                    url.host_str().unwrap_or_default(),
                    human_size(body.len() as u64)
                )));
            }
            Err(e) => return Err(explain(&e, &url)),
        }
    }
    Ok(Page {
        url,
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("").to_string(),
        content_type,
        retry_after,
        body,
        truncated,
        other_hosts,
    })
}

/// What went wrong with a request to `url`, said for the model: which step failed and what
/// to try.
pub(crate) fn explain(e: &reqwest::Error, url: &Url) -> ToolError {
    let host = url.host_str().unwrap_or_default();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(private) = err.downcast_ref::<super::guard::PrivateAddress>() {
            return ToolError::failed(private.to_string());
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return tls_failed(host, tls);
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            // TLS failures come wrapped in I/O errors, whose `source` skips what they wrap.
            if let Some(tls) = wrapped_tls(io) {
                return tls_failed(host, tls);
            }
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return ToolError::failed(format!(
                        "{host} refused the connection (port {}); the server is down or not listening there",
                        url.port_or_known_default().unwrap_or(0)
                    ));
                }
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof => {
                    return ToolError::failed(format!("{host} closed the connection before answering; try again"));
                }
                _ if io.to_string().contains("lookup address") || io.to_string().contains("Name or service") => {
                    return ToolError::failed(format!(
                        "the host {host} could not be resolved ({io}); check its spelling, or whether this machine \
                         can reach the internet"
                    ));
                }
                _ => {}
            }
        }
        source = err.source();
    }
    if e.is_timeout() {
        return ToolError::failed(format!(
            "{host} did not answer in time; the site may be slow or down: try again later"
        ));
    }
    if e.is_connect() {
        return ToolError::failed(format!("could not connect to {host}: {e}"));
    }
    ToolError::failed(format!("fetching {url} failed: {e}"))
}

/// The TLS error inside (I/O errors inside) `io`.
fn wrapped_tls(io: &std::io::Error) -> Option<&rustls::Error> {
    let inner = io.get_ref()?;
    match inner.downcast_ref::<rustls::Error>() {
        Some(tls) => Some(tls),
        None => inner.downcast_ref::<std::io::Error>().and_then(wrapped_tls),
    }
}

/// The error for a TLS handshake with `host` that failed.
fn tls_failed(host: &str, tls: &rustls::Error) -> ToolError {
    let why = match tls {
        rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer) => {
            "its certificate is not signed by an authority trusted here (if every site fails this way, this machine \
             lacks its CA certificates: install the ca-certificates package)"
        }
        rustls::Error::InvalidCertificate(_) => {
            "its certificate is not valid for it or not trusted here (self-signed, expired, or for another name)"
        }
        _ => "the handshake failed",
    };
    ToolError::failed(format!("the secure connection to {host} failed: {why} ({tls}); nothing was fetched"))
}
