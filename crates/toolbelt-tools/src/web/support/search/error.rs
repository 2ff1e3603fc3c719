//! Why a search failed, said so that the reader knows what to do next: which provider
//! answered what, in the provider's own words where it gave some.

use toolbelt_core::ToolError;

use crate::web::support::config::SearchProviderKind;

/// Where the settings of search providers are.
const PROVIDER_SETTING: &str = "[web.search] provider";

/// Why a search failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The provider has no public endpoint and none is configured (SearXNG).
    #[error(
        "{} has no public endpoint to default to: set `base_url` under [web.search.{provider}] to the \
         address of an instance, or choose another provider with {PROVIDER_SETTING} = …",
        provider.title()
    )]
    NoBaseUrl {
        /// The provider.
        provider: SearchProviderKind,
    },
    /// The configured endpoint is not an http or https URL.
    #[error(
        "the {provider} base_url `{url}` is not an http or https URL ({reason}); fix it under [web.search.{provider}]"
    )]
    BadBaseUrl {
        /// The provider.
        provider: SearchProviderKind,
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be made.
    #[error("{0}")]
    Client(String),
    /// The request did not get an answer: refused, reset, unresolvable…
    #[error("searching with {}: {message}", provider.title())]
    Transport {
        /// The provider.
        provider: SearchProviderKind,
        /// What went wrong, with what to try.
        message: String,
    },
    /// No answer within the settings' timeout.
    #[error("{} did not answer within {after} (`web.timeout` in the settings); try again later", provider.title())]
    Timeout {
        /// The provider.
        provider: SearchProviderKind,
        /// The timeout, as people write it.
        after: String,
    },
    /// The key was refused (401, 403, or the provider's own code for a bad key).
    #[error(
        "{} refused the key in ${var} ({status}{}); check the key that variable holds, or choose another provider \
         with {PROVIDER_SETTING} = …",
        provider.title(),
        said(message)
    )]
    KeyRefused {
        /// The provider.
        provider: SearchProviderKind,
        /// The variable the key came from.
        var: String,
        /// The status, as `401 Unauthorized`.
        status: String,
        /// What the provider said.
        message: Option<String>,
    },
    /// Too many searches (429).
    #[error("{} is rate-limiting searches ({status}{}); {}", provider.title(), said(message), wait(retry_after.as_deref()))]
    RateLimited {
        /// The provider.
        provider: SearchProviderKind,
        /// The status, as `429 Too Many Requests`.
        status: String,
        /// `Retry-After`, as sent.
        retry_after: Option<String>,
        /// What the provider said.
        message: Option<String>,
    },
    /// The provider failed (5xx).
    #[error(
        "{} failed ({status}{}); try again later, or choose another provider with {PROVIDER_SETTING} = …",
        provider.title(),
        said(message)
    )]
    Failed {
        /// The provider.
        provider: SearchProviderKind,
        /// The status, as `503 Service Unavailable`.
        status: String,
        /// What the provider said.
        message: Option<String>,
    },
    /// The provider refused the search for another reason (another 4xx).
    #[error("{} refused the search ({status}{}); check the query and the filters", provider.title(), said(message))]
    Refused {
        /// The provider.
        provider: SearchProviderKind,
        /// The status.
        status: String,
        /// What the provider said.
        message: Option<String>,
    },
    /// A redirect, which searches do not follow.
    #[error(
        "{} answered {status}, a redirect{}, which searches do not follow; check `base_url` under \
         [web.search.{provider}]",
        provider.title(),
        location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default()
    )]
    Redirected {
        /// The provider.
        provider: SearchProviderKind,
        /// The status.
        status: String,
        /// Where it pointed.
        location: Option<String>,
    },
    /// An answer that is not the provider's documented shape.
    #[error(
        "{} answered {status} with {problem}, not its documented search result; the answer begins: {excerpt}",
        provider.title()
    )]
    Malformed {
        /// The provider.
        provider: SearchProviderKind,
        /// The status.
        status: String,
        /// What the answer was instead.
        problem: String,
        /// Its first characters.
        excerpt: String,
    },
    /// DuckDuckGo answered with its page for bots.
    #[error(
        "DuckDuckGo refused the search (it rate-limits automated queries); try again later or configure another \
         provider: {PROVIDER_SETTING} = \"brave\", \"tavily\", \"exa\" or \"searxng\" (with its key or address)"
    )]
    Blocked,
    /// A SearXNG instance without its JSON format.
    #[error(
        "the SearXNG instance at {url} does not answer in JSON ({what}); its JSON format must be enabled: add `json` \
         to `search.formats` in the instance's settings.yml"
    )]
    JsonDisabled {
        /// The endpoint.
        url: String,
        /// What it answered instead.
        what: String,
    },
}

impl From<SearchError> for ToolError {
    fn from(e: SearchError) -> Self {
        ToolError::failed(e.to_string())
    }
}

/// `: message` when the provider said something.
fn said(message: &Option<String>) -> String {
    message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
}

/// What to wait for, from `Retry-After` (seconds or a date).
fn wait(retry_after: Option<&str>) -> String {
    match retry_after.map(str::trim) {
        Some(s) if s.parse::<u64>().is_ok() => {
            format!("it asks to wait {s} second{} before searching again", if s == "1" { "" } else { "s" })
        }
        Some(date) if !date.is_empty() => format!("it asks to wait until {date} before searching again"),
        _ => "wait a while before searching again".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_provider_the_variable_and_the_wait() {
        let e = SearchError::KeyRefused {
            provider: SearchProviderKind::Brave,
            var: "BRAVE_API_KEY".into(),
            status: "401 Unauthorized".into(),
            message: Some("The provided subscription token is invalid.".into()),
        };
        let text = e.to_string();
        assert!(
            text.starts_with("Brave Search refused the key in $BRAVE_API_KEY (401 Unauthorized: The provided"),
            "{text}"
        );
        let e = SearchError::RateLimited {
            provider: SearchProviderKind::Tavily,
            status: "429 Too Many Requests".into(),
            retry_after: Some("30".into()),
            message: None,
        };
        assert_eq!(
            e.to_string(),
            "Tavily is rate-limiting searches (429 Too Many Requests); it asks to wait 30 seconds before searching again"
        );
        let text = SearchError::NoBaseUrl { provider: SearchProviderKind::SearXng }.to_string();
        assert!(text.contains("[web.search.searxng]"), "{text}");
    }
}
