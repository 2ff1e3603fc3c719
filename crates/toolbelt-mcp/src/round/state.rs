//! `requestState`: what a call's rounds gathered, carried by the client between them.
//!
//! The client hands the state back as it likes, so it is sealed and checked before anything in
//! it is believed:
//!
//! * **Sealed** with HMAC-SHA256 (rmcp's [`RequestStateCodec`]) under a key drawn at random
//!   when the process starts, never written anywhere: a state made or altered by anyone else
//!   fails the check, and none survives a restart. On a team the key is the team's, kept in
//!   its shared storage, so the retry may reach any replica ([`crate::team`]).
//! * **Bound to the call**: the tag covers the session the call runs in, the method, the tool
//!   and its arguments (with their keys sorted), without storing them. A state sent with other
//!   arguments, to another tool or from another session is refused: an answer that allowed
//!   `rm build/` allows nothing else.
//! * **Short-lived**: it expires [`STATE_TTL`] after it was issued.
//! * **Single use**: each state has a random nonce, noted as outstanding when the state is
//!   issued and struck off when it is redeemed; a state whose nonce is not outstanding (sent
//!   twice, or past its deadline by this process's monotonic clock) is refused. At most
//!   [`MAX_OUTSTANDING`] are outstanding; past that the oldest lapse. On a team the nonces
//!   are kept in shared storage, by the database's clock.
//! * **Bounded**: a call is retried at most [`MAX_ROUNDS`] times (a question whose text
//!   changes at every attempt would otherwise be asked forever).
//!
//! Inside: the answers given so far with the digest of the question each answered, and the
//! digests of the questions the `input_required` result asked, whose answers the retry's
//! `inputResponses` must hold under their keys (`input-<n>`, numbered from the first
//! question of the call). The state is signed, not encrypted: it holds nothing secret (the
//! client saw every answer; it gave them).

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::team::Team;

/// How long an `input_required` result's state may be redeemed.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(10 * 60);
/// How many `input_required` results one call may give.
pub(crate) const MAX_ROUNDS: u32 = 10;
/// How many issued states may wait for their retry at once.
pub(crate) const MAX_OUTSTANDING: usize = 100_000;

/// An answer of an earlier round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Given {
    /// The digest of the question it answers.
    #[serde(rename = "q")]
    pub digest: String,
    /// The client's result for it (an elicitation, sampling or roots result).
    #[serde(rename = "r")]
    pub response: Value,
}

/// What the sealed state holds.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// The nonce struck off when it is redeemed.
    n: String,
    /// The rounds so far (this state's included).
    r: u32,
    /// The answers given so far.
    g: Vec<Given>,
    /// The digests of the questions of the `input_required` result it came with.
    w: Vec<String>,
}

/// What a retry brings: the answers so far, and how many rounds came before it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Redeemed {
    /// The answers, in the order the questions were asked.
    pub given: Vec<Given>,
    /// The rounds that came before.
    pub rounds: u32,
}

/// The key of the `n`th question of a call in `inputRequests` and `inputResponses`.
pub(crate) fn key(n: usize) -> String {
    format!("input-{n}")
}

/// The process's sealing key.
static CODEC: LazyLock<Option<Arc<RequestStateCodec>>> = LazyLock::new(|| {
    let mut key = [0u8; 32];
    let made = getrandom::fill(&mut key)
        .map_err(|e| e.to_string())
        .and_then(|()| RequestStateCodec::try_new(key.to_vec()).map_err(|e| e.to_string()));
    match made {
        Ok(codec) => Some(Arc::new(codec)),
        Err(e) => {
            tracing::error!("no key for sealing request states ({e}): calls that need an answer are refused");
            None
        }
    }
});

/// The nonces of the states issued and not yet redeemed, oldest first, with their deadline.
#[derive(Default)]
struct Outstanding {
    order: VecDeque<(Instant, String)>,
    open: HashSet<String>,
}

static OUTSTANDING: LazyLock<Mutex<Outstanding>> = LazyLock::new(Mutex::default);

fn outstanding() -> std::sync::MutexGuard<'static, Outstanding> {
    OUTSTANDING.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Outstanding {
    /// Lets the states past their deadline lapse, and the oldest past [`MAX_OUTSTANDING`].
    fn prune(&mut self) {
        let now = Instant::now();
        while let Some((deadline, n)) = self.order.front() {
            if *deadline > now && self.order.len() <= MAX_OUTSTANDING {
                break;
            }
            self.open.remove(n);
            self.order.pop_front();
        }
    }
}

/// What a state is bound to: the session, the method, the tool and its arguments.
pub(crate) fn binding(session: &str, request: &CallToolRequestParams) -> Vec<u8> {
    let mut bound = format!("{session}\ntools/call\n{}\n", request.name).into_bytes();
    let args = request.arguments.clone().map(Value::Object).unwrap_or(Value::Null);
    bound.extend_from_slice(sorted(&args).to_string().as_bytes());
    bound
}

/// `value` with every object's keys in order (serde_json keeps them as they came here).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Seals the answers `given` and the digests of the questions `wanted` for the call `binding`,
/// the state of its `round`th `input_required` result; refused past [`MAX_ROUNDS`]. On a team
/// (`team`), with the team's key, its nonce noted in shared storage.
pub(crate) async fn seal(
    team: Option<&Team>,
    binding: &[u8],
    round: u32,
    given: Vec<Given>,
    wanted: Vec<String>,
) -> Result<String, McpError> {
    if round > MAX_ROUNDS {
        return Err(refusal(&format!(
            "this call asked for input {MAX_ROUNDS} times without settling (its question changes at every attempt); \
             it is not retried again"
        )));
    }
    let codec = codec(team).await?;
    let mut nonce = [0u8; 16];
    getrandom::fill(&mut nonce).map_err(|e| McpError::internal_error(format!("no random nonce: {e}"), None))?;
    let n: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    let sealed = Sealed { n: n.clone(), r: round, g: given, w: wanted };
    let options = SealOptions::new().associated_data(binding).ttl(STATE_TTL);
    let state = codec.seal_json_with(&sealed, &options).map_err(|e| McpError::internal_error(e.to_string(), None))?;
    match team {
        Some(team) => team.issue(n, STATE_TTL).await?,
        None => {
            let mut outstanding = outstanding();
            outstanding.prune();
            outstanding.open.insert(n.clone());
            outstanding.order.push_back((Instant::now() + STATE_TTL, n));
        }
    }
    Ok(state)
}

/// The codec that seals states: the team's, or this process's.
async fn codec(team: Option<&Team>) -> Result<Arc<RequestStateCodec>, McpError> {
    match team {
        Some(team) => team.codec().await,
        None => CODEC.clone().ok_or_else(no_key),
    }
}

fn no_key() -> McpError {
    McpError::internal_error("this server has no key to seal request states with (see its log)", None)
}

/// The answers a retry of the call `binding` brings: those its `requestState` carries and
/// those its `inputResponses` give to the questions asked. Nothing when it carries neither
/// (a first attempt; `inputResponses` without a state answer nothing and are ignored); a
/// refusal when the state is not one this server issued for this call, has expired, or was
/// used already. A question left unanswered is asked again by the retried call.
pub(crate) async fn redeem(
    team: Option<&Team>,
    binding: &[u8],
    request: &CallToolRequestParams,
) -> Result<Redeemed, McpError> {
    let Some(state) = &request.request_state else {
        // Answers nothing asked for, as far as this server can tell: ignored (never believed).
        if request.input_responses.as_ref().is_some_and(|r| !r.is_empty()) {
            tracing::debug!("ignored inputResponses sent without a requestState");
        }
        return Ok(Redeemed::default());
    };
    let codec = codec(team).await?;
    let sealed: Sealed = codec.open_json_with(state, binding).map_err(|e| match e {
        RequestStateError::Expired => refusal(&format!(
            "the requestState has expired (a state is good for {} minutes): call the tool again without \
             requestState and inputResponses, and answer the questions anew",
            STATE_TTL.as_secs() / 60
        )),
        _ => refusal(
            "the requestState is not one this server issued for this call (it was altered, made for other \
             arguments or another tool, or issued before the server restarted): call the tool again without \
             requestState and inputResponses",
        ),
    })?;
    let mut given = sealed.g;
    let responses = request.input_responses.as_ref();
    let first = given.len();
    // The answers in the order asked, up to the first missing: the call asks that one again.
    for (i, digest) in sealed.w.iter().enumerate() {
        let Some(response) = responses.and_then(|r| r.get(&key(first + i))) else { break };
        given.push(Given { digest: digest.clone(), response: response.clone() });
    }
    let spent = match team {
        Some(team) => team.spend(sealed.n).await?,
        None => spend(&sealed.n),
    };
    if !spent {
        return Err(refusal(
            "this requestState was used already or has lapsed (each is good for one retry within its time): send \
             the requestState of the latest result, or call the tool again without requestState and inputResponses",
        ));
    }
    Ok(Redeemed { given, rounds: sealed.r })
}

/// Strikes nonce `n` off: `false` when it was not outstanding.
fn spend(n: &str) -> bool {
    let mut outstanding = outstanding();
    outstanding.prune();
    outstanding.open.remove(n)
}

fn refusal(message: &str) -> McpError {
    McpError::invalid_params(message.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(args: Value) -> CallToolRequestParams {
        CallToolRequestParams::new("Bash").with_arguments(args.as_object().unwrap().clone())
    }

    fn retry(mut request: CallToolRequestParams, state: &str, answer: Value) -> CallToolRequestParams {
        request.request_state = Some(state.to_string());
        request.input_responses = Some([(key(0), answer)].into_iter().collect());
        request
    }

    #[tokio::test]
    async fn a_state_is_redeemed_once_for_its_call_only() {
        let first = call(json!({"command": "rm -r build", "timeout": 5}));
        let bound = binding("s1", &first);
        let state = seal(None, &bound, 1, Vec::new(), vec!["7".into()]).await.unwrap();
        let yes = json!({"action": "accept", "content": {"decision": "allow_once"}});

        // The same arguments in another key order are the same call.
        let same = retry(call(json!({"timeout": 5, "command": "rm -r build"})), &state, yes.clone());
        assert_eq!(binding("s1", &same), bound);
        // Another command, another session, an altered state: refused, and nothing spent.
        let other = retry(call(json!({"command": "rm -r /", "timeout": 5})), &state, yes.clone());
        assert!(
            redeem(None, &binding("s1", &other), &other)
                .await
                .unwrap_err()
                .message
                .contains("not one this server issued")
        );
        assert!(redeem(None, &binding("s2", &same), &same).await.is_err());
        let mut altered = state.clone();
        altered.replace_range(altered.len() - 2.., if altered.ends_with("AA") { "BB" } else { "AA" });
        assert!(redeem(None, &bound, &retry(first.clone(), &altered, yes.clone())).await.is_err());
        let redeemed = redeem(None, &bound, &same).await.unwrap();
        assert_eq!(redeemed, Redeemed { given: vec![Given { digest: "7".into(), response: yes }], rounds: 1 });
        assert!(redeem(None, &bound, &same).await.unwrap_err().message.contains("used already"));
    }

    #[tokio::test]
    async fn answers_without_a_state_are_ignored_and_a_missing_answer_is_asked_again() {
        let mut request = call(json!({"command": "ls"}));
        assert_eq!(redeem(None, &binding("s", &request), &request).await.unwrap(), Redeemed::default());
        request.input_responses = Some([(key(0), json!({"action": "accept"}))].into_iter().collect());
        assert_eq!(
            redeem(None, &binding("s", &request), &request).await.unwrap(),
            Redeemed::default(),
            "nothing asked, nothing believed"
        );
        // Two questions asked, the second answered only: only what precedes the gap is kept.
        let bound = binding("s", &request);
        let state = seal(None, &bound, 1, Vec::new(), vec!["1".into(), "2".into()]).await.unwrap();
        request.request_state = Some(state);
        request.input_responses = Some([(key(1), json!({"action": "accept"}))].into_iter().collect());
        assert_eq!(redeem(None, &bound, &request).await.unwrap().given, []);
    }

    #[tokio::test]
    async fn a_call_gets_a_bounded_number_of_rounds() {
        let bound = binding("s", &call(json!({"command": "ls"})));
        assert!(seal(None, &bound, MAX_ROUNDS, Vec::new(), vec!["q".into()]).await.is_ok());
        let refused = seal(None, &bound, MAX_ROUNDS + 1, Vec::new(), vec!["q".into()]).await.unwrap_err();
        assert!(refused.message.contains("without settling"), "{refused:?}");
    }
}
