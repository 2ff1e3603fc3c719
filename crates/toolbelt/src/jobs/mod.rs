//! The job scheduler: jobs kept in the job stores, fired by a clock, run through the runtime.
//!
//! [`JobHost`] is the [`JobService`] the cron tools reach. It keeps a process's session jobs
//! in memory and the project's durable jobs in `jobs.db` in the project's state directory;
//! [`JobHost::start`] runs the clock ([`clock`]) that fires them, and each firing runs in a
//! fresh session of the project ([`run`]): a prompt as a call of the `Agent` tool (so a
//! sub-agent runs it), a tool job as its one call — both through the whole pipeline, under
//! the runtime's policy with nobody there to approve what asks.
//!
//! Why here, above the runtime: a firing is a runtime call, and this crate is the one that
//! builds runtimes (the tools crate keeps the schedules and the store, which need none).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolbelt_core::{EventSink, JobAction, JobService, Jobs, ToolContext, ToolError};
use toolbelt_runtime::Runtime;
use toolbelt_tools::cron::store::{FILE_NAME, JobRow, JobStore};
use toolbelt_tools::storage::SharedStorage;

mod clock;
mod incoming;
mod manage;
mod run;
mod service;
#[cfg(test)]
mod tests;

pub use incoming::{IncomingTrigger, TriggerDoor};

/// The most jobs one session, or one project's durable store, may hold.
pub const MAX_JOBS: usize = 50;

/// The tools a job may not call: no job creates jobs.
const CRON_TOOLS: [&str; 4] = ["CronCreate", "CronDelete", "CronList", "cron"];

/// Why a prompt job cannot be scheduled here.
const NO_PROVIDER: &str = "a prompt job needs a model provider of its own (it runs with no client to lend one), and \
                           none is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add [agent.providers.NAME] \
                           to the settings; or schedule a tool call";

/// The `[cron]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSettings {
    /// How long a recurring job lives; `None`: until deleted.
    pub max_age: Option<Duration>,
    /// Whether recurring jobs fire a little late, each by its own share of its period.
    pub jitter: bool,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self { max_age: Some(Duration::from_secs(7 * 24 * 3600)), jitter: true }
    }
}

/// Where job runs work: the project's directory and roots, and where their sessions keep
/// their files.
#[derive(Debug, Clone)]
pub struct JobPlace {
    /// The working directory of every run.
    pub cwd: PathBuf,
    /// The workspace roots.
    pub roots: Vec<PathBuf>,
    /// The directory under which each run's session keeps its files.
    pub data_dir: PathBuf,
    /// The project's state directory, where `jobs.db` is.
    pub state_dir: PathBuf,
    /// On a team: the database every replica shares, which keeps the durable jobs instead of
    /// `jobs.db` (or why `storage.url` cannot be used, said by every use of them).
    pub shared: Result<Option<Arc<SharedStorage>>, String>,
    /// This machine's name, in the runs it holds (shared storage only).
    pub machine: String,
}

/// Keeps, fires and runs jobs (see the module's documentation).
pub struct JobHost {
    place: JobPlace,
    settings: JobSettings,
    /// Session jobs, in memory: opened at the first one (a one-shot call never pays for it).
    session: OnceLock<Arc<JobStore>>,
    durable: Mutex<Option<Arc<JobStore>>>,
    runtime: OnceLock<Weak<Runtime>>,
    /// Who hears about a job's runs: the session that created it, while this process has it.
    listeners: Mutex<HashMap<String, EventSink>>,
    /// Who hears about every run (`toolbelt cron serve` prints them).
    everyone: Mutex<EventSink>,
    /// Set once the clock runs; whether it fires the project's durable jobs too.
    serving: OnceLock<bool>,
    wake: tokio::sync::Notify,
    stop: CancellationToken,
}

impl std::fmt::Debug for JobHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobHost").field("place", &self.place).field("serving", &self.serving.get()).finish()
    }
}

impl JobHost {
    /// A host for the project at `place`. Nothing fires until [`JobHost::start`].
    pub fn new(place: JobPlace, settings: JobSettings) -> Arc<JobHost> {
        // Nothing is opened here: stores open at first use.
        Arc::new(JobHost {
            place,
            settings,
            session: OnceLock::new(),
            durable: Mutex::new(None),
            runtime: OnceLock::new(),
            listeners: Mutex::new(HashMap::new()),
            everyone: Mutex::new(EventSink::default()),
            serving: OnceLock::new(),
            wake: tokio::sync::Notify::new(),
            stop: CancellationToken::new(),
        })
    }

    /// The handle the runtime's services hold.
    pub fn handle(self: &Arc<Self>) -> Jobs {
        Jobs(Arc::clone(self) as Arc<dyn JobService>)
    }

    /// Runs jobs on `runtime` (held weakly: the runtime owns this host through its services).
    pub fn attach(&self, runtime: &Arc<Runtime>) {
        let _ = self.runtime.set(Arc::downgrade(runtime));
    }

    /// Sends every run's start and end to `sink` too.
    pub fn announce_to(&self, sink: EventSink) {
        *self.everyone.lock().unwrap_or_else(PoisonError::into_inner) = sink;
    }

    /// Starts the clock on the current tokio runtime: session jobs fire from now on, and with
    /// `durable` the project's durable jobs too (a missed firing runs once, now).
    ///
    /// Outside a tokio runtime nothing starts (and session jobs stay refused); the error says so.
    pub fn start(self: &Arc<Self>, durable: bool) -> Result<(), ToolError> {
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| ToolError::failed("the job scheduler needs a tokio runtime to run in; start it from one"))?;
        if self.serving.set(durable).is_ok() {
            let host = Arc::clone(self);
            handle.spawn(async move { clock::run(host).await });
        }
        Ok(())
    }

    /// Stops the clock and cancels the runs in progress (they are recorded as interrupted).
    pub fn shutdown(&self) {
        self.stop.cancel();
    }

    /// The project's durable store, opened (and with `create`, created) at first use; `None`
    /// when it does not exist and `create` is false.
    fn durable(&self, create: bool) -> Result<Option<Arc<JobStore>>, ToolError> {
        let mut slot = self.durable.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(store) = &*slot {
            return Ok(Some(Arc::clone(store)));
        }
        let store = match &self.place.shared {
            Err(e) => return Err(ToolError::failed(e.clone())),
            Ok(Some(shared)) => Arc::new(JobStore::shared(Arc::clone(shared), self.project_key(), &self.place.machine)),
            Ok(None) => {
                let path = self.durable_path();
                if !create && !path.exists() {
                    return Ok(None);
                }
                Arc::new(JobStore::open(&path)?)
            }
        };
        *slot = Some(Arc::clone(&store));
        Ok(Some(store))
    }

    /// The session jobs' store, opened now if it was not.
    fn session_store(&self) -> Result<Arc<JobStore>, ToolError> {
        if let Some(store) = self.session.get() {
            return Ok(Arc::clone(store));
        }
        let store = Arc::new(JobStore::in_memory()?);
        Ok(Arc::clone(self.session.get_or_init(|| store)))
    }

    /// Where the project's durable jobs are kept without shared storage.
    pub fn durable_path(&self) -> PathBuf {
        self.place.state_dir.join(FILE_NAME)
    }

    /// Where the project's durable jobs are kept, for people: the file, or the database.
    pub fn durable_place(&self) -> String {
        match &self.place.shared {
            Ok(Some(shared)) => format!("PostgreSQL {}, project {}", shared.server(), self.project_key()),
            _ => self.durable_path().display().to_string(),
        }
    }

    /// What names the project in shared storage: its state directory's name (the project's
    /// name and a digest of its path), the same on every machine serving it from one path.
    fn project_key(&self) -> String {
        self.place.state_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    fn runtime(&self) -> Option<Arc<Runtime>> {
        self.runtime.get().and_then(Weak::upgrade)
    }

    /// Checks a job's action can run here: the tool exists and takes this input, a prompt has
    /// the `Agent` tool to run it; no job calls the cron tools.
    fn check_action(&self, action: &JobAction) -> Result<(), ToolError> {
        let Some(runtime) = self.runtime() else { return Ok(()) };
        let (name, input) = match action {
            JobAction::Prompt { .. } => ("Agent", None),
            JobAction::Tool { tool, input } => (tool.as_str(), Some(input)),
        };
        let entry = runtime.registry().lookup(name).map_err(|e| match action {
            JobAction::Prompt { .. } => ToolError::failed(NO_PROVIDER),
            JobAction::Tool { .. } => e,
        })?;
        if let JobAction::Prompt { .. } = action
            && let Some(agents) = runtime.services().get::<toolbelt_core::Agents>()
        {
            // A server that lends agents its clients' models (sampling) has none for a job,
            // which runs with no client.
            let alone = toolbelt_core::SessionState::new("job", self.place.cwd.clone(), self.place.roots.clone());
            if !agents.0.available(&alone) {
                return Err(ToolError::failed(NO_PROVIDER));
            }
        }
        let canonical = entry.spec().name.clone();
        if CRON_TOOLS.contains(&canonical.as_str()) {
            return Err(ToolError::failed("a job cannot call the cron tools: no job creates or changes jobs"));
        }
        if let Some(input) = input {
            entry.prepare(input.clone())?;
        }
        Ok(())
    }

    /// The store and row of the job `id` (or name) this session sees.
    fn find(&self, cx: &ToolContext, id: &str) -> Result<(Arc<JobStore>, JobRow, bool), ToolError> {
        if let Some(session) = self.session.get()
            && let Some(row) = session.find_owned(id, &cx.job_owner())?
        {
            return Ok((Arc::clone(session), row, false));
        }
        if let Some(store) = self.durable(false)?
            && let Some(row) = store.find(id)?
        {
            return Ok((store, row, true));
        }
        let known: Vec<String> = self.list(cx)?.into_iter().map(|j| format!("{} ({})", j.id, j.name)).collect();
        Err(ToolError::failed(if known.is_empty() {
            format!("there is no scheduled job `{id}`; there are none (CronCreate schedules one)")
        } else {
            format!("there is no scheduled job `{id}`; the jobs are: {}", known.join(", "))
        }))
    }
}
