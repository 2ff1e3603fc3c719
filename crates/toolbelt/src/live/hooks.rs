//! Hooks a running runtime can have replaced: the settings' hooks, swapped whole when a
//! settings file (or an enabled plugin's hooks) changes. A call runs the hooks in force when
//! it reaches each stage; one already past a stage is not affected.

use std::sync::{Arc, RwLock};

use toolbelt_core::BoxFuture;
use toolbelt_policy::hooks::HookSet;
use toolbelt_policy::{CallInfo, Finished, HookRun, Hooks, PostToolReport, PreToolOutcome, SessionInfo, SubagentInfo};

/// The hooks in force, replaceable while calls run.
#[derive(Debug, Default)]
pub struct LiveHooks(RwLock<Arc<HookSet>>);

impl LiveHooks {
    /// `hooks`, in force until replaced.
    pub fn new(hooks: HookSet) -> Self {
        Self(RwLock::new(Arc::new(hooks)))
    }

    /// The hooks in force now.
    fn current(&self) -> Arc<HookSet> {
        match self.0.read() {
            Ok(hooks) => Arc::clone(&hooks),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Puts `hooks` in force for every stage reached from now on.
    pub fn replace(&self, hooks: HookSet) {
        match self.0.write() {
            Ok(mut slot) => *slot = Arc::new(hooks),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(hooks),
        }
    }
}

impl Hooks for LiveHooks {
    fn is_empty(&self) -> bool {
        self.current().is_empty()
    }

    fn pre_tool_use<'a>(&'a self, call: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome> {
        let hooks = self.current();
        Box::pin(async move { hooks.pre_tool_use(call).await })
    }

    fn post_tool_use<'a>(&'a self, done: &'a Finished<'a>) -> BoxFuture<'a, PostToolReport> {
        let hooks = self.current();
        Box::pin(async move { hooks.post_tool_use(done).await })
    }

    fn session_start<'a>(&'a self, session: &'a SessionInfo<'a>) -> BoxFuture<'a, (Vec<String>, Vec<HookRun>)> {
        let hooks = self.current();
        Box::pin(async move { hooks.session_start(session).await })
    }

    fn session_end<'a>(&'a self, session: &'a SessionInfo<'a>) -> BoxFuture<'a, Vec<HookRun>> {
        let hooks = self.current();
        Box::pin(async move { hooks.session_end(session).await })
    }

    fn subagent_start<'a>(&'a self, agent: &'a SubagentInfo<'a>) -> BoxFuture<'a, (Vec<String>, Vec<HookRun>)> {
        let hooks = self.current();
        Box::pin(async move { hooks.subagent_start(agent).await })
    }

    fn subagent_stop<'a>(&'a self, agent: &'a SubagentInfo<'a>) -> BoxFuture<'a, Vec<HookRun>> {
        let hooks = self.current();
        Box::pin(async move { hooks.subagent_stop(agent).await })
    }
}
