//! The settings of serving: `toolbelt mcp --http` (`[mcp]`) and the storage a team's replicas
//! share (`[storage]`).

use std::path::PathBuf;
use std::time::Duration;

/// `[storage]`: the PostgreSQL database every replica shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageSettings {
    /// `storage.url`.
    pub url: String,
    /// `storage.password_env`: the variable holding the password, if any.
    pub password_env: Option<String>,
    /// `storage.max_connections`.
    pub max_connections: u32,
    /// `storage.ca_file`: CA certificates trusted besides the system's.
    pub ca_file: Option<PathBuf>,
}

/// The settings of `toolbelt mcp --http`.
#[derive(Debug, Clone)]
pub struct McpHttpSettings {
    /// How many sessions, for how long idle.
    pub limits: toolbelt_mcp::http::SessionLimits,
    /// Browser origins allowed besides the server's own.
    pub allowed_origins: Vec<String>,
    /// `Host` names answered besides the server's address.
    pub allowed_hosts: Vec<String>,
    /// Where the other replicas reach this one (`mcp.advertise_url`).
    pub advertise_url: Option<String>,
    /// How long running calls may go on after SIGTERM before they are cut.
    pub drain_timeout: Duration,
}

impl Default for McpHttpSettings {
    fn default() -> Self {
        Self {
            limits: Default::default(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            advertise_url: None,
            drain_timeout: Duration::from_secs(DRAIN_TIMEOUT_SECS),
        }
    }
}

/// `mcp.drain_timeout`'s default: with the 5 s a cut call gets to end, under Kubernetes'
/// default grace period (30 s), so the server cuts what is left and records it before it is
/// killed.
pub(super) const DRAIN_TIMEOUT_SECS: u64 = 20;
