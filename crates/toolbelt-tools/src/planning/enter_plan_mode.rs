//! `EnterPlanMode`: the session switches to plan mode — it explores and designs, reads and
//! read-only commands run, everything else is refused — until `ExitPlanMode` presents a plan
//! a person approves.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, Modes, PermissionClass, PermissionMode, Render, SessionSlot, SideEffects,
    Tool, ToolContext, ToolError, ToolSpec,
};

/// Input of `EnterPlanMode` (nothing).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterPlanModeInput {}

/// What the session was in before plan mode: `ExitPlanMode` returns it there. Kept in the
/// session, so a named session keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanState {
    /// The mode before `EnterPlanMode` (`default`, `acceptEdits`…), while in plan mode.
    pub previous: Option<PermissionMode>,
}

impl SessionSlot for PlanState {
    const KEY: &'static str = "plan_mode";
    const SHARED: bool = true;
}

/// The `EnterPlanMode` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnterPlanMode;

const DESCRIPTION: &str = "Switches the session to plan mode, for tasks that deserve a plan before any change: \
    several files, an unclear approach, an architectural choice. In plan mode you read, search and run read-only \
    commands; edits and other commands are refused. When the plan is ready, present it with ExitPlanMode, which asks \
    the user to approve it.";

/// What `EnterPlanMode` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EnterPlanModeOutput {
    /// The mode the session was in (where an approved plan returns it).
    pub previous_mode: PermissionMode,
    /// Whether the session was already in plan mode.
    pub already: bool,
}

impl Render for EnterPlanModeOutput {
    fn render(&self) -> Vec<Content> {
        let text = if self.already {
            "The session is already in plan mode. Explore, then present your plan with ExitPlanMode.".to_string()
        } else {
            format!(
                "Entered plan mode (from {}). Explore the code and design the change: reads, searches and read-only \
                 commands run; edits and other commands are refused. When the plan is ready, present it with \
                 ExitPlanMode for the user to approve.",
                self.previous_mode
            )
        };
        vec![Content::text(text)]
    }
}

impl Tool for EnterPlanMode {
    type Input = EnterPlanModeInput;
    type Output = EnterPlanModeOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("EnterPlanMode", DESCRIPTION)
            .title("Enter plan mode")
            .aliases(["enter_plan_mode"])
            .category(Category::Planning)
            .tags(["plan", "mode", "session"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: true, open_world: false })
            .search_hint("plan mode design before editing read only explore")
    }

    fn access(&self, _: &EnterPlanModeInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state("the session's permission mode"))
    }

    async fn call(&self, _: EnterPlanModeInput, cx: ToolContext) -> Result<EnterPlanModeOutput, ToolError> {
        let modes = modes(&cx)?;
        let current = modes.0.mode(cx.session()).ok_or_else(no_modes)?;
        if current == PermissionMode::Plan {
            return Ok(EnterPlanModeOutput { previous_mode: current, already: true });
        }
        modes.0.switch(cx.session(), PermissionMode::Plan).map_err(ToolError::failed)?;
        cx.with_slot::<PlanState, _>(|s| s.previous = Some(current));
        Ok(EnterPlanModeOutput { previous_mode: current, already: false })
    }
}

/// The runtime's mode switch.
pub(crate) fn modes(cx: &ToolContext) -> Result<std::sync::Arc<Modes>, ToolError> {
    cx.service::<Modes>().ok_or_else(no_modes)
}

/// The error where the policy has no modes.
pub(crate) fn no_modes() -> ToolError {
    ToolError::failed("this runtime's policy has no permission modes, so there is no plan mode here")
}
