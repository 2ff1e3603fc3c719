//! The clock that fires jobs: wakes when the next job is due (or a job was added, or every
//! [`POLL`] to see durable jobs other processes added), claims each due firing and starts
//! its run.
//!
//! A firing missed while no process was up is simply due: it runs once, and the job's next
//! firing is the first slot after now, so a job down for a day does not run 24 times.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use toolbelt_core::RunReport;
use toolbelt_tools::cron::schedule::Plan;
use toolbelt_tools::cron::store::{JobRow, JobStore};

use super::JobHost;

/// The longest the clock sleeps: durable jobs another process adds are seen within this.
pub const POLL: Duration = Duration::from_secs(15);

/// Runs the clock until the host shuts down. What it asks of the stores runs on a blocking
/// thread: a shared database out of reach makes a pass slow, never the runtime's other tasks.
pub(super) async fn run(host: Arc<JobHost>) {
    let first = Arc::clone(&host);
    let interrupted = tokio::task::spawn_blocking(move || {
        let store = first.durable(false).ok().flatten().filter(|_| first.serves_durable())?;
        store.mark_interrupted(Timestamp::now().as_millisecond()).ok()
    });
    if let Ok(Some(n)) = interrupted.await
        && n > 0
    {
        tracing::info!("{n} job run(s) left running by a process that stopped were marked interrupted");
    }
    loop {
        let now = Timestamp::now();
        let pass = Arc::clone(&host);
        let (fired, next) =
            tokio::task::spawn_blocking(move || (pass.fire_due(now).len(), pass.next_due())).await.unwrap_or((0, None));
        let wait = next
            .map_or(POLL, |ms| Duration::from_millis(u64::try_from(ms - now.as_millisecond()).unwrap_or(0)))
            .min(POLL);
        // Something due that could not fire (a store that fails, a row this version cannot
        // read) is tried again a second later, not in a loop.
        let least = if fired == 0 && wait.is_zero() { Duration::from_secs(1) } else { Duration::from_millis(20) };
        tokio::select! {
            () = tokio::time::sleep(wait.max(least)) => {}
            () = host.wake.notified() => {}
            () = host.stop.cancelled() => return,
        }
    }
}

impl JobHost {
    /// Whether this host's clock fires the project's durable jobs.
    pub(super) fn serves_durable(&self) -> bool {
        self.serving.get().copied().unwrap_or(false)
    }

    /// The stores the clock fires from.
    fn stores(&self) -> Vec<Arc<JobStore>> {
        let mut stores: Vec<Arc<JobStore>> = self.session.get().into_iter().cloned().collect();
        if self.serves_durable() {
            match self.durable(false) {
                Ok(Some(store)) => stores.push(store),
                Ok(None) => {}
                Err(e) => tracing::warn!("durable jobs cannot be read: {e}"),
            }
        }
        stores
    }

    /// Runs the durable and session jobs due now, once, and waits for their runs to end
    /// (`toolbelt cron serve --once`); the runs, in order.
    pub async fn serve_once(self: &Arc<Self>) -> Vec<RunReport> {
        let _ = self.serving.set(true);
        if let Ok(Some(store)) = self.durable(false) {
            let _ = store.mark_interrupted(Timestamp::now().as_millisecond());
        }
        let mut runs = Vec::new();
        for handle in self.fire_due(Timestamp::now()) {
            if let Ok(Some(run)) = handle.await {
                runs.push(run);
            }
        }
        runs
    }

    /// Claims every firing due at `now` and starts its run in the background; the runs'
    /// handles, in order. A job whose previous run is still going skips this firing (its
    /// next one is set all the same), so slow runs never pile up.
    pub fn fire_due(self: &Arc<Self>, now: Timestamp) -> Vec<tokio::task::JoinHandle<Option<RunReport>>> {
        let mut fired = Vec::new();
        for store in self.stores() {
            if let Err(e) = store.purge_expired(now.as_millisecond()) {
                tracing::warn!("expired jobs cannot be deleted: {e}");
            }
            let due = match store.due(now.as_millisecond()) {
                Ok(due) => due,
                Err(e) => {
                    tracing::warn!("scheduled jobs cannot be read: {e}");
                    continue;
                }
            };
            for job in due {
                let next_ms = self.next_firing(&job, now);
                match store.claim(&job, next_ms, Some(("schedule", now.as_millisecond()))) {
                    Ok(Some(Some(seq))) => {
                        self.announce_start(&job, seq, "schedule");
                        let (host, store) = (Arc::clone(self), Arc::clone(&store));
                        fired.push(tokio::spawn(host.finish_run(store, job, seq)));
                    }
                    Ok(Some(None)) => {
                        tracing::info!(job = %job.id, "a firing is skipped: the job's previous run is still going");
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!(job = %job.id, "a job's firing cannot be claimed: {e}"),
                }
            }
        }
        fired
    }

    /// Where `job`'s next firing goes once the one due at `now` is claimed: the first slot
    /// after now (jitter included), or none when it fires no more (a one-shot, a job past its
    /// expiry).
    fn next_firing(&self, job: &JobRow, now: Timestamp) -> Option<i64> {
        let next = match Plan::new(&job.schedule) {
            Ok(plan) if job.recurring => {
                let created = Timestamp::from_millisecond(job.created_ms).unwrap_or(now);
                plan.next_after(now, created).map(|first| self.jittered(&job.id, &plan, first, job.created_ms))
            }
            _ => None,
        };
        next.map(|t| t.as_millisecond()).filter(|n| job.expires_ms.is_none_or(|end| *n <= end))
    }

    /// When the next job is due, in milliseconds since the epoch.
    fn next_due(&self) -> Option<i64> {
        self.stores().iter().filter_map(|s| s.next_due().ok().flatten()).min()
    }
}
