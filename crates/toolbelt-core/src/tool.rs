//! The tool contract: typed [`Tool`] for tools written in Rust, erased [`DynTool`] for the
//! registry and for tools from elsewhere.

use std::any::{Any, TypeId};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::access::Access;
use crate::context::ToolContext;
use crate::deferred::DescribeContext;
use crate::error::ToolError;
use crate::output::{Render, ToolOutput};
use crate::spec::{Defer, ToolSpec};

/// A boxed, sendable future: what erased tools and async policy traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Room a tool whose limit is a setting of its own ([`TimeLimit::Set`]) leaves between its own
/// stop and the runtime's timer: the tool stops at its setting and still answers, saying what
/// to raise, before the runtime cuts the call off.
pub const OWN_LIMIT_MARGIN: Duration = Duration::from_secs(5);

/// A call's own time limit ([`Tool::timeout`]). Each limit has one owner: the model's request
/// is bounded by the runtime's cap, a person's setting is not second-guessed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeLimit {
    /// What the call's input asks for (Bash's `timeout`, TaskOutput's wait): never above
    /// `runtime.max_timeout`.
    Asked(Duration),
    /// What a setting of the tool's gives (`lint.timeout`, `web.timeout`,
    /// `agent.time_budget`, an MCP server's `timeout`), margin included: given as it is.
    Set(Duration),
}

/// A tool written in Rust.
///
/// Two types are the single source of truth. [`Tool::Input`]: its serde shape is what the
/// model sends, its `schemars` schema (doc comments included) is what the model is shown and
/// what calls are validated against. [`Tool::Output`]: its schema is the tool's output schema,
/// its serialization the structured result, and its [`Render`] implementation the text the
/// model reads — one value, so the three cannot drift apart, and a client that shows the model
/// the structured result instead of the text shows it the same things.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use toolbelt_core::{Access, Content, Render, Tool, ToolContext, ToolError, ToolSpec};
///
/// struct Echo;
///
/// /// Input of `Echo`.
/// #[derive(Deserialize, JsonSchema)]
/// struct EchoInput {
///     /// The text to send back.
///     text: String,
/// }
///
/// /// What `Echo` returns.
/// #[derive(Serialize, JsonSchema)]
/// struct EchoOutput {
///     /// The text, as sent.
///     text: String,
///     /// Its length in characters.
///     chars: usize,
/// }
///
/// impl Render for EchoOutput {
///     fn render(&self) -> Vec<Content> {
///         vec![Content::text(&self.text)]
///     }
/// }
///
/// impl Tool for Echo {
///     type Input = EchoInput;
///     type Output = EchoOutput;
///
///     fn spec(&self) -> ToolSpec {
///         ToolSpec::new("Echo", "Sends the text back.").read_only()
///     }
///
///     fn access(&self, _: &EchoInput, _: &ToolContext) -> Result<Access, ToolError> {
///         Ok(Access::shared())
///     }
///
///     async fn call(&self, input: EchoInput, _: ToolContext) -> Result<EchoOutput, ToolError> {
///         let chars = input.text.chars().count();
///         Ok(EchoOutput { text: input.text, chars })
///     }
/// }
/// ```
///
/// A tool cannot hand back a structured value of any other type than its declared output:
///
/// ```compile_fail
/// # use schemars::JsonSchema;
/// # use serde::{Deserialize, Serialize};
/// # use toolbelt_core::{Access, Content, Render, Tool, ToolContext, ToolError, ToolSpec};
/// # #[derive(Deserialize, JsonSchema)]
/// # struct In {}
/// #[derive(Serialize, JsonSchema)]
/// struct Declared { n: u64 }
/// #[derive(Serialize, JsonSchema)]
/// struct Other { s: String }
/// # impl Render for Declared { fn render(&self) -> Vec<Content> { Vec::new() } }
/// # impl Render for Other { fn render(&self) -> Vec<Content> { Vec::new() } }
/// struct Liar;
/// impl Tool for Liar {
///     type Input = In;
///     type Output = Declared;
///     fn spec(&self) -> ToolSpec { ToolSpec::new("Liar", "x") }
///     fn access(&self, _: &In, _: &ToolContext) -> Result<Access, ToolError> { Ok(Access::shared()) }
///     async fn call(&self, _: In, _: ToolContext) -> Result<Declared, ToolError> {
///         Ok(Other { s: String::new() })
///     }
/// }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// What the model sends. Doc comments become the parameter docs.
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    /// What the tool returns. It must be a struct (MCP requires an object for
    /// `structuredContent`). A client may show the model the structured result instead of
    /// the text, so everything the text tells the model — the payload (a file's lines, a
    /// page's text, a command's output), notices and how to get the rest — must be in it
    /// too. Fields marked `#[serde(skip)]` stay out of the schema and the structured result:
    /// keep that for what the model reads in another form (an image's bytes, sent as image
    /// content) or what the text shows differently (a listing the structured result holds as
    /// a list).
    type Output: Serialize + JsonSchema + Render + Send + 'static;

    /// The manifest: name, description, aliases, category, annotations, permission class…
    /// The input and output schemas are derived from [`Tool::Input`] and [`Tool::Output`],
    /// whatever this returns for them.
    fn spec(&self) -> ToolSpec;

    /// What this call will touch and whether it may run beside others. Called before any
    /// hook or permission check; must not have effects.
    fn access(&self, input: &Self::Input, cx: &ToolContext) -> Result<Access, ToolError>;

    /// This call's own time limit, when it has one: what its input asks for
    /// ([`TimeLimit::Asked`], Bash's `timeout`: capped by `runtime.max_timeout` like the
    /// defaults), or what a setting of the tool's gives ([`TimeLimit::Set`], Lint's
    /// `lint.timeout` read from `cx`'s services, which [`ToolSpec::time_limit_setting`] names:
    /// honoured as given, since a person chose it). `None` leaves it to the defaults (the
    /// spec's, then the runtime's). `cx` is the context the call will run in, but its
    /// `limits()` are not yet this call's: they are what this decides.
    fn timeout(&self, _input: &Self::Input, _cx: &ToolContext) -> Option<TimeLimit> {
        None
    }

    /// The description shown to one session's model, when it depends on the session (the
    /// skills found where it works, the tools it has not loaded). `None` keeps the spec's.
    fn describe(&self, _cx: &DescribeContext<'_>) -> Option<String> {
        None
    }

    /// Runs the call. Must stop promptly when `cx.cancellation()` fires and leave nothing
    /// running behind (kill spawned processes, remove temp files).
    fn call(&self, input: Self::Input, cx: ToolContext)
    -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

/// A call's input after validation: the normalized JSON (for hooks and audit), the typed
/// value the tool decoded from it, and — once the tool has judged it — the plan its
/// [`PlannedTool::access`](crate::PlannedTool::access) made, which the call then runs.
pub struct Prepared {
    json: Value,
    typed: Box<dyn Any + Send + Sync>,
    plan: Option<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("json", &self.json).finish_non_exhaustive()
    }
}

impl Prepared {
    /// Wraps a decoded input with the JSON it came from.
    pub fn new<T: Any + Send + Sync>(json: Value, typed: T) -> Self {
        Self { json, typed: Box::new(typed), plan: None }
    }

    /// The normalized JSON input.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The typed input, if it is a `T`.
    pub fn typed<T: Any>(&self) -> Option<&T> {
        self.typed.downcast_ref::<T>()
    }

    /// Takes the typed input out, if it is a `T`.
    pub fn into_typed<T: Any>(self) -> Option<T> {
        self.typed.downcast::<T>().ok().map(|b| *b)
    }

    /// Keeps the plan a judgement of this input made, replacing an earlier one.
    pub fn keep_plan<P: Any + Send + Sync>(&mut self, plan: P) {
        self.plan = Some(Box::new(plan));
    }

    /// Takes the JSON input and the plan kept for it out: what a tool whose shape is known
    /// only at run time (one defined in the settings) runs, as its [`DynTool::access`] judged it.
    pub fn into_json_and_plan<P: Any>(self) -> (Value, Option<P>) {
        let Self { json, plan, .. } = self;
        (json, plan.and_then(|p| p.downcast::<P>().ok().map(|b| *b)))
    }

    /// Takes the typed input and the plan kept for it out. A `()` plan needs no judgement to
    /// have been kept; any other is `None` until [`Prepared::keep_plan`] kept one.
    pub(crate) fn into_planned<T: Any, P: Any>(self) -> (Option<T>, Option<P>) {
        let Self { typed, plan, .. } = self;
        let unit = || -> Box<dyn Any + Send + Sync> { Box::new(()) };
        let plan = plan.or_else(|| (TypeId::of::<P>() == TypeId::of::<()>()).then(unit));
        (typed.downcast::<T>().ok().map(|b| *b), plan.and_then(|p| p.downcast::<P>().ok().map(|b| *b)))
    }
}

/// The erased tool the registry and runtime work with. Implemented for every [`Tool`] by
/// [`erase`](crate::erase), and directly by tools whose shape is only known at run time (MCP upstreams).
pub trait DynTool: Send + Sync + 'static {
    /// The complete manifest, input schema included.
    fn spec(&self) -> &ToolSpec;

    /// Decodes an input that already passed schema validation.
    fn prepare(&self, input: Value) -> Result<Prepared, ToolError>;

    /// See [`Tool::access`]. A tool that plans ([`PlannedTool`](crate::PlannedTool)) keeps its plan in `input`
    /// ([`Prepared::keep_plan`]), for [`DynTool::call`] to run.
    fn access(&self, input: &mut Prepared, cx: &ToolContext) -> Result<Access, ToolError>;

    /// See [`Tool::timeout`].
    fn timeout(&self, input: &Prepared, cx: &ToolContext) -> Option<TimeLimit>;

    /// See [`Tool::describe`].
    fn describe(&self, _cx: &DescribeContext<'_>) -> Option<String> {
        None
    }

    /// Runs the call: `input` as [`DynTool::access`] judged it, plan included.
    fn call<'a>(&'a self, input: Prepared, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// The names the tool answers to and whether it is deferred: what the registry reads as
    /// the tool joins. The same as [`DynTool::spec`]'s; a tool whose spec is costly to build
    /// (a typed tool's schemas) answers without building it.
    fn names(&self) -> ToolNames<'_> {
        ToolNames::of(self.spec())
    }
}

/// A tool's canonical name, its aliases and whether it is deferred ([`DynTool::names`]).
#[derive(Debug, Clone, Copy)]
pub struct ToolNames<'a> {
    /// The canonical name.
    pub name: &'a str,
    /// The other names it answers to.
    pub aliases: &'a [String],
    /// Whether its definition is sent up front.
    pub defer: Defer,
}

impl<'a> ToolNames<'a> {
    /// The names of `spec`.
    pub fn of(spec: &'a ToolSpec) -> Self {
        Self { name: &spec.name, aliases: &spec.aliases, defer: spec.defer }
    }
}
