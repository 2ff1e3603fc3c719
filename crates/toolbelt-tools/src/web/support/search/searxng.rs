//! SearXNG: `GET {instance}/search?q=…&format=json`, answered with `{"results": [{title,
//! url, content}], "unresponsive_engines": [[engine, reason]]}`. The JSON format is off
//! unless the instance enables it (`search.formats` in its settings.yml); an instance without
//! it answers 403, or an HTML page, which is said as such. There is no key, no count (the
//! results are cut here) and no domain fields: filters go into the query as `site:`
//! operators, which SearXNG hands to its engines.

use reqwest::header::ACCEPT;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::answer::{Item, client, failure, json, said, send, status, succeeded};
use super::error::SearchError;
use super::{Found, Query};
use crate::web::support::client::Web;
use crate::web::support::config::SearchProviderKind;

const PROVIDER: SearchProviderKind = SearchProviderKind::SearXng;
/// Engines named at most in the notice about engines that did not answer.
const ENGINES_NAMED: usize = 5;

#[derive(Debug, Deserialize)]
struct Answer {
    results: Vec<Item>,
    #[serde(default)]
    unresponsive_engines: Vec<Value>,
}

/// The instance's search endpoint: `base` itself when it already ends in `/search`, else
/// `search` under it (`http://localhost:8888` → `http://localhost:8888/search`).
pub fn search_path(mut base: Url) -> Url {
    if base.path().trim_end_matches('/').ends_with("/search") {
        return base;
    }
    let path = format!("{}/search", base.path().trim_end_matches('/'));
    base.set_path(&path);
    base.set_query(None);
    base
}

/// Searches the SearXNG instance whose search endpoint is `endpoint`.
pub async fn search(web: &Web, endpoint: &Url, query: &Query<'_>) -> Result<Found, SearchError> {
    let mut url = endpoint.clone();
    url.query_pairs_mut().append_pair("q", &query.filters.with_operators(query.text)).append_pair("format", "json");
    let request = client(web)?.get(url.clone()).header(ACCEPT, "application/json");
    let page = send(web, PROVIDER, request, &url).await?;
    let disabled = |what: String| SearchError::JsonDisabled { url: endpoint.to_string(), what };
    if page.status == 403 {
        return Err(disabled(format!("it answered {}", status(&page))));
    }
    if !succeeded(&page) {
        return Err(failure(PROVIDER, &page, None, said(&page.body, &[&["error"], &["message"]])));
    }
    let html = page.content_type.as_deref().is_some_and(|t| t.contains("html"))
        || page.body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<');
    if html {
        return Err(disabled("it answered an HTML page".into()));
    }
    let answer: Answer = json(PROVIDER, &page, "a SearXNG search answer (`results`)")?;
    let hits = answer.results.into_iter().filter_map(Item::hit).collect();
    let mut notices = Vec::new();
    if let Some(notice) = unresponsive(&answer.unresponsive_engines) {
        notices.push(notice);
    }
    Ok(Found { hits, notices })
}

/// The notice naming the instance's engines that did not answer (`[["google", "timeout"]]`).
fn unresponsive(engines: &[Value]) -> Option<String> {
    let named: Vec<String> = engines
        .iter()
        .filter_map(|e| {
            let name = e.get(0)?.as_str()?;
            Some(match e.get(1).and_then(Value::as_str) {
                Some(reason) if !reason.is_empty() => format!("{name} ({reason})"),
                _ => name.to_string(),
            })
        })
        .collect();
    if named.is_empty() {
        return None;
    }
    let more = named.len().saturating_sub(ENGINES_NAMED);
    let mut list = named.into_iter().take(ENGINES_NAMED).collect::<Vec<_>>().join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    Some(format!("some of the instance's engines did not answer: {list}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_that_did_not_answer_are_named() {
        let engines: Vec<Value> = serde_json::from_str(r#"[["google", "timeout"], ["bing", ""], 7]"#).unwrap();
        assert_eq!(
            unresponsive(&engines).unwrap(),
            "some of the instance's engines did not answer: google (timeout), bing"
        );
        assert_eq!(unresponsive(&[]), None);
    }
}
