//! Skills as prompts ([`toolbelt_core::PromptSource`]): what an MCP server offers as
//! `prompts/list` and `prompts/get`, which hosts show as slash commands. Every skill is
//! offered, `disable-model-invocation` ones too: a prompt is the person's choice.

use toolbelt_core::{PromptInfo, PromptSource, PromptText, SessionState};

use super::{SkillDirs, discover, substitute};

/// The skills found from a session's cwd, as prompts.
#[derive(Debug, Clone)]
pub struct SkillPrompts(pub SkillDirs);

impl PromptSource for SkillPrompts {
    fn list(&self, session: &SessionState) -> Vec<PromptInfo> {
        let mut prompts: Vec<PromptInfo> = discover(&session.cwd(), &self.0)
            .skills
            .into_iter()
            .map(|s| PromptInfo {
                name: s.text.name,
                description: s.text.description,
                argument_hint: s.text.argument_hint,
            })
            .collect();
        prompts.sort_by(|a, b| a.name.cmp(&b.name));
        prompts
    }

    fn get(&self, session: &SessionState, name: &str, arguments: &str) -> Result<PromptText, String> {
        let catalog = discover(&session.cwd(), &self.0);
        let Some(skill) = catalog.find(name) else {
            let names: Vec<&str> = catalog.skills.iter().map(|s| s.text.name.as_str()).collect();
            return Err(format!(
                "there is no skill `{name}` here; the skills are: {}",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ));
        };
        let body = substitute(&skill.text.body, arguments);
        Ok(PromptText {
            description: skill.text.description.clone(),
            text: format!("Base directory for this skill: {}\n\n{body}", skill.dir.display()),
        })
    }
}
