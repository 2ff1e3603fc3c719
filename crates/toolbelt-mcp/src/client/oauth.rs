//! OAuth for HTTP upstream servers: what remote MCP servers ask of their clients.
//!
//! rmcp's auth support does the protocol (discovery from the server's `WWW-Authenticate`
//! challenge, the protected-resource and authorization-server metadata, client registration,
//! PKCE, the token exchange and its refresh); this module decides when, keeps the tokens
//! ([`store`]) and signs in ([`login`]).
//!
//! - **Connecting.** A server that may sign in ([`UpstreamTransport::oauth`]) and has tokens
//!   is reached through rmcp's `AuthClient`, which sends the token and refreshes it before it
//!   expires, or once after the server refuses it. One without tokens is reached as before.
//! - **Refused.** A `401` (no tokens, or tokens that cannot be refreshed) leaves the server
//!   waiting for a sign-in ([`super::UpstreamState::NeedsLogin`]); a `403`
//!   `insufficient_scope` on a call notes the scopes it asked for, so the next sign-in asks for
//!   them too. Both tell the model to have the user run `toolbelt mcp-servers login NAME`: a
//!   gateway never opens a browser by itself.
//!
//! [`UpstreamTransport::oauth`]: super::UpstreamTransport::oauth

mod callback;
pub mod login;
mod settings;
pub mod store;

use std::error::Error;
use std::sync::Arc;

use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, OAuthClientConfig, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use url::Url;

pub use settings::OAuthSettings;
use store::{FileStore, TokenFile};

/// Where the redirect of a refresh would go: refreshing sends none, but the client needs one.
const NO_REDIRECT: &str = "http://127.0.0.1/callback";

/// What a server's refusal asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A sign-in (401): no tokens, or tokens that no longer work.
    Login,
    /// More access (403 `insufficient_scope`): these scopes.
    Scope(Vec<String>),
}

impl Refusal {
    /// The refusal behind `error`, when an HTTP server's OAuth refusal is what it is.
    pub fn of(error: &(dyn Error + 'static)) -> Option<Refusal> {
        match http_error(error)? {
            StreamableHttpError::AuthRequired(_) => Some(Refusal::Login),
            StreamableHttpError::Auth(e) if sign_in_again(e) => Some(Refusal::Login),
            StreamableHttpError::InsufficientScope(e) => {
                let base = Url::parse("http://localhost/").ok()?;
                let scope = WWWAuthenticateParams::parse(&e.www_authenticate_header, &base).scope.unwrap_or_default();
                Some(Refusal::Scope(scope.split_whitespace().map(str::to_string).collect()))
            }
            _ => None,
        }
    }

    /// What the model (and `toolbelt mcp-servers`) is told: what the server wants, and the
    /// command that gives it.
    pub fn explain(&self, server: &str) -> String {
        match self {
            Refusal::Login => format!(
                "MCP server `{server}` needs you to sign in: ask the user to run `toolbelt mcp-servers login {server}`"
            ),
            Refusal::Scope(scopes) if scopes.is_empty() => format!(
                "MCP server `{server}` refused this call for lack of access: ask the user to run \
                 `toolbelt mcp-servers login {server}` to grant more, then try again"
            ),
            Refusal::Scope(scopes) => format!(
                "MCP server `{server}` needs more access for this call (scope {}): ask the user to run \
                 `toolbelt mcp-servers login {server}` to grant it, then try again",
                scopes.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// Whether the authorization server's answer to a refresh means only a new sign-in helps: it
/// rejected the refresh token (`invalid_grant`), or no longer knows the client
/// (`invalid_client`). A refresh that failed otherwise (the network) is tried again later.
fn sign_in_again(error: &AuthError) -> bool {
    match error {
        AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => true,
        AuthError::TokenRefreshFailed(why) => why.contains("invalid_client") || why.contains("invalid_grant"),
        _ => false,
    }
}

/// Whether `error` says the authorization server no longer knows the client toolbelt
/// registered (`invalid_client` to a refresh): its registration is of no more use.
pub(crate) fn client_unknown(error: &(dyn Error + 'static)) -> bool {
    matches!(http_error(error), Some(StreamableHttpError::Auth(AuthError::TokenRefreshFailed(why))) if why.contains("invalid_client"))
}

/// The HTTP transport's error behind `error` (an rmcp service or start-up error, or one of
/// their sources), when there is one.
fn http_error<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a StreamableHttpError<reqwest::Error>> {
    let mut next: Option<&'a (dyn Error + 'static)> = Some(error);
    while let Some(error) = next {
        if let Some(http) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return Some(http);
        }
        let transport = match error.downcast_ref::<rmcp::ServiceError>() {
            Some(rmcp::ServiceError::TransportSend(transport)) => Some(transport),
            _ => match error.downcast_ref::<rmcp::service::ClientInitializeError>() {
                Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) => Some(error),
                _ => error.downcast_ref::<rmcp::transport::DynamicTransportError>(),
            },
        };
        next = match transport {
            Some(transport) => Some(transport.error.as_ref()),
            None => error.source(),
        };
    }
    None
}

/// The `WWW-Authenticate` challenge behind `error`, when the server refused with one.
pub(crate) fn challenge_of(error: &(dyn Error + 'static)) -> Option<String> {
    http_error(error)?.auth_challenge().map(str::to_string)
}

/// An HTTP client that sends the tokens of `file` (`saved`, as just read), refreshing them as
/// they expire.
pub(crate) async fn authorized_client(
    url: &Url,
    settings: &OAuthSettings,
    file: &Arc<TokenFile>,
    saved: store::Saved,
    http: reqwest::Client,
) -> Result<AuthClient<reqwest::Client>, String> {
    let mut manager = manager(url).await?;
    manager.set_credential_store(FileStore(Arc::clone(file)));
    // Discovers the authorization server again: a refresh needs its metadata, and one that
    // changed (a migration) drops tokens of the old one.
    manager.initialize_from_store().await.map_err(|e| format!("cannot resume the sign-in: {e}"))?;
    // The store gives back the client id only; a confidential client needs its secret too.
    let credentials = saved.credentials.as_ref();
    let client_id = credentials.map(|c| c.client_id.clone()).unwrap_or_default();
    let secret = match saved.registrations.values().find(|r| r.client_id == client_id) {
        Some(registration) => registration.client_secret.clone(),
        None if settings.client_id.as_deref() == Some(client_id.as_str()) => settings.client_secret()?,
        None => None,
    };
    if let Some(secret) = secret {
        manager
            .configure_client(OAuthClientConfig::new(client_id, NO_REDIRECT).with_client_secret(secret))
            .map_err(|e| format!("cannot resume the sign-in: {e}"))?;
    }
    Ok(AuthClient::new(http, manager))
}

/// rmcp's manager for the server at `url`. Addresses the metadata names are filtered as rmcp
/// does (no private or link-local address unless the server's own is one).
async fn manager(url: &Url) -> Result<AuthorizationManager, String> {
    super::http_client::install_tls_provider();
    AuthorizationManager::new(url.as_str()).await.map_err(|e| format!("cannot prepare the sign-in: {e}"))
}
