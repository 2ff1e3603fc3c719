//! `Agent` (also `Task`, `spawn`): starts a sub-agent on a task, in the foreground or the
//! background.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, AgentRequest, Annotations, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use crate::agents::AgentType;
use crate::agents::support::{AgentResult, service};

/// Input of `Agent`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    /// A short (3–5 word) description of the task, shown in listings.
    pub description: Option<String>,
    /// The task. The agent sees nothing of this conversation: say everything it needs (the
    /// goal, the files, what to report back).
    pub prompt: String,
    /// Which kind of agent to run (default `general-purpose`); the tool's description lists
    /// them.
    pub subagent_type: Option<String>,
    /// A model for this agent, instead of its definition's or the provider's default.
    pub model: Option<String>,
    /// Run in the background and answer at once with the agent's id; read its result with
    /// TaskOutput, stop it with TaskStop.
    pub run_in_background: Option<bool>,
    /// A team to join (made with TeamCreate). Members run in the background and need a `name`.
    pub team_name: Option<String>,
    /// A name for the agent, by which SendMessage reaches it.
    pub name: Option<String>,
}

/// The `Agent` tool.
#[derive(Debug, Clone)]
pub struct Agent {
    description: String,
}

impl Agent {
    /// The tool, its description listing the agent types there are.
    pub fn new(types: &[AgentType]) -> Self {
        let mut description = String::from(
            "Starts a sub-agent: a model with its own conversation and tools that works on a task on its own and \
             reports back. Use it for work that needs many steps or would fill this conversation (searching a large \
             codebase, a self-contained change, a side investigation); several can run at once in the background. \
             The agent sees nothing of this conversation, so the prompt must say everything it needs. Its final \
             answer comes back as the result; if it stops short (turn limit, time budget, an error), the result \
             says so and carries its last text and what it was doing. With run_in_background the call answers at \
             once with an id: read the result with TaskOutput, send more with SendMessage, stop it with TaskStop.\n\n\
             Agent types (subagent_type):",
        );
        for t in types {
            let first = t.description.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            description.push_str(&format!("\n- {}: {first}", t.name));
        }
        Self { description }
    }
}

impl Tool for Agent {
    type Input = AgentInput;
    type Output = AgentResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Agent", self.description.clone())
            .title("Run a sub-agent")
            .aliases(["Task", "spawn"])
            .param_alias("task", "prompt")
            .param_alias("label", "description")
            .category(Category::Agent)
            .tags(["agent", "subagent", "delegate", "background"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: true })
            .search_hint("sub-agent delegate task parallel background research")
            .time_limit_setting("`agent.time_budget`")
    }

    /// In the foreground, the agents' time budget with a margin to report in: the budget ends
    /// the agent, not the runtime's cap on calls. In the background the call returns at once.
    fn timeout(&self, input: &AgentInput, cx: &ToolContext) -> Option<toolbelt_core::TimeLimit> {
        if input.run_in_background == Some(true) {
            return None;
        }
        let budget = cx.agents()?.time_budget()?;
        Some(toolbelt_core::TimeLimit::Set(budget + toolbelt_core::OWN_LIMIT_MARGIN))
    }

    fn access(&self, input: &AgentInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        // What the agent does, its own calls declare (and the policy judges one by one).
        let what = input.subagent_type.as_deref().unwrap_or("general-purpose");
        Ok(Access::shared().changes_state(format!("agent {what}")))
    }

    async fn call(&self, input: AgentInput, cx: ToolContext) -> Result<AgentResult, ToolError> {
        let agents = service(&cx)?;
        let description = input.description.filter(|d| !d.trim().is_empty()).unwrap_or_else(|| short(&input.prompt));
        let request = AgentRequest {
            description,
            prompt: input.prompt,
            agent_type: input.subagent_type,
            model: input.model,
            background: input.run_in_background.unwrap_or(false),
            team: input.team_name,
            name: input.name,
        };
        Ok(AgentResult { report: agents.start(&cx, request).await? })
    }
}

/// The first few words of a prompt, for an agent started without a description.
fn short(prompt: &str) -> String {
    let words: Vec<&str> = prompt.split_whitespace().take(6).collect();
    words.join(" ")
}
