//! `WebSearch`'s providers: which one a search goes to ([`plan`]), each speaking its own
//! documented API (one file each), and what all of their results go through
//! ([`filters`]).
//!
//! The provider is the settings' choice (`[web.search] provider`). A provider that needs a
//! key reads it from the variable its `api_key_env` names, through [`Web`]'s variables; when
//! that variable is not set the search goes to DuckDuckGo instead, with a notice, so a
//! missing key never leaves the model without a search. Each provider is reached at its
//! `base_url`, the documented endpoint unless the settings point elsewhere (a self-hosted
//! instance, a test server): that endpoint is what the call declares it contacts.

mod answer;
mod brave;
mod duckduckgo;
pub(crate) mod error;
mod exa;
pub(crate) mod filters;
mod searxng;
mod tavily;

use schemars::JsonSchema;
use serde::Serialize;
use url::Url;

use self::error::SearchError;
use self::filters::{Filters, Hit};
use crate::web::support::client::Web;
use crate::web::support::config::SearchProviderKind;

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    pub url: String,
    /// What the provider shows of the page (may be empty).
    pub snippet: String,
}

/// A provider's key and the variable it came from. Its `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    /// The variable.
    pub var: String,
    /// The key.
    value: String,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key(${})", self.var)
    }
}

impl Key {
    /// The key, trimmed.
    fn value(&self) -> &str {
        self.value.trim()
    }
}

/// Where a search goes: the provider, its endpoint and, for those that take one, its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// DuckDuckGo's HTML endpoint.
    DuckDuckGo(Url),
    /// The Brave Search API.
    Brave(Url, Key),
    /// Tavily.
    Tavily(Url, Key),
    /// Exa.
    Exa(Url, Key),
    /// A SearXNG instance's `/search`.
    SearXng(Url),
}

impl Endpoint {
    /// The provider.
    pub fn provider(&self) -> SearchProviderKind {
        match self {
            Self::DuckDuckGo(_) => SearchProviderKind::DuckDuckGo,
            Self::Brave(..) => SearchProviderKind::Brave,
            Self::Tavily(..) => SearchProviderKind::Tavily,
            Self::Exa(..) => SearchProviderKind::Exa,
            Self::SearXng(_) => SearchProviderKind::SearXng,
        }
    }

    /// The URL searches are sent to (without the query).
    pub fn url(&self) -> &Url {
        match self {
            Self::DuckDuckGo(url) | Self::SearXng(url) => url,
            Self::Brave(url, _) | Self::Tavily(url, _) | Self::Exa(url, _) => url,
        }
    }
}

/// Where a search will go, and what the reader should know about the choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The endpoint.
    pub endpoint: Endpoint,
    /// Why it is not the configured one, when it is not.
    pub notices: Vec<String>,
}

/// Where a search goes under `web`'s settings: the configured provider, or DuckDuckGo when
/// that provider's key variable is not set.
pub fn plan(web: &Web) -> Result<Plan, SearchError> {
    let search = &web.config().search;
    let chosen = search.provider;
    let mut notices = Vec::new();
    // Only the providers that take a key read one (an `api_key_env` given to DuckDuckGo or
    // SearXNG is ignored).
    let takes_key = chosen.default_key_env().is_some();
    let key = match search.key_env(chosen).filter(|_| takes_key) {
        None => None,
        Some(var) => match web.var(&var) {
            Some(value) => Some(Key { var, value }),
            None => {
                notices.push(format!("{chosen}'s key (${var}) is not set; searched with DuckDuckGo instead"));
                None
            }
        },
    };
    let provider = if takes_key && key.is_none() { SearchProviderKind::DuckDuckGo } else { chosen };
    let url = endpoint_url(web, provider)?;
    let endpoint = match (provider, key) {
        (SearchProviderKind::Brave, Some(key)) => Endpoint::Brave(url, key),
        (SearchProviderKind::Tavily, Some(key)) => Endpoint::Tavily(url, key),
        (SearchProviderKind::Exa, Some(key)) => Endpoint::Exa(url, key),
        (SearchProviderKind::SearXng, _) => Endpoint::SearXng(searxng::search_path(url)),
        _ => Endpoint::DuckDuckGo(url),
    };
    Ok(Plan { endpoint, notices })
}

/// `provider`'s configured or documented endpoint, checked to be an http or https URL.
fn endpoint_url(web: &Web, provider: SearchProviderKind) -> Result<Url, SearchError> {
    let raw = web.config().search.base_url(provider).ok_or(SearchError::NoBaseUrl { provider })?;
    let bad = |reason: String| SearchError::BadBaseUrl { provider, url: raw.clone(), reason };
    let url = Url::parse(raw.trim()).map_err(|e| bad(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!("the scheme is `{}`", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it names no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("it carries a user name or password; give keys through api_key_env".into()));
    }
    Ok(url)
}

/// A search as the providers take it.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// What to search for, as the model wrote it.
    pub text: &'a str,
    /// The domain filters, sent to the provider as it takes them (and applied to its results
    /// whatever it did with them).
    pub filters: &'a Filters,
    /// How many results to ask for.
    pub count: usize,
}

/// What a provider found.
#[derive(Debug, Default)]
pub struct Found {
    /// The results, as it gave them.
    pub hits: Vec<Hit>,
    /// What the reader should know (engines that did not answer…).
    pub notices: Vec<String>,
}

/// Runs `query` at `endpoint`.
pub async fn search(web: &Web, endpoint: &Endpoint, query: &Query<'_>) -> Result<Found, SearchError> {
    match endpoint {
        Endpoint::DuckDuckGo(url) => duckduckgo::search(web, url, query).await,
        Endpoint::Brave(url, key) => brave::search(web, url, key, query).await,
        Endpoint::Tavily(url, key) => tavily::search(web, url, key, query).await,
        Endpoint::Exa(url, key) => exa::search(web, url, key, query).await,
        Endpoint::SearXng(url) => searxng::search(web, url, query).await,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::web::support::config::{SearchConfig, SearchProviderConfig, WebConfig};

    fn web(provider: SearchProviderKind, base_url: Option<&str>, vars: &[(&str, &str)]) -> Web {
        let mut providers = BTreeMap::new();
        providers.insert(
            provider,
            SearchProviderConfig { api_key_env: Some("TB_KEY".into()), base_url: base_url.map(str::to_string) },
        );
        let config = WebConfig { search: SearchConfig { provider, providers }, ..WebConfig::default() };
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        Web::new(config).with_vars(move |name| vars.get(name).cloned())
    }

    #[test]
    fn a_missing_key_falls_back_to_duckduckgo_with_a_notice() {
        let plan = plan(&web(SearchProviderKind::Brave, None, &[])).unwrap();
        assert_eq!(plan.endpoint.provider(), SearchProviderKind::DuckDuckGo);
        assert_eq!(plan.endpoint.url().as_str(), "https://html.duckduckgo.com/html/");
        assert_eq!(plan.notices, ["brave's key ($TB_KEY) is not set; searched with DuckDuckGo instead"]);
        let blank = plan_of(SearchProviderKind::Exa, &[("TB_KEY", "  ")]);
        assert_eq!(blank.endpoint.provider(), SearchProviderKind::DuckDuckGo, "a blank key is no key");
        let set = plan_of(SearchProviderKind::Tavily, &[("TB_KEY", "tvly-1")]);
        assert_eq!(set.endpoint.url().as_str(), "https://api.tavily.com/search");
        assert!(set.notices.is_empty());
        assert!(!format!("{set:?}").contains("tvly-1"), "keys are not shown");
    }

    fn plan_of(provider: SearchProviderKind, vars: &[(&str, &str)]) -> Plan {
        plan(&web(provider, None, vars)).unwrap()
    }

    #[test]
    fn searxng_needs_an_address_and_searches_at_its_search_path() {
        let e = plan(&web(SearchProviderKind::SearXng, None, &[])).unwrap_err();
        assert!(matches!(e, SearchError::NoBaseUrl { .. }), "{e}");
        let p = plan(&web(SearchProviderKind::SearXng, Some("http://localhost:8888"), &[])).unwrap();
        assert_eq!(p.endpoint.url().as_str(), "http://localhost:8888/search");
        let p = plan(&web(SearchProviderKind::SearXng, Some("https://searx.example/searx/search"), &[])).unwrap();
        assert_eq!(p.endpoint.url().as_str(), "https://searx.example/searx/search");
        let e = plan(&web(SearchProviderKind::SearXng, Some("ftp://searx.example/"), &[])).unwrap_err();
        assert!(e.to_string().contains("not an http or https URL"), "{e}");
    }
}
