//! Test doubles: small tools whose behaviour each test controls.
#![allow(dead_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{Access, OutputStream, Registry, TextOutput, Tool, ToolContext, ToolError, ToolSpec, erase};
use toolbelt_runtime::{Runtime, RuntimeConfig, Session};

/// What a `Probe` call does.
#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ProbeInput {
    /// Text to answer with.
    #[serde(default)]
    pub text: String,
    /// Whether the call must run alone.
    #[serde(default)]
    pub exclusive: bool,
    /// Sleep this long first (ms).
    #[serde(default)]
    pub sleep_ms: u64,
    /// Wait on the shared barrier first.
    #[serde(default)]
    pub barrier: bool,
    /// Fail with this message.
    pub fail: Option<String>,
    /// Panic.
    #[serde(default)]
    pub panic: bool,
    /// Answer with this many characters of `x`.
    pub repeat: Option<usize>,
    /// Emit a progress event and an output chunk.
    #[serde(default)]
    pub chatty: bool,
    /// Per-call timeout (ms), as an input asks for one.
    pub timeout_ms: Option<u64>,
    /// A time limit (ms) as a setting of the tool's gives one.
    pub set_limit_ms: Option<u64>,
    /// Ask for approval with this reason.
    pub approval: Option<String>,
    /// A credential, ignored (audit logs must not show it).
    pub api_token: Option<String>,
}

/// Shared observations of every probe call.
#[derive(Default)]
pub struct Observed {
    pub active: AtomicUsize,
    pub max_active: AtomicUsize,
    pub overlaps_with_exclusive: AtomicUsize,
    pub exclusive_active: AtomicUsize,
    pub finished: AtomicUsize,
}

pub struct Probe {
    pub observed: Arc<Observed>,
    pub barrier: Arc<tokio::sync::Barrier>,
}

struct Active<'a> {
    o: &'a Observed,
    exclusive: bool,
}

impl<'a> Active<'a> {
    fn enter(o: &'a Observed, exclusive: bool) -> Self {
        let now = o.active.fetch_add(1, Ordering::SeqCst) + 1;
        o.max_active.fetch_max(now, Ordering::SeqCst);
        if exclusive {
            o.exclusive_active.fetch_add(1, Ordering::SeqCst);
            if now > 1 {
                o.overlaps_with_exclusive.fetch_add(1, Ordering::SeqCst);
            }
        } else if o.exclusive_active.load(Ordering::SeqCst) > 0 {
            o.overlaps_with_exclusive.fetch_add(1, Ordering::SeqCst);
        }
        Self { o, exclusive }
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        if self.exclusive {
            self.o.exclusive_active.fetch_sub(1, Ordering::SeqCst);
        }
        self.o.active.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Tool for Probe {
    type Input = ProbeInput;
    type Output = TextOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Probe", "A test double.").aliases(["probe_alias"]).param_alias("message", "text")
    }

    fn access(&self, input: &ProbeInput, _: &ToolContext) -> Result<Access, ToolError> {
        let access = if input.exclusive { Access::exclusive().changes_state("probe") } else { Access::shared() };
        Ok(match &input.approval {
            Some(reason) => access.needs_approval(reason.clone()),
            None => access,
        })
    }

    fn timeout(&self, input: &ProbeInput, _cx: &ToolContext) -> Option<toolbelt_core::TimeLimit> {
        match (input.set_limit_ms, input.timeout_ms) {
            (Some(set), _) => Some(toolbelt_core::TimeLimit::Set(Duration::from_millis(set))),
            (None, asked) => asked.map(|ms| toolbelt_core::TimeLimit::Asked(Duration::from_millis(ms))),
        }
    }

    async fn call(&self, input: ProbeInput, cx: ToolContext) -> Result<TextOutput, ToolError> {
        let _active = Active::enter(&self.observed, input.exclusive);
        if input.barrier {
            self.barrier.wait().await;
        }
        if input.sleep_ms > 0 {
            tokio::time::sleep(Duration::from_millis(input.sleep_ms)).await;
        }
        if input.chatty {
            cx.progress("halfway", Some(0.5));
            cx.output(OutputStream::Stdout, "chunk");
        }
        if input.panic {
            panic!("probe panicked on purpose");
        }
        if let Some(msg) = input.fail {
            return Err(ToolError::failed(msg));
        }
        self.observed.finished.fetch_add(1, Ordering::SeqCst);
        let text = match input.repeat {
            Some(n) => "x".repeat(n),
            None => input.text,
        };
        Ok(TextOutput::new(text))
    }
}

/// A tool that spawns a real `sleep` process and records its pid, for cleanup tests.
pub struct Spawner {
    pub pid: Arc<std::sync::Mutex<Option<u32>>>,
}

#[derive(Deserialize, JsonSchema)]
pub struct SpawnerInput {}

impl Tool for Spawner {
    type Input = SpawnerInput;
    type Output = TextOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Spawner", "Runs `sleep 30`.").default_timeout(Duration::from_millis(300))
    }

    fn access(&self, _: &SpawnerInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().executes("sleep 30"))
    }

    async fn call(&self, _: SpawnerInput, _cx: ToolContext) -> Result<TextOutput, ToolError> {
        let mut child = tokio::process::Command::new("sleep")
            .arg("30")
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| ToolError::failed(e.to_string()))?;
        *self.pid.lock().unwrap() = child.id();
        let status = child.wait().await.map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(TextOutput::new(format!("exited: {status}")))
    }
}

pub struct Harness {
    pub runtime: Runtime,
    pub session: Session,
    pub observed: Arc<Observed>,
    pub pid: Arc<std::sync::Mutex<Option<u32>>>,
    pub dir: tempfile::TempDir,
}

pub fn registry(barrier_size: usize) -> (Arc<Registry>, Arc<Observed>, Arc<std::sync::Mutex<Option<u32>>>) {
    let observed = Arc::new(Observed::default());
    let pid = Arc::new(std::sync::Mutex::new(None));
    let registry = Arc::new(Registry::new());
    registry
        .register(erase(Probe {
            observed: observed.clone(),
            barrier: Arc::new(tokio::sync::Barrier::new(barrier_size)),
        }))
        .unwrap();
    registry.register(erase(Spawner { pid: pid.clone() })).unwrap();
    (registry, observed, pid)
}

pub fn harness_with(
    barrier_size: usize,
    config: RuntimeConfig,
    build: impl FnOnce(toolbelt_runtime::RuntimeBuilder) -> toolbelt_runtime::RuntimeBuilder,
) -> Harness {
    let (registry, observed, pid) = registry(barrier_size);
    let runtime =
        build(Runtime::builder(registry).authorizer(Arc::new(toolbelt_policy::AllowAll)).config(config)).build();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::new("test", dir.path().to_path_buf(), vec![], dir.path().join(".toolbelt/sessions/test"));
    Harness { runtime, session, observed, pid, dir }
}

pub fn harness() -> Harness {
    harness_with(3, RuntimeConfig::default(), |b| b)
}

pub fn data_dir(h: &Harness) -> PathBuf {
    h.session.data_dir().to_path_buf()
}
