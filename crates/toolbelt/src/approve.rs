//! Asking a person at the terminal: allow once, for the session, always (the rule is written
//! to the project-local settings), every edit for the rest of the session (when an edit is
//! what asks), or deny with a reason — the answers an MCP host's form offers, by the same
//! names ([`toolbelt_policy::offers`]), with the letters a plan's approval takes too
//! (`keys.rs`).
//!
//! The prompt goes to the controlling terminal (`/dev/tty`), not to stdout (results) or stdin
//! (which may carry the call's input), so it works inside pipelines. With no terminal, or
//! under CI, there is nobody to ask and the call is denied with the rule that would allow it.
//!
//! A sub-agent's call is asked about under the agent's name (its id, name, type, whether it
//! runs in the background, what it was started to do): a background agent's question comes
//! while the agent that started it is busy elsewhere.

use std::fs::File;
use std::io::{BufReader, Write as _};
use std::sync::{Arc, Mutex, PoisonError};

use toolbelt_core::BoxFuture;
use toolbelt_policy::{Approval, Approver, CallInfo, Offer, Verdict, denial, offers};

use crate::keys;

/// Prompts on the controlling terminal, one question at a time.
pub struct TerminalApprover {
    tty: Arc<Mutex<File>>,
}

impl TerminalApprover {
    /// The terminal, when there is one and this is not a CI run.
    pub fn open() -> Option<Self> {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        if ci {
            return None;
        }
        let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").ok()?;
        Some(Self { tty: Arc::new(Mutex::new(tty)) })
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, verdict: &'a Verdict) -> BoxFuture<'a, Approval> {
        let question = Question::of(call, verdict);
        let tty = Arc::clone(&self.tty);
        Box::pin(async move {
            // The terminal is read with blocking calls, on a thread that may block; the lock
            // keeps concurrent calls' prompts one after another.
            let asked = tokio::task::spawn_blocking(move || {
                let mut tty = tty.lock().unwrap_or_else(PoisonError::into_inner);
                question.ask(&mut tty)
            })
            .await;
            match asked {
                Ok(Ok(approval)) => approval,
                Ok(Err(e)) => Approval::Deny { reason: format!("the permission prompt failed ({e}); denied") },
                Err(e) => Approval::Deny { reason: format!("the permission prompt failed ({e}); denied") },
            }
        })
    }
}

/// What is asked, owned so it can move to the prompting thread.
struct Question {
    /// The sub-agent that asks, when one does.
    agent: Option<String>,
    tool: String,
    wants: String,
    reason: String,
    source: String,
    /// The answers offered, as every front end offers them.
    offers: Vec<Offer>,
}

impl Question {
    fn of(call: &CallInfo<'_>, verdict: &Verdict) -> Self {
        Self {
            agent: toolbelt_agent::SubAgent::of(call.session).map(|a| a.label()),
            tool: call.tool.name.clone(),
            wants: call.wants(),
            reason: verdict.reason.clone(),
            source: verdict.source.to_string(),
            offers: offers(verdict),
        }
    }

    fn ask(&self, tty: &mut File) -> std::io::Result<Approval> {
        let mut text = match &self.agent {
            Some(agent) => format!("\n{agent} asks:\n{} wants to {}\n", self.tool, self.wants),
            None => format!("\n{} wants to {}\n", self.tool, self.wants),
        };
        text.push_str(&format!("  why it asks: {} [{}]\n", self.reason, self.source));
        let choices: Vec<(char, String)> = self.offers.iter().map(|o| (o.key, o.label.clone())).collect();
        text.push_str(&keys::lines(&choices));
        tty.write_all(text.as_bytes())?;
        let mut reader = BufReader::new(tty.try_clone()?);
        let letters: Vec<char> = self.offers.iter().map(|o| o.key).collect();
        let Some(key) = keys::read(tty, &mut reader, &letters)? else {
            return Ok(Approval::Deny { reason: "the person at the terminal gave no answer".into() });
        };
        let why = if key == toolbelt_core::keys::NO { keys::why(tty, &mut reader)? } else { None };
        let picked = self.offers.iter().find(|o| o.key == key);
        Ok(picked.map_or_else(|| denial(why.as_deref()), |o| o.approval(why.as_deref())))
    }
}
