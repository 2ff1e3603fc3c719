//! `TeamDelete`: removes a team once none of its members runs.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use crate::agents::support::service;
use crate::agents::team::TeamResult;

/// Input of `TeamDelete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamDeleteInput {
    /// The team's name.
    pub team_name: String,
}

/// The `TeamDelete` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TeamDelete;

const DESCRIPTION: &str = "Deletes a team made with TeamCreate. Refused while any member is still running: wait \
for them with TaskOutput or stop them with TaskStop first. Its members' results stay readable with TaskOutput.";

impl Tool for TeamDelete {
    type Input = TeamDeleteInput;
    type Output = TeamResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("TeamDelete", DESCRIPTION)
            .deferred()
            .title("Delete a team of agents")
            .aliases(["team_delete"])
            .param_alias("name", "team_name")
            .category(Category::Agent)
            .tags(["agent", "team"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: true, open_world: false })
            .search_hint("team agents delete remove")
    }

    fn access(&self, input: &TeamDeleteInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(format!("team {}", input.team_name)))
    }

    async fn call(&self, input: TeamDeleteInput, cx: ToolContext) -> Result<TeamResult, ToolError> {
        let team = service(&cx)?.team_delete(&cx, &input.team_name)?;
        Ok(TeamResult { action: "deleted".into(), team })
    }
}
