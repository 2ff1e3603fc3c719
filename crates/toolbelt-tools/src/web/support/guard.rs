//! What a URL may be, and which addresses a fetch may reach.
//!
//! A page, a search result or the model itself can name any URL, so before anything is sent
//! the URL is checked (http or https, no credentials, not too long) and, unless the private
//! network is opened in the settings, the address it leads to must be public. The check is
//! made on the addresses the connection will use: the resolver that hands addresses to the
//! HTTP client refuses a host with any non-public address ([`super::resolver`]), so a name
//! that resolves to a public address for a check and to 127.0.0.1 for the connection
//! (DNS rebinding) has no window. IP literals never reach a resolver and are checked here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use super::config::WebConfig;

/// The longest URL taken, in characters.
pub const MAX_URL_CHARS: usize = 2_000;

/// Why a URL is refused before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("`{url}` is not a URL ({reason}); give a whole URL such as https://example.com/page")]
    Invalid {
        /// The text given (cut).
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// A scheme other than http and https.
    #[error("`{scheme}:` URLs are not fetched; only http and https")]
    Scheme {
        /// The scheme.
        scheme: String,
    },
    /// Longer than [`MAX_URL_CHARS`].
    #[error("the URL has {chars} characters, over the {max} allowed")]
    TooLong {
        /// Its length.
        chars: usize,
        /// The limit.
        max: usize,
    },
    /// A user name or password in the URL.
    #[error("URLs with a user name or password are refused (credentials would be sent to the site and kept in logs)")]
    Credentials,
    /// No host.
    #[error("the URL names no host")]
    NoHost,
    /// An address outside the public internet.
    #[error("{0}")]
    Private(PrivateAddress),
}

/// A host that leads to an address outside the public internet, with what kind it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateAddress {
    /// The host as the URL names it.
    pub host: String,
    /// The address it is or resolves to.
    pub addr: IpAddr,
    /// What kind of address (`loopback`, `private`, `link-local`…).
    pub kind: &'static str,
}

impl std::fmt::Display for PrivateAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let leads = if self.host.trim_matches(['[', ']']) == self.addr.to_string() {
            format!("{} is a {} address", self.host, self.kind)
        } else if loopback_name(&self.host) {
            format!("{} names this machine (every `localhost` name is a loopback address)", self.host)
        } else {
            format!("{} resolves to {}, which is a {} address", self.host, self.addr, self.kind)
        };
        write!(
            f,
            "{leads}; the web tools do not reach private networks. If this host is meant to be reached, add it to \
             `web.allowed_private_hosts` (`host`, or `host:port` for one port) or set \
             `web.allow_private_network = true` in the user's settings (or TOOLBELT_WEB__ALLOW_PRIVATE_NETWORK=true)"
        )
    }
}

impl std::error::Error for PrivateAddress {}

/// One entry of `allowed_private_hosts`: a host (`intranet.example`, `*.corp.example`, an
/// address) and the one port it is open on, or every port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostPattern {
    /// Lower-cased, without a trailing dot or IPv6 brackets.
    host: String,
    /// `None`: every port.
    port: Option<u16>,
}

impl HostPattern {
    fn host_matches(&self, host: &str) -> bool {
        match self.host.strip_prefix("*.") {
            Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
            None => host == self.host,
        }
    }
}

/// Reads one `allowed_private_hosts` entry: `host` (every port), `host:port`, `*.domain`,
/// `*.domain:port`, an IPv4 address with or without a port, an IPv6 address bare or in
/// brackets (`[fd00::1]:8080`). Why it cannot be read, otherwise.
pub fn parse_host_entry(entry: &str) -> Result<(String, Option<u16>), String> {
    let entry = entry.trim();
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| format!("`{entry}` opens `[` without closing it"))?;
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(format!("`{entry}`: only `:port` may follow `]`")),
            },
        }
    } else if entry.matches(':').count() == 1 {
        let (host, port) = entry.split_once(':').unwrap_or((entry, ""));
        (host, Some(port))
    } else {
        (entry, None)
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err(format!("`{entry}` names no host; write `host`, `*.domain` or `host:port`"));
    }
    let port = match port {
        None => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(format!("`{entry}`: the port after `:` must be a number from 1 to 65535")),
        },
    };
    Ok((host, port))
}

/// Host names as `allowed_private_hosts` lists them: `host`, or `*.domain` for the domain
/// and every subdomain, each on every port or, written `host:port`, on that port only.
/// Entries that cannot be read are left out (the settings report them).
#[derive(Debug, Clone, Default)]
pub struct HostPatterns(Vec<HostPattern>);

impl HostPatterns {
    /// The patterns of `hosts`, lower-cased.
    pub fn new<S: AsRef<str>>(hosts: impl IntoIterator<Item = S>) -> Self {
        Self(
            hosts
                .into_iter()
                .filter_map(|h| parse_host_entry(h.as_ref()).ok())
                .map(|(host, port)| HostPattern { host, port })
                .collect(),
        )
    }

    /// Whether `host` matches a pattern open on every port.
    pub fn matches(&self, host: &str) -> bool {
        let host = folded(host);
        self.0.iter().any(|p| p.port.is_none() && p.host_matches(&host))
    }

    /// Whether `host` on `port` matches a pattern (one on every port, or on that one).
    pub fn matches_at(&self, host: &str, port: Option<u16>) -> bool {
        let host = folded(host);
        self.0.iter().any(|p| p.host_matches(&host) && (p.port.is_none() || p.port == port))
    }

    /// Whether `host` matches a pattern on some port (for a resolver that only ever serves
    /// URLs whose port was checked already).
    pub fn matches_some_port(&self, host: &str) -> bool {
        let host = folded(host);
        self.0.iter().any(|p| p.host_matches(&host))
    }
}

/// `host` as patterns compare it: lower-cased, without a trailing dot or IPv6 brackets.
fn folded(host: &str) -> String {
    host.trim_end_matches('.').trim_matches(['[', ']']).to_ascii_lowercase()
}

/// Whether `host` is `localhost` or a name beneath it (`foo.localhost`), in any case, with or
/// without the root's trailing dot: names that are this machine by definition (RFC 6761),
/// refused without asking a resolver.
pub fn loopback_name(host: &str) -> bool {
    let host = folded(host);
    host == "localhost" || host.ends_with(".localhost")
}

/// `raw` as the URL a fetch may go to: parsed, http or https, at most [`MAX_URL_CHARS`],
/// without credentials, `http` upgraded to `https` except for hosts that are reached
/// privately (loopback, and private hosts the settings allow), and an IP literal checked.
pub fn check_url(raw: &str, config: &WebConfig) -> Result<Url, UrlError> {
    let raw = raw.trim();
    let chars = raw.chars().count();
    if chars > MAX_URL_CHARS {
        return Err(UrlError::TooLong { chars, max: MAX_URL_CHARS });
    }
    let mut url = Url::parse(raw)
        .map_err(|e| UrlError::Invalid { url: raw.chars().take(200).collect(), reason: e.to_string() })?;
    check_parsed(&url, config)?;
    if url.scheme() == "http" && !stays_plain(&url, config) {
        // Infallible for an http URL with a host; kept as is otherwise.
        let _ = url.set_scheme("https");
    }
    Ok(url)
}

/// The checks of [`check_url`] on a parsed URL (a redirect's target): scheme, credentials,
/// host, and an IP literal's address.
pub fn check_parsed(url: &Url, config: &WebConfig) -> Result<(), UrlError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme { scheme: url.scheme().to_string() });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::Credentials);
    }
    let host = url.host().ok_or(UrlError::NoHost)?;
    let name = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default();
    let refused = match &host {
        Host::Domain(d) if loopback_name(d) => Some((IpAddr::V4(Ipv4Addr::LOCALHOST), "loopback")),
        _ => literal(&host).and_then(|ip| non_public(ip).map(|kind| (ip, kind))),
    };
    if let Some((addr, kind)) = refused
        && !private_allowed(name, port, config)
    {
        return Err(UrlError::Private(PrivateAddress { host: name.to_string(), addr, kind }));
    }
    Ok(())
}

/// Whether `host` on `port` may lead to a private address under `config` (`port` `None`:
/// whichever port, so only entries open on every port count).
pub fn private_allowed(host: &str, port: Option<u16>, config: &WebConfig) -> bool {
    config.allow_private_network || HostPatterns::new(&config.allowed_private_hosts).matches_at(host, port)
}

/// Whether `url` reaches a private host only through an `allowed_private_hosts` entry for its
/// port: such a URL goes through the client whose resolver opens those hosts (which sees
/// names, never ports).
pub fn opened_for_port_only(url: &Url, config: &WebConfig) -> bool {
    let host = url.host_str().unwrap_or_default();
    !config.allow_private_network
        && !HostPatterns::new(&config.allowed_private_hosts).matches(host)
        && private_allowed(host, url.port_or_known_default(), config)
}

/// Whether an http URL stays http: loopback (`localhost`, 127.0.0.0/8, ::1), private
/// addresses (reached only with the settings' leave) and the private hosts the settings
/// allow, where TLS is rarely set up. Anything else is upgraded to https.
fn stays_plain(url: &Url, config: &WebConfig) -> bool {
    let loopback = matches!(url.host(), Some(Host::Domain(d)) if loopback_name(d));
    let private_literal = url.host().as_ref().and_then(literal).is_some_and(|ip| non_public(ip).is_some());
    loopback
        || private_literal
        || HostPatterns::new(&config.allowed_private_hosts)
            .matches_at(url.host_str().unwrap_or_default(), url.port_or_known_default())
}

fn literal(host: &Host<&str>) -> Option<IpAddr> {
    match host {
        Host::Ipv4(v4) => Some(IpAddr::V4(*v4)),
        Host::Ipv6(v6) => Some(IpAddr::V6(*v6)),
        Host::Domain(_) => None,
    }
}

/// What kind of non-public address `ip` is, or `None` for a public one. IPv6 forms that
/// carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "cloud metadata",
        (127, _, _) => "loopback",
        (0, _, _) => "unspecified (\"this network\")",
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => "private",
        (169, 254, _) => "link-local",
        (100, 64..=127, _) => "shared (carrier-grade NAT)",
        (192, 0, 0) => "IETF protocol assignment",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    let seg = ip.segments();
    if ip.is_loopback() {
        return Some("loopback");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    Some(match seg[0] {
        // ::a.b.c.d, the deprecated IPv4-compatible form.
        0 if seg[1..6].iter().all(|s| *s == 0) => return non_public_v4(embedded_v4(seg[6], seg[7])),
        // NAT64 (64:ff9b::/96) reaches the IPv4 address it carries.
        0x64 if seg[1] == 0xff9b && seg[2..6].iter().all(|s| *s == 0) => {
            return non_public_v4(embedded_v4(seg[6], seg[7]));
        }
        // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
        0x2002 => return non_public_v4(embedded_v4(seg[1], seg[2])),
        s if s & 0xfe00 == 0xfc00 => "unique-local",
        s if s & 0xffc0 == 0xfe80 => "link-local",
        s if s & 0xffc0 == 0xfec0 => "site-local",
        s if s & 0xff00 == 0xff00 => "multicast",
        0x2001 if seg[1] == 0x0db8 => "documentation",
        _ => return None,
    })
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

/// Whether two hosts are the same site for redirects: equal, or equal once a leading
/// `www.` is dropped from either.
pub fn same_site(a: &str, b: &str) -> bool {
    let bare = |h: &str| {
        let h = h.trim_end_matches('.').to_ascii_lowercase();
        h.strip_prefix("www.").map(str::to_string).unwrap_or(h)
    };
    bare(a) == bare(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> WebConfig {
        WebConfig::default()
    }

    fn kind(url: &str) -> Option<&'static str> {
        match check_url(url, &config()) {
            Err(UrlError::Private(p)) => Some(p.kind),
            _ => None,
        }
    }

    #[test]
    fn literals_outside_the_public_internet_are_refused_in_every_spelling() {
        assert_eq!(kind("http://127.0.0.1/"), Some("loopback"));
        assert_eq!(kind("http://2130706433/"), Some("loopback"), "a decimal IPv4 address");
        assert_eq!(kind("http://0x7f.1/"), Some("loopback"), "a hex, shortened IPv4 address");
        assert_eq!(kind("http://[::1]/"), Some("loopback"));
        assert_eq!(kind("http://[::ffff:127.0.0.1]/"), Some("loopback"), "IPv4-mapped");
        assert_eq!(kind("http://[::ffff:7f00:1]/"), Some("loopback"), "IPv4-mapped in hex");
        assert_eq!(kind("http://[64:ff9b::a9fe:a9fe]/"), Some("cloud metadata"), "NAT64");
        assert_eq!(kind("http://[2002:c0a8:0101::1]/"), Some("private"), "6to4 of 192.168.1.1");
        assert_eq!(kind("http://169.254.169.254/latest/meta-data/"), Some("cloud metadata"));
        assert_eq!(kind("http://10.1.2.3/"), Some("private"));
        assert_eq!(kind("http://172.31.0.1/"), Some("private"));
        assert_eq!(kind("http://192.168.0.1/"), Some("private"));
        assert_eq!(kind("http://100.100.100.200/"), Some("shared (carrier-grade NAT)"));
        assert_eq!(kind("http://0.0.0.0/"), Some("unspecified (\"this network\")"));
        assert_eq!(kind("http://[fd00::1]/"), Some("unique-local"));
        assert_eq!(kind("http://[fe80::1]/"), Some("link-local"));
        assert_eq!(kind("http://8.8.8.8/"), None);
        assert_eq!(kind("http://[2606:4700::1111]/"), None);
        assert_eq!(kind("http://172.32.0.1/"), None, "just outside 172.16/12");
    }

    #[test]
    fn urls_are_checked_and_upgraded() {
        let c = config();
        assert_eq!(check_url("http://example.com/a?b=1", &c).unwrap().as_str(), "https://example.com/a?b=1");
        assert!(matches!(check_url("ftp://example.com/", &c), Err(UrlError::Scheme { .. })));
        assert!(matches!(check_url("file:///etc/passwd", &c), Err(UrlError::Scheme { .. })));
        assert!(matches!(check_url("https://user:pw@example.com/", &c), Err(UrlError::Credentials)));
        assert!(matches!(check_url("example.com", &c), Err(UrlError::Invalid { .. })));
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(matches!(check_url(&long, &c), Err(UrlError::TooLong { .. })));
        // Loopback stays plain once allowed; so does an allowed private host.
        let open = WebConfig { allow_private_network: true, ..WebConfig::default() };
        assert_eq!(check_url("http://127.0.0.1:8080/x", &open).unwrap().scheme(), "http");
        assert_eq!(check_url("http://localhost:8080/x", &open).unwrap().scheme(), "http");
        assert_eq!(check_url("http://example.com/", &open).unwrap().scheme(), "https");
        let intranet = WebConfig { allowed_private_hosts: vec!["*.corp.example".into()], ..WebConfig::default() };
        assert_eq!(check_url("http://wiki.corp.example/", &intranet).unwrap().scheme(), "http");
        assert_eq!(check_url("http://example.com/", &intranet).unwrap().scheme(), "https");
    }

    #[test]
    fn host_patterns_and_sites() {
        let p = HostPatterns::new(["intranet.example", "*.corp.example"]);
        assert!(p.matches("intranet.example") && p.matches("INTRANET.example."));
        assert!(p.matches("corp.example") && p.matches("a.b.corp.example"));
        assert!(!p.matches("notcorp.example") && !p.matches("example"));
        // A port narrows an entry to that port.
        let p = HostPatterns::new(["localhost:8080", "*.lan:443", "[fd00::1]:81", "fd00::2", "10.0.0.1:22"]);
        assert!(p.matches_at("localhost", Some(8080)) && p.matches_at("LOCALHOST.", Some(8080)));
        assert!(!p.matches_at("localhost", Some(8081)) && !p.matches_at("localhost", None));
        assert!(!p.matches("localhost") && p.matches_some_port("localhost"));
        assert!(p.matches_at("a.lan", Some(443)) && !p.matches_at("a.lan", Some(80)));
        assert!(p.matches_at("[fd00::1]", Some(81)) && !p.matches_at("[fd00::1]", Some(80)));
        assert!(p.matches("[fd00::2]") && p.matches_at("fd00::2", Some(1)));
        assert!(p.matches_at("10.0.0.1", Some(22)) && !p.matches_at("10.0.0.1", Some(23)));
        for bad in ["localhost:http", "localhost:0", "localhost:70000", ":80", "[fd00::1", "[fd00::1]x"] {
            assert!(parse_host_entry(bad).is_err(), "{bad}");
        }
        assert!(same_site("www.example.com", "example.com") && same_site("Example.com", "example.com."));
        assert!(!same_site("docs.example.com", "example.com"));
    }

    #[test]
    fn loopback_names_are_refused_without_a_lookup() {
        for url in [
            "http://localhost/",
            "http://localhost./",
            "http://LOCALHOST./x",
            "http://foo.localhost./",
            "http://a.b.Localhost:8/",
        ] {
            let e = check_url(url, &config()).unwrap_err().to_string();
            assert!(e.contains("names this machine") && e.contains("host:port"), "{url}: {e}");
        }
        assert!(check_url("http://localhost.example.com/", &config()).is_ok());
        assert!(check_url("http://notlocalhost/", &config()).is_ok());
        let docs = WebConfig { allowed_private_hosts: vec!["localhost:8080".into()], ..WebConfig::default() };
        assert_eq!(check_url("http://localhost.:8080/", &docs).unwrap().scheme(), "http");
        assert!(check_url("http://localhost:8081/", &docs).is_err());
        assert!(check_url("http://127.0.0.1:8080/", &docs).is_err(), "the name, not the address, is allowed");
        let url = Url::parse("http://localhost:8080/").unwrap();
        assert!(opened_for_port_only(&url, &docs));
        let anywhere = WebConfig { allowed_private_hosts: vec!["localhost".into()], ..WebConfig::default() };
        assert!(!opened_for_port_only(&url, &anywhere) && check_url("http://localhost:1/", &anywhere).is_ok());
    }

    #[test]
    fn refusals_say_what_to_set() {
        let e = check_url("http://[::ffff:10.0.0.1]/", &config()).unwrap_err().to_string();
        assert!(e.contains("a private address") && e.contains("web.allow_private_network"), "{e}");
    }
}
