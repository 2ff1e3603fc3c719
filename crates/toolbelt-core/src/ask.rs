//! Talking to the person behind a session: questions with choices (`AskUserQuestion`, a
//! plan to approve) and messages (`Brief`).
//!
//! Tools never reach a terminal or a client themselves. Whoever builds the runtime puts an
//! [`Asker`] among its services ([`People`]): the CLI asks at the terminal, the MCP server
//! through the client's elicitation, an embedder through its own UI. With nobody to ask, a
//! question fails plainly — it is never answered with nothing, or with a made-up answer.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::session::SessionState;
use crate::tool::BoxFuture;

/// One question with its choices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The question, whole.
    pub question: String,
    /// A short label for it (a chip, a column): at most 12 characters.
    pub header: String,
    /// The choices (an answer of one's own is always possible besides them).
    pub options: Vec<Choice>,
    /// Whether several choices may be picked.
    pub multi_select: bool,
}

/// One choice of a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// What the choice is called (the answer, when picked).
    pub label: String,
    /// What it means.
    pub description: String,
    /// The letter that picks it at a terminal, for a decision toolbelt itself puts to the
    /// person (a plan's approval, a skill's grant): one of [`keys`], meaning there what it
    /// means in a permission prompt. A question whose choices all have one is asked with the
    /// letters instead of numbers, and picking [`keys::NO`] lets the person say why, which
    /// becomes the answer's own words ([`Answer::other`]). `None` for a model's question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<char>,
}

impl Choice {
    /// A choice picked by its number (a model's question).
    pub fn new(label: impl Into<String>, description: impl Into<String>) -> Self {
        Self { label: label.into(), description: description.into(), key: None }
    }

    /// A choice picked by the letter `key` (one of [`keys`]).
    pub fn keyed(key: char, label: impl Into<String>, description: impl Into<String>) -> Self {
        Self { label: label.into(), description: description.into(), key: Some(key) }
    }
}

/// The letters a person answers toolbelt's own decisions with at a terminal — a call's
/// permission, a plan's approval, a skill's grant — so that one letter means one thing in all
/// of them. (A model's questions, whose choices can be anything, are answered by number.)
pub mod keys {
    /// Yes: allow the call once; approve the plan.
    pub const YES: char = 'y';
    /// Yes, for the rest of the session.
    pub const SESSION: char = 's';
    /// Yes, always: a rule written to the project-local settings.
    pub const ALWAYS: char = 'a';
    /// Yes, and every edit inside the workspace for the rest of the session runs without
    /// asking (`acceptEdits` mode).
    pub const EDITS: char = 'e';
    /// No: deny the call; keep planning. The person may then say why, for the model.
    pub const NO: char = 'n';
}

/// What to ask: questions, and text to show before them (a plan to approve).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AskRequest {
    /// Shown before the questions, whole.
    pub intro: Option<String>,
    /// The questions, in order.
    pub questions: Vec<Question>,
}

/// The answer to one [`Question`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The question answered.
    pub question: String,
    /// The labels of the choices picked, in the question's order.
    pub selected: Vec<String>,
    /// An answer of the person's own, when they gave one.
    pub other: Option<String>,
}

impl Answer {
    /// The answer as text: the choices, then the person's own words.
    pub fn text(&self) -> String {
        let mut parts = self.selected.clone();
        parts.extend(self.other.clone());
        parts.join(", ")
    }
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// Nobody can be asked here: no terminal, a client that cannot elicit, a batch run.
    #[error("nobody can answer here ({0})")]
    Nobody(String),
    /// The person declined to answer.
    #[error("the user declined to answer")]
    Declined,
    /// The person dismissed the question.
    #[error("the user dismissed the question")]
    Cancelled,
    /// Asking failed.
    #[error("asking the user failed: {0}")]
    Failed(String),
}

/// How a message for the person matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    /// Progress, a finding.
    #[default]
    Info,
    /// Something the person should look at.
    Warning,
    /// Something went wrong.
    Error,
}

/// Someone a session's tools can ask and tell: the person at the terminal, the MCP client's
/// user, an embedder's UI.
pub trait Asker: Send + Sync {
    /// Asks the questions of `request` on behalf of `session`; the answers, in order.
    fn ask<'a>(
        &'a self,
        session: &'a SessionState,
        request: &'a AskRequest,
    ) -> BoxFuture<'a, Result<Vec<Answer>, AskError>>;

    /// Shows `message` to the person of `session`; `false` when nobody can be told.
    fn tell<'a>(&'a self, session: &'a SessionState, message: &'a str, tone: Tone) -> BoxFuture<'a, bool>;

    /// Puts a form to the person of `session`: `message`, and `schema`, a JSON object schema
    /// of flat fields (as an MCP server's form elicitation has it); the fields as filled in.
    /// A front end that cannot show such a form says so ([`AskError::Nobody`]), as by default.
    fn fill<'a>(
        &'a self,
        session: &'a SessionState,
        message: &'a str,
        schema: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<serde_json::Value, AskError>> {
        let _ = (session, message, schema);
        Box::pin(async { Err(AskError::Nobody("nobody here can fill in a form".into())) })
    }

    /// Asks the model of the front end of `session` for a message: `request` is the params of
    /// an MCP `sampling/createMessage` request (an upstream MCP server's), and the answer the
    /// result's JSON. A front end with no model to lend says so ([`AskError::Nobody`]), as by
    /// default.
    fn sample<'a>(
        &'a self,
        session: &'a SessionState,
        request: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<serde_json::Value, AskError>> {
        let _ = (session, request);
        Box::pin(async { Err(AskError::Nobody("no model here answers an MCP server's sampling request".into())) })
    }
}

/// The runtime's [`Asker`], as a service tools ask for (`cx.service::<People>()`).
#[derive(Clone)]
pub struct People(pub Arc<dyn Asker>);

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("People")
    }
}

/// Asks nobody: every question fails with [`AskError::Nobody`], saying `why`.
#[derive(Debug, Clone)]
pub struct Nobody(pub String);

impl Asker for Nobody {
    fn ask<'a>(&'a self, _: &'a SessionState, _: &'a AskRequest) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        Box::pin(async move { Err(AskError::Nobody(self.0.clone())) })
    }

    fn tell<'a>(&'a self, _: &'a SessionState, _: &'a str, _: Tone) -> BoxFuture<'a, bool> {
        Box::pin(async { false })
    }
}
