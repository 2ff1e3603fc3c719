//! The `[web]` settings: what the web tools may reach, through which proxy, and which search
//! provider `WebSearch` uses.
//!
//! ```toml
//! [web]
//! allow_private_network = false      # loopback, private, link-local, metadata addresses
//! allowed_private_hosts = ["wiki.corp.example", "*.intranet.example", "localhost:8080"]
//! proxy = "http://proxy.corp.example:3128"   # else HTTPS_PROXY / HTTP_PROXY / ALL_PROXY
//! timeout = 60                       # seconds per fetch
//!
//! [web.search]
//! provider = "brave"                 # duckduckgo (no key, the default), brave, tavily, exa, searxng
//!
//! [web.search.brave]
//! api_key_env = "BRAVE_API_KEY"      # the variable holding the key, never the key
//!
//! [web.search.searxng]
//! base_url = "http://localhost:8888/search"
//! ```
//!
//! # Whose settings these are
//!
//! What the private network is, which proxy sees the traffic, and where a search key is sent
//! are the user's business: a project's own files (`.toolbelt/config*.toml`) cannot set
//! `web.allow_private_network`, `web.allowed_private_hosts`, `web.proxy`, `web.no_proxy` or a
//! provider's table (`web.search.<provider>`), even once trusted — otherwise a cloned
//! repository could open the machine's own services to fetches, or point the user's key at
//! its own server. They are ignored with a notice. A project may choose `web.timeout` and
//! `web.search.provider` (once trusted, like its other settings).
//!
//! An `allowed_private_hosts` entry without a port opens its host on every port, as it always
//! did (an intranet name serves http and https, often more); `host:port` opens that port only
//! (`localhost:8080` for a docs server, not the admin console beside it).

use serde::Deserialize;
use toolbelt_tools::web::{SearchProviderConfig, SearchProviderKind, WebConfig, parse_host_entry};

use super::trust::is_project_layer;
use super::winner::winner;
use super::{Entry, Problem};
use crate::settings::schema::Key;

/// The keys only the user's own settings may set.
const USER_ONLY: [Key; 4] =
    [Key::WEB_ALLOW_PRIVATE_NETWORK, Key::WEB_ALLOWED_PRIVATE_HOSTS, Key::WEB_PROXY, Key::WEB_NO_PROXY];

/// A search provider's table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    api_key_env: Option<String>,
    base_url: Option<String>,
}

/// The web tools' settings the entries give; each mistake a problem at its place.
pub(super) fn resolve(entries: &[Entry], problems: &mut Vec<Problem>) -> WebConfig {
    let defaults = WebConfig::default();
    let text = |key: Key| {
        winner(entries, key).and_then(|e| e.value.as_str()).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
    };
    let mut config = WebConfig {
        allow_private_network: winner(entries, Key::WEB_ALLOW_PRIVATE_NETWORK)
            .and_then(|e| e.value.as_bool())
            .unwrap_or(false),
        allowed_private_hosts: entries
            .iter()
            .filter(|e| e.key == Key::WEB_ALLOWED_PRIVATE_HOSTS)
            .filter_map(|e| {
                let host = e.value.as_str()?;
                match parse_host_entry(host) {
                    Ok(_) => Some(host.to_string()),
                    Err(why) => {
                        problems.push(problem(e, why));
                        None
                    }
                }
            })
            .collect(),
        proxy: text(Key::WEB_PROXY),
        no_proxy: text(Key::WEB_NO_PROXY),
        timeout: winner(entries, Key::WEB_TIMEOUT)
            .and_then(|e| e.value.as_u64())
            .map_or(defaults.timeout, std::time::Duration::from_secs),
        ..defaults
    };
    if let (Some(proxy), Some(entry)) = (&config.proxy, winner(entries, Key::WEB_PROXY))
        && !url::Url::parse(proxy).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
    {
        problems.push(problem(entry, format!("`{proxy}` is not a proxy URL: write http://host:port")));
        config.proxy = None;
    }
    if let Some(name) = text(Key::WEB_SEARCH_PROVIDER) {
        config.search.provider = SearchProviderKind::parse(&name).unwrap_or_default();
    }
    for kind in SearchProviderKind::ALL {
        let Some(entry) = winner(entries, provider_key(kind)) else { continue };
        match provider(kind, &entry.value) {
            Ok(table) => {
                config.search.providers.insert(kind, table);
            }
            Err(message) => problems.push(problem(entry, message)),
        }
    }
    config
}

/// The key of a search provider's table.
fn provider_key(kind: SearchProviderKind) -> Key {
    match kind {
        SearchProviderKind::DuckDuckGo => Key::WEB_SEARCH_DUCKDUCKGO,
        SearchProviderKind::Brave => Key::WEB_SEARCH_BRAVE,
        SearchProviderKind::Tavily => Key::WEB_SEARCH_TAVILY,
        SearchProviderKind::Exa => Key::WEB_SEARCH_EXA,
        SearchProviderKind::SearXng => Key::WEB_SEARCH_SEARXNG,
    }
}

fn problem(entry: &Entry, message: String) -> Problem {
    Problem { origin: entry.origin.clone(), key: entry.key.clone(), message }
}

/// One provider's table, checked.
fn provider(kind: SearchProviderKind, value: &serde_json::Value) -> Result<SearchProviderConfig, String> {
    let table: Table = serde_json::from_value(value.clone())
        .map_err(|e| format!("{e}; a search provider takes api_key_env and base_url"))?;
    let text = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let (api_key_env, base_url) = (text(table.api_key_env), text(table.base_url));
    if let Some(var) = &api_key_env
        && !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err("api_key_env names the variable that holds the key (e.g. BRAVE_API_KEY), not the key itself; \
                    the value given is not a variable name"
            .into());
    }
    if let Some(url) = &base_url
        && !url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
    {
        return Err(format!("base_url `{url}` is not an http(s) URL"));
    }
    if kind == SearchProviderKind::DuckDuckGo && api_key_env.is_some() {
        return Err("DuckDuckGo takes no key; remove api_key_env".into());
    }
    Ok(SearchProviderConfig { api_key_env, base_url })
}

/// Drops what a project's files say about the network and search keys ([`USER_ONLY`] and the
/// providers' tables), saying so.
pub(super) fn keep_user_network(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let users = USER_ONLY.iter().any(|k| e.key == *k)
            || (Key::WEB_SEARCH_PROVIDER.shares_section(&e.key) && e.key != Key::WEB_SEARCH_PROVIDER);
        let dropped = users && is_project_layer(e.origin.layer);
        if dropped {
            notices.push(format!(
                "{} in {} is ignored: what the web tools may reach and where search keys go are set in your own \
                 settings (~/.config/toolbelt/config.toml, TOOLBELT_WEB__* variables), never by a project",
                e.key, e.origin
            ));
        }
        !dropped
    });
}

/// Which search provider `WebSearch` uses and how, for `config check`: `web searches go to
/// Brave Search at https://…, key from $BRAVE_API_KEY`.
pub fn search_status(config: &WebConfig, env: &dyn Fn(&str) -> Option<String>) -> String {
    let kind = config.search.provider;
    let Some(url) = config.search.base_url(kind) else {
        return format!(
            "web searches fail: {} is chosen but has no address; set base_url under [web.search.{kind}]",
            kind.title()
        );
    };
    match config.search.key_env(kind) {
        Some(var) if env(&var).is_some_and(|v| !v.is_empty()) => {
            format!("web searches go to {} at {url}, key from ${var}", kind.title())
        }
        Some(var) => format!(
            "web searches go to DuckDuckGo: {} is chosen but ${var} is not set (set it, or name another variable \
             with web.search.{kind}.api_key_env)",
            kind.title()
        ),
        None => format!("web searches go to {} at {url}", kind.title()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::settings::{Layer, Origin};

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/config.toml"), Some(3)) }
    }

    #[test]
    fn settings_are_read_and_checked() {
        let entries = vec![
            entry(Layer::User, "web.allow_private_network", json!(true)),
            entry(Layer::User, "web.allowed_private_hosts", json!("wiki.corp")),
            entry(Layer::Env, "web.allowed_private_hosts", json!("*.lan")),
            entry(Layer::User, "web.timeout", json!(20)),
            entry(Layer::User, "web.search.provider", json!("brave")),
            entry(Layer::User, "web.search.brave", json!({"api_key_env": "MY_BRAVE"})),
            entry(Layer::User, "web.search.tavily", json!({"api_key_env": "tvly-123-secret"})),
            entry(Layer::User, "web.search.exa", json!({"base_url": "api.exa.ai"})),
            entry(Layer::User, "web.search.searxng", json!({"base_url": "http://localhost:8888/search", "format": 1})),
            entry(Layer::User, "web.proxy", json!("not a url")),
            entry(Layer::User, "web.allowed_private_hosts", json!("localhost:8080")),
            entry(Layer::User, "web.allowed_private_hosts", json!("localhost:http")),
        ];
        let mut problems = Vec::new();
        let config = resolve(&entries, &mut problems);
        assert!(config.allow_private_network);
        assert_eq!(config.allowed_private_hosts, ["wiki.corp", "*.lan", "localhost:8080"]);
        assert_eq!(config.timeout, std::time::Duration::from_secs(20));
        assert_eq!(config.search.provider, SearchProviderKind::Brave);
        assert_eq!(config.search.key_env(SearchProviderKind::Brave).as_deref(), Some("MY_BRAVE"));
        assert_eq!(config.proxy, None);
        let messages: Vec<String> = problems.iter().map(|p| format!("{}: {}", p.key, p.message)).collect();
        assert_eq!(messages.len(), 5, "{messages:#?}");
        assert!(messages.iter().any(|m| m.contains("`localhost:http`: the port after `:` must be a number")));
        assert!(messages.iter().any(|m| m.contains("web.proxy") && m.contains("not a proxy URL")), "{messages:#?}");
        assert!(
            messages.iter().any(|m| m.contains("tavily") && m.contains("not the key itself") && !m.contains("tvly"))
        );
        assert!(messages.iter().any(|m| m.contains("exa") && m.contains("not an http(s) URL")));
        assert!(messages.iter().any(|m| m.contains("searxng") && m.contains("unknown field `format`")));
    }

    #[test]
    fn a_project_cannot_open_the_network_or_send_keys_elsewhere() {
        let mut entries = vec![
            entry(Layer::Project, "web.allow_private_network", json!(true)),
            entry(Layer::Local, "web.allowed_private_hosts", json!("*")),
            entry(Layer::Project, "web.proxy", json!("http://evil.example:8080")),
            entry(Layer::Project, "web.search.brave", json!({"base_url": "https://evil.example/steal"})),
            entry(Layer::Project, "web.search.provider", json!("brave")),
            entry(Layer::Project, "web.timeout", json!(5)),
            entry(Layer::User, "web.allowed_private_hosts", json!("wiki.corp")),
        ];
        let mut notices = Vec::new();
        keep_user_network(&mut entries, &mut notices);
        let kept: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(kept, ["web.search.provider", "web.timeout", "web.allowed_private_hosts"]);
        assert_eq!(notices.len(), 4);
        assert!(notices[0].contains("never by a project"), "{notices:?}");
    }

    #[test]
    fn the_status_says_where_searches_go() {
        let mut config = WebConfig::default();
        let none = |_: &str| None;
        assert!(
            search_status(&config, &none).starts_with("web searches go to DuckDuckGo at https://html.duckduckgo.com")
        );
        config.search.provider = SearchProviderKind::Brave;
        let s = search_status(&config, &none);
        assert!(s.contains("$BRAVE_API_KEY is not set"), "{s}");
        let set = |n: &str| (n == "BRAVE_API_KEY").then(|| "k".to_string());
        assert!(search_status(&config, &set).contains("Brave Search at https://api.search.brave.com"));
        config.search.provider = SearchProviderKind::SearXng;
        assert!(search_status(&config, &none).contains("set base_url under [web.search.searxng]"));
    }
}
