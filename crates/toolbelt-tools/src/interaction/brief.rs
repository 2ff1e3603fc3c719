//! `Brief` (also `SendUserMessage`): a message for the person — progress, a finding, a
//! question left for later — shown where they are watching: on the terminal (stderr) in the
//! CLI, as a log message to the MCP client, as an event for an embedder.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, People, PermissionClass, Render, SideEffects, Tone, Tool, ToolContext,
    ToolError, ToolSpec,
};

/// Input of `Brief`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefInput {
    /// The message, in Markdown.
    #[schemars(length(min = 1))]
    pub message: String,
    /// Files the message refers to (paths), listed under it.
    #[serde(default)]
    pub attachments: Vec<String>,
    /// `normal` for a reply to the user, `proactive` for news they did not ask for (a finding,
    /// a problem, a decision point).
    pub status: Option<BriefStatus>,
}

/// Why a message is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BriefStatus {
    /// A reply to what the user asked.
    Normal,
    /// News the user did not ask for.
    Proactive,
}

/// The `Brief` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Brief;

const DESCRIPTION: &str = "Sends the user a message while you work: progress on a long task, a finding they should \
    know about now, a decision you made. It is shown where the user is watching (the terminal, the MCP client's \
    log, the embedding application) and does not wait for an answer; to ask something, use AskUserQuestion. Keep \
    it short; list files it refers to in `attachments`.";

/// What became of the message.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BriefOutput {
    /// Whether someone was there to show it to (otherwise it is only in this result and the
    /// session's events).
    pub delivered: bool,
    /// Why it was sent, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<BriefStatus>,
    /// The files listed with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
}

impl Render for BriefOutput {
    fn render(&self) -> Vec<Content> {
        let text = if self.delivered {
            "Message shown to the user."
        } else {
            "Nobody is watching this session live; the message is kept in this result and the session's events."
        };
        vec![Content::text(text)]
    }
}

impl Tool for Brief {
    type Input = BriefInput;
    type Output = BriefOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Brief", DESCRIPTION)
            .title("Tell the user")
            .aliases(["SendUserMessage", "send_user_message", "brief"])
            .category(Category::Agent)
            .tags(["user", "message", "progress"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: false, open_world: false })
            .search_hint("tell user message notify progress update report status")
    }

    fn access(&self, _: &BriefInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().changes_state("a message to the user"))
    }

    async fn call(&self, input: BriefInput, cx: ToolContext) -> Result<BriefOutput, ToolError> {
        let mut message = input.message.trim().to_string();
        if !input.attachments.is_empty() {
            message.push_str("\n\nAttached:");
            for path in &input.attachments {
                message.push_str(&format!("\n- {path}"));
            }
        }
        // Always an event, for whoever follows the session (an embedder, `--events`).
        cx.progress(message.clone(), None);
        // News the user did not ask for is worth their attention.
        let tone = if input.status == Some(BriefStatus::Proactive) { Tone::Warning } else { Tone::Info };
        let delivered = match cx.service::<People>() {
            Some(people) => people.0.tell(cx.session(), &message, tone).await,
            None => false,
        };
        Ok(BriefOutput { delivered, status: input.status, attachments: input.attachments })
    }
}
