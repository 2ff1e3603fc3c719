//! `CronList`: the scheduled jobs this session sees — its own and the project's durable
//! ones — soonest first, each with its next firing and latest run (Claude Code's name).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, JobReport, PermissionClass, Render, SideEffects, Tool, ToolContext,
    ToolError, ToolSpec,
};

use crate::cron::{job_lines, service};

/// Input of `CronList` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CronListInput {}

/// The jobs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CronListOutput {
    /// Soonest first.
    pub jobs: Vec<JobReport>,
}

impl Render for CronListOutput {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(job_lines(&self.jobs))]
    }
}

/// The `CronList` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronList;

const DESCRIPTION: &str = "Lists the scheduled jobs: this session's and the project's durable ones, soonest \
first, each with its id, schedule, next firing, whether it recurs, and its latest run (TaskOutput with a run's id \
reads its output).";

impl Tool for CronList {
    type Input = CronListInput;
    type Output = CronListOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("CronList", DESCRIPTION)
            .title("List scheduled jobs")
            .aliases(["cron_list"])
            .category(Category::Planning)
            .tags(["cron", "schedule", "automation"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::None)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .deferred()
            .search_hint("cron list scheduled jobs timers next run")
    }

    fn access(&self, _input: &CronListInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, _input: CronListInput, cx: ToolContext) -> Result<CronListOutput, ToolError> {
        Ok(CronListOutput { jobs: service(&cx)?.list(&cx)? })
    }
}
