//! Questions for the person behind a client that cannot be asked mid-call: MCP 2026-07-28's
//! multi round-trip requests.
//!
//! From 2026-07-28 a server sends the client no requests of its own. A `tools/call` that needs
//! an answer (an `ask` verdict, `AskUserQuestion`, a plan to approve) ends instead with an
//! `input_required` result: the questions as elicitations in `inputRequests`, and a sealed
//! `requestState`. The client puts them to its user and sends the same call again with the
//! answers (`inputResponses`) and the state; the call then runs again from the start, and
//! each question it asks is answered, in order, from what the rounds gathered.
//!
//! A [`Round`] is one attempt at a call: it is in scope (a task-local) while the call runs in
//! the call's task, and [`crate::approve::SessionApprovers`] and [`crate::ask::SessionAskers`]
//! ask through it ([`Channel::Round`]) instead of through the client. A question it has an
//! answer for is answered; the first it has none for is recorded, and fails the call's
//! attempt, whose result is then replaced by the `input_required` one. An answer is given only
//! to the question it was given for (the same form, by digest): a call that asks something
//! else on its retry asks anew. A question asked from another task (an upstream server's,
//! a sub-agent's) is not the call's and is not part of its rounds.
//!
//! What `requestState` carries, and why it can be trusted, is in [`state`].
//!
//! Logging is deprecated by the 2026-07-28 revision (still served): a message for the user
//! goes on the request's response when its `_meta` asks for log messages.
#![allow(deprecated)]

pub(crate) mod state;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequests, InputRequiredResult, ListRootsRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, Root,
};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::Value;

pub(crate) use state::Given;

tokio::task_local! {
    static ROUND: Arc<Round>;
}

/// One attempt at a `tools/call` of a 2026-07-28 client.
pub(crate) struct Round {
    /// The runtime session the call runs in (questions of other sessions are not its own).
    session: String,
    /// The request's peer: notifications (progress, log messages) go on its response.
    peer: Peer<RoleServer>,
    /// The level from which log messages are sent: the request's `_meta` opts in, or none.
    log_level: Option<LoggingLevel>,
    /// What the client declared it answers (in the request's `_meta`).
    offers: Offers,
    script: Script,
}

/// What a client declared it answers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Offers {
    /// Forms (elicitation).
    pub elicitation: bool,
    /// Requests for a message from its model (sampling).
    pub sampling: bool,
}

/// The answers gathered by earlier rounds, in the order the questions were asked, and what
/// this attempt asked.
struct Script {
    given: Vec<Given>,
    /// How many rounds came before this attempt.
    rounds: u32,
    asked: Mutex<Asked>,
}

#[derive(Default)]
struct Asked {
    /// How many of `given` this attempt used.
    used: usize,
    /// The request this attempt needs answered first: its digest, and what it asks (one at
    /// most: what follows an unanswered question is not asked).
    wanted: Vec<(String, InputRequest)>,
}

impl Round {
    /// An attempt of a call in `session`, with the answers of earlier rounds.
    pub(crate) fn new(
        session: &str,
        peer: Peer<RoleServer>,
        log_level: Option<LoggingLevel>,
        offers: Offers,
        redeemed: state::Redeemed,
    ) -> Self {
        let script = Script { given: redeemed.given, rounds: redeemed.rounds, asked: Mutex::default() };
        Self { session: session.to_string(), peer, log_level, offers, script }
    }

    /// Runs `call` with this round in scope.
    pub(crate) async fn scope<F: Future>(self: Arc<Self>, call: F) -> F::Output {
        ROUND.scope(self, call).await
    }

    /// The round of the call running in this task, if it is one of session `session`'s.
    pub(crate) fn current(session: &str) -> Option<Arc<Round>> {
        ROUND.try_with(Arc::clone).ok().filter(|round| round.session == session)
    }

    /// Whether the client can answer forms.
    pub(crate) fn elicits(&self) -> bool {
        self.offers.elicitation
    }

    /// Whether the client can lend its model.
    pub(crate) fn samples(&self) -> bool {
        self.offers.sampling
    }

    /// The client's roots, when an earlier round asked for them; else they are wanted.
    pub(crate) fn roots(&self) -> Option<Result<Vec<Root>, String>> {
        let answer = self.script.answer(roots_request())?;
        let listed = serde_json::from_value::<ListRootsResult>(answer);
        Some(listed.map(|l| l.roots).map_err(|e| format!("the client's answer is not a list of roots: {e}")))
    }

    /// Whether this attempt asked something no earlier round answered.
    pub(crate) fn wants_input(&self) -> bool {
        !self.script.asked().wanted.is_empty()
    }

    /// Passes over the roots an earlier round gave, if it gave them (the session learned them
    /// then; this attempt does not ask for them).
    pub(crate) fn pass_roots(&self) {
        let digest = digest(&roots_request());
        let mut asked = self.script.asked();
        if asked.wanted.is_empty() && self.script.given.get(asked.used).is_some_and(|g| g.digest == digest) {
            asked.used += 1;
        }
    }

    /// Sends a log message on the request's response, when its `_meta` opted in at or below
    /// `level`.
    pub(crate) async fn log(&self, level: LoggingLevel, message: &str) -> bool {
        let Some(from) = self.log_level else { return false };
        if rank(level) < rank(from) {
            return false;
        }
        let note =
            LoggingMessageNotificationParam::new(level, Value::String(message.to_string())).with_logger("toolbelt");
        self.peer.notify_logging_message(note).await.is_ok()
    }

    /// The `input_required` result of this attempt, when it wanted answers: the questions as
    /// elicitations, and the state that carries the answers given so far, sealed for the call
    /// `binding` names ([`state::binding`]).
    /// On a team (`team`) it is sealed with the team's key, so any replica redeems it.
    pub(crate) async fn input_required(
        &self,
        team: Option<&crate::team::Team>,
        binding: &[u8],
    ) -> Result<Option<InputRequiredResult>, McpError> {
        let asked = std::mem::take(&mut *self.script.asked());
        if asked.wanted.is_empty() {
            return Ok(None);
        }
        let kept = self.script.given[..asked.used].to_vec();
        let first = kept.len();
        let digests: Vec<String> = asked.wanted.iter().map(|(d, _)| d.clone()).collect();
        let requests: InputRequests =
            asked.wanted.into_iter().enumerate().map(|(i, (_, request))| (state::key(first + i), request)).collect();
        let sealed = state::seal(team, binding, self.script.rounds + 1, kept, digests).await?;
        Ok(Some(InputRequiredResult::new(Some(requests), Some(sealed))))
    }
}

impl Script {
    fn asked(&self) -> MutexGuard<'_, Asked> {
        self.asked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer earlier rounds gave to `request`, or `None` when it has none (the request
    /// is then wanted: it goes to the client with the attempt's result).
    fn answer(&self, request: InputRequest) -> Option<Value> {
        let digest = digest(&request);
        let mut asked = self.asked();
        if !asked.wanted.is_empty() {
            // Asked after a question this attempt could not answer (its answer would have
            // changed what came next): only the first goes to the client.
            return None;
        }
        if let Some(given) = self.given.get(asked.used)
            && given.digest == digest
        {
            asked.used += 1;
            return Some(given.response.clone());
        }
        asked.wanted.push((digest, request));
        None
    }
}

fn roots_request() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::default())
}

/// The order of log levels, least severe first.
pub(crate) fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// A digest of a request, to give an answer only to the request it answered (SHA-256: part
/// of a question's text can come from an upstream server).
fn digest(request: &InputRequest) -> String {
    match serde_json::to_vec(request) {
        Ok(bytes) => toolbelt_core::sha256_hex(&bytes),
        Err(e) => format!("unreadable: {e}"),
    }
}

/// Whether `message` is [`PENDING`].
pub(crate) fn is_pending(message: &str) -> bool {
    message == PENDING
}

/// Why a question of a round has no answer yet: it goes back with the call's result.
pub(crate) const PENDING: &str = concat!(
    "awaiting the client's answer: the question went back with this attempt's result (input_required), ",
    "and the call runs again when the client retries it with the answer"
);

/// Where a question for the person behind a client goes: a request to the client (up to
/// 2025-11-25), or the call's round (2026-07-28).
#[derive(Clone)]
pub(crate) enum Channel {
    /// The connection's peer: an `elicitation/create` request, answered while the call waits.
    Peer(Peer<RoleServer>),
    /// The call's round: answered by an earlier round, or wanted.
    Round(Arc<Round>),
}

impl Channel {
    /// Puts `form` to the person; their answer, or why there is none.
    pub(crate) async fn elicit(&self, form: ElicitRequestParams) -> Result<ElicitResult, String> {
        match self {
            Channel::Peer(peer) => peer.create_elicitation(form).await.map_err(|e| e.to_string()),
            Channel::Round(round) => match round.script.answer(InputRequest::Elicitation(ElicitRequest::new(form))) {
                Some(response) => serde_json::from_value(response)
                    .map_err(|e| format!("the client's answer is not an elicitation result: {e}")),
                None => Err(PENDING.into()),
            },
        }
    }

    /// Asks the client's model for a message (an upstream server's sampling request); the
    /// result as JSON, or why there is none.
    pub(crate) async fn sample(&self, params: CreateMessageRequestParams) -> Result<Value, String> {
        match self {
            Channel::Peer(peer) => {
                let result = peer.create_message(params).await.map_err(|e| e.to_string())?;
                serde_json::to_value(result).map_err(|e| e.to_string())
            }
            Channel::Round(round) => {
                let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
                round.script.answer(request).ok_or_else(|| PENDING.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(message: &str) -> InputRequest {
        let form = json!({"mode": "form", "message": message, "requestedSchema": {"type": "object", "properties": {}}});
        InputRequest::Elicitation(ElicitRequest::new(serde_json::from_value(form).unwrap()))
    }

    fn script(given: Vec<Given>) -> Script {
        Script { given, rounds: 0, asked: Mutex::default() }
    }

    #[test]
    fn an_answer_goes_only_to_the_question_it_answered_and_in_order() {
        let yes = json!({"action": "accept", "content": {"decision": "allow_once"}});
        let given = vec![Given { digest: digest(&form("first")), response: yes.clone() }];
        let r = script(given.clone());
        assert_eq!(r.answer(form("first")), Some(yes.clone()));
        assert_eq!(r.answer(form("second")), None, "nothing given for it: wanted");
        assert_eq!(r.answer(form("third")), None, "asked after an unanswered question: not wanted");
        let asked = r.asked();
        assert_eq!((asked.used, asked.wanted.len()), (1, 1));
        drop(asked);
        // A different question than the one answered gets no answer.
        let r = script(given);
        assert_eq!(r.answer(form("other")), None);
        assert_eq!(r.answer(form("first")), None, "once a question is wanted, the rest wait for the next round");
    }
}
