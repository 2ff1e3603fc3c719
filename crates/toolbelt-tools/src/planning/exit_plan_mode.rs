//! `ExitPlanMode`: presents the plan to the person, who approves it (the session returns to
//! the mode it had before plan mode, or to `acceptEdits` if they choose), or keeps the
//! session planning with their feedback. Commands the plan needs (`allowedPrompts`) become
//! allow rules for the rest of the session when it is approved.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, AskError, AskRequest, Category, Choice, Content, People, PermissionClass, PermissionMode,
    Question, Render, SideEffects, Tool, ToolContext, ToolError, ToolSpec, keys,
};

use super::enter_plan_mode::{PlanState, modes, no_modes};

// The choices and their letters at a terminal: those of a permission prompt, meaning the same
// there (`y` yes, `e` yes and every edit without asking, `n` no and say why).
const APPROVE: &str = "Approve";
const APPROVE_EDITS: &str = "Approve, allow all edits";
const KEEP_PLANNING: &str = "Keep planning";

/// Input of `ExitPlanMode`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitPlanModeInput {
    /// The plan, in Markdown: what will change, where, in what order, and how it will be
    /// checked. The user reads it whole before approving.
    #[schemars(length(min = 1))]
    pub plan: String,
    /// Commands the plan needs to run without asking, each a tool and a pattern of its rule
    /// (`{"tool": "Bash", "prompt": "cargo test *"}` allows `Bash(cargo test *)`); granted for
    /// the rest of the session if the user approves the plan.
    #[serde(rename = "allowedPrompts", default)]
    pub allowed_prompts: Vec<AllowedPrompt>,
}

/// A permission the plan asks for.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllowedPrompt {
    /// The tool (`Bash`, `WebFetch`…).
    #[schemars(length(min = 1))]
    pub tool: String,
    /// The pattern inside its rule (`cargo test *`, `domain:docs.rs`).
    #[schemars(length(min = 1))]
    pub prompt: String,
}

impl AllowedPrompt {
    fn rule(&self) -> String {
        format!("{}({})", self.tool.trim(), self.prompt.trim())
    }
}

/// The `ExitPlanMode` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitPlanMode;

const DESCRIPTION: &str = "Presents your plan to the user and, once they approve it, leaves plan mode so you can \
    carry it out (the session returns to the mode it had before plan mode, or to acceptEdits if the user chooses). \
    Call it only in plan mode, with the whole plan: the files to change, the changes, their order, how the result \
    will be checked. Commands the plan needs can be asked for in allowedPrompts (a tool and the pattern of its \
    rule); they are allowed for the rest of the session if the plan is approved. If the user keeps planning, the \
    result carries their feedback: revise the plan and present it again.";

/// What came of the plan.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExitPlanModeOutput {
    /// The mode the session is in now.
    pub mode: PermissionMode,
    /// The allow rules granted for the rest of the session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub granted: Vec<String>,
    /// Rules asked for that could not be granted, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_granted: Vec<String>,
    /// What the user added in their own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

impl Render for ExitPlanModeOutput {
    fn render(&self) -> Vec<Content> {
        let mut text = format!("The user approved the plan. The session is in {} mode now: carry it out.", self.mode);
        if !self.granted.is_empty() {
            text.push_str(&format!("\nAllowed for the rest of the session: {}.", self.granted.join(", ")));
        }
        for refused in &self.not_granted {
            text.push_str(&format!("\nNot granted: {refused}."));
        }
        if let Some(feedback) = &self.feedback {
            text.push_str(&format!("\nThe user added: {feedback}"));
        }
        vec![Content::text(text)]
    }
}

impl Tool for ExitPlanMode {
    type Input = ExitPlanModeInput;
    type Output = ExitPlanModeOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ExitPlanMode", DESCRIPTION)
            .title("Present the plan")
            .aliases(["exit_plan_mode"])
            .category(Category::Planning)
            .tags(["plan", "mode", "session", "user"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: false })
            // A person reads the plan before answering.
            .default_timeout(std::time::Duration::from_secs(600))
            .search_hint("plan approve exit plan mode present plan start implementing")
    }

    fn access(&self, _: &ExitPlanModeInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state("the session's permission mode"))
    }

    async fn call(&self, input: ExitPlanModeInput, cx: ToolContext) -> Result<ExitPlanModeOutput, ToolError> {
        let modes = modes(&cx)?;
        let current = modes.0.mode(cx.session()).ok_or_else(no_modes)?;
        if current != PermissionMode::Plan {
            return Err(ToolError::failed(format!(
                "the session is not in plan mode (it is in {current} mode); there is no plan to approve: go on with \
                 the work"
            )));
        }
        let previous = cx.with_slot::<PlanState, _>(|s| s.previous).unwrap_or_default();
        let request = request(&input, previous);
        let people = cx.service::<People>();
        let asked = match &people {
            Some(people) => people.0.ask(cx.session(), &request).await,
            None => Err(AskError::Nobody("no one to ask was set up for this runtime".into())),
        };
        let answer = match asked {
            Ok(mut answers) if !answers.is_empty() => answers.swap_remove(0),
            Ok(_) => {
                return Err(ToolError::failed(
                    "the user gave no answer about the plan; the session stays in plan mode",
                ));
            }
            Err(e @ AskError::Nobody(_)) => {
                return Err(ToolError::failed(format!(
                    "the plan could not be approved: {e}. The session stays in plan mode; show the plan to the user \
                     in your reply and stop there"
                )));
            }
            Err(e) => {
                return Err(ToolError::Denied {
                    reason: format!("the plan was not approved ({e}); the session stays in plan mode"),
                });
            }
        };
        let feedback = answer.other.clone().map(|f| f.trim().to_string()).filter(|f| !f.is_empty());
        let target = match answer.selected.first().map(String::as_str) {
            Some(APPROVE) => previous,
            Some(APPROVE_EDITS) => PermissionMode::AcceptEdits,
            _ => {
                let said = feedback.as_deref().unwrap_or("(no feedback given)");
                return Err(ToolError::Denied {
                    reason: format!(
                        "the user kept the session in plan mode and wants changes to the plan: {said}. Revise the \
                         plan and present it again with ExitPlanMode"
                    ),
                });
            }
        };
        modes.0.switch(cx.session(), target).map_err(ToolError::failed)?;
        cx.with_slot::<PlanState, _>(|s| s.previous = None);
        let (mut granted, mut not_granted) = (Vec::new(), Vec::new());
        for prompt in &input.allowed_prompts {
            let rule = prompt.rule();
            match modes.0.grant(cx.session(), &rule) {
                Ok(()) => granted.push(rule),
                Err(why) => not_granted.push(format!("{rule} ({why})")),
            }
        }
        Ok(ExitPlanModeOutput { mode: target, granted, not_granted, feedback })
    }
}

/// The question put to the person: the plan, what it asks to be allowed, and the choices.
fn request(input: &ExitPlanModeInput, previous: PermissionMode) -> AskRequest {
    let mut intro = input.plan.trim().to_string();
    if !input.allowed_prompts.is_empty() {
        let rules: Vec<String> = input.allowed_prompts.iter().map(AllowedPrompt::rule).collect();
        intro
            .push_str(&format!("\n\nIf approved, these are allowed for the rest of the session: {}", rules.join(", ")));
    }

    AskRequest {
        intro: Some(intro),
        questions: vec![Question {
            question: "Approve this plan?".into(),
            header: "Plan".into(),
            options: vec![
                Choice::keyed(keys::YES, APPROVE, format!("leave plan mode and carry it out, back in {previous} mode")),
                Choice::keyed(
                    keys::EDITS,
                    APPROVE_EDITS,
                    "leave plan mode for acceptEdits mode: edits inside the workspace run without asking",
                ),
                Choice::keyed(keys::NO, KEEP_PLANNING, "stay in plan mode; say what to change"),
            ],
            multi_select: false,
        }],
    }
}
