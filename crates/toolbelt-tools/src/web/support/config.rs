//! Settings of the web tools, set up once by whoever builds the runtime.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

/// The longest a fetch takes by default, redirects and body included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings of `WebFetch` and `WebSearch`, handed to the tools inside a [`crate::web::Web`]
/// service; absent means the defaults: no private network, the proxy of the environment,
/// DuckDuckGo for searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// Let fetches reach loopback, private, link-local and unique-local addresses (and the
    /// cloud metadata address). Off by default: a page or a model could otherwise make
    /// toolbelt read the services of the machine and its network.
    pub allow_private_network: bool,
    /// Hosts that may resolve to private addresses although the private network is closed:
    /// `intranet.example.com`, or `*.corp.example.com` for a domain and its subdomains.
    pub allowed_private_hosts: Vec<String>,
    /// The proxy every request goes through (`http://proxy.example.com:3128`), else the one
    /// of `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` (any case), with `NO_PROXY` honoured.
    pub proxy: Option<String>,
    /// Hosts reached without the proxy (`NO_PROXY`'s syntax), else `NO_PROXY`'s.
    pub no_proxy: Option<String>,
    /// The search provider and each provider's settings.
    pub search: SearchConfig,
    /// The longest one fetch takes, redirects and body included.
    pub timeout: Duration,
    /// Fixed addresses for host names, used instead of DNS (as curl's `--resolve`): for
    /// split-horizon setups and tests. The addresses are checked like resolved ones.
    pub hosts: BTreeMap<String, IpAddr>,
    /// The channels `Message` sends to, by name (only the user's settings define them).
    pub channels: BTreeMap<String, super::channels::ChannelConfig>,
    /// The triggers `RemoteTrigger` calls, by name (only the user's settings define them).
    pub triggers: BTreeMap<String, super::triggers::TriggerConfig>,
}

impl WebConfig {
    /// Every variable the channels and triggers read a secret from (`url_env`, `token_env`,
    /// the e-mail credentials, each `${VAR}` of a header or a template): kept out of the
    /// environment of the commands toolbelt runs, as the search keys are.
    pub fn endpoint_vars(&self) -> Vec<String> {
        use super::channels::{ChannelConfig, Secret};
        let mut vars = Vec::new();
        for channel in self.channels.values() {
            match channel {
                ChannelConfig::Webhook { url, headers } => {
                    if let Secret::Env(var) = url {
                        vars.push(var.clone());
                    }
                    vars.extend(headers.values().flat_map(|h| super::triggers::vars_in(h)));
                }
                ChannelConfig::Slack { url } | ChannelConfig::Discord { url } => {
                    if let Secret::Env(var) = url {
                        vars.push(var.clone());
                    }
                }
                ChannelConfig::Telegram { token_env, .. } => vars.push(token_env.clone()),
                ChannelConfig::Email(mail) => {
                    vars.extend(mail.username_env.iter().chain(mail.password_env.iter()).cloned());
                }
                ChannelConfig::File { .. } => {}
            }
        }
        for trigger in self.triggers.values() {
            let templates = std::iter::once(&trigger.url).chain(trigger.headers.values()).chain(trigger.body.iter());
            vars.extend(templates.flat_map(|t| super::triggers::vars_in(t)));
        }
        vars.sort();
        vars.dedup();
        vars
    }
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            allow_private_network: false,
            allowed_private_hosts: Vec::new(),
            proxy: None,
            no_proxy: None,
            search: SearchConfig::default(),
            timeout: DEFAULT_TIMEOUT,
            hosts: BTreeMap::new(),
            channels: BTreeMap::new(),
            triggers: BTreeMap::new(),
        }
    }
}

/// Which search provider `WebSearch` uses, and how each is reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchConfig {
    /// The provider searches go to.
    pub provider: SearchProviderKind,
    /// Each provider's settings, where given.
    pub providers: BTreeMap<SearchProviderKind, SearchProviderConfig>,
}

/// How one search provider is reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchProviderConfig {
    /// The variable holding the provider's key (never the key itself); each provider has a
    /// usual one ([`SearchProviderKind::default_key_env`]).
    pub api_key_env: Option<String>,
    /// The provider's endpoint, for a self-hosted instance or a test server; each has its
    /// documented one ([`SearchProviderKind::default_base_url`]).
    pub base_url: Option<String>,
}

/// A search provider, each speaking its own documented API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchProviderKind {
    /// DuckDuckGo's HTML endpoint: no key.
    #[default]
    DuckDuckGo,
    /// The Brave Search API (`X-Subscription-Token`).
    Brave,
    /// Tavily (bearer key).
    Tavily,
    /// Exa (`x-api-key`).
    Exa,
    /// A SearXNG instance with its JSON format enabled (no key; its address is required).
    SearXng,
}

impl SearchProviderKind {
    /// Every provider, in the order settings list them.
    pub const ALL: [SearchProviderKind; 5] = [Self::DuckDuckGo, Self::Brave, Self::Tavily, Self::Exa, Self::SearXng];

    /// The names settings use, in [`Self::ALL`]'s order (the settings schema lists these).
    pub const NAMES: [&'static str; 5] = ["duckduckgo", "brave", "tavily", "exa", "searxng"];

    /// The name settings use (`duckduckgo`, `brave`, `tavily`, `exa`, `searxng`).
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The provider of a settings name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The variable its key is usually in; `None` for the providers that take no key.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            Self::DuckDuckGo | Self::SearXng => None,
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
            Self::Exa => Some("EXA_API_KEY"),
        }
    }

    /// Its documented endpoint; `None` for SearXNG, which is always self-hosted.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Self::DuckDuckGo => Some("https://html.duckduckgo.com/html/"),
            Self::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            Self::Tavily => Some("https://api.tavily.com/search"),
            Self::Exa => Some("https://api.exa.ai/search"),
            Self::SearXng => None,
        }
    }

    /// Its name as people write it.
    pub fn title(self) -> &'static str {
        match self {
            Self::DuckDuckGo => "DuckDuckGo",
            Self::Brave => "Brave Search",
            Self::Tavily => "Tavily",
            Self::Exa => "Exa",
            Self::SearXng => "SearXNG",
        }
    }
}

impl std::fmt::Display for SearchProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl SearchConfig {
    /// The settings of `kind`: what is configured, else nothing (the defaults apply).
    pub fn of(&self, kind: SearchProviderKind) -> SearchProviderConfig {
        self.providers.get(&kind).cloned().unwrap_or_default()
    }

    /// The variable `kind`'s key is read from.
    pub fn key_env(&self, kind: SearchProviderKind) -> Option<String> {
        self.of(kind).api_key_env.or_else(|| kind.default_key_env().map(str::to_string))
    }

    /// The endpoint `kind` is reached at.
    pub fn base_url(&self, kind: SearchProviderKind) -> Option<String> {
        self.of(kind).base_url.or_else(|| kind.default_base_url().map(str::to_string))
    }

    /// Every variable a configured provider reads its key from (kept out of shell commands).
    pub fn key_vars(&self) -> Vec<String> {
        SearchProviderKind::ALL.into_iter().filter_map(|k| self.key_env(k)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::SearchProviderKind;

    #[test]
    fn the_wire_names_are_the_settings_names() {
        for kind in SearchProviderKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(kind.as_str()));
            assert_eq!(SearchProviderKind::parse(kind.as_str()), Some(kind));
        }
    }
}
