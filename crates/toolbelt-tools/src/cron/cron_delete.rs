//! `CronDelete`: cancels a scheduled job (Claude Code's name and parameter).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, JobReport, PermissionClass, Render, SideEffects, Tool, ToolContext,
    ToolError, ToolSpec,
};

use crate::cron::{job_line, service};

/// Input of `CronDelete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CronDeleteInput {
    /// The job's id, as CronCreate or CronList gave it (`job_1a2b3c4d`), or its name.
    #[schemars(length(min = 1))]
    pub id: String,
}

/// What `CronDelete` cancelled.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CronDeleteOutput {
    /// The job as it was.
    pub job: JobReport,
}

impl Render for CronDeleteOutput {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(format!("Deleted {}", job_line(&self.job)))]
    }
}

/// The `CronDelete` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronDelete;

const DESCRIPTION: &str = "Cancels a job scheduled with CronCreate (or cron): by its id, as CronCreate or \
CronList gave it, or by its name. A run in progress finishes; its output stays readable with TaskOutput.";

impl Tool for CronDelete {
    type Input = CronDeleteInput;
    type Output = CronDeleteOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("CronDelete", DESCRIPTION)
            .title("Cancel a scheduled job")
            .aliases(["cron_delete"])
            .param_alias("job_id", "id")
            .category(Category::Planning)
            .tags(["cron", "schedule", "automation"])
            .permission(PermissionClass::Write)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: true, open_world: false })
            .deferred()
            .search_hint("cron cancel delete remove scheduled job timer")
    }

    fn access(&self, _input: &CronDeleteInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state("the scheduled jobs"))
    }

    async fn call(&self, input: CronDeleteInput, cx: ToolContext) -> Result<CronDeleteOutput, ToolError> {
        Ok(CronDeleteOutput { job: service(&cx)?.delete(&cx, input.id.trim())? })
    }
}
