//! Project trust decisions in the shared database: a person trusts the project a team serves
//! once (`toolbelt trust`, from any machine with the team's settings), and every replica
//! serving it from the same path applies its settings. Each row holds what `trust.json` holds
//! for one project, keyed by the project's path.

use std::sync::Arc;

use super::{SharedStorage, StorageError, off_runtime};

const COMPONENT: &str = "trusted_projects";
const VERSION: i32 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS trusted_projects (
    project TEXT PRIMARY KEY,
    record  TEXT NOT NULL
);
";

/// The trust records kept in a shared database. Every method blocks (off any async runtime's
/// thread), on a connection of its own: a command reads trust once, as it starts, and a server
/// that refuses is known at once (the project then counts as not trusted).
#[derive(Debug, Clone)]
pub struct TrustTable {
    shared: Arc<SharedStorage>,
}

impl TrustTable {
    /// The table in `shared`.
    pub fn new(shared: Arc<SharedStorage>) -> Self {
        Self { shared }
    }

    /// The server, as messages name it.
    pub fn server(&self) -> &str {
        self.shared.server()
    }

    /// The record of `project` (JSON text), if it is trusted.
    pub fn get(&self, project: &str) -> Result<Option<String>, StorageError> {
        off_runtime(|| {
            let mut client = self.shared.client_once(COMPONENT, VERSION, SCHEMA)?;
            let row = client
                .query_opt("SELECT record FROM trusted_projects WHERE project = $1", &[&project])
                .map_err(|e| self.shared.error(&e))?;
            row.map(|r| r.try_get(0).map_err(|e| self.shared.error(&e))).transpose()
        })
    }

    /// Every trusted project and its record, by path.
    pub fn all(&self) -> Result<Vec<(String, String)>, StorageError> {
        off_runtime(|| {
            let mut client = self.shared.client_once(COMPONENT, VERSION, SCHEMA)?;
            let rows = client
                .query("SELECT project, record FROM trusted_projects ORDER BY project", &[])
                .map_err(|e| self.shared.error(&e))?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, postgres::Error>>()
                .map_err(|e| self.shared.error(&e))
        })
    }

    /// Records `project`'s trust, replacing what was recorded.
    pub fn put(&self, project: &str, record: &str) -> Result<(), StorageError> {
        off_runtime(|| {
            let mut client = self.shared.client_once(COMPONENT, VERSION, SCHEMA)?;
            client
                .execute(
                    "INSERT INTO trusted_projects (project, record) VALUES ($1, $2) \
                     ON CONFLICT (project) DO UPDATE SET record = EXCLUDED.record",
                    &[&project, &record],
                )
                .map(drop)
                .map_err(|e| self.shared.error(&e))
        })
    }

    /// Forgets `project`'s trust; whether it was trusted.
    pub fn delete(&self, project: &str) -> Result<bool, StorageError> {
        off_runtime(|| {
            let mut client = self.shared.client_once(COMPONENT, VERSION, SCHEMA)?;
            let n = client
                .execute("DELETE FROM trusted_projects WHERE project = $1", &[&project])
                .map_err(|e| self.shared.error(&e))?;
            Ok(n > 0)
        })
    }
}
