//! The heartbeat of a process running jobs from shared storage: while it has runs going, it
//! says it is alive every [`HEARTBEAT`] (by the database's clock), and says it left when its
//! store is dropped; a run whose process fell silent is judged interrupted
//! ([`super::postgres`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::pg_schema::{COMPONENT, NOW_MS, SCHEMA, VERSION};
use crate::storage::SharedStorage;

/// How often a process with runs going says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// The heartbeat thread, once started.
#[derive(Default)]
pub(super) struct Heart {
    /// Set while the thread runs; cleared to stop it.
    beating: Arc<AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Heart {
    /// Starts beating for `holder` in `shared`, unless it beats already.
    pub(super) fn start(&self, shared: &Arc<SharedStorage>, holder: &str) {
        if self.beating.swap(true, Ordering::AcqRel) {
            return;
        }
        let (shared, holder, beating) = (Arc::clone(shared), holder.to_string(), Arc::clone(&self.beating));
        let thread = std::thread::Builder::new().name("cron-heartbeat".into()).spawn(move || {
            while beating.load(Ordering::Acquire) {
                std::thread::park_timeout(HEARTBEAT);
                if !beating.load(Ordering::Acquire) {
                    break;
                }
                let beat = shared.client(COMPONENT, VERSION, SCHEMA).and_then(|mut c| {
                    // An upsert: a row swept while the database was out of reach comes back.
                    c.execute(
                        &format!(
                            "INSERT INTO cron_holders (holder, seen_ms) VALUES ($1, {NOW_MS}) \
                             ON CONFLICT (holder) DO UPDATE SET seen_ms = EXCLUDED.seen_ms"
                        ),
                        &[&holder],
                    )
                    .map_err(|e| shared.error(&e))
                });
                if let Err(e) = beat {
                    tracing::warn!(
                        "cannot say this process's job runs are alive ({e}); others may take them for interrupted"
                    );
                }
            }
            // Gone: its runs are judged by their rows from now on.
            if let Ok(mut c) = shared.client(COMPONENT, VERSION, SCHEMA) {
                let _ = c.execute("DELETE FROM cron_holders WHERE holder = $1", &[&holder]);
            }
        });
        match thread {
            Ok(thread) => *self.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread),
            Err(e) => {
                // Tried again with the next run.
                self.beating.store(false, Ordering::Release);
                tracing::warn!("no heartbeat for job runs: {e}");
            }
        }
    }
}

impl Drop for Heart {
    fn drop(&mut self) {
        self.beating.store(false, Ordering::Release);
        if let Some(thread) = self.thread.get_mut().unwrap_or_else(PoisonError::into_inner).take() {
            thread.thread().unpark();
        }
    }
}
