//! What `toolbelt mcp --http` tells an operator (`/readyz`, `/metrics`), and how it stops
//! when told to: it drains (see `toolbelt_mcp::drain`) and records the drain in the audit
//! log.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_mcp::drain::Drain;
use toolbelt_mcp::http::ops::Ops;
use toolbelt_runtime::metrics::family;
use toolbelt_runtime::{AuditLog, Runtime};
use toolbelt_tools::storage::SharedStorage;

/// How long cut calls get to end and answer before the server stops anyway.
const CUT_WAIT: Duration = Duration::from_secs(5);

/// How long the last answers get to be written before the HTTP server stops: a call counts
/// as ended once its result is made, a moment before it is on the wire.
const ANSWER_WAIT: Duration = Duration::from_millis(200);

/// How long the HTTP server gets to close its connections once the drain is over.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// The server's side of `/readyz` and `/metrics`.
#[derive(Debug)]
pub struct ServeOps {
    runtime: Arc<Runtime>,
    /// The project's state directory, where the durable stores and the audit log live.
    state_dir: PathBuf,
    /// The database the replicas share (`storage.url`), if any.
    shared: Option<Arc<SharedStorage>>,
    started: SystemTime,
    /// The last readiness verdict and when it was made: probes within [`READY_FOR`] of it get
    /// it again, and one probe at a time checks (the lock is held while it does).
    ready: Mutex<Option<(Instant, Option<String>)>>,
}

/// How long a readiness verdict stands.
const READY_FOR: Duration = Duration::from_secs(2);

impl ServeOps {
    pub fn new(runtime: Arc<Runtime>, state_dir: PathBuf, shared: Option<Arc<SharedStorage>>) -> Self {
        Self { runtime, state_dir, shared, started: SystemTime::now(), ready: Mutex::new(None) }
    }
}

impl Ops for ServeOps {
    fn write_metrics(&self, out: &mut String) {
        self.runtime.metrics().write_prometheus(out);
        family(
            out,
            "toolbelt_processes_running",
            "gauge",
            "Commands running (foreground and background), each a process tree.",
        );
        let _ = writeln!(out, "toolbelt_processes_running {}", toolbelt_tools::shell::live_count());
        family(out, "toolbelt_storage_errors_total", "counter", "Records that could not be written, by store.");
        let audit = self.runtime.audit_log().map_or(0, |log| log.failures());
        let _ = writeln!(out, "toolbelt_storage_errors_total{{store=\"audit\"}} {audit}");
        if let Some(shared) = &self.shared {
            let _ = writeln!(out, "toolbelt_storage_errors_total{{store=\"postgres\"}} {}", shared.errors());
        }
        if let Some(bytes) = resident_bytes() {
            family(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
            let _ = writeln!(out, "process_resident_memory_bytes {bytes}");
        }
        family(out, "process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch.");
        let start = self.started.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        let _ = writeln!(out, "process_start_time_seconds {}", start.as_secs());
    }

    fn sessions_counted(&self, open: Arc<dyn Fn() -> usize + Send + Sync>) {
        toolbelt::telemetry::gauge("toolbelt.mcp.sessions.open", "MCP sessions open", move || {
            vec![(vec![], open() as u64)]
        });
    }

    /// Says what kind of trouble only (the probe needs no token); the details go to the log
    /// when the verdict changes.
    fn unready(&self) -> Option<String> {
        let mut last = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, verdict)) = last.as_ref()
            && at.elapsed() < READY_FOR
        {
            return verdict.clone();
        }
        let (verdict, detail) = if let Err(e) = writable(&self.state_dir) {
            let detail = format!("the state directory {} cannot be written: {e}", self.state_dir.display());
            (Some("the state directory cannot be written".to_string()), Some(detail))
        } else if let Some(Err(e)) = self.shared.as_ref().map(|shared| shared.check()) {
            (Some("shared storage (storage.url) cannot be reached".to_string()), Some(e.to_string()))
        } else {
            (None, None)
        };
        let before = last.as_ref().and_then(|(_, v)| v.clone());
        if before != verdict {
            match &detail {
                Some(detail) => tracing::warn!("not ready: {detail}"),
                None => tracing::info!("ready again"),
            }
        }
        *last = Some((Instant::now(), verdict.clone()));
        verdict
    }
}

/// Whether `dir` (or, before it exists, the nearest directory above it) may be written.
fn writable(dir: &std::path::Path) -> std::io::Result<()> {
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(dir);
    nix::unistd::access(existing, nix::unistd::AccessFlags::W_OK).map_err(std::io::Error::from)
}

/// The process's resident set, from `VmRSS` in `/proc/self/status` (kB).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kb: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Waits for SIGTERM or SIGINT, then drains: new sessions and calls are refused while the
/// running calls get `grace` to finish; those still running then are cut, the commands left
/// killed, both recorded in `audit`; then `shutdown` stops the HTTP server. A second signal
/// cuts at once. Exits the process itself if the server has not stopped soon after.
pub async fn drain_on_stop(
    drain: Arc<Drain>,
    grace: Duration,
    audit: Option<Arc<AuditLog>>,
    jobs: Option<Arc<toolbelt::jobs::JobHost>>,
    shutdown: CancellationToken,
) {
    let signal = super::stop_signal().await;
    drain.start();
    // Scheduled jobs start no new run while the server drains.
    if let Some(jobs) = &jobs {
        jobs.shutdown();
    }
    let began = Instant::now();
    let running = drain.running();
    tracing::warn!(
        "{signal}: draining: {running} call(s) running, new sessions and calls refused; cutting what is left after \
         {} s (a second signal cuts now)",
        grace.as_secs()
    );
    if let Some(audit) = &audit {
        let fields = json!({"signal": signal, "calls_running": running, "grace_s": grace.as_secs()});
        audit.record_event("drain_started", fields);
    }
    let forced = tokio::select! {
        drained = tokio::time::timeout(grace, drain.idle()) => if drained.is_ok() { None } else { Some("grace period ended") },
        again = super::stop_signal() => Some(again),
    };
    let cut = drain.running();
    if forced.is_some() {
        drain.cut();
        let _ = tokio::time::timeout(CUT_WAIT, drain.idle()).await;
    }
    let killed = toolbelt_tools::shell::kill_all();
    tracing::warn!(
        "{signal}: drained in {} ms: {cut} call(s) cut, {killed} command(s) killed",
        began.elapsed().as_millis()
    );
    if let Some(audit) = &audit {
        let fields = json!({
            "signal": signal,
            "calls_cut": cut,
            "processes_killed": killed,
            "why": forced.unwrap_or("every call finished"),
            "drained_ms": u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        audit.record_event("stopped", fields);
        // Writing what waits may take a round trip to the database: off the runtime's threads.
        let audit = Arc::clone(audit);
        let _ = tokio::task::spawn_blocking(move || audit.close()).await;
    }
    tokio::time::sleep(ANSWER_WAIT).await;
    shutdown.cancel();
    // A connection the HTTP server waits on (a client's open stream) does not hold the
    // process past this.
    tokio::time::sleep(CLOSE_WAIT).await;
    tracing::warn!("connections still open {} s after the drain: exiting", CLOSE_WAIT.as_secs());
    toolbelt_tools::shell::kill_all();
    // The process ends here, not through main: the replica leaves and telemetry is sent first.
    let _ = tokio::task::spawn_blocking(|| {
        super::serve_replicas::leave();
        toolbelt::telemetry::flush();
    })
    .await;
    std::process::exit(0);
}
