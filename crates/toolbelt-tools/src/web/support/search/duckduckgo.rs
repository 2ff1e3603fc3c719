//! DuckDuckGo's HTML endpoint, which needs no key: the form its own page posts (`POST
//! {base}` with `q=…`), answered with a results page. Each result is an element of class
//! `result` holding a link `a.result__a` (its `href` a redirect,
//! `//duckduckgo.com/l/?uddg=<the URL, percent-encoded>&…`, or the URL itself) and a
//! `.result__snippet`; ads (`result--ad`) are skipped. Domain filters go into the query as
//! `site:` operators. There is no count: one page of results comes back, cut here.
//!
//! DuckDuckGo answers queries it takes for automated ones with a challenge page (status 202,
//! or a page with an "anomaly" form and no results); that is said as a refusal, never as
//! "no results".

use dom_query::Document;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use url::Url;

use super::answer::{client, failure, malformed, said, send, succeeded};
use super::error::SearchError;
use super::filters::Hit;
use super::{Found, Query};
use crate::web::support::client::Web;
use crate::web::support::config::SearchProviderKind;
use crate::web::support::decode::decode;
use crate::web::support::html::{MAX_DEPTH, nesting_depth};

const PROVIDER: SearchProviderKind = SearchProviderKind::DuckDuckGo;
/// What the links of a results page are relative to.
const SITE: &str = "https://duckduckgo.com/";

/// What a results page held.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    /// Results.
    Results(Vec<Hit>),
    /// A results page saying there are none.
    Nothing,
    /// The challenge page for automated queries.
    Blocked,
    /// Not a results page at all.
    Unknown,
}

/// Searches DuckDuckGo at `endpoint`.
pub async fn search(web: &Web, endpoint: &Url, query: &Query<'_>) -> Result<Found, SearchError> {
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("q", &query.filters.with_operators(query.text))
        .finish();
    let request = client(web)?
        .post(endpoint.clone())
        .header(ACCEPT, "text/html")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form);
    let page = send(web, PROVIDER, request, endpoint).await?;
    // 202 is how DuckDuckGo answers with its challenge; 403 is a refusal of this client.
    if matches!(page.status, 202 | 403) {
        return Err(SearchError::Blocked);
    }
    if !succeeded(&page) {
        return Err(failure(PROVIDER, &page, None, said(&page.body, &[])));
    }
    let (html, _) = decode(&page.body, page.content_type.as_deref(), true);
    if nesting_depth(&html) > MAX_DEPTH {
        return Err(malformed(PROVIDER, &page, "a page nested too deeply to be a results page".into()));
    }
    // The tree is built off the async threads; a panic in it is an unreadable page.
    let parsed = tokio::task::spawn_blocking(move || parse(&html)).await;
    match parsed {
        Ok(Parsed::Results(hits)) => Ok(Found { hits, notices: Vec::new() }),
        Ok(Parsed::Nothing) => Ok(Found::default()),
        Ok(Parsed::Blocked) => Err(SearchError::Blocked),
        Ok(Parsed::Unknown) => Err(malformed(PROVIDER, &page, "a page that is not a results page".into())),
        Err(_) => Err(malformed(PROVIDER, &page, "a page that could not be read".into())),
    }
}

/// The results of a results page, or what the page is instead.
fn parse(html: &str) -> Parsed {
    let doc = Document::from(html);
    let mut hits = Vec::new();
    for result in doc.select(".result").iter() {
        if result.has_class("result--ad") {
            continue;
        }
        let link = result.select("a.result__a").first();
        let Some(url) = link.attr("href").and_then(|href| target(&href)) else { continue };
        let snippet = result.select(".result__snippet").first().text().to_string();
        hits.push(Hit { title: link.text().to_string(), url, snippet });
    }
    if hits.is_empty() {
        // Links outside the usual containers, without snippets.
        for link in doc.select("a.result__a").iter() {
            if let Some(url) = link.attr("href").and_then(|href| target(&href)) {
                hits.push(Hit { title: link.text().to_string(), url, snippet: String::new() });
            }
        }
    }
    if !hits.is_empty() {
        return Parsed::Results(hits);
    }
    if doc.select("#challenge-form, .anomaly-modal, form[action*=anomaly]").exists() || html.contains("anomaly.js") {
        return Parsed::Blocked;
    }
    if doc.select(".no-results, #links, .results, .serp__results").exists() {
        return Parsed::Nothing;
    }
    Parsed::Unknown
}

/// Where a result link leads: the `uddg` parameter of a redirect through DuckDuckGo, else
/// the link itself; `None` for ads and links that lead nowhere useful.
fn target(href: &str) -> Option<String> {
    let base = Url::parse(SITE).ok()?;
    let url = base.join(href.trim()).ok()?;
    let on_ddg = url.host_str().is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    if !on_ddg {
        return Some(url.to_string());
    }
    if url.path() == "/l/" || url.path() == "/l" {
        return url.query_pairs().find(|(k, _)| k == "uddg").map(|(_, v)| v.into_owned());
    }
    // Ads (`/y.js`) and DuckDuckGo's own pages.
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_links_lead_to_their_target() {
        assert_eq!(
            target("//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.rs%2Ftokio%2Flatest%2F&rut=abc").as_deref(),
            Some("https://docs.rs/tokio/latest/")
        );
        assert_eq!(target("https://example.com/a?b=1").as_deref(), Some("https://example.com/a?b=1"));
        assert_eq!(target("//duckduckgo.com/y.js?ad_domain=shop.example&u3=x"), None);
        assert_eq!(target("/l/?kh=-1"), None);
    }

    #[test]
    fn pages_are_told_apart() {
        let results = r#"<div id="links" class="results">
            <div class="result results_links web-result"><div class="links_main result__body">
              <h2 class="result__title"><a rel="nofollow" class="result__a"
                 href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F&amp;rut=1">Tokio - <b>async</b> Rust</a></h2>
              <a class="result__snippet" href="x">A runtime for <b>asynchronous</b> applications.</a></div></div>
            <div class="result result--ad"><a class="result__a" href="https://ads.example/">Buy</a></div>
          </div>"#;
        let Parsed::Results(hits) = parse(results) else { panic!("no results") };
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].url, "https://tokio.rs/");
        assert_eq!(hits[0].title, "Tokio - async Rust");
        assert_eq!(hits[0].snippet, "A runtime for asynchronous applications.");
        assert_eq!(
            parse(r#"<div id="links" class="results"><div class="no-results">No results.</div></div>"#),
            Parsed::Nothing
        );
        let challenge = r#"<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html"></form>"#;
        assert_eq!(parse(challenge), Parsed::Blocked);
        assert_eq!(parse("<html><body><h1>Welcome to nginx!</h1></body></html>"), Parsed::Unknown);
    }
}
