//! Connecting a Streamable HTTP server: its headers and bearer token, or its OAuth tokens.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::service::ClientServiceExt as _;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use toolbelt_core::vars::expand_env;
use url::Url;

use super::probe::Probed;
use super::{Unconnected, Upstream};
use crate::client::UpstreamProtocol;
use crate::client::handler::UpstreamHandler;
use crate::client::http_client::http_client;
use crate::client::oauth::{self, Refusal};

impl Upstream {
    pub(super) async fn connect_http(
        &self,
        url: &Url,
        headers: &BTreeMap<String, String>,
        bearer_token_env: Option<&str>,
    ) -> Result<RunningService<RoleClient, UpstreamHandler>, Unconnected> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
        if let Some(var) = bearer_token_env {
            let token = std::env::var(var).map_err(|_| format!("the token variable {var} is not set"))?;
            config = config.auth_header(token);
        }
        for (name, value) in headers {
            let name = name.parse().map_err(|e| format!("header `{name}`: {e}"))?;
            let value = expand_env(value).parse().map_err(|e| format!("header value: {e}"))?;
            config.custom_headers.insert(name, value);
        }
        let refused =
            |e: rmcp::service::ClientInitializeError| self.refused(&e).unwrap_or_else(|| e.to_string().into());
        // A token file that cannot be used (another user's, readable by others) is said, not
        // passed over: the server would only answer that it needs a sign-in.
        let signed_in = match self.config.transport.oauth().zip(self.tokens.as_ref()) {
            Some((settings, file)) => {
                let saved = file.read()?;
                saved.has_tokens().then_some((settings, file, saved))
            }
            None => None,
        };
        if let Some((settings, file, saved)) = signed_in {
            let client = oauth::authorized_client(url, settings, file, saved, http_client()?).await?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            let transport = Probed::new(transport, self.config.protocol == UpstreamProtocol::Auto);
            return self.handler.clone().serve_with_lifecycle(transport, self.lifecycle()).await.map_err(refused);
        }
        let transport = StreamableHttpClientTransport::with_client(http_client()?, config);
        let transport = Probed::new(transport, self.config.protocol == UpstreamProtocol::Auto);
        self.handler.clone().serve_with_lifecycle(transport, self.lifecycle()).await.map_err(refused)
    }

    /// The server's refusal behind `error`, when it refused for want of a sign-in or of scope.
    pub(in crate::client) fn refused(&self, error: &(dyn std::error::Error + 'static)) -> Option<Unconnected> {
        let refusal = Refusal::of(error)?;
        self.forget_unknown_client(error);
        Some(Unconnected::refused(&self.name, refusal))
    }

    /// Forgets a registration the authorization server said it no longer knows.
    fn forget_unknown_client(&self, error: &(dyn std::error::Error + 'static)) {
        if let Some(file) = self.tokens.as_ref().filter(|_| oauth::client_unknown(error))
            && let Err(e) = file.forget_client()
        {
            tracing::warn!(server = %self.name, "cannot forget its unknown client: {e}");
        }
    }

    /// What a call is told when the server refused it for want of a sign-in or of scope; the
    /// scopes it wants are noted for the next sign-in.
    pub(super) fn refusal_of(&self, error: &(dyn std::error::Error + 'static)) -> Option<String> {
        let refusal = Refusal::of(error)?;
        self.forget_unknown_client(error);
        if let (Refusal::Scope(scopes), Some(file)) = (&refusal, &self.tokens)
            && let Err(e) = file.want_scopes(scopes)
        {
            tracing::warn!(server = %self.name, "cannot note the scopes it asked for: {e}");
        }
        Some(refusal.explain(&self.name))
    }

    /// Keeps OAuth tokens where `place` says (toolbelt's state directory, or a team's
    /// database), for servers that sign in.
    pub(in crate::client) fn keeping_tokens(mut self, place: Option<&oauth::store::TokenPlace>) -> Self {
        if let (Some(place), Some(url)) = (place, self.url()) {
            self.tokens = Some(Arc::new(place.file(&self.name, url)));
        }
        self
    }

    fn url(&self) -> Option<&Url> {
        match &self.config.transport {
            crate::client::UpstreamTransport::Http { url, .. } => Some(url),
            crate::client::UpstreamTransport::Stdio { .. } => None,
        }
    }
}
