//! The resolver the HTTP client connects through: a host is resolved once, every address is
//! checked, and the client connects to exactly the addresses checked.

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::config::WebConfig;
use super::guard::{HostPatterns, PrivateAddress, non_public};

/// Resolves names for the web tools' client, refusing a host with any address outside the
/// public internet unless the settings allow it (or it is one of `exempt`: the proxy and the
/// configured search endpoints, which the user chose).
///
/// A resolver is asked for a name, never a port, so an `allowed_private_hosts` entry for one
/// port (`localhost:8080`) opens its host only in the resolver of a client made for such
/// URLs ([`Ports::Listed`]), which the fetch uses only when the URL's port is the entry's.
pub(crate) struct GuardedResolver {
    config: Arc<WebConfig>,
    allowed: HostPatterns,
    exempt: HostPatterns,
    ports: Ports,
}

/// Which `allowed_private_hosts` entries open a host in a resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ports {
    /// Those open on every port.
    Every,
    /// Those for one port too: the client serves only URLs on such a port.
    Listed,
}

impl GuardedResolver {
    /// A resolver under `config`, trusting the hosts of `exempt`.
    pub fn new(config: Arc<WebConfig>, exempt: HostPatterns, ports: Ports) -> Self {
        let allowed = HostPatterns::new(&config.allowed_private_hosts);
        Self { config, allowed, exempt, ports }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let allowed = match self.ports {
            Ports::Every => self.allowed.matches(&host),
            Ports::Listed => self.allowed.matches_some_port(&host),
        };
        let open = self.config.allow_private_network || allowed || self.exempt.matches(&host);
        let fixed = self.config.hosts.get(&host.to_ascii_lowercase()).copied();
        Box::pin(async move {
            let addrs = match fixed {
                Some(ip) => checked(&host, vec![SocketAddr::new(ip, 0)], open)?,
                None => resolve(&host, open).await?,
            };
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The addresses of `host`, all of them public unless `open`.
pub(crate) async fn resolve(
    host: &str,
    open: bool,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
    checked(host, addrs, open)
}

/// `addrs` of `host`, when all of them are public or `open`.
fn checked(
    host: &str,
    addrs: Vec<SocketAddr>,
    open: bool,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    if addrs.is_empty() {
        return Err(format!("{host} has no address").into());
    }
    if !open && let Some((addr, kind)) = addrs.iter().find_map(|a| non_public(a.ip()).map(|k| (a.ip(), k))) {
        return Err(Box::new(PrivateAddress { host: host.to_string(), addr, kind }));
    }
    Ok(addrs)
}
