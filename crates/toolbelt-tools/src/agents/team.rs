//! A team's state as the team tools return it.

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{AgentStatus, Content, Render, TeamReport};

/// What a team tool did, and the team as it stands.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TeamResult {
    /// What happened (`created`, `deleted`, `broadcast`).
    pub action: String,
    /// The team.
    #[serde(flatten)]
    pub team: TeamReport,
}

impl Render for TeamResult {
    fn render(&self) -> Vec<Content> {
        let team = &self.team;
        let mut text = match self.action.as_str() {
            "created" => format!(
                "Created team `{}`. Start members with Agent{{team_name: \"{}\", name, prompt, …}}; they run in the \
                 background and share the team's broadcasts.",
                team.team_name, team.team_name
            ),
            "deleted" => format!("Deleted team `{}`.", team.team_name),
            _ => format!(
                "Sent the message to the {} member{} of team `{}`: running members read it at their next turn, \
                 idle ones continue in the background (read their results with TaskOutput).",
                team.members.len(),
                if team.members.len() == 1 { "" } else { "s" },
                team.team_name
            ),
        };
        if !team.members.is_empty() {
            text.push_str("\nMembers:");
            for m in &team.members {
                let status = if m.status == AgentStatus::Running {
                    "running".to_string()
                } else {
                    m.status.as_str().replace('_', " ")
                };
                text.push_str(&format!("\n- {} ({}): {status}", m.name, m.agent_id));
            }
        }
        vec![Content::text(text)]
    }
}
