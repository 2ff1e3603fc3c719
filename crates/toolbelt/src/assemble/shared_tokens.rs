//! Upstream servers' OAuth tokens in a team's shared database ([`TokenTable`]), as the MCP
//! client keeps them ([`SharedTokens`]).

use std::sync::Arc;

use toolbelt_mcp::client::oauth::store::SharedTokens;
use toolbelt_tools::storage::{SharedStorage, TokenTable, off_runtime};

/// The shared database's token table.
#[derive(Debug)]
pub struct SharedTokenTable(TokenTable);

impl SharedTokenTable {
    /// The table in `shared`.
    pub fn new(shared: Arc<SharedStorage>) -> Self {
        Self(TokenTable::new(shared))
    }
}

impl SharedTokens for SharedTokenTable {
    fn place(&self) -> String {
        format!("the PostgreSQL database {}", self.0.server())
    }

    fn read(&self, key: &str) -> Result<Option<String>, String> {
        off_runtime(|| self.0.read(key)).map_err(|e| e.to_string())
    }

    fn write(&self, key: &str, url: &str, value: &str) -> Result<(), String> {
        off_runtime(|| self.0.write(key, url, value)).map_err(|e| e.to_string())
    }

    fn delete(&self, key: &str) -> Result<bool, String> {
        off_runtime(|| self.0.delete(key)).map_err(|e| e.to_string())
    }

    fn lock(&self, key: &str) -> Result<Box<dyn Send>, String> {
        off_runtime(|| self.0.lock(key)).map(|held| Box::new(held) as Box<dyn Send>).map_err(|e| e.to_string())
    }
}

/// A `storage.url` that cannot be used: every use of the tokens says why (rather than keep
/// them on one machine, where the other replicas would never see them).
#[derive(Debug)]
pub struct Unusable(pub String);

impl SharedTokens for Unusable {
    fn place(&self) -> String {
        "the shared database (storage.url)".into()
    }

    fn read(&self, _key: &str) -> Result<Option<String>, String> {
        Err(self.0.clone())
    }

    fn write(&self, _key: &str, _url: &str, _value: &str) -> Result<(), String> {
        Err(self.0.clone())
    }

    fn delete(&self, _key: &str) -> Result<bool, String> {
        Err(self.0.clone())
    }

    fn lock(&self, _key: &str) -> Result<Box<dyn Send>, String> {
        Err(self.0.clone())
    }
}
