//! `Skill`: loads a skill's instruction into the conversation.
//!
//! The description lists the skills found where the session works (nearest first, each with
//! its one-line description, the whole capped near [`LISTING_CAP`] characters, descriptions
//! shortened first). A call returns the skill's body with its arguments filled in and names
//! its folder, so the model can read the files it refers to.
//!
//! `allowed-tools` become allow rules for the rest of the session — but only a person may
//! widen the policy: the user's own skills grant them as they load; a project's skill (text
//! the repository wrote) has them granted only when the person approves, asked once per load,
//! and where nobody can be asked they are not granted and the result says so.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, AskRequest, Category, Choice, Content, DescribeContext, Modes, People, PermissionClass, Question, Render,
    SideEffects, Tool, ToolContext, ToolError, ToolSpec, keys,
};

use super::skills::{Catalog, Scope, SkillDirs, discover, substitute};

/// The most characters the skill listing in the description takes.
pub const LISTING_CAP: usize = 8_000;

/// Input of `Skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill's name, as listed (`pdf-tools`; a leading `/` is ignored).
    #[schemars(length(min = 1))]
    pub skill: String,
    /// Arguments for the skill (its `$ARGUMENTS`).
    pub args: Option<String>,
}

/// A loaded skill.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillOutput {
    /// Its name.
    pub name: String,
    /// Its folder: the files its instruction refers to are there.
    pub dir: String,
    /// `project` or `user`.
    pub scope: Scope,
    /// The instruction, its arguments filled in.
    pub instruction: String,
    /// Allow rules granted for the rest of the session.
    pub granted: Vec<String>,
    /// Rules it asked for that were not granted, with why.
    pub not_granted: Vec<String>,
}

impl Render for SkillOutput {
    fn render(&self) -> Vec<Content> {
        let mut text = format!("Base directory for this skill: {}\n\n{}", self.dir, self.instruction);
        if !self.granted.is_empty() {
            text.push_str(&format!("\n\n(Allowed for the rest of the session: {}.)", self.granted.join(", ")));
        }
        for refused in &self.not_granted {
            text.push_str(&format!("\n(Not granted: {refused}.)"));
        }
        vec![Content::text(text)]
    }
}

/// The `Skill` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkillTool;

const DESCRIPTION: &str = "Load a skill: a packaged instruction (with scripts and references in its folder) for a \
    kind of task. When a request matches a skill's description below, load it first and follow it; pass what the \
    skill should work on as `args`. Only skills listed here exist.";

fn dirs(service: Option<std::sync::Arc<SkillDirs>>) -> SkillDirs {
    service.map_or_else(SkillDirs::from_env, |d| (*d).clone())
}

/// The skills the model may load, listed for the description within [`LISTING_CAP`].
fn listing(catalog: &Catalog) -> String {
    let offered: Vec<_> = catalog.skills.iter().filter(|s| !s.text.disable_model_invocation).collect();
    if offered.is_empty() {
        return "\n\nNo skills are installed here.".into();
    }
    let mut limit = usize::MAX;
    loop {
        let mut out = String::from("\n\nAvailable skills:");
        for s in &offered {
            let d: String = s.text.description.chars().take(limit).collect();
            let cut = if d.chars().count() < s.text.description.chars().count() { "…" } else { "" };
            out.push_str(&format!("\n- {}: {d}{cut}", s.text.name));
        }
        if out.len() <= LISTING_CAP || limit == 0 {
            if out.len() > LISTING_CAP {
                out.truncate(out[..LISTING_CAP].rfind('\n').unwrap_or(0));
                out.push_str("\n- … (more skills; their names are in `toolbelt skills`)");
            }
            return out;
        }
        limit = if limit == usize::MAX { 200 } else { limit / 2 };
    }
}

impl Tool for SkillTool {
    type Input = SkillInput;
    type Output = SkillOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Skill", DESCRIPTION)
            .title("Load a skill")
            .aliases(["skill"])
            .category(Category::Other)
            .tags(["skills", "knowledge"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .search_hint("skill instruction playbook procedure load slash command")
    }

    fn describe(&self, cx: &DescribeContext<'_>) -> Option<String> {
        let catalog = discover(&cx.session().cwd(), &dirs(cx.service::<SkillDirs>()));
        Some(format!("{DESCRIPTION}{}", listing(&catalog)))
    }

    fn access(&self, _: &SkillInput, _: &ToolContext) -> Result<Access, ToolError> {
        // It reads only the skills directories, never a path the model names.
        Ok(Access::shared())
    }

    async fn call(&self, input: SkillInput, cx: ToolContext) -> Result<SkillOutput, ToolError> {
        let catalog = discover(&cx.cwd(), &dirs(cx.service::<SkillDirs>()));
        let Some(skill) = catalog.find(&input.skill) else {
            let names: Vec<&str> = catalog
                .skills
                .iter()
                .filter(|s| !s.text.disable_model_invocation)
                .map(|s| s.text.name.as_str())
                .collect();
            let broken: Vec<String> = catalog
                .problems
                .iter()
                .filter(|p| p.fatal)
                .map(|p| format!("{} ({})", p.path.display(), p.message))
                .collect();
            let mut message = format!(
                "there is no skill `{}` here; the skills are: {}",
                input.skill.trim(),
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            );
            if !broken.is_empty() {
                message.push_str(&format!(". Unreadable skill files: {}", broken.join("; ")));
            }
            return Err(ToolError::failed(message));
        };
        if skill.text.disable_model_invocation {
            return Err(ToolError::failed(format!(
                "the skill `{}` is for the user to start (as the /{} prompt), not for the model: its SKILL.md says \
                 disable-model-invocation",
                skill.text.name, skill.text.name
            )));
        }
        let (granted, not_granted) = grant(&cx, skill).await;
        Ok(SkillOutput {
            name: skill.text.name.clone(),
            dir: skill.dir.display().to_string(),
            scope: skill.scope,
            instruction: substitute(&skill.text.body, input.args.as_deref().unwrap_or("")),
            granted,
            not_granted,
        })
    }
}

/// Grants the skill's `allowed-tools` for the session: at once for the user's own skill; for a
/// project's, once the person approves.
async fn grant(cx: &ToolContext, skill: &super::skills::Skill) -> (Vec<String>, Vec<String>) {
    let rules = &skill.text.allowed_tools;
    if rules.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let refuse_all = |why: &str| (Vec::new(), rules.iter().map(|r| format!("{r} ({why})")).collect());
    let Some(modes) = cx.service::<Modes>() else { return refuse_all("this runtime has no session grants") };
    if skill.scope == Scope::Project {
        let Some(people) = cx.service::<People>() else {
            return refuse_all("a project's skill needs the user's approval, and nobody can be asked here");
        };
        let request = AskRequest {
            intro: Some(format!(
                "The skill `{}` ({}) asks that these be allowed for the rest of the session: {}",
                skill.text.name,
                skill.path.display(),
                rules.join(", ")
            )),
            questions: vec![Question {
                question: "Allow them?".into(),
                header: "Skill".into(),
                options: vec![
                    Choice::keyed(keys::SESSION, "Allow", "for the rest of this session"),
                    Choice::keyed(keys::NO, "Don't allow", "load the skill; ask as usual"),
                ],
                multi_select: false,
            }],
        };
        match people.0.ask(cx.session(), &request).await {
            Ok(answers) if answers.first().and_then(|a| a.selected.first()).is_some_and(|s| s == "Allow") => {}
            Ok(_) => return refuse_all("the user did not allow them; calls are judged by the rules as usual"),
            Err(e) => return refuse_all(&format!("a project's skill needs the user's approval: {e}")),
        }
    }
    let (mut granted, mut not_granted) = (Vec::new(), Vec::new());
    for rule in rules {
        match modes.0.grant(cx.session(), rule) {
            Ok(()) => granted.push(rule.clone()),
            Err(why) => not_granted.push(format!("{rule} ({why})")),
        }
    }
    (granted, not_granted)
}
