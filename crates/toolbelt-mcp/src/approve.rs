//! Approvals over MCP: an `ask` verdict becomes an elicitation sent to the client of the
//! session the call belongs to.
//!
//! The runtime has one approver for all its sessions; [`SessionApprovers`] is that approver,
//! and routes each question to the approver registered for the call's session (the MCP
//! connection's [`Elicitor`]), or refuses with the rule that would allow the call when the
//! session's client cannot elicit.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use toolbelt_core::BoxFuture;
use toolbelt_policy::{Approval, Approver, CallInfo, NoApprover, Verdict};

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
        match self.lookup(call.session.id()) {
            Some(approver) => Box::pin(async move { approver.approve(call, verdict).await }),
            None => NoApprover.approve(call, verdict),
        }
    }
}

/// Asks the client of one MCP connection, with a form elicitation.
pub struct Elicitor {
    peer: Peer<RoleServer>,
}

impl Elicitor {
    /// An approver asking through `peer`.
    pub fn new(peer: Peer<RoleServer>) -> Self {
        Self { peer }
    }
}

impl Approver for Elicitor {
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, verdict: &'a Verdict) -> BoxFuture<'a, Approval> {
        let params = question(call, verdict);
        Box::pin(async move {
            let params: ElicitRequestParams = match serde_json::from_value(params) {
                Ok(p) => p,
                Err(e) => return Approval::Deny { reason: format!("the approval request could not be built ({e})") },
            };
            match self.peer.create_elicitation(params).await {
                Ok(result) => answer(result.action, result.content.as_ref()),
                Err(e) => {
                    Approval::Deny { reason: format!("asking the user for approval failed ({e}); {}", verdict.reason) }
                }
            }
        })
    }
}

/// The elicitation: what the call does, why it asks, and the choices.
fn question(call: &CallInfo<'_>, verdict: &Verdict) -> Value {
    let what = call.wants();
    let mut choices = vec!["allow_once", "allow_session", "deny"];
    let mut names = vec!["Allow once", "Allow for this session", "Deny"];
    if !verdict.allow_rules.is_empty() {
        choices.insert(2, "allow_always");
        names.insert(2, "Always allow");
    }
    if verdict.offers_accept_edits {
        choices.insert(choices.len() - 1, "accept_edits");
        names.insert(names.len() - 1, "Allow all edits for the rest of this session");
    }
    let always = if verdict.allow_rules.is_empty() {
        String::new()
    } else {
        format!(" \"Always allow\" adds {} to the project's settings.", verdict.allow_rules.join(", "))
    };
    json!({
        "mode": "form",
        "message": format!(
            "{} wants to {what}. It needs approval: {} [{}].{always}",
            call.tool.name, verdict.reason, verdict.source
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "enum": choices,
                    "enumNames": names,
                },
                "reason": {
                    "type": "string",
                    "title": "Reason (shown to the model when denied)",
                },
            },
            "required": ["decision"],
        },
    })
}

fn answer(action: ElicitationAction, content: Option<&Value>) -> Approval {
    let reason = content.and_then(|c| c["reason"].as_str()).map(str::trim).filter(|r| !r.is_empty());
    match (action, content.and_then(|c| c["decision"].as_str())) {
        (ElicitationAction::Accept, Some("allow_once")) => Approval::AllowOnce,
        (ElicitationAction::Accept, Some("allow_session")) => Approval::AllowSession,
        (ElicitationAction::Accept, Some("allow_always")) => Approval::AllowAlways,
        (ElicitationAction::Accept, Some("accept_edits")) => Approval::AcceptEditsForSession,
        (ElicitationAction::Accept, _) => Approval::Deny {
            reason: match reason {
                Some(r) => format!("the user denied this call: {r}"),
                None => "the user denied this call".into(),
            },
        },
        (ElicitationAction::Decline, _) => Approval::Deny { reason: "the user declined this call".into() },
        (_, _) => Approval::Deny { reason: "the user dismissed the approval request".into() },
    }
}
