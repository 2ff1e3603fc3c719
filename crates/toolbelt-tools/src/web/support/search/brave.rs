//! The Brave Search API: `GET {base}?q=…&count=…` with the key in `X-Subscription-Token`,
//! answered with `{"type": "search", "web": {"results": [{title, url, description}]}}`
//! (`web` absent when nothing was found). Domain filters go into the query as `site:`
//! operators. Errors come as `{"type": "ErrorResponse", "error": {"code", "detail"}}`; a key
//! Brave does not know is `SUBSCRIPTION_TOKEN_INVALID`, sent with 422 as well as 401.

use reqwest::header::ACCEPT;
use serde::Deserialize;
use url::Url;

use super::answer::{Item, client, failure, json, malformed, said, send, succeeded};
use super::error::SearchError;
use super::{Found, Key, Query};
use crate::web::support::client::Web;
use crate::web::support::config::SearchProviderKind;

const PROVIDER: SearchProviderKind = SearchProviderKind::Brave;

/// A web search answer.
#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(rename = "type")]
    kind: Option<String>,
    web: Option<WebResults>,
}

#[derive(Debug, Deserialize)]
struct WebResults {
    #[serde(default)]
    results: Vec<Item>,
}

/// Searches Brave at `endpoint` with `key`.
pub async fn search(web: &Web, endpoint: &Url, key: &Key, query: &Query<'_>) -> Result<Found, SearchError> {
    let mut url = endpoint.clone();
    url.query_pairs_mut()
        .append_pair("q", &query.filters.with_operators(query.text))
        .append_pair("count", &query.count.to_string());
    let request =
        client(web)?.get(url.clone()).header(ACCEPT, "application/json").header("X-Subscription-Token", key.value());
    let page = send(web, PROVIDER, request, &url).await?;
    if !succeeded(&page) {
        let message = said(&page.body, &[&["error", "detail"], &["error", "message"], &["message"]]);
        let code = said(&page.body, &[&["error", "code"]]).unwrap_or_default();
        if code.starts_with("SUBSCRIPTION_TOKEN") && page.status != 429 {
            let status = super::answer::status(&page);
            return Err(SearchError::KeyRefused { provider: PROVIDER, var: key.var.clone(), status, message });
        }
        return Err(failure(PROVIDER, &page, Some(&key.var), message));
    }
    let answer: Answer = json(PROVIDER, &page, "a Brave web search answer")?;
    if answer.web.is_none() && answer.kind.as_deref() != Some("search") {
        return Err(malformed(PROVIDER, &page, "JSON without `web.results`".into()));
    }
    let hits = answer.web.map(|w| w.results).unwrap_or_default().into_iter().filter_map(Item::hit).collect();
    Ok(Found { hits, notices: Vec::new() })
}
