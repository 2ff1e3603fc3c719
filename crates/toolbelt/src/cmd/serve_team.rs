//! A team's replicas serving requests without a protocol session alike: their session's
//! state and request states in the shared database ([`toolbelt_mcp::team`]).

use std::sync::Arc;
use std::time::Duration;

use toolbelt_mcp::team::{StoredSlot, TeamState};
use toolbelt_tools::storage::{SessionTable, SharedStorage};

/// The shared database, as the MCP server's team storage.
#[derive(Debug)]
pub struct SharedTeam(pub Arc<SharedStorage>);

impl TeamState for SharedTeam {
    fn changed_since(&self, owner: &str, since: i64) -> Result<Vec<StoredSlot>, String> {
        let rows = SessionTable::new(&self.0).changed_since(owner, since).map_err(|e| e.to_string())?;
        Ok(rows.into_iter().map(|r| StoredSlot { slot: r.slot, version: r.version, value: r.value }).collect())
    }

    fn write(&self, owner: &str, expected: i64, slots: &[(String, String)]) -> Result<Result<i64, i64>, String> {
        SessionTable::new(&self.0).write(owner, expected, slots).map_err(|e| e.to_string())
    }

    fn sealing_key(&self) -> Result<Vec<u8>, String> {
        SessionTable::new(&self.0).sealing_key().map_err(|e| e.to_string())
    }

    fn issue(&self, nonce: &str, ttl: Duration) -> Result<(), String> {
        SessionTable::new(&self.0).issue(nonce, ttl).map_err(|e| e.to_string())
    }

    fn spend(&self, nonce: &str) -> Result<bool, String> {
        SessionTable::new(&self.0).spend(nonce).map_err(|e| e.to_string())
    }
}
