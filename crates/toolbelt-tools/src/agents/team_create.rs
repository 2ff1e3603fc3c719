//! `TeamCreate`: makes a team, a set of named agents sharing a mailbox.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use crate::agents::support::service;
use crate::agents::team::TeamResult;

/// Input of `TeamCreate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamCreateInput {
    /// The team's name (1–64 characters), unique in this session.
    pub team_name: String,
    /// What the team is for.
    #[serde(default)]
    pub description: String,
}

/// The `TeamCreate` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TeamCreate;

const DESCRIPTION: &str = "Creates a team: named agents that work side by side in the background and share a \
mailbox. Start members with Agent{team_name, name, prompt}; message one with SendMessage{to: name}, all with \
TaskBroadcast; read each member's result with TaskOutput; delete the team with TeamDelete once its members are done.";

impl Tool for TeamCreate {
    type Input = TeamCreateInput;
    type Output = TeamResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TeamCreate", DESCRIPTION)
            .deferred()
            .title("Create a team of agents")
            .aliases(["team_create"])
            .param_alias("name", "team_name")
            .category(Category::Agent)
            .tags(["agent", "team"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: false })
            .search_hint("team agents group parallel")
    }

    fn access(&self, input: &TeamCreateInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(format!("team {}", input.team_name)))
    }

    async fn call(&self, input: TeamCreateInput, cx: ToolContext) -> Result<TeamResult, ToolError> {
        let team = service(&cx)?.team_create(&cx, &input.team_name, &input.description)?;
        Ok(TeamResult { action: "created".into(), team })
    }
}
