//! Approvals over MCP: an `ask` verdict becomes an elicitation sent to the client of the
//! session the call belongs to.
//!
//! The runtime has one approver for all its sessions; [`SessionApprovers`] is that approver,
//! and routes each question to the approver registered for the call's session (the MCP
//! connection's [`Elicitor`]), or refuses with the rule that would allow the call when the
//! session's client cannot elicit. A call of a 2026-07-28 client is asked through its round
//! instead ([`crate::round`]): the question goes back with the call's result, and the answer
//! comes with its retry.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema, LegacyEnumSchema, PrimitiveSchemaDefinition,
    StringSchema,
};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use crate::round::{Channel, Round};
use toolbelt_core::BoxFuture;
use toolbelt_policy::{Approval, Approver, CallInfo, NoApprover, Offer, Verdict, denial, offers};

/// The runtime's approver: one approver per session id, [`NoApprover`] for the others.
#[derive(Default)]
pub struct SessionApprovers {
    by_session: RwLock<HashMap<String, Arc<dyn Approver>>>,
}

impl std::fmt::Debug for SessionApprovers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.by_session.read().map(|m| m.len()).unwrap_or(0);
        f.debug_struct("SessionApprovers").field("sessions", &n).finish()
    }
}

impl SessionApprovers {
    /// Routes the questions of session `id` to `approver`.
    pub fn register(&self, id: &str, approver: Arc<dyn Approver>) {
        self.by_session.write().unwrap_or_else(PoisonError::into_inner).insert(id.to_string(), approver);
    }

    /// Forgets session `id` (its connection closed).
    pub fn unregister(&self, id: &str) {
        self.by_session.write().unwrap_or_else(PoisonError::into_inner).remove(id);
    }

    fn lookup(&self, id: &str) -> Option<Arc<dyn Approver>> {
        self.by_session.read().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }
}

impl Approver for SessionApprovers {
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, verdict: &'a Verdict) -> BoxFuture<'a, Approval> {
        if let Some(round) = Round::current(call.session.id()) {
            // A follow-up comes after the call acted: a retry would act again, so it is judged
            // as where nobody can be asked.
            if !round.elicits() || call.is_follow_up() {
                return NoApprover.approve(call, verdict);
            }
            let elicitor = Elicitor { channel: Channel::Round(round) };
            return Box::pin(async move { elicitor.approve(call, verdict).await });
        }
        match self.lookup(call.session.id()) {
            Some(approver) => Box::pin(async move { approver.approve(call, verdict).await }),
            None => NoApprover.approve(call, verdict),
        }
    }
}

/// Asks the client of one MCP connection, with a form elicitation.
pub struct Elicitor {
    channel: Channel,
}

impl Elicitor {
    /// An approver asking through `peer`.
    pub fn new(peer: Peer<RoleServer>) -> Self {
        Self { channel: Channel::Peer(peer) }
    }
}

impl Approver for Elicitor {
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, verdict: &'a Verdict) -> BoxFuture<'a, Approval> {
        let params = question(call, verdict);
        Box::pin(async move {
            match self.channel.elicit(params).await {
                Ok(result) => answer(&offers(verdict), result.action, result.content.as_ref()),
                Err(e) if crate::round::is_pending(&e) => Approval::Deny { reason: e },
                Err(e) => {
                    Approval::Deny { reason: format!("asking the user for approval failed ({e}); {}", verdict.reason) }
                }
            }
        })
    }
}

/// The elicitation: what the call does, why it asks, and the choices — those the terminal
/// offers, by the same names ([`offers`]).
fn question(call: &CallInfo<'_>, verdict: &Verdict) -> ElicitRequestParams {
    let what = call.wants();
    let offered = offers(verdict);
    let choices: Vec<&str> = offered.iter().map(|o| o.value).collect();
    let names: Vec<&str> = offered.iter().map(|o| o.label.as_str()).collect();
    let always = if verdict.allow_rules.is_empty() {
        String::new()
    } else {
        format!(
            " \"Always allow\" adds {} to the rules this project runs without asking, in every later session.",
            verdict.allow_rules.join(", ")
        )
    };
    let message = format!(
        "{} wants to {what}. It needs approval: {} [{}].{always}",
        call.tool.name, verdict.reason, verdict.source
    );
    form(message, &choices, &names)
}

/// A form asking for a decision among `choices` (shown as `names`), and a reason.
fn form(message: String, choices: &[&str], names: &[&str]) -> ElicitRequestParams {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let mut decision = LegacyEnumSchema::new(strings(choices));
    decision.title = Some("Decision".into());
    decision.enum_names = Some(strings(names));
    let reason = StringSchema::new().title("Reason (shown to the model when denied)");
    let properties = BTreeMap::from([
        ("decision".to_string(), PrimitiveSchemaDefinition::Enum(EnumSchema::Legacy(decision))),
        ("reason".to_string(), PrimitiveSchemaDefinition::String(reason)),
    ]);
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::new(properties).with_required(vec!["decision".into()]),
    }
}

/// The approval a form's answer gives: the offer whose value it returned (one that was
/// offered only: a client cannot pick "always" where it was not offered), else a denial.
fn answer(offered: &[Offer], action: ElicitationAction, content: Option<&Value>) -> Approval {
    let reason = content.and_then(|c| c["reason"].as_str());
    let picked = content.and_then(|c| c["decision"].as_str());
    match action {
        ElicitationAction::Accept => match offered.iter().find(|o| Some(o.value) == picked) {
            Some(offer) => offer.approval(reason),
            None => denial(reason),
        },
        ElicitationAction::Decline => Approval::Deny { reason: "the user declined this call".into() },
        _ => Approval::Deny { reason: "the user dismissed the approval request".into() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_form_offers_the_choices_by_name() {
        let params = form("Bash wants to run `ls`.".into(), &["allow_once", "deny"], &["Allow once", "Deny"]);
        let expected = json!({
            "mode": "form",
            "message": "Bash wants to run `ls`.",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "decision": {
                        "type": "string",
                        "title": "Decision",
                        "enum": ["allow_once", "deny"],
                        "enumNames": ["Allow once", "Deny"],
                    },
                    "reason": {"type": "string", "title": "Reason (shown to the model when denied)"},
                },
                "required": ["decision"],
            },
        });
        // The same bytes as the form read from its JSON.
        let read: ElicitRequestParams = serde_json::from_value(expected.clone()).unwrap();
        assert_eq!(serde_json::to_string(&params).unwrap(), serde_json::to_string(&read).unwrap());
        assert_eq!(serde_json::to_value(&params).unwrap(), expected);
    }

    #[test]
    fn answers_become_approvals() {
        let verdict = Verdict::new(
            toolbelt_policy::Decision::Ask,
            "asks",
            toolbelt_policy::VerdictSource::Mode(toolbelt_policy::PermissionMode::Default),
        );
        let offered = offers(&verdict);
        let answer = |action, content: Option<&Value>| answer(&offered, action, content);
        let accept = |decision: &str| json!({"decision": decision, "reason": "  "});
        assert_eq!(answer(ElicitationAction::Accept, Some(&accept("allow_session"))), Approval::AllowSession);
        assert_eq!(
            answer(ElicitationAction::Accept, Some(&json!({"decision": "deny", "reason": " no "}))),
            Approval::Deny { reason: "the user denied this call: no".into() }
        );
        assert_eq!(
            answer(ElicitationAction::Accept, Some(&accept("deny"))),
            Approval::Deny { reason: "the user denied this call".into() }
        );
        // "Always" was not offered (no rule to remember): picking it anyway allows nothing.
        assert_eq!(
            answer(ElicitationAction::Accept, Some(&accept("allow_always"))),
            Approval::Deny { reason: "the user denied this call".into() }
        );
        assert_eq!(
            answer(ElicitationAction::Cancel, None),
            Approval::Deny { reason: "the user dismissed the approval request".into() }
        );
    }
}
