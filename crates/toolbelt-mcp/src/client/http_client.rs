//! The HTTP client of the gateway's connections and sign-ins.

/// Makes ring the process's TLS provider unless the program installed one already (reqwest
/// is built without one of its own), so a library user that did not still connects rather
/// than panicking.
pub(crate) fn install_tls_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race with another installer is fine: a provider is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A client for HTTP servers.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    install_tls_provider();
    reqwest::Client::builder().build().map_err(|e| format!("cannot make an HTTP client: {e}"))
}
