//! [`PlannedTool`]: a tool whose judgement works out what its call then runs.
//!
//! The runtime asks a tool what a call will touch ([`Tool::access`]) before any hook or
//! permission check, and runs it ([`Tool::call`]) once they allow it. For most tools the
//! input is all there is to run, and `access` only reads it. A few work something out to
//! judge it — Bash parses and classifies the command and decides how it will be confined,
//! WebFetch checks and normalizes the URL, Lint chooses the linters and writes their command
//! lines — and that is exactly what must run: were `call` to work it out again it could come
//! out otherwise (a setting changed in between, a probe answered differently, a cache held
//! another entry) and something would run that nobody judged.
//!
//! A planned tool's `access` returns its [`PlannedTool::Plan`] beside the access, and its
//! `call` receives that plan: the runtime carries it inside the [`crate::Prepared`] input from
//! the one to the other (and judges a hook's rewritten input afresh, plan included), so what
//! runs is what was judged by construction. Every [`Tool`] is a planned tool whose plan is `()`.

use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::access::Access;
use crate::context::ToolContext;
use crate::deferred::DescribeContext;
use crate::error::ToolError;
use crate::output::Render;
use crate::spec::ToolSpec;
use crate::tool::{TimeLimit, Tool};

/// A tool written in Rust whose [`access`](PlannedTool::access) works out a plan that its
/// [`call`](PlannedTool::call) runs. Everything else is as for [`Tool`], whose documentation
/// says what each item means; [`crate::erase`] takes either.
pub trait PlannedTool: Send + Sync + 'static {
    /// What the model sends (see [`Tool::Input`]).
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    /// What the tool returns (see [`Tool::Output`]).
    type Output: Serialize + JsonSchema + Render + Send + 'static;

    /// What `access` works out and `call` runs: the parsed command and how it is confined,
    /// the checked URL, the command lines. It lives from the judgement to the call, beside
    /// the input, so it must be `Send + Sync`.
    type Plan: Send + Sync + 'static;

    /// The manifest (see [`Tool::spec`]).
    fn spec(&self) -> ToolSpec;

    /// What this call will touch and whether it may run beside others, with the plan that
    /// the call will run. Called before any hook or permission check; must not have effects.
    fn access(&self, input: &Self::Input, cx: &ToolContext) -> Result<(Access, Self::Plan), ToolError>;

    /// This call's own time limit (see [`Tool::timeout`]).
    fn timeout(&self, _input: &Self::Input, _cx: &ToolContext) -> Option<TimeLimit> {
        None
    }

    /// The description shown to one session's model (see [`Tool::describe`]).
    fn describe(&self, _cx: &DescribeContext<'_>) -> Option<String> {
        None
    }

    /// Runs the call with the plan its judgement made. Must stop promptly when
    /// `cx.cancellation()` fires and leave nothing running behind.
    fn call(
        &self,
        input: Self::Input,
        plan: Self::Plan,
        cx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

/// A tool whose input is all it runs: its plan is `()`.
impl<T: Tool> PlannedTool for T {
    type Input = T::Input;
    type Output = T::Output;
    type Plan = ();

    fn spec(&self) -> ToolSpec {
        Tool::spec(self)
    }

    fn access(&self, input: &Self::Input, cx: &ToolContext) -> Result<(Access, ()), ToolError> {
        Tool::access(self, input, cx).map(|access| (access, ()))
    }

    fn timeout(&self, input: &Self::Input, cx: &ToolContext) -> Option<TimeLimit> {
        Tool::timeout(self, input, cx)
    }

    fn describe(&self, cx: &DescribeContext<'_>) -> Option<String> {
        Tool::describe(self, cx)
    }

    fn call(
        &self,
        input: Self::Input,
        (): (),
        cx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send {
        Tool::call(self, input, cx)
    }
}
