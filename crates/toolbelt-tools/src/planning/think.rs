//! `Think`: a place to reason before acting — weighing a tool's results, checking a plan
//! against the rules it must follow. It changes nothing; the thought is recorded (the
//! session's events, the audit log) and the model goes on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

/// Input of `Think`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThinkInput {
    /// The thought.
    #[schemars(length(min = 1))]
    pub thought: String,
}

/// The `Think` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Think;

const DESCRIPTION: &str = "Think something through before acting: weigh what the last tool results mean, check a \
    plan against the rules and the request, list what is still unknown. Nothing is fetched or changed; the thought \
    is recorded. Use it between tool calls when the next step is not obvious.";

/// What `Think` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ThinkOutput {
    /// Characters of thought recorded.
    pub chars: usize,
}

impl Render for ThinkOutput {
    fn render(&self) -> Vec<Content> {
        vec![Content::text("Thought recorded.")]
    }
}

impl Tool for Think {
    type Input = ThinkInput;
    type Output = ThinkOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Think", DESCRIPTION)
            .title("Think")
            .aliases(["think"])
            .category(Category::Planning)
            .tags(["reasoning"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::None)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("think reason reflect plan scratchpad consider")
    }

    fn access(&self, _: &ThinkInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: ThinkInput, cx: ToolContext) -> Result<ThinkOutput, ToolError> {
        cx.progress(input.thought.clone(), None);
        Ok(ThinkOutput { chars: input.thought.chars().count() })
    }
}
