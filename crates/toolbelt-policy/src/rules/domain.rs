//! `domain:` specifiers (`WebFetch(domain:*.example.com)`, an HTTP tool's `weather(domain:…)`):
//! a host, or a host and its subdomains, matched against the URLs a call contacts.

use super::RuleProblem;

/// A `domain:` specifier: a host, or `*.host` for the host and its subdomains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DomainPattern {
    host: String,
    subdomains: bool,
}

impl DomainPattern {
    pub(super) fn parse(spec: &str) -> Result<Self, RuleProblem> {
        let spec = spec.trim().to_ascii_lowercase();
        let (host, subdomains) = match spec.strip_prefix("*.") {
            Some(rest) => (rest.to_string(), true),
            None => (spec, false),
        };
        if host.is_empty() || !host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':')) {
            return Err(RuleProblem::BadDomain(host));
        }
        Ok(Self { host, subdomains })
    }

    pub(super) fn matches_url(&self, url: &str) -> bool {
        let Some(host) = host_of(url) else { return false };
        host == self.host || (self.subdomains && host.ends_with(&format!(".{}", self.host)))
    }
}

/// The lowercase host of a URL, or of a bare host name.
pub fn host_of(url: &str) -> Option<String> {
    match url::Url::parse(url) {
        Ok(u) => u.host_str().map(|h| h.trim_end_matches('.').to_ascii_lowercase()),
        Err(_) if !url.contains('/') && !url.is_empty() => Some(url.trim_end_matches('.').to_ascii_lowercase()),
        Err(_) => None,
    }
}
