//! [`erase`]: a typed tool ([`Tool`](crate::Tool) or [`PlannedTool`]) made the [`DynTool`] the
//! registry holds — its schemas derived from its types, its plan kept in the prepared input
//! from `access` to `call`, its typed output turned into what the runtime carries.

use std::any::TypeId;
use std::sync::{Arc, OnceLock};

use serde::Deserialize as _;
use serde::Serialize;
use serde_json::Value;

use crate::access::Access;
use crate::context::ToolContext;
use crate::deferred::DescribeContext;
use crate::error::{FieldError, ToolError};
use crate::output::{Render, ToolOutput};
use crate::planned::PlannedTool;
use crate::schema::{input_schema, output_schema};
use crate::spec::ToolSpec;
use crate::tool::{BoxFuture, DynTool, Prepared, TimeLimit, ToolNames};

/// A typed tool, erased. Its schemas are derived when the spec is first asked for: a process
/// that registers every tool and calls one (`toolbelt call`) derives one tool's schemas, not
/// some sixty (about 1.3 ms of its start-up).
struct Erased<T: PlannedTool> {
    tool: T,
    /// The tool's own spec, schemas not derived yet: its names and flags.
    head: ToolSpec,
    /// The complete spec, made at first use.
    spec: OnceLock<ToolSpec>,
}

/// Turns a typed tool ([`Tool`] or [`PlannedTool`]) into the erased form; its input and
/// output schemas are derived once, when its spec is first asked for.
pub fn erase<T: PlannedTool>(tool: T) -> Arc<dyn DynTool> {
    let head = tool.spec();
    Arc::new(Erased { tool, head, spec: OnceLock::new() })
}

impl<T: PlannedTool> Erased<T> {
    fn input<'p>(&self, p: &'p Prepared) -> Result<&'p T::Input, ToolError> {
        p.typed::<T::Input>()
            .ok_or_else(|| ToolError::internal(format!("input prepared for another tool reached `{}`", self.head.name)))
    }
}

impl<T: PlannedTool> DynTool for Erased<T> {
    fn spec(&self) -> &ToolSpec {
        self.spec.get_or_init(|| {
            let mut spec = self.head.clone();
            spec.input_schema = input_schema::<T::Input>();
            spec.output_schema = Some(output_schema::<T::Output>());
            spec
        })
    }

    fn names(&self) -> ToolNames<'_> {
        ToolNames::of(&self.head)
    }

    fn prepare(&self, input: Value) -> Result<Prepared, ToolError> {
        match T::Input::deserialize(&input) {
            Ok(typed) => Ok(Prepared::new(input, typed)),
            // The schema already passed, so this is a constraint serde alone knows of.
            Err(e) => Err(ToolError::InvalidInput {
                tool: self.head.name.clone(),
                problems: vec![FieldError { path: String::new(), message: e.to_string() }],
            }),
        }
    }

    fn access(&self, input: &mut Prepared, cx: &ToolContext) -> Result<Access, ToolError> {
        let (access, plan) = self.tool.access(self.input(input)?, cx)?;
        if TypeId::of::<T::Plan>() != TypeId::of::<()>() {
            input.keep_plan(plan);
        }
        Ok(access)
    }

    fn timeout(&self, input: &Prepared, cx: &ToolContext) -> Option<TimeLimit> {
        self.input(input).ok().and_then(|i| self.tool.timeout(i, cx))
    }

    fn describe(&self, cx: &DescribeContext<'_>) -> Option<String> {
        self.tool.describe(cx)
    }

    fn call<'a>(&'a self, input: Prepared, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let name = &self.head.name;
        let problem = match input.into_planned::<T::Input, T::Plan>() {
            (Some(typed), Some(plan)) => {
                return Box::pin(async move { typed_output(name, self.tool.call(typed, plan, cx).await?) });
            }
            (None, _) => format!("input prepared for another tool reached `{name}`"),
            (Some(_), None) => format!("`{name}` was asked to run a call it had not judged (access runs first)"),
        };
        Box::pin(std::future::ready(Err(ToolError::internal(problem))))
    }
}

/// The one place a typed result becomes what the runtime carries: the content its [`Render`]
/// gives, and the structured result its serialization gives.
fn typed_output<O: Serialize + Render>(tool: &str, output: O) -> Result<ToolOutput, ToolError> {
    let structured = serde_json::to_value(&output)
        .map_err(|e| ToolError::internal(format!("the result of `{tool}` cannot be serialized: {e}")))?;
    let is_error = output.is_error();
    Ok(ToolOutput { content: output.into_content(), structured: Some(structured), is_error })
}
