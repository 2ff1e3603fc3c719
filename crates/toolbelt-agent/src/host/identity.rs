//! Which sub-agent a session is, for what a person sees and what the audit log records: a
//! question at the terminal about a sub-agent's call names the agent — one started in the
//! background asks while the agent that started it is busy elsewhere — and its calls' records
//! name it beside the front end its tree of agents runs under.

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, SessionState};

/// The sub-agent a session belongs to; absent (empty) in a person's own session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgent {
    /// Its id (`agent_1`).
    pub id: String,
    /// The name it was given, if any.
    pub name: Option<String>,
    /// Its definition's name (`Explore`).
    pub agent_type: String,
    /// What it was started to do, in a few words.
    pub description: String,
    /// Whether it runs in the background.
    pub background: bool,
}

impl SessionSlot for SubAgent {
    const KEY: &'static str = "sub_agent";
}

impl SubAgent {
    /// The sub-agent whose session `state` is; `None` for any other session.
    pub fn of(state: &SessionState) -> Option<SubAgent> {
        Some(state.with_slot::<SubAgent, _>(|a| a.clone())).filter(|a| !a.id.is_empty())
    }

    /// The agent for a person: ``agent_1 `scout` (Explore, in the background: check the docs)``.
    pub fn label(&self) -> String {
        let mut text = self.id.clone();
        if let Some(name) = &self.name {
            text.push_str(&format!(" `{name}`"));
        }
        text.push_str(&format!(" ({}", self.agent_type));
        if self.background {
            text.push_str(", in the background");
        }
        let description = self.description.trim();
        if !description.is_empty() {
            text.push_str(&format!(": {description}"));
        }
        text.push(')');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_agent_for_people_and_the_log() {
        let mut agent = SubAgent {
            id: "agent_2".into(),
            name: None,
            agent_type: "Explore".into(),
            description: String::new(),
            background: false,
        };
        assert_eq!(agent.label(), "agent_2 (Explore)");
        agent.name = Some("scout".into());
        agent.background = true;
        agent.description = " check the docs ".into();
        assert_eq!(agent.label(), "agent_2 `scout` (Explore, in the background: check the docs)");
        let state = SessionState::new("s", std::env::temp_dir(), Vec::new());
        assert_eq!(SubAgent::of(&state), None);
        state.with_slot::<SubAgent, _>(|a| *a = agent.clone());
        assert_eq!(SubAgent::of(&state), Some(agent));
    }
}
