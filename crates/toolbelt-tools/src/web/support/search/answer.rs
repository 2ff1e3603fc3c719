//! Sending a search and reading the answer: one request within the settings' timeout (no
//! redirects followed), the answer read up to [`MAX_ANSWER`], a failing status turned into
//! the error it means with the provider's own message quoted.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, LOCATION};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbelt_core::human_size;
use url::Url;

use super::error::SearchError;
use super::filters::{Hit, clean};
use crate::web::support::client::{Web, explain, read};
use crate::web::support::config::SearchProviderKind;
use crate::web::support::fetched::Page;

/// Bytes of a provider's answer read at most.
pub const MAX_ANSWER: usize = 4 * 1024 * 1024;
/// Characters of an unexpected answer quoted in an error.
const EXCERPT_CHARS: usize = 200;
/// Characters of a provider's error message quoted.
const MESSAGE_CHARS: usize = 300;

/// The web tools' HTTP client, for a search.
pub fn client(web: &Web) -> Result<&reqwest::Client, SearchError> {
    web.client().map_err(|e| SearchError::Client(e.to_string()))
}

/// A JSON `body` POSTed to `endpoint`, authenticated by the header `auth`.
pub fn post_json(
    web: &Web,
    endpoint: &Url,
    auth: (HeaderName, String),
    body: &Value,
) -> Result<reqwest::RequestBuilder, SearchError> {
    Ok(client(web)?
        .post(endpoint.clone())
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/json")
        .header(auth.0, auth.1)
        .body(body.to_string()))
}

/// A result as most providers give it: a title, a URL and a text (`content`, Brave's
/// `description`).
#[derive(Debug, Deserialize)]
pub struct Item {
    title: Option<String>,
    url: Option<String>,
    #[serde(alias = "description")]
    content: Option<String>,
}

impl Item {
    /// The hit, when the item has a URL.
    pub fn hit(self) -> Option<Hit> {
        Some(Hit { url: self.url?, title: self.title.unwrap_or_default(), snippet: self.content.unwrap_or_default() })
    }
}

/// Sends `request` (to `url`, an endpoint of `provider`) and reads the answer, all within
/// the settings' timeout. A redirect is an error: endpoints are configured, not discovered.
pub async fn send(
    web: &Web,
    provider: SearchProviderKind,
    request: reqwest::RequestBuilder,
    url: &Url,
) -> Result<Page, SearchError> {
    let limit = web.config().timeout;
    let exchange = async {
        let response = request
            .send()
            .await
            .map_err(|e| SearchError::Transport { provider, message: explain(&e, url).to_string() })?;
        if response.status().is_redirection() {
            let location = response.headers().get(LOCATION).and_then(|l| l.to_str().ok()).map(str::to_string);
            let status = response.status();
            let status = format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or_default());
            return Err(SearchError::Redirected { provider, status: status.trim().to_string(), location });
        }
        read(response, url.clone(), MAX_ANSWER, Vec::new())
            .await
            .map_err(|e| SearchError::Transport { provider, message: e.to_string() })
    };
    match tokio::time::timeout(limit, exchange).await {
        Ok(answer) => answer,
        Err(_) => Err(SearchError::Timeout { provider, after: toolbelt_core::human_duration(limit) }),
    }
}

/// `page`'s status as people read it: `401 Unauthorized`.
pub fn status(page: &Page) -> String {
    format!("{} {}", page.status, page.reason).trim().to_string()
}

/// Whether `page` has a success status.
pub fn succeeded(page: &Page) -> bool {
    (200..300).contains(&page.status)
}

/// The error a failing `page` from `provider` means. `key_var` names the variable a keyed
/// provider's key came from; `message` is what the provider said, from its error shape.
pub fn failure(
    provider: SearchProviderKind,
    page: &Page,
    key_var: Option<&str>,
    message: Option<String>,
) -> SearchError {
    let status = status(page);
    match (page.status, key_var) {
        (401 | 403, Some(var)) => SearchError::KeyRefused { provider, var: var.to_string(), status, message },
        (429, _) => SearchError::RateLimited { provider, status, retry_after: page.retry_after.clone(), message },
        (500..=599, _) => SearchError::Failed { provider, status, message },
        _ => SearchError::Refused { provider, status, message },
    }
}

/// The body of `page` as `T`, the provider's documented result (`expected` names it for the
/// error when it is not).
pub fn json<T: DeserializeOwned>(provider: SearchProviderKind, page: &Page, expected: &str) -> Result<T, SearchError> {
    if page.truncated {
        return Err(malformed(provider, page, format!("an answer over {}", human_size(MAX_ANSWER as u64))));
    }
    serde_json::from_slice(&page.body).map_err(|e| {
        let problem = match e.classify() {
            serde_json::error::Category::Data => format!("JSON that is not {expected} ({e})"),
            _ => format!("a body that is not JSON ({e})"),
        };
        malformed(provider, page, problem)
    })
}

/// The error for an answer from `provider` that is not its documented shape.
pub fn malformed(provider: SearchProviderKind, page: &Page, problem: String) -> SearchError {
    SearchError::Malformed { provider, status: status(page), problem, excerpt: excerpt(&page.body) }
}

/// The first characters of `body`, on one line.
pub fn excerpt(body: &[u8]) -> String {
    let head = &body[..body.len().min(EXCERPT_CHARS * 4)];
    let text = clean_raw(&String::from_utf8_lossy(head), EXCERPT_CHARS);
    if text.is_empty() { "(nothing)".to_string() } else { text }
}

/// What a provider said in its error answer: the first string found at one of `paths` in
/// its JSON (`["error", "detail"]` is `error.detail`), else the body itself when it is
/// short plain text. An HTML error page says nothing worth quoting.
pub fn said(body: &[u8], paths: &[&[&str]]) -> Option<String> {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        return paths
            .iter()
            .find_map(|path| path.iter().try_fold(&value, |v, key| v.get(key))?.as_str().map(str::to_string))
            .map(|m| clean(&m, MESSAGE_CHARS))
            .filter(|m| !m.is_empty());
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(MESSAGE_CHARS * 4)]).trim().to_string();
    (!text.is_empty() && !text.starts_with('<')).then(|| clean_raw(&text, MESSAGE_CHARS))
}

/// `text` on one line, cut at `max` characters, without reading it as HTML.
fn clean_raw(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    format!("{}…", line.chars().take(max.saturating_sub(1)).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_messages_are_found_where_they_put_them() {
        let brave = br#"{"type":"ErrorResponse","error":{"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan."}}"#;
        assert_eq!(said(brave, &[&["error", "detail"]]).as_deref(), Some("Request rate limit exceeded for plan."));
        let tavily = br#"{"detail":{"error":"Unauthorized: missing or invalid API key."}}"#;
        assert_eq!(
            said(tavily, &[&["detail", "error"], &["detail"]]).as_deref(),
            Some("Unauthorized: missing or invalid API key.")
        );
        assert_eq!(said(b"  upstream   timed out ", &[]).as_deref(), Some("upstream timed out"));
        assert_eq!(said(b"<html><body>Bad gateway</body></html>", &[]), None);
        assert_eq!(said(br#"{"other": 1}"#, &[&["error"]]), None);
    }
}
