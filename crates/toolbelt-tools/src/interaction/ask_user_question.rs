//! `AskUserQuestion` (also `ask_user`, `request_user_input`): questions with choices, put to
//! the person behind the session — at the terminal, through the MCP client's elicitation,
//! or the embedder's UI ([`toolbelt_core::Asker`]).
//!
//! Claude Code's shape (`questions[{question, header, options[{label, description}],
//! multiSelect}]`) and answer text. With nobody to answer the call fails and repeats the
//! questions: a run with no person never proceeds on an empty or invented answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, AskError, AskRequest, Category, Choice, Content, People, PermissionClass, Question, Render,
    SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

/// Questions one call asks at most.
pub const MAX_QUESTIONS: usize = 4;
/// Characters a header has at most.
pub const MAX_HEADER_CHARS: usize = 12;

/// Input of `AskUserQuestion`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserQuestionInput {
    /// The questions (1 to 4), asked together.
    #[schemars(length(min = 1, max = 4))]
    pub questions: Vec<QuestionInput>,
}

/// One question.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionInput {
    /// The question, complete and specific, ending with a question mark.
    #[schemars(length(min = 1))]
    pub question: String,
    /// A very short label for the question (at most 12 characters), e.g. "Auth method".
    #[schemars(length(min = 1, max = 12))]
    pub header: String,
    /// The choices (2 to 4). The person can always answer in their own words instead.
    #[schemars(length(min = 2, max = 4))]
    pub options: Vec<OptionInput>,
    /// Whether the person may pick several choices.
    #[serde(rename = "multiSelect", default)]
    pub multi_select: bool,
}

/// One choice.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionInput {
    /// The choice, in 1 to 5 words.
    #[schemars(length(min = 1))]
    pub label: String,
    /// What the choice means, or what follows from it.
    pub description: String,
}

/// The `AskUserQuestion` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUserQuestion;

fn description() -> String {
    format!(
        "Asks the user questions with choices, to settle what you cannot decide yourself: a preference, a \
         requirement left open, a choice between approaches. Up to {MAX_QUESTIONS} questions at once, each with 2 to 4 \
         choices (label and description) and a header of at most {MAX_HEADER_CHARS} characters; set multiSelect when \
         several choices may apply. The user can always answer in their own words instead. Put the recommended \
         choice first and say so in its label (\"… (Recommended)\"). Where nobody can answer (an unattended run), \
         the call fails and says so: then decide yourself and state the assumption you made."
    )
}

/// What the person answered.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AskUserQuestionOutput {
    /// Each question with its answer, in the order asked.
    pub answers: Vec<AnswerOutput>,
}

/// One answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnswerOutput {
    /// The question.
    pub question: String,
    /// The labels of the choices picked.
    pub selected: Vec<String>,
    /// The person's own answer, when they gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
}

impl Render for AskUserQuestionOutput {
    fn render(&self) -> Vec<Content> {
        let pairs: Vec<String> = self
            .answers
            .iter()
            .map(|a| {
                let mut parts = a.selected.clone();
                parts.extend(a.other.clone());
                format!("\"{}\"=\"{}\"", a.question, parts.join(", "))
            })
            .collect();
        vec![Content::text(format!(
            "User has answered your questions: {}. You can now continue with the user's answers in mind.",
            pairs.join(", ")
        ))]
    }
}

impl Tool for AskUserQuestion {
    type Input = AskUserQuestionInput;
    type Output = AskUserQuestionOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("AskUserQuestion", description())
            .title("Ask the user")
            .aliases(["ask_user", "request_user_input", "ask_user_question"])
            .category(Category::Agent)
            .tags(["user", "question", "interactive"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: false, open_world: false })
            // A person may take a while to answer.
            .default_timeout(std::time::Duration::from_secs(600))
            .search_hint("ask user question choice clarify preference confirm decide options")
    }

    fn access(&self, input: &AskUserQuestionInput, _: &ToolContext) -> Result<Access, ToolError> {
        checked(input)?;
        // Alone: two questions at once would interleave on a terminal.
        Ok(Access::exclusive().changes_state("a question to the user"))
    }

    async fn call(&self, input: AskUserQuestionInput, cx: ToolContext) -> Result<AskUserQuestionOutput, ToolError> {
        let questions = checked(&input)?;
        let request = AskRequest { intro: None, questions };
        let people = cx.service::<People>();
        let asked = match &people {
            Some(people) => people.0.ask(cx.session(), &request).await,
            None => Err(AskError::Nobody("no one to ask was set up for this runtime".into())),
        };
        let answers = asked.map_err(|e| unanswered(&e, &request.questions))?;
        Ok(AskUserQuestionOutput {
            answers: answers
                .into_iter()
                .map(|a| AnswerOutput { question: a.question, selected: a.selected, other: a.other })
                .collect(),
        })
    }
}

/// The questions of `input`, checked beyond the schema: distinct questions, distinct labels.
fn checked(input: &AskUserQuestionInput) -> Result<Vec<Question>, ToolError> {
    let mut questions: Vec<Question> = Vec::with_capacity(input.questions.len());
    for q in &input.questions {
        let text = q.question.trim();
        if questions.iter().any(|seen| seen.question == text) {
            return Err(ToolError::failed(format!("the question \"{text}\" is asked twice; ask each question once")));
        }
        let mut options: Vec<Choice> = Vec::with_capacity(q.options.len());
        for o in &q.options {
            let label = o.label.trim();
            if options.iter().any(|c| c.label.eq_ignore_ascii_case(label)) {
                return Err(ToolError::failed(format!(
                    "the choice \"{label}\" appears twice in \"{text}\"; give each choice its own label"
                )));
            }
            options.push(Choice::new(label, o.description.trim()));
        }
        questions.push(Question {
            question: text.to_string(),
            header: q.header.trim().to_string(),
            options,
            multi_select: q.multi_select,
        });
    }
    Ok(questions)
}

/// The error for questions nobody answered: why, and the questions again, so the model can
/// decide with them in view.
fn unanswered(e: &AskError, questions: &[Question]) -> ToolError {
    let mut text = match e {
        AskError::Nobody(_) => format!(
            "The questions were not asked: {e}. Decide yourself, state the assumption you made in your reply, or \
             end your turn with the questions for the user."
        ),
        AskError::Declined | AskError::Cancelled => {
            format!(
                "The questions were not answered: {e}. Do not assume an answer; ask differently or go on without it."
            )
        }
        AskError::Failed(_) => format!("The questions were not answered: {e}."),
    };
    text.push_str("\nThe questions were:");
    for (i, q) in questions.iter().enumerate() {
        let choices: Vec<&str> = q.options.iter().map(|o| o.label.as_str()).collect();
        text.push_str(&format!("\n{}. {} (choices: {})", i + 1, q.question, choices.join(" / ")));
    }
    ToolError::failed(text)
}
