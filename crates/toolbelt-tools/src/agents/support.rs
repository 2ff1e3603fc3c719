//! What the agent tools share: finding the agent service, and an agent's report as they
//! return it (its text is [`crate::tasks::render_report`], which the shell's task tools show
//! too).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{AgentReport, AgentService, AgentStatus, Content, Render, ToolContext, ToolError};

use crate::tasks::render_report;

/// The agent service, or the error saying agents are not available here.
pub(crate) fn service(cx: &ToolContext) -> Result<Arc<dyn AgentService>, ToolError> {
    cx.agents().ok_or_else(|| {
        ToolError::failed(
            "agents are not available here: no model provider is configured (`toolbelt config check` says what to set)",
        )
    })
}

/// An agent's report, as the agent tools return it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentResult {
    /// The agent's report.
    #[serde(flatten)]
    pub report: AgentReport,
}

impl Render for AgentResult {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(render_report(&self.report))]
    }

    fn is_error(&self) -> bool {
        self.report.status == AgentStatus::Failed
    }
}
