//! What every provider's results go through: the domain filters (a domain covers its
//! subdomains), the `site:` operators that carry them to providers without domain fields,
//! duplicates dropped, and titles and snippets made plain text of a bounded length.

use std::collections::HashSet;

use url::Url;

use super::SearchResult;
use crate::web::support::html::flatten;

/// Characters of a title kept.
pub const MAX_TITLE_CHARS: usize = 200;
/// Characters of a snippet kept.
pub const MAX_SNIPPET_CHARS: usize = 400;

/// Which domains results may come from: none of `blocked`, and, when `allowed` is not
/// empty, one of `allowed`. Each domain covers its subdomains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// Domains results must be under (any when empty).
    pub allowed: Vec<String>,
    /// Domains results must not be under.
    pub blocked: Vec<String>,
}

impl Filters {
    /// The filters of the lists the model gave, each domain normalized (lower case, IDNA,
    /// without a scheme, path, `*.` or trailing dot); an entry that is not a domain is an
    /// error naming it and its list.
    pub fn new(allowed: &[String], blocked: &[String]) -> Result<Self, String> {
        let list = |items: &[String], name: &str| -> Result<Vec<String>, String> {
            let mut out: Vec<String> = Vec::new();
            for item in items {
                let domain = normalize(item).ok_or_else(|| {
                    format!("`{item}` in {name} is not a domain; give host names such as example.com (which covers its subdomains)")
                })?;
                if !out.contains(&domain) {
                    out.push(domain);
                }
            }
            Ok(out)
        };
        Ok(Self { allowed: list(allowed, "allowed_domains")?, blocked: list(blocked, "blocked_domains")? })
    }

    /// Whether a result on `host` is kept: not under a blocked domain, and under an allowed
    /// one when there are any.
    pub fn admits(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let under = |domain: &String| host == *domain || host.ends_with(&format!(".{domain}"));
        !self.blocked.iter().any(under) && (self.allowed.is_empty() || self.allowed.iter().any(under))
    }

    /// `query` with the filters as search operators, for providers without domain fields:
    /// `site:a` or `(site:a OR site:b)` for the allowed domains, `-site:c` for each blocked one.
    pub fn with_operators(&self, query: &str) -> String {
        let mut out = query.trim().to_string();
        match self.allowed.as_slice() {
            [] => {}
            [one] => out.push_str(&format!(" site:{one}")),
            many => {
                let sites: Vec<String> = many.iter().map(|d| format!("site:{d}")).collect();
                out.push_str(&format!(" ({})", sites.join(" OR ")));
            }
        }
        for domain in &self.blocked {
            out.push_str(&format!(" -site:{domain}"));
        }
        out
    }
}

/// `raw` as a bare domain, or `None` when it is not one.
fn normalize(raw: &str) -> Option<String> {
    let mut d = raw.trim().to_lowercase();
    for scheme in ["https://", "http://"] {
        if let Some(rest) = d.strip_prefix(scheme) {
            d = rest.to_string();
        }
    }
    if let Some(end) = d.find(['/', '?', '#']) {
        d.truncate(end);
    }
    let d = d.trim_start_matches("*.").trim_start_matches('.').trim_end_matches('.');
    if d.is_empty() || d.contains(['*', ':', '@']) {
        return None;
    }
    match url::Host::parse(d).ok()? {
        url::Host::Domain(domain) if domain.split('.').all(|label| !label.is_empty()) => Some(domain),
        url::Host::Domain(_) => None,
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(_) => None,
    }
}

/// A raw result as a provider gave it, before it is checked and cleaned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hit {
    /// The title (may hold HTML).
    pub title: String,
    /// The URL.
    pub url: String,
    /// The snippet (may hold HTML).
    pub snippet: String,
}

/// What became of a provider's hits.
#[derive(Debug, Default)]
pub struct Kept {
    /// The results kept, in the provider's order.
    pub results: Vec<SearchResult>,
    /// Hits dropped by the domain filters.
    pub filtered: usize,
    /// Hits dropped as duplicates of earlier ones.
    pub duplicates: usize,
}

/// `hits` checked (http or https URLs only), filtered, deduplicated and cut to `count`.
pub fn keep(hits: Vec<Hit>, filters: &Filters, count: usize) -> Kept {
    let mut kept = Kept::default();
    let mut seen = HashSet::new();
    for hit in hits {
        if kept.results.len() == count {
            break;
        }
        let Ok(url) = Url::parse(hit.url.trim()) else { continue };
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        let Some(host) = url.host_str() else { continue };
        if !filters.admits(host) {
            kept.filtered += 1;
            continue;
        }
        if !seen.insert(same_page(&url)) {
            kept.duplicates += 1;
            continue;
        }
        let title = clean(&hit.title, MAX_TITLE_CHARS);
        let title = if title.is_empty() { host.to_string() } else { title };
        kept.results.push(SearchResult {
            title,
            url: url.to_string(),
            snippet: clean(&hit.snippet, MAX_SNIPPET_CHARS),
        });
    }
    kept
}

/// What makes two URLs the same page for deduplication: the host without `www.`, the port,
/// the path without a trailing slash and the query; the scheme and fragment do not count.
fn same_page(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    let host = host.strip_prefix("www.").unwrap_or(host);
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let path = url.path().trim_end_matches('/');
    let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{host}{port}{path}{query}")
}

/// `text` as one line of plain text (tags dropped, entities decoded, spaces squeezed), cut
/// at `max` characters.
pub fn clean(text: &str, max: usize) -> String {
    let plain = if text.contains(['<', '&']) { flatten(text).text } else { text.to_string() };
    let words: Vec<&str> = plain.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|i| (*i).to_string()).collect()
    }

    #[test]
    fn domains_are_normalized_and_cover_their_subdomains() {
        let f = Filters::new(&s(&["https://Docs.RS/tokio", "*.rust-lang.org", "rust-lang.org"]), &s(&["ads.docs.rs"]))
            .unwrap();
        assert_eq!(f.allowed, ["docs.rs", "rust-lang.org"]);
        assert!(f.admits("docs.rs") && f.admits("www.rust-lang.org") && f.admits("blog.rust-lang.org."));
        assert!(!f.admits("ads.docs.rs"), "blocked wins over allowed");
        assert!(!f.admits("notdocs.rs") && !f.admits("example.com"));
        let e = Filters::new(&s(&["not a domain"]), &[]).unwrap_err();
        assert!(e.contains("`not a domain` in allowed_domains"), "{e}");
        assert!(Filters::new(&[], &s(&["*"])).is_err());
        assert!(Filters::new(&[], &s(&["a..b"])).is_err());
    }

    #[test]
    fn operators_carry_the_filters_into_the_query() {
        let f = Filters::new(&s(&["a.com", "b.org"]), &s(&["c.net"])).unwrap();
        assert_eq!(f.with_operators("rust "), "rust (site:a.com OR site:b.org) -site:c.net");
        let one = Filters::new(&s(&["a.com"]), &[]).unwrap();
        assert_eq!(one.with_operators("rust"), "rust site:a.com");
        assert_eq!(Filters::default().with_operators("rust"), "rust");
    }

    #[test]
    fn duplicates_filtered_and_extra_hits_are_dropped() {
        let hit =
            |url: &str| Hit { title: format!("<b>T</b> &amp; {url}"), url: url.into(), snippet: "a  b\n c".into() };
        let hits = vec![
            hit("https://www.example.com/a/"),
            hit("http://example.com/a#part"),
            hit("https://example.com/a?x=1"),
            hit("javascript:alert(1)"),
            hit("https://blocked.example.org/"),
            hit("https://example.com/b"),
            hit("https://example.com/c"),
        ];
        let filters = Filters::new(&[], &s(&["example.org"])).unwrap();
        let kept = keep(hits, &filters, 3);
        let urls: Vec<&str> = kept.results.iter().map(|r| r.url.as_str()).collect();
        assert_eq!(urls, ["https://www.example.com/a/", "https://example.com/a?x=1", "https://example.com/b"]);
        assert_eq!((kept.filtered, kept.duplicates), (1, 1));
        assert_eq!(kept.results[0].title, "T & https://www.example.com/a/");
        assert_eq!(kept.results[0].snippet, "a b c");
    }

    #[test]
    fn long_text_is_cut() {
        let long = "word ".repeat(200);
        let cut = clean(&long, 50);
        assert!(cut.chars().count() <= 50 && cut.ends_with('…'), "{cut}");
    }
}
