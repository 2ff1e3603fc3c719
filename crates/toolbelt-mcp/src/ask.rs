//! Questions and messages for the person behind an MCP session: a question becomes a form
//! elicitation (one field per question — a single choice, or an array for several — and a
//! text field for an answer of their own); a message becomes a log notification.
//!
//! The runtime has one [`Asker`] for all its sessions: [`SessionAskers`] routes to the one
//! each connection registers ([`ClientAsker`]), and answers "nobody" for sessions without
//! one (a sub-agent's, a client that cannot elicit).
//!
//! A call of a 2026-07-28 client asks through its round ([`crate::round`]): the form goes
//! back with the call's result and the answer comes with its retry; a message goes on the
//! request's own response, when the request's `_meta` asked for log messages.
//!
//! Logging is deprecated by the 2026-07-28 revision (still served for a year or more); it is
//! how a message for the user reaches an MCP client today.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use rmcp::model::{ElicitRequestParams, ElicitationAction, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value, json};
use toolbelt_core::{Answer, AskError, AskRequest, Asker, BoxFuture, Question, SessionState, Tone};

use crate::round::{Channel, Round, rank};

/// The runtime's asker: one per session id.
#[derive(Default)]
pub struct SessionAskers {
    by_session: RwLock<HashMap<String, Arc<ClientAsker>>>,
}

impl std::fmt::Debug for SessionAskers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.by_session.read().map(|m| m.len()).unwrap_or(0);
        f.debug_struct("SessionAskers").field("sessions", &n).finish()
    }
}

impl SessionAskers {
    /// Routes session `id`'s questions and messages to `asker`.
    pub fn register(&self, id: &str, asker: Arc<ClientAsker>) {
        self.by_session.write().unwrap_or_else(PoisonError::into_inner).insert(id.to_string(), asker);
    }

    /// Forgets session `id` (its connection closed).
    pub fn unregister(&self, id: &str) {
        self.by_session.write().unwrap_or_else(PoisonError::into_inner).remove(id);
    }

    /// The asker of session `id`: the round of the call running in this task when it is one of
    /// that session's, else the one registered for it.
    pub fn get(&self, id: &str) -> Option<Arc<ClientAsker>> {
        if let Some(round) = Round::current(id) {
            return Some(Arc::new(ClientAsker::in_round(round)));
        }
        self.by_session.read().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }
}

impl Asker for SessionAskers {
    fn ask<'a>(
        &'a self,
        session: &'a SessionState,
        request: &'a AskRequest,
    ) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        match self.get(session.id()) {
            Some(asker) => Box::pin(async move { asker.ask(session, request).await }),
            None => Box::pin(async { Err(no_client("to ask")) }),
        }
    }

    fn tell<'a>(&'a self, session: &'a SessionState, message: &'a str, tone: Tone) -> BoxFuture<'a, bool> {
        match self.get(session.id()) {
            Some(asker) => Box::pin(async move { asker.tell(session, message, tone).await }),
            None => Box::pin(async { false }),
        }
    }

    fn fill<'a>(
        &'a self,
        session: &'a SessionState,
        message: &'a str,
        schema: &'a Value,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        match self.get(session.id()) {
            Some(asker) => Box::pin(async move { asker.fill(session, message, schema).await }),
            None => Box::pin(async { Err(no_client("to ask")) }),
        }
    }

    fn sample<'a>(&'a self, session: &'a SessionState, request: &'a Value) -> BoxFuture<'a, Result<Value, AskError>> {
        match self.get(session.id()) {
            Some(asker) => Box::pin(async move { asker.sample(session, request).await }),
            None => Box::pin(async { Err(no_client("to lend a model")) }),
        }
    }
}

/// Why a session without a client of its own (a sub-agent's) has nobody `for_what`.
fn no_client(for_what: &str) -> AskError {
    AskError::Nobody(format!("this session has no MCP client of its own {for_what} (a sub-agent's session)"))
}

/// The client of one connection: asked through elicitation when it offers it, told through
/// log notifications at or above the level it set.
pub struct ClientAsker {
    channel: Channel,
    elicits: bool,
    /// Whether the client declared sampling (it lends its model to upstream servers).
    samples: bool,
    level: RwLock<LoggingLevel>,
}

impl ClientAsker {
    /// The asker of the client behind `peer`, which can elicit when `elicits` and lend its
    /// model when `samples`.
    pub fn new(peer: Peer<RoleServer>, elicits: bool, samples: bool) -> Self {
        Self { channel: Channel::Peer(peer), elicits, samples, level: RwLock::new(LoggingLevel::Info) }
    }

    /// The asker of one call's round.
    fn in_round(round: Arc<Round>) -> Self {
        let (elicits, samples) = (round.elicits(), round.samples());
        Self { channel: Channel::Round(round), elicits, samples, level: RwLock::new(LoggingLevel::Info) }
    }

    /// Messages below `level` are no longer sent (`logging/setLevel`).
    pub fn set_level(&self, level: LoggingLevel) {
        *self.level.write().unwrap_or_else(PoisonError::into_inner) = level;
    }

    /// Sends a log notification from `logger` carrying `data`, unless the client set a higher
    /// level; false when it was not sent (below the level, the client gone, or this asker
    /// being a call's round, which has no channel of its own for it).
    pub async fn log(&self, level: LoggingLevel, logger: &str, data: Value) -> bool {
        let Channel::Peer(peer) = &self.channel else { return false };
        if rank(level) < rank(*self.level.read().unwrap_or_else(PoisonError::into_inner)) {
            return false;
        }
        let note = LoggingMessageNotificationParam::new(level, data).with_logger(logger);
        peer.notify_logging_message(note).await.is_ok()
    }
}

impl Asker for ClientAsker {
    fn ask<'a>(&'a self, _: &'a SessionState, request: &'a AskRequest) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        Box::pin(async move {
            if !self.elicits {
                return Err(Self::no_elicitation());
            }
            let params = form(request).map_err(AskError::Failed)?;
            let result = self.channel.elicit(params).await.map_err(AskError::Failed)?;
            match result.action {
                ElicitationAction::Accept => answers(&request.questions, result.content.as_ref()),
                ElicitationAction::Decline => Err(AskError::Declined),
                _ => Err(AskError::Cancelled),
            }
        })
    }

    fn tell<'a>(&'a self, _: &'a SessionState, message: &'a str, tone: Tone) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let level = match tone {
                Tone::Info => LoggingLevel::Info,
                Tone::Warning => LoggingLevel::Warning,
                Tone::Error => LoggingLevel::Error,
            };
            if let Channel::Round(round) = &self.channel {
                return round.log(level, message).await;
            }
            self.log(level, "toolbelt", Value::String(message.to_string())).await
        })
    }

    fn fill<'a>(
        &'a self,
        _: &'a SessionState,
        message: &'a str,
        schema: &'a Value,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        Box::pin(async move {
            if !self.elicits {
                return Err(Self::no_elicitation());
            }
            let params: ElicitRequestParams =
                serde_json::from_value(json!({"mode": "form", "message": message, "requestedSchema": schema}))
                    .map_err(|e| AskError::Failed(format!("the form could not be put to the client: {e}")))?;
            let result = self.channel.elicit(params).await.map_err(AskError::Failed)?;
            match result.action {
                ElicitationAction::Accept => Ok(result.content.unwrap_or_else(|| json!({}))),
                ElicitationAction::Decline => Err(AskError::Declined),
                _ => Err(AskError::Cancelled),
            }
        })
    }

    fn sample<'a>(&'a self, _: &'a SessionState, request: &'a Value) -> BoxFuture<'a, Result<Value, AskError>> {
        Box::pin(async move {
            if !self.samples {
                return Err(AskError::Nobody(
                    "the MCP client does not offer sampling, so it cannot lend its model to an MCP server".into(),
                ));
            }
            let params = serde_json::from_value(request.clone())
                .map_err(|e| AskError::Failed(format!("the sampling request could not be put to the client: {e}")))?;
            self.channel.sample(params).await.map_err(AskError::Failed)
        })
    }
}

impl ClientAsker {
    fn no_elicitation() -> AskError {
        AskError::Nobody("the MCP client does not offer elicitation, so it cannot put questions to its user".into())
    }
}

/// The form: the intro and the questions as its message, a field per question (a titled
/// single choice, or an array of titled choices) and a text field per question for an
/// answer of one's own.
fn form(request: &AskRequest) -> Result<ElicitRequestParams, String> {
    let mut message = String::new();
    if let Some(intro) = &request.intro {
        message.push_str(intro.trim());
        message.push_str("\n\n");
    }
    let mut properties = Map::new();
    for (i, q) in request.questions.iter().enumerate() {
        message.push_str(&format!("{}: {}\n", q.header, q.question));
        let choices: Vec<Value> = q
            .options
            .iter()
            .map(|o| json!({"const": o.label, "title": format!("{} — {}", o.label, o.description)}))
            .collect();
        let field = if q.multi_select {
            json!({"type": "array", "title": q.header, "description": q.question, "items": {"anyOf": choices}})
        } else {
            json!({"type": "string", "title": q.header, "description": q.question, "oneOf": choices})
        };
        properties.insert(format!("q{}", i + 1), field);
        properties.insert(
            format!("q{}_other", i + 1),
            json!({"type": "string", "title": format!("{}: your own answer", q.header),
                   "description": "Instead of, or besides, the choices"}),
        );
    }
    let params = json!({
        "mode": "form",
        "message": message.trim_end(),
        "requestedSchema": {"type": "object", "properties": properties},
    });
    serde_json::from_value(params).map_err(|e| format!("the question form could not be made: {e}"))
}

/// The answers in `content`, one per question; a question left without a choice and without
/// words of the person's own is an error, never an empty answer.
fn answers(questions: &[Question], content: Option<&Value>) -> Result<Vec<Answer>, AskError> {
    let empty = Value::Object(Map::new());
    let content = content.unwrap_or(&empty);
    let mut out = Vec::with_capacity(questions.len());
    for (i, q) in questions.iter().enumerate() {
        let picked = &content[format!("q{}", i + 1)];
        let labels: Vec<&str> = match picked {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        // Only real choices, in the question's order.
        let selected: Vec<String> =
            q.options.iter().filter(|o| labels.contains(&o.label.as_str())).map(|o| o.label.clone()).collect();
        let other =
            content[format!("q{}_other", i + 1)].as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
        if selected.is_empty() && other.is_none() {
            return Err(AskError::Failed(format!("the user gave no answer to \"{}\"", q.question)));
        }
        out.push(Answer { question: q.question.clone(), selected, other });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbelt_core::Choice;

    fn question(multi: bool) -> Question {
        Question {
            question: "Which database?".into(),
            header: "Database".into(),
            options: vec![Choice::new("SQLite", "embedded"), Choice::new("Postgres", "a server")],
            multi_select: multi,
        }
    }

    #[test]
    fn the_form_has_a_field_per_question_and_one_for_other() {
        let request = AskRequest { intro: Some("The plan.".into()), questions: vec![question(false), question(true)] };
        let form = serde_json::to_value(form(&request).unwrap()).unwrap();
        assert_eq!(form["message"], "The plan.\n\nDatabase: Which database?\nDatabase: Which database?");
        let props = &form["requestedSchema"]["properties"];
        assert_eq!(props["q1"]["oneOf"][1], json!({"const": "Postgres", "title": "Postgres — a server"}));
        assert_eq!(props["q2"]["type"], "array");
        assert_eq!(props["q2"]["items"]["anyOf"][0]["const"], "SQLite");
        assert_eq!(props["q1_other"]["type"], "string");
    }

    #[test]
    fn answers_are_read_in_the_questions_order_and_never_empty() {
        let qs = [question(true)];
        let got = answers(&qs, Some(&json!({"q1": ["Postgres", "SQLite", "Oracle"]}))).unwrap();
        assert_eq!(got[0].selected, ["SQLite", "Postgres"], "choices in order, unknown ones dropped");
        let got = answers(&[question(false)], Some(&json!({"q1_other": " MySQL "}))).unwrap();
        assert_eq!((got[0].selected.len(), got[0].other.as_deref()), (0, Some("MySQL")));
        assert!(answers(&[question(false)], Some(&json!({}))).is_err());
    }
}
