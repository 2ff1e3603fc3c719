//! `toolbelt mcp-servers login NAME`: signing in to an HTTP server through the browser.
//!
//! 1. The server is met without a token, as a session meets it (`initialize`, then listing
//!    its tools); its `401` names (in `WWW-Authenticate`) where its protected-resource
//!    metadata is, and the scope it wants.
//! 2. rmcp discovers the authorization server from there. One that publishes no metadata is
//!    refused rather than guessed at.
//! 3. The client: the pre-registered one of the settings, else the settings' Client ID
//!    Metadata Document where the authorization server accepts one, else the client toolbelt
//!    registered there before (kept per issuer), else a new registration (dynamic client
//!    registration), kept for next time.
//! 4. The scopes: those of the settings, else those the server names (its challenge, then its
//!    metadata), with those granted before and those a call was refused for since.
//! 5. The authorization URL (PKCE, `state`, `resource`) is printed and opened in the browser
//!    (`$BROWSER`, else the desktop's opener); a loopback listener takes the redirect. A
//!    redirect with another `state` is answered 400 and ignored; one carrying `error` ends the
//!    sign-in with it.
//! 6. The code is exchanged (the `iss` of the redirect checked against the issuer), and the
//!    tokens are kept ([`super::store`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::ClientServiceExt as _;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest, AuthorizationSession,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::mpsc;
use url::Url;

use super::OAuthSettings;
use super::callback;
use super::store::{FileStore, Registration, TokenFile};
use crate::client::UpstreamProtocol;

/// The name toolbelt registers under.
const CLIENT_NAME: &str = "toolbelt";

/// Whether the authorization URL is opened, or only printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    /// `$BROWSER`, else the desktop's opener when there is a display.
    Open,
    /// Printed only (`--no-browser`).
    Print,
}

/// One sign-in to ask for.
#[derive(Debug)]
pub struct Login<'a> {
    /// The server's name in the settings.
    pub name: &'a str,
    /// Its address.
    pub url: &'a Url,
    /// Its `oauth` settings.
    pub settings: &'a OAuthSettings,
    /// The revision of MCP to meet it with (its `protocol` setting).
    pub protocol: UpstreamProtocol,
    /// Where its tokens go.
    pub file: Arc<TokenFile>,
    /// Whether to open the browser.
    pub browser: Browser,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
}

/// A sign-in that worked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SignedIn {
    /// The authorization server (its issuer).
    pub issuer: Option<String>,
    /// How toolbelt is known there: `pre-registered`, `metadata document`, `registered
    /// before`, `registered now`.
    pub client: &'static str,
    /// The scopes asked for.
    pub scopes: Vec<String>,
}

/// Why a sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The server answered without asking for a sign-in.
    #[error("MCP server `{0}` did not ask to sign in (it listed its tools without a token); nothing to do")]
    NotNeeded(String),
    /// The server could not be reached.
    #[error("cannot reach MCP server `{0}`: {1}")]
    Unreachable(String, String),
    /// Its authorization server could not be found or used.
    #[error("cannot find where MCP server `{0}` signs in: {1}")]
    Discovery(String, String),
    /// The settings' client is for another authorization server.
    #[error(
        "the pre-registered client of MCP server `{name}` is for {expected}, but the server now signs in at {found}; \
         check `oauth.issuer` and `oauth.client_id`"
    )]
    OtherIssuer {
        /// The server.
        name: String,
        /// `oauth.issuer`.
        expected: String,
        /// The authorization server found.
        found: String,
    },
    /// Registering toolbelt, or starting the authorization, failed.
    #[error("cannot start signing in to MCP server `{0}`: {1}")]
    Start(String, String),
    /// The loopback listener could not be opened.
    #[error("cannot listen for the browser's return on 127.0.0.1:{0}: {1}; set `oauth.callback_port` to a free port")]
    Listen(u16, String),
    /// The authorization server's address is not one a browser may be sent to.
    #[error(
        "MCP server `{0}` named an authorization address toolbelt will not open ({1}): only https:// \
         addresses, or http:// ones on this machine, are opened or printed"
    )]
    Unsafe(String, String),
    /// The authorization server sent the browser back with an error.
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// The browser did not come back in time.
    #[error(
        "no sign-in came back within {secs} s; run the login again and finish it in the browser (if the \
         authorization server showed an error about the client, sign out with `toolbelt mcp-servers logout {0}` \
         first: that also forgets toolbelt's registration there)",
        secs = .1.as_secs()
    )]
    TimedOut(String, Duration),
    /// Exchanging the code for tokens failed.
    #[error("the sign-in came back, but the tokens could not be obtained: {0}")]
    Exchange(String),
    /// The token file could not be read or written.
    #[error("{0}")]
    Store(String),
}

/// Signs in to the server: prints the authorization URL through `announce`, opens the
/// browser, and waits for it to come back.
pub async fn login(request: Login<'_>, announce: impl Fn(&str)) -> Result<SignedIn, LoginError> {
    let name = request.name.to_string();
    let saved = request.file.read().map_err(LoginError::Store)?;
    let challenge = challenge(request.url, request.protocol, &name).await?;
    let mut manager = super::manager(request.url).await.map_err(|e| LoginError::Discovery(name.clone(), e))?;
    manager.set_credential_store(FileStore(Arc::clone(&request.file)));
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| LoginError::Discovery(name.clone(), e.to_string()))?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(LoginError::Discovery(
            name,
            "it publishes neither protected-resource nor authorization-server metadata".into(),
        ));
    }
    let issuer = resolution.metadata.issuer.clone();
    let cimd = resolution
        .metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    manager.set_metadata(resolution.metadata);

    let settings = request.settings;
    let issuer_key = issuer.clone().unwrap_or_default();
    let kept = saved.registrations.get(&issuer_key).filter(|_| settings.client_id.is_none());
    // The port a kept registration was made for, when no port is set: a server may hold to
    // the exact redirect address it registered.
    let kept_port = kept.and_then(|r| Url::parse(&r.redirect_uri).ok()).and_then(|u| u.port());
    let (listener, kept) = match (settings.callback_port, kept_port) {
        (0, Some(port)) => match bind(port).await {
            Ok(listener) => (listener, kept),
            Err(_) => (bind(0).await?, None),
        },
        (port, _) => (bind(port).await?, kept),
    };
    let port = listener.local_addr().map_err(|e| LoginError::Listen(settings.callback_port, e.to_string()))?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let kept = kept.filter(|r| r.redirect_uri == redirect_uri);

    let scopes = scopes(&manager, settings, &saved).await;
    let auth = AuthorizationRequest::new(&redirect_uri).with_client_name(CLIENT_NAME);
    let auth = if scopes.is_empty() { auth.with_initial_scope_selection() } else { auth.with_scopes(scopes.clone()) };
    let chosen = Chosen { name: &name, issuer: issuer.as_deref(), cimd, kept, redirect_uri: &redirect_uri };
    let (auth, client) = choose_client(auth, &mut manager, settings, chosen, &scopes, &request.file).await?;
    let session = AuthorizationSession::new(manager, auth)
        .await
        .map_err(|(_, e)| LoginError::Start(name.clone(), e.to_string()))?;
    let auth_url = session.get_authorization_url().to_string();
    // The address comes from the server's metadata: anything but a web page (a `file:` path, a
    // scheme some program on the desktop handles) is neither opened nor offered.
    if let Some(refused) = unsafe_address(&auth_url) {
        return Err(LoginError::Unsafe(name, refused));
    }
    let asked = query(&auth_url, "scope").map(|s| s.split_whitespace().map(str::to_string).collect());
    let state = query(&auth_url, "state").unwrap_or_default();

    let (sender, mut returned) = mpsc::channel(1);
    let server = tokio::spawn(callback::serve(listener, port, state, sender));
    announce(&auth_url);
    if request.browser == Browser::Open {
        open_browser(&auth_url);
    }
    let outcome = tokio::time::timeout(request.timeout, returned.recv()).await;
    server.abort();
    let callback = match outcome {
        Err(_) | Ok(None) => return Err(LoginError::TimedOut(name, request.timeout)),
        Ok(Some(Err(refused))) => return Err(LoginError::Refused(refused)),
        Ok(Some(Ok(callback))) => callback,
    };
    session
        .handle_callback_with_issuer(&callback.code, &callback.state, callback.iss.as_deref())
        .await
        .map_err(|e| LoginError::Exchange(e.to_string()))?;
    request.file.update(|s| s.wanted_scopes.clear()).map_err(LoginError::Store)?;
    Ok(SignedIn { issuer, client, scopes: asked.unwrap_or_default() })
}

/// What the client is chosen from.
struct Chosen<'a> {
    name: &'a str,
    issuer: Option<&'a str>,
    /// Whether the authorization server accepts Client ID Metadata Documents.
    cimd: bool,
    /// toolbelt's registration there, kept from an earlier sign-in.
    kept: Option<&'a Registration>,
    redirect_uri: &'a str,
}

/// The client to sign in as, and how toolbelt is known there: the settings' pre-registered
/// one, else the settings' metadata document where it is accepted, else toolbelt's
/// registration there (kept, or made now and kept).
async fn choose_client(
    mut auth: AuthorizationRequest,
    manager: &mut AuthorizationManager,
    settings: &OAuthSettings,
    chosen: Chosen<'_>,
    scopes: &[String],
    file: &TokenFile,
) -> Result<(AuthorizationRequest, &'static str), LoginError> {
    let name = chosen.name.to_string();
    if let Some(client_id) = &settings.client_id {
        if let (Some(expected), Some(found)) = (&settings.issuer, chosen.issuer)
            && expected.trim_end_matches('/') != found.trim_end_matches('/')
        {
            return Err(LoginError::OtherIssuer { name, expected: expected.clone(), found: found.to_string() });
        }
        auth = auth.with_preregistered_client(client_id);
        if let Some(secret) = settings.client_secret().map_err(|e| LoginError::Start(name, e))? {
            auth = auth.with_client_secret(secret);
        }
        return Ok((auth, "pre-registered"));
    }
    if let Some(url) = settings.client_metadata_url.as_ref().filter(|_| chosen.cimd) {
        return Ok((auth.with_client_metadata_url(url), "metadata document"));
    }
    let (registration, how) = match chosen.kept {
        Some(registration) => (registration.clone(), "registered before"),
        None => {
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let config = manager
                .register_client(CLIENT_NAME, chosen.redirect_uri, &refs)
                .await
                .map_err(|e| LoginError::Start(name, format!("registering toolbelt failed: {e}")))?;
            let registration = Registration {
                client_id: config.client_id,
                client_secret: config.client_secret,
                redirect_uri: chosen.redirect_uri.to_string(),
            };
            let (key, kept) = (chosen.issuer.unwrap_or_default().to_string(), registration.clone());
            file.update(|s| _ = s.registrations.insert(key, kept)).map_err(LoginError::Store)?;
            (registration, "registered now")
        }
    };
    auth = auth.with_preregistered_client(registration.client_id);
    if let Some(secret) = registration.client_secret {
        auth = auth.with_client_secret(secret);
    }
    Ok((auth, how))
}

/// What is wrong with sending a browser to `url`, when something is: it must be https://, or
/// http:// on this machine (a development server, a loopback test).
fn unsafe_address(url: &str) -> Option<String> {
    let Ok(parsed) = Url::parse(url) else { return Some("not a URL".into()) };
    let local = match parsed.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match parsed.scheme() {
        "https" if parsed.host().is_some() => None,
        "http" if local => None,
        scheme => {
            Some(format!("a {scheme}: address{}", parsed.host_str().map(|h| format!(" at {h}")).unwrap_or_default()))
        }
    }
}

/// The value of `key` in the query of `url`.
fn query(url: &str, key: &str) -> Option<String> {
    Url::parse(url).ok()?.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
}

/// The scopes to ask for: the settings', else the server's with those granted and wanted since.
async fn scopes(manager: &AuthorizationManager, settings: &OAuthSettings, saved: &super::store::Saved) -> Vec<String> {
    if let Some(scopes) = &settings.scopes {
        return scopes.clone();
    }
    let mut scopes = manager.select_initial_scopes(&[]).await;
    let granted = saved.credentials.iter().flat_map(|c| c.granted_scopes.iter());
    for scope in granted.chain(&saved.wanted_scopes) {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    scopes
}

/// The server's challenge to a client without a token, as a real session meets it: at
/// `initialize`, or at the first listing of its tools (servers differ on which they guard).
/// `None` when its refusal names nothing.
async fn challenge(url: &Url, protocol: UpstreamProtocol, name: &str) -> Result<Option<String>, LoginError> {
    let http = crate::client::http_client::http_client().map_err(|e| LoginError::Unreachable(name.into(), e))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let refused = |e: &(dyn std::error::Error + 'static)| match super::Refusal::of(e) {
        Some(_) => Ok(super::challenge_of(e)),
        None => Err(LoginError::Unreachable(name.into(), e.to_string())),
    };
    let running =
        match tokio::time::timeout(Duration::from_secs(30), ().serve_with_lifecycle(transport, protocol.lifecycle()))
            .await
        {
            Err(_) => return Err(LoginError::Unreachable(name.into(), "no answer within 30 s".into())),
            Ok(Err(e)) => return refused(&e),
            Ok(Ok(running)) => running,
        };
    let listed = tokio::time::timeout(Duration::from_secs(30), running.list_tools(None)).await;
    let _ = running.cancel().await;
    match listed {
        Err(_) => Err(LoginError::Unreachable(name.into(), "no answer to listing its tools within 30 s".into())),
        Ok(Err(e)) => refused(&e),
        Ok(Ok(_)) => Err(LoginError::NotNeeded(name.into())),
    }
}

pub(super) async fn bind(port: u16) -> Result<tokio::net::TcpListener, LoginError> {
    tokio::net::TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| LoginError::Listen(port, e.to_string()))
}

/// Opens `url` in `$BROWSER` (a program and its arguments, `%s` standing for the URL, or the
/// URL appended), else with the desktop's opener when there is a display. Never through a
/// shell.
fn open_browser(url: &str) {
    let command: Vec<String> = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => {
            let mut words: Vec<String> = browser.split_whitespace().map(str::to_string).collect();
            if words.iter().any(|w| w.contains("%s")) {
                words.iter_mut().for_each(|w| *w = w.replace("%s", url));
            } else {
                words.push(url.to_string());
            }
            words
        }
        _ if cfg!(target_os = "macos") => vec!["open".into(), url.into()],
        _ if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() => {
            vec!["xdg-open".into(), url.into()]
        }
        _ => return,
    };
    let Some((program, args)) = command.split_first() else { return };
    let spawned = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    match spawned {
        Ok(mut child) => {
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
        Err(e) => tracing::warn!("cannot open the browser with `{program}`: {e}; open the address printed above"),
    }
}

#[cfg(test)]
mod tests {
    use super::unsafe_address;

    #[test]
    fn only_web_pages_are_opened() {
        for fine in
            ["https://auth.example.com/authorize?x=1", "http://127.0.0.1:9/a", "http://localhost:9/a", "http://[::1]/a"]
        {
            assert_eq!(unsafe_address(fine), None, "{fine}");
        }
        let refused = |url: &str| unsafe_address(url).unwrap();
        assert_eq!(refused("http://auth.example.com/authorize"), "a http: address at auth.example.com");
        assert_eq!(refused("file:///etc/passwd?code=1"), "a file: address");
        assert_eq!(refused("smb://evil.example/share"), "a smb: address at evil.example");
        assert_eq!(refused("javascript:alert(1)"), "a javascript: address");
        assert_eq!(refused("http://localhost.evil.example/a"), "a http: address at localhost.evil.example");
    }
}
