//! What a person is offered when a call asks, as every front end offers it: the letter a
//! terminal takes ([`toolbelt_core::keys`], the letters a plan's approval takes too), the
//! value of an MCP form's field, and the label both show. One list, so that the terminal's
//! prompt and a host's form cannot drift apart.

use toolbelt_core::keys;

use crate::{Approval, Verdict};

/// One answer a person is offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The letter a terminal takes for it.
    pub key: char,
    /// The value a form's `decision` field returns for it.
    pub value: &'static str,
    /// What it is called, as shown.
    pub label: String,
}

impl Offer {
    /// The approval this answer gives; `why` is the person's own words (kept for a denial).
    pub fn approval(&self, why: Option<&str>) -> Approval {
        match self.key {
            keys::YES => Approval::AllowOnce,
            keys::SESSION => Approval::AllowSession,
            keys::ALWAYS => Approval::AllowAlways,
            keys::EDITS => Approval::AcceptEditsForSession,
            _ => denial(why),
        }
    }
}

/// What the person is offered for `verdict`, in order: allow once, for this session, always
/// (when the verdict has allow rules to remember; the label names them), every edit for the
/// rest of the session (when an edit in `default` mode asks), deny.
pub fn offers(verdict: &Verdict) -> Vec<Offer> {
    let offer = |key, value, label: &str| Offer { key, value, label: label.to_string() };
    let mut out = vec![
        offer(keys::YES, "allow_once", "Allow once"),
        offer(keys::SESSION, "allow_session", "Allow for this session"),
    ];
    if !verdict.allow_rules.is_empty() {
        let label = format!("Always allow {}", verdict.allow_rules.join(", "));
        out.push(offer(keys::ALWAYS, "allow_always", &label));
    }
    if verdict.offers_accept_edits {
        out.push(offer(keys::EDITS, "accept_edits", "Allow all edits for the rest of this session (acceptEdits mode)"));
    }
    out.push(offer(keys::NO, "deny", "Deny"));
    out
}

/// A person's denial, with their reason when they gave one.
pub fn denial(why: Option<&str>) -> Approval {
    match why.map(str::trim).filter(|w| !w.is_empty()) {
        Some(why) => Approval::Deny { reason: format!("the user denied this call: {why}") },
        None => Approval::Deny { reason: "the user denied this call".into() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decision, VerdictSource};

    #[test]
    fn the_offers_follow_the_verdict_and_give_their_approvals() {
        let mut verdict = Verdict::new(Decision::Ask, "asks", VerdictSource::Mode(crate::PermissionMode::Default));
        let keys_of = |v: &Verdict| offers(v).iter().map(|o| o.key).collect::<String>();
        assert_eq!(keys_of(&verdict), "ysn");
        verdict.allow_rules = vec!["Bash(touch *)".into()];
        verdict.offers_accept_edits = true;
        assert_eq!(keys_of(&verdict), "ysaen");
        let all = offers(&verdict);
        assert_eq!(all[2].label, "Always allow Bash(touch *)");
        let approvals: Vec<Approval> = all.iter().map(|o| o.approval(Some(" no "))).collect();
        assert_eq!(
            approvals,
            [
                Approval::AllowOnce,
                Approval::AllowSession,
                Approval::AllowAlways,
                Approval::AcceptEditsForSession,
                Approval::Deny { reason: "the user denied this call: no".into() },
            ]
        );
        assert_eq!(denial(Some("  ")), Approval::Deny { reason: "the user denied this call".into() });
    }
}
