//! `TaskBroadcast`: sends one message to every member of a team.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use crate::agents::support::service;
use crate::agents::team::TeamResult;

/// Input of `TaskBroadcast`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskBroadcastInput {
    /// The team's name.
    pub team_name: String,
    /// The message every member gets.
    pub message: String,
}

/// The `TaskBroadcast` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskBroadcast;

const DESCRIPTION: &str = "Sends a message to every member of a team: members still running read it at their \
next turn; members that stopped continue in the background with their history and the message. Read their \
results with TaskOutput.";

impl Tool for TaskBroadcast {
    type Input = TaskBroadcastInput;
    type Output = TeamResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TaskBroadcast", DESCRIPTION)
            .deferred()
            .title("Message every member of a team")
            .aliases(["task_broadcast", "broadcast"])
            .category(Category::Agent)
            .tags(["agent", "team", "message"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: true })
            .search_hint("team broadcast message all agents")
    }

    fn access(&self, input: &TaskBroadcastInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().changes_state(format!("team {}", input.team_name)))
    }

    async fn call(&self, input: TaskBroadcastInput, cx: ToolContext) -> Result<TeamResult, ToolError> {
        let team = service(&cx)?.broadcast(&cx, &input.team_name, &input.message)?;
        Ok(TeamResult { action: "broadcast".into(), team })
    }
}
