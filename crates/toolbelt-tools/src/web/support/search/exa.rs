//! Exa: `POST {base}` with `{query, numResults, includeDomains, excludeDomains, contents}`
//! and the key in `x-api-key`, answered with `{"results": [{title, url, text, highlights,
//! summary}]}`. The start of each page's text is asked for (`contents.text.maxCharacters`)
//! to serve as its snippet; highlights or a summary, when Exa sends them, are preferred.
//! Errors come as `{"error": "…", "tag": "…"}`.

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::answer::{failure, json, post_json, said, send, succeeded};
use super::error::SearchError;
use super::filters::{Hit, MAX_SNIPPET_CHARS};
use super::{Found, Key, Query};
use crate::web::support::client::Web;
use crate::web::support::config::SearchProviderKind;

const PROVIDER: SearchProviderKind = SearchProviderKind::Exa;

#[derive(Debug, Deserialize)]
struct Answer {
    results: Vec<Item>,
}

#[derive(Debug, Deserialize)]
struct Item {
    title: Option<String>,
    url: Option<String>,
    text: Option<String>,
    highlights: Option<Vec<String>>,
    summary: Option<String>,
}

/// Searches Exa at `endpoint` with `key`.
pub async fn search(web: &Web, endpoint: &Url, key: &Key, query: &Query<'_>) -> Result<Found, SearchError> {
    let mut body = json!({
        "query": query.text.trim(),
        "numResults": query.count,
        "contents": {"text": {"maxCharacters": MAX_SNIPPET_CHARS}},
    });
    if !query.filters.allowed.is_empty() {
        body["includeDomains"] = json!(query.filters.allowed);
    }
    if !query.filters.blocked.is_empty() {
        body["excludeDomains"] = json!(query.filters.blocked);
    }
    let auth = (reqwest::header::HeaderName::from_static("x-api-key"), key.value().to_string());
    let request = post_json(web, endpoint, auth, &body)?;
    let page = send(web, PROVIDER, request, endpoint).await?;
    if !succeeded(&page) {
        let message = said(&page.body, &[&["error"], &["message"], &["error", "message"]]);
        return Err(failure(PROVIDER, &page, Some(&key.var), message));
    }
    let answer: Answer = json(PROVIDER, &page, "an Exa search answer (`results`)")?;
    let hits = answer
        .results
        .into_iter()
        .filter_map(|item| {
            let highlight = item.highlights.and_then(|h| h.into_iter().find(|s| !s.trim().is_empty()));
            let snippet = highlight.or(item.summary.filter(|s| !s.trim().is_empty())).or(item.text).unwrap_or_default();
            Some(Hit { url: item.url?, title: item.title.unwrap_or_default(), snippet })
        })
        .collect();
    Ok(Found { hits, notices: Vec::new() })
}
