//! Tavily: `POST {base}` with `{query, max_results, include_domains, exclude_domains}` and
//! `Authorization: Bearer <key>`, answered with `{"results": [{title, url, content}]}`.
//! Errors come as `{"detail": {"error": "…"}}`.

use reqwest::header::AUTHORIZATION;
use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::answer::{Item, failure, json, post_json, said, send, succeeded};
use super::error::SearchError;
use super::{Found, Key, Query};
use crate::web::support::client::Web;
use crate::web::support::config::SearchProviderKind;

const PROVIDER: SearchProviderKind = SearchProviderKind::Tavily;

#[derive(Debug, Deserialize)]
struct Answer {
    results: Vec<Item>,
}

/// Searches Tavily at `endpoint` with `key`.
pub async fn search(web: &Web, endpoint: &Url, key: &Key, query: &Query<'_>) -> Result<Found, SearchError> {
    let mut body = json!({"query": query.text.trim(), "max_results": query.count});
    if !query.filters.allowed.is_empty() {
        body["include_domains"] = json!(query.filters.allowed);
    }
    if !query.filters.blocked.is_empty() {
        body["exclude_domains"] = json!(query.filters.blocked);
    }
    let request = post_json(web, endpoint, (AUTHORIZATION, format!("Bearer {}", key.value())), &body)?;
    let page = send(web, PROVIDER, request, endpoint).await?;
    if !succeeded(&page) {
        let message = said(&page.body, &[&["detail", "error"], &["detail"], &["error"], &["message"]]);
        return Err(failure(PROVIDER, &page, Some(&key.var), message));
    }
    let answer: Answer = json(PROVIDER, &page, "a Tavily search answer (`results`)")?;
    let hits = answer.results.into_iter().filter_map(Item::hit).collect();
    Ok(Found { hits, notices: Vec::new() })
}
