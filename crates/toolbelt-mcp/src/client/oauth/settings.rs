//! `[mcp.servers.NAME.oauth]`: how toolbelt signs in to an HTTP server that asks for OAuth.
//!
//! Every `url` server without `bearer_token_env` or an `Authorization` header may ask; these
//! keys only say how to answer. With none of them set, toolbelt discovers the authorization
//! server and registers itself there (dynamic client registration). The camel-case names of
//! `.mcp.json` (`clientId`, `callbackPort`) are read too.

use serde::Deserialize;
use url::Url;

/// How to sign in to one HTTP server.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuthSettings {
    /// `false` never signs in: a server that asks is reported as refusing.
    pub enabled: bool,
    /// A client id registered with the authorization server beforehand; no registration
    /// is made then.
    #[serde(alias = "clientId")]
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret.
    #[serde(alias = "clientSecretEnv")]
    pub client_secret_env: Option<String>,
    /// The only authorization server (its issuer) the pre-registered client is sent to.
    pub issuer: Option<String>,
    /// The HTTPS address of a Client ID Metadata Document describing toolbelt, used as the
    /// client id where the authorization server accepts such documents.
    #[serde(alias = "clientMetadataUrl")]
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for; unset, those the server names (its challenge, then its
    /// metadata), with any it asked for later.
    pub scopes: Option<Vec<String>>,
    /// The loopback port the browser is sent back to (0: any free port).
    #[serde(alias = "callbackPort")]
    pub callback_port: u16,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            client_id: None,
            client_secret_env: None,
            issuer: None,
            client_metadata_url: None,
            scopes: None,
            callback_port: 0,
        }
    }
}

impl OAuthSettings {
    /// Checks what cannot work, saying what to write instead.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.client_secret_env.is_some() && self.client_id.is_none() {
            return Err(
                "`oauth.client_secret_env` needs `oauth.client_id`: a secret belongs to a registered client".into()
            );
        }
        if let Some(url) = &self.client_metadata_url {
            let parsed =
                Url::parse(url).map_err(|e| format!("`oauth.client_metadata_url` `{url}` is not a URL: {e}"))?;
            if parsed.scheme() != "https" || parsed.path() == "/" {
                return Err(format!(
                    "`oauth.client_metadata_url` `{url}` must be an https:// address with a path (the client's \
                     metadata document)"
                ));
            }
        }
        if let Some(scopes) = &self.scopes
            && scopes.iter().any(|s| s.is_empty() || s.contains(char::is_whitespace))
        {
            return Err("`oauth.scopes` lists one scope per string, without spaces".into());
        }
        Ok(())
    }

    /// The client secret, read from `client_secret_env`; an error names the unset variable.
    pub fn client_secret(&self) -> Result<Option<String>, String> {
        let Some(var) = &self.client_secret_env else { return Ok(None) };
        std::env::var(var)
            .map(Some)
            .map_err(|_| format!("the client secret variable {var} (`oauth.client_secret_env`) is not set"))
    }
}
