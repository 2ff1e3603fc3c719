//! The tool contract: typed [`Tool`] for tools written in Rust, erased [`DynTool`] for the
//! registry and for tools from elsewhere.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::access::Access;
use crate::context::ToolContext;
use crate::error::{FieldError, ToolError};
use crate::output::ToolOutput;
use crate::schema::input_schema;
use crate::spec::ToolSpec;

/// A boxed, sendable future: what erased tools and async policy traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool written in Rust.
///
/// The input type is the single source of truth: its serde shape is what the model sends,
/// its `schemars` schema (doc comments included) is what the model is shown and what calls
/// are validated against.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolbelt_core::{Access, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
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
/// impl Tool for Echo {
///     type Input = EchoInput;
///     const NAME: &'static str = "Echo";
///
///     fn spec(&self) -> ToolSpec {
///         ToolSpec::new(Self::NAME, "Sends the text back.").read_only()
///     }
///
///     fn access(&self, _: &EchoInput, _: &ToolContext) -> Result<Access, ToolError> {
///         Ok(Access::shared())
///     }
///
///     async fn call(&self, input: EchoInput, _: ToolContext) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text(input.text))
///     }
/// }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// What the model sends. Doc comments become the parameter docs.
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    /// The canonical name the model calls.
    const NAME: &'static str;

    /// The manifest: description, aliases, category, annotations, permission class…
    /// The name is always [`Tool::NAME`] and the input schema is derived from
    /// [`Tool::Input`], whatever this returns for them.
    fn spec(&self) -> ToolSpec;

    /// What this call will touch and whether it may run beside others. Called before any
    /// hook or permission check; must not have effects.
    fn access(&self, input: &Self::Input, cx: &ToolContext) -> Result<Access, ToolError>;

    /// How long this call may run, when the input says (a `timeout` parameter). `None`
    /// leaves it to the spec's default and then the runtime's.
    fn timeout(&self, _input: &Self::Input) -> Option<Duration> {
        None
    }

    /// Runs the call. Must stop promptly when `cx.cancellation()` fires and leave nothing
    /// running behind (kill spawned processes, remove temp files).
    fn call(&self, input: Self::Input, cx: ToolContext) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// A call's input after validation: the normalized JSON (for hooks and audit) and the typed
/// value the tool decoded from it.
pub struct Prepared {
    json: Value,
    typed: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("json", &self.json).finish_non_exhaustive()
    }
}

impl Prepared {
    /// Wraps a decoded input with the JSON it came from.
    pub fn new<T: Any + Send + Sync>(json: Value, typed: T) -> Self {
        Self { json, typed: Box::new(typed) }
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
}

/// The erased tool the registry and runtime work with. Implemented for every [`Tool`] by
/// [`erase`], and directly by tools whose shape is only known at run time (MCP upstreams).
pub trait DynTool: Send + Sync + 'static {
    /// The complete manifest, input schema included.
    fn spec(&self) -> &ToolSpec;

    /// Decodes an input that already passed schema validation.
    fn prepare(&self, input: Value) -> Result<Prepared, ToolError>;

    /// See [`Tool::access`].
    fn access(&self, input: &Prepared, cx: &ToolContext) -> Result<Access, ToolError>;

    /// See [`Tool::timeout`].
    fn timeout(&self, input: &Prepared) -> Option<Duration>;

    /// Runs the call.
    fn call<'a>(&'a self, input: Prepared, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

struct Erased<T: Tool> {
    tool: T,
    spec: ToolSpec,
}

/// Turns a typed tool into the erased form, deriving its input schema once.
pub fn erase<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    let mut spec = tool.spec();
    spec.name = T::NAME.to_string();
    spec.input_schema = input_schema::<T::Input>();
    Arc::new(Erased { tool, spec })
}

impl<T: Tool> Erased<T> {
    fn input<'p>(&self, p: &'p Prepared) -> Result<&'p T::Input, ToolError> {
        p.typed::<T::Input>()
            .ok_or_else(|| ToolError::internal(format!("input prepared for another tool reached `{}`", T::NAME)))
    }
}

impl<T: Tool> DynTool for Erased<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, input: Value) -> Result<Prepared, ToolError> {
        match T::Input::deserialize(&input) {
            Ok(typed) => Ok(Prepared::new(input, typed)),
            // The schema already passed, so this is a constraint serde alone knows of.
            Err(e) => Err(ToolError::InvalidInput {
                tool: T::NAME.to_string(),
                problems: vec![FieldError { path: String::new(), message: e.to_string() }],
            }),
        }
    }

    fn access(&self, input: &Prepared, cx: &ToolContext) -> Result<Access, ToolError> {
        self.tool.access(self.input(input)?, cx)
    }

    fn timeout(&self, input: &Prepared) -> Option<Duration> {
        self.input(input).ok().and_then(|i| self.tool.timeout(i))
    }

    fn call<'a>(&'a self, input: Prepared, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match input.into_typed::<T::Input>() {
            Some(typed) => Box::pin(self.tool.call(typed, cx)),
            None => Box::pin(std::future::ready(Err(ToolError::internal(format!(
                "input prepared for another tool reached `{}`",
                T::NAME
            ))))),
        }
    }
}
