//! Requests without a protocol session (MCP 2026-07-28) on a team: a load balancer sends each
//! to any replica, so what their session keeps between requests lives in storage every
//! replica reads, keyed by what the requests prove (their bearer token).
//!
//! * **Session state.** Before a request runs, the replica takes what other replicas changed
//!   since it last looked (the working directory, and the slots marked
//!   [`toolbelt_core::SessionSlot::SHARED`]: the files read, the grants, the mode, the todo
//!   list, the loaded tools); after it, it writes what the request changed. A write names the
//!   version it started from; when another replica wrote in between, the two are merged
//!   (the files read and the grants of both are kept; otherwise the later change wins) and
//!   written again. A replica that cannot read the shared state refuses the request rather
//!   than run it in a stale working directory.
//! * **Request states.** An `input_required` result's state is sealed with a key every
//!   replica shares, and its nonce is spent in storage: the retry may reach any replica, and
//!   is still redeemed once.
//!
//! What holds a machine's resources (background processes, the carried shell) stays on the
//! replica that made it; its ids name that replica.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::RequestStateCodec;
use toolbelt_core::SessionState;

/// The key under which the working directory travels beside the slots.
const CWD: &str = "cwd";

/// How many times a write is merged and tried again when other replicas keep writing.
const WRITE_TRIES: usize = 5;

/// How long a request waits for the shared state (this replica's other requests of the
/// session, then the database) before it gives up.
const WAIT: Duration = Duration::from_secs(10);

/// One slot as storage holds it: its key, the owner's version when written, its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSlot {
    /// The slot's key (`file_ledger`, `cwd`).
    pub slot: String,
    /// The owner's version when it was written.
    pub version: i64,
    /// Its value, as JSON text.
    pub value: String,
}

/// The storage a team's replicas share for requests without a protocol session. Every method
/// blocks: it is called on a blocking thread.
pub trait TeamState: Send + Sync + std::fmt::Debug {
    /// The slots of `owner` written after version `since`.
    fn changed_since(&self, owner: &str, since: i64) -> Result<Vec<StoredSlot>, String>;
    /// Writes `slots` (key, JSON text) of `owner` at its next version: `Ok(version)`; or
    /// writes nothing when `owner`'s version is no longer `expected`: `Err(current version)`.
    fn write(&self, owner: &str, expected: i64, slots: &[(String, String)]) -> Result<Result<i64, i64>, String>;
    /// The key (at least 32 bytes) that seals request states, the same on every replica.
    fn sealing_key(&self) -> Result<Vec<u8>, String>;
    /// Notes request state `nonce` as outstanding for `ttl`.
    fn issue(&self, nonce: &str, ttl: Duration) -> Result<(), String>;
    /// Strikes `nonce` off: `true` when it was outstanding.
    fn spend(&self, nonce: &str) -> Result<bool, String>;
}

/// A team's shared storage, as the server uses it.
#[derive(Debug)]
pub struct Team {
    state: Arc<dyn TeamState>,
    codec: tokio::sync::OnceCell<Arc<RequestStateCodec>>,
}

impl Team {
    /// The team whose replicas share `state`.
    pub fn new(state: Arc<dyn TeamState>) -> Self {
        Self { state, codec: tokio::sync::OnceCell::new() }
    }

    /// Runs `f` on the storage, on a blocking thread, waiting at most [`WAIT`].
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn TeamState) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let state = Arc::clone(&self.state);
        match tokio::time::timeout(WAIT, tokio::task::spawn_blocking(move || f(state.as_ref()))).await {
            Ok(done) => done.unwrap_or_else(|e| Err(format!("the storage's task failed: {e}"))),
            Err(_) => Err(format!("no answer within {} s", WAIT.as_secs())),
        }
    }

    /// The codec that seals request states with the team's key (read once).
    pub(crate) async fn codec(&self) -> Result<Arc<RequestStateCodec>, McpError> {
        self.codec
            .get_or_try_init(|| async {
                let key = self.blocking(|s| s.sealing_key()).await.map_err(unavailable)?;
                RequestStateCodec::try_new(key)
                    .map(Arc::new)
                    .map_err(|e| McpError::internal_error(format!("the team's sealing key is not usable: {e}"), None))
            })
            .await
            .cloned()
    }

    /// Notes a request state's nonce as outstanding.
    pub(crate) async fn issue(&self, nonce: String, ttl: Duration) -> Result<(), McpError> {
        self.blocking(move |s| s.issue(&nonce, ttl)).await.map_err(unavailable)
    }

    /// Spends a request state's nonce: `false` when it was not outstanding.
    pub(crate) async fn spend(&self, nonce: String) -> Result<bool, McpError> {
        self.blocking(move |s| s.spend(&nonce)).await.map_err(unavailable)
    }

    /// Takes into `session` what other replicas changed of `seat`'s state; returns the keys
    /// of the slots that changed.
    pub(crate) async fn pull(&self, seat: &SharedSeat, session: &SessionState) -> Result<Vec<String>, McpError> {
        let mut synced = seat.lock().await.map_err(unavailable)?;
        synced.begin(session);
        let (owner, since) = (seat.owner.clone(), synced.version);
        let rows = self.blocking(move |s| s.changed_since(&owner, since)).await.map_err(unavailable)?;
        let keys = rows.iter().map(|r| r.slot.clone()).collect();
        synced.apply(session, rows);
        Ok(keys)
    }

    /// Writes what `session` changed of `seat`'s state, merging with what other replicas
    /// wrote meanwhile.
    pub(crate) async fn push(&self, seat: &SharedSeat, session: &SessionState) -> Result<(), String> {
        let mut synced = seat.lock().await?;
        synced.begin(session);
        for _ in 0..WRITE_TRIES {
            let changed: Vec<(String, String)> =
                local(session).into_iter().filter(|(k, v)| synced.last.get(k) != Some(v)).collect();
            if changed.is_empty() {
                return Ok(());
            }
            let (owner, expected) = (seat.owner.clone(), synced.version);
            let sent = changed.clone();
            let written = self.blocking(move |s| s.write(&owner, expected, &sent)).await?;
            match written {
                Ok(version) => {
                    synced.last.extend(changed);
                    synced.version = version;
                    return Ok(());
                }
                Err(current) => {
                    let owner = seat.owner.clone();
                    let rows = self.blocking(move |s| s.changed_since(&owner, expected)).await?;
                    if rows.is_empty() {
                        // Nothing newer than what this replica saw, yet another version: the
                        // database went back (restored). Start from the version it holds.
                        synced.version = current;
                    }
                    synced.apply(session, rows);
                }
            }
        }
        Err(format!("other replicas kept changing the session's state; {WRITE_TRIES} tries to write it failed"))
    }
}

/// Why a request cannot be served: the team's storage is out of reach.
fn unavailable(detail: String) -> McpError {
    McpError::internal_error(
        format!(
            "this request's session state (its working directory, the files it read, its grants) is kept in the \
             team's shared storage, which cannot be reached: {detail}; try again shortly"
        ),
        None,
    )
}

/// The state of one session without a protocol session, as this replica last saw it in
/// storage.
#[derive(Debug)]
pub(crate) struct SharedSeat {
    /// Whose state: what the requests prove (their token's id).
    owner: String,
    synced: tokio::sync::Mutex<Synced>,
}

impl SharedSeat {
    /// The state of the requests that prove `owner`.
    pub(crate) fn new(owner: String) -> Self {
        Self { owner, synced: tokio::sync::Mutex::new(Synced::default()) }
    }

    /// This replica's view of the state, once its other requests let go of it (at most
    /// [`WAIT`]).
    async fn lock(&self) -> Result<tokio::sync::MutexGuard<'_, Synced>, String> {
        tokio::time::timeout(WAIT, self.synced.lock()).await.map_err(|_| {
            format!("this replica's other requests of the session held its state for over {} s", WAIT.as_secs())
        })
    }
}

#[derive(Debug, Default)]
struct Synced {
    /// The owner's version seen last.
    version: i64,
    /// Each slot's JSON as storage held it then (or as this replica wrote it).
    last: BTreeMap<String, String>,
    /// Whether `last` holds the session's state as it was made.
    begun: bool,
}

impl Synced {
    /// The first time: what the session holds as it was made counts as unchanged, so a
    /// fresh replica takes the team's working directory rather than impose its own.
    fn begin(&mut self, session: &SessionState) {
        if !std::mem::replace(&mut self.begun, true) {
            self.last = local(session);
        }
    }

    /// Takes `rows` into `session`: adopted where this replica changed nothing since, merged
    /// where it did.
    fn apply(&mut self, session: &SessionState, rows: Vec<StoredSlot>) {
        if rows.is_empty() {
            return;
        }
        let now = local(session);
        for row in rows {
            self.version = self.version.max(row.version);
            let Ok(theirs) = serde_json::from_str::<serde_json::Value>(&row.value) else { continue };
            let mine_changed = now.get(&row.slot).is_some_and(|v| self.last.get(&row.slot) != Some(v));
            if row.slot == CWD {
                if let (false, Some(cwd)) = (mine_changed, theirs.as_str()) {
                    session.set_cwd(cwd.into());
                }
            } else if mine_changed {
                session.merge_shared(&row.slot, theirs);
            } else {
                session.adopt_shared(&row.slot, theirs);
            }
            self.last.insert(row.slot, row.value);
        }
    }
}

/// What travels of `session`: its shared slots and its working directory, as JSON text.
fn local(session: &SessionState) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> =
        session.shared_slots().into_iter().map(|(k, v)| (k, v.to_string())).collect();
    out.insert(CWD.to_string(), serde_json::Value::String(session.cwd().display().to_string()).to_string());
    out
}
