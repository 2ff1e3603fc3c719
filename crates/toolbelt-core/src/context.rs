//! The narrow view of the session a tool gets for one call.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::access::Access;
use crate::error::ToolError;
use crate::event::{EventSink, OutputStream, ToolEvent};
use crate::follow_up::FollowUp;
use crate::session::{SessionSlot, SessionState};

/// Limits that apply to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long the call may run before the runtime stops it.
    pub timeout: Duration,
    /// How many characters of text the model gets before the runtime cuts the result.
    pub output_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let defaults = CallLimits::DEFAULT;
        Self { timeout: defaults.default_timeout, output_budget: defaults.output_budget }
    }
}

/// The limits every call runs under: the one home of these numbers. The runtime enforces
/// them (its defaults come from [`CallLimits::DEFAULT`], settings may change them), and a
/// tool whose description states one is built with the values in force, so what the model
/// reads is what happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    /// Timeout of a call when neither its input nor its tool's spec gives one.
    pub default_timeout: Duration,
    /// No call runs longer than this, whatever it asks for.
    pub max_timeout: Duration,
    /// Characters of text the model gets from one call before the rest is cut and spilled.
    pub output_budget: usize,
}

impl CallLimits {
    /// Two minutes per call, ten at most, 30,000 characters of text per result: what agents
    /// people already use do.
    pub const DEFAULT: CallLimits = CallLimits {
        default_timeout: Duration::from_secs(120),
        max_timeout: Duration::from_secs(600),
        output_budget: 30_000,
    };
}

impl Default for CallLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Paths a call must not see: the files deny rules keep from reading. The runtime sets it
/// from the permission policy; tools that walk many files (Grep, Glob, ListDir) leave these
/// out of their results, so a denied file's name and content never reach the model.
pub trait HiddenPaths: Send + Sync + std::fmt::Debug {
    /// Whether `path` (absolute, as the tool found it) is hidden.
    fn is_hidden(&self, path: &Path) -> bool;

    /// The hidden files and directories that can be named without wildcards: a sandboxed
    /// command gets them masked (empty), so no program it runs can read them.
    fn masks(&self) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// Shared services keyed by type (an HTTP client, a task manager…), set up once by whoever
/// builds the runtime and handed to every call. Tools ask for what they need by type.
#[derive(Clone, Default)]
pub struct Extensions {
    map: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions").field("len", &self.map.len()).finish()
    }
}

impl Extensions {
    /// Adds a service, replacing any of the same type. Meant for set-up, before sharing.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        Arc::make_mut(&mut self.map).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// Adds a service already shared elsewhere (so state it keeps, such as a cache, is the
    /// same one), replacing any of the same type.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        Arc::make_mut(&mut self.map).insert(TypeId::of::<T>(), value);
    }

    /// The service of type `T`, if one was set up.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map.get(&TypeId::of::<T>()).and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }
}

/// Everything a tool may use during one call. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ToolContext {
    call_id: Arc<str>,
    session: Arc<SessionState>,
    cancel: CancellationToken,
    events: EventSink,
    limits: Limits,
    services: Extensions,
    extra_roots: Arc<[PathBuf]>,
    hidden: Option<Arc<dyn HiddenPaths>>,
    follow_up: Option<Arc<dyn FollowUp>>,
    /// The working directory the call was judged in, when the runtime pinned it.
    cwd: Option<Arc<Path>>,
}

impl ToolContext {
    /// A context for one call. The runtime builds these; tests may too.
    pub fn new(
        call_id: impl Into<Arc<str>>,
        session: Arc<SessionState>,
        cancel: CancellationToken,
        events: EventSink,
        limits: Limits,
        services: Extensions,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            session,
            cancel,
            events,
            limits,
            services,
            extra_roots: Arc::from([]),
            hidden: None,
            follow_up: None,
            cwd: None,
        }
    }

    /// The same context hiding these paths from the call ([`HiddenPaths`]).
    pub fn with_hidden(mut self, hidden: Option<Arc<dyn HiddenPaths>>) -> Self {
        self.hidden = hidden;
        self
    }

    /// Whether `path` is hidden from this call (a deny rule keeps it from being read): tools
    /// that list or search files leave it out.
    pub fn is_hidden(&self, path: &Path) -> bool {
        self.hidden.as_ref().is_some_and(|h| h.is_hidden(path))
    }

    /// What hides paths from this call, to hand to work that outlives a borrow of the context.
    pub fn hidden(&self) -> Option<Arc<dyn HiddenPaths>> {
        self.hidden.clone()
    }

    /// Whether any path may be hidden (so a tool walking thousands of files can skip the
    /// check when none is).
    pub fn hides_paths(&self) -> bool {
        self.hidden.is_some()
    }

    /// The same context with more workspace roots for this call only: the directories of
    /// paths outside the session's roots that the permission engine (or a person) allowed
    /// this call to touch. Files there are still opened beneath these roots' handles.
    pub fn with_extra_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.extra_roots = roots.into();
        self
    }

    /// The same context with the call's time limit set to `timeout` (the runtime learns it
    /// from the tool, given a context, before the call runs).
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.limits.timeout = timeout;
        self
    }

    /// The same context asking `judge` about access the call needs after it started
    /// ([`ToolContext::authorize`]).
    pub fn with_follow_up(mut self, judge: Arc<dyn FollowUp>) -> Self {
        self.follow_up = Some(judge);
        self
    }

    /// Asks the runtime whether the call may also have `access`, which it learnt of only
    /// while running (a redirect to another host): judged by the same rules, mode and
    /// approver as the call, and recorded with it. `Ok` means go ahead. A context with no
    /// runtime behind it refuses, so nothing is reached that nobody judged.
    pub async fn authorize(&self, access: Access) -> Result<(), ToolError> {
        match &self.follow_up {
            Some(judge) => judge.authorize(access).await,
            None => {
                let what: Vec<String> = access.touches.iter().map(ToString::to_string).collect();
                Err(ToolError::Denied {
                    reason: format!(
                        "{} was not declared before the call and nothing here can allow it",
                        what.join(", ")
                    ),
                })
            }
        }
    }

    /// A context over a fresh session rooted at `cwd`, with no listener: for tests and for
    /// calling a tool directly.
    pub fn detached(cwd: PathBuf) -> Self {
        let session = Arc::new(SessionState::new("detached", cwd, Vec::new()));
        Self::new(
            "call",
            session,
            CancellationToken::new(),
            EventSink::none(),
            Limits::default(),
            Extensions::default(),
        )
    }

    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's working directory: the one it was judged in when the runtime pinned it
    /// ([`ToolContext::with_cwd`]), else the session's at this moment.
    pub fn cwd(&self) -> PathBuf {
        match &self.cwd {
            Some(cwd) => cwd.to_path_buf(),
            None => self.session.cwd(),
        }
    }

    /// The same context working in `cwd` whatever the session's working directory becomes
    /// meanwhile (another call's `cd`): relative paths resolve where the call was judged.
    pub fn with_cwd(mut self, cwd: PathBuf) -> Self {
        self.cwd = Some(Arc::from(cwd));
        self
    }

    /// The workspace roots of this call: the session's, then any allowed for this call only
    /// ([`ToolContext::with_extra_roots`]).
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut roots = self.session.roots();
        roots.extend(self.extra_roots.iter().filter(|r| !roots.contains(r)).cloned().collect::<Vec<_>>());
        roots
    }

    /// Where this call may read: [`ToolContext::roots`] and the session's data directory (a
    /// read-only root: spilled output and task logs).
    pub fn read_roots(&self) -> Vec<PathBuf> {
        let mut roots = self.roots();
        for dir in self.session.read_roots() {
            if !roots.contains(&dir) {
                roots.push(dir);
            }
        }
        roots
    }

    /// Resolves a path against the call's working directory ([`ToolContext::cwd`]).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() { path.to_path_buf() } else { self.cwd().join(path) }
    }

    /// The session state (cwd, roots, typed slots).
    pub fn session(&self) -> &Arc<SessionState> {
        &self.session
    }

    /// The session slot of type `T`; see [`SessionState::with_slot`].
    pub fn with_slot<T: SessionSlot, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.session.with_slot(f)
    }

    /// Fires when the call is cancelled or times out; long-running tools should watch it
    /// and clean up (kill processes, remove temp files) before returning.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The call's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The shared service of type `T`, if set up.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.services.get::<T>()
    }

    /// Whether anybody listens to events (skip formatting progress nobody reads).
    pub fn is_streaming(&self) -> bool {
        self.events.is_listening()
    }

    /// Where this session's background tasks report once the call that started them has
    /// returned ([`crate::TaskEvents`]); a silent sink when the front end set none.
    pub fn task_events(&self) -> EventSink {
        self.with_slot::<crate::TaskEvents, _>(|t| t.sink())
    }

    /// Reports progress, with a fraction from 0.0 to 1.0 when known.
    pub fn progress(&self, message: impl Into<String>, fraction: Option<f64>) {
        if self.events.is_listening() {
            self.events.emit(&ToolEvent::Progress {
                id: self.call_id.to_string(),
                message: message.into(),
                fraction: fraction.map(|f| f.clamp(0.0, 1.0)),
            });
        }
    }

    /// Streams a chunk of live output.
    pub fn output(&self, stream: OutputStream, chunk: impl Into<String>) {
        if self.events.is_listening() {
            self.events.emit(&ToolEvent::Output { id: self.call_id.to_string(), stream, chunk: chunk.into() });
        }
    }
}
