//! What a fetch comes to: a page (its final URL, status, type and body) or a redirect that
//! is not followed. The client makes them; the cache keeps pages.

use std::sync::Arc;

use url::Url;

/// A page as fetched: where it ended up, its status and type, and its body (decompressed,
/// cut at the cap).
#[derive(Debug, Clone)]
pub struct Page {
    /// Where the last request went (after same-site redirects).
    pub url: Url,
    /// The status code.
    pub status: u16,
    /// The status's reason phrase (`Not Found`).
    pub reason: String,
    /// `Content-Type`, as sent.
    pub content_type: Option<String>,
    /// `Retry-After`, as sent.
    pub retry_after: Option<String>,
    /// The body, decompressed.
    pub body: Vec<u8>,
    /// Whether the body was cut at [`super::client::MAX_BODY`].
    pub truncated: bool,
    /// Hosts redirects led to besides the one asked for (each judged on the way).
    pub other_hosts: Vec<String>,
}

#[cfg(test)]
impl Page {
    /// A 200 page with `body`, for tests of what keeps pages.
    pub fn for_test(body: Vec<u8>) -> Self {
        Self {
            url: Url::parse("https://example.com/").unwrap_or_else(|_| unreachable!()),
            status: 200,
            reason: "OK".into(),
            content_type: None,
            retry_after: None,
            body,
            truncated: false,
            other_hosts: Vec::new(),
        }
    }
}

/// What a fetch came to.
#[derive(Debug, Clone)]
pub enum Fetched {
    /// A page (any status but a redirect).
    Page(Arc<Page>),
    /// A redirect that is not followed: to another host or scheme.
    Redirect {
        /// The status (301, 302, 303, 307, 308).
        status: u16,
        /// The URL that redirected.
        from: Url,
        /// Where it points.
        to: Url,
    },
}
