//! Asking a person at the terminal: allow once, for the session, always (the rule is written
//! to the project-local settings), every edit for the rest of the session (when an edit is
//! what asks), or deny with a reason.
//!
//! The prompt goes to the controlling terminal (`/dev/tty`), not to stdout (results) or stdin
//! (which may carry the call's input), so it works inside pipelines. With no terminal, or
//! under CI, there is nobody to ask and the call is denied with the rule that would allow it.
//!
//! A sub-agent's call is asked about under the agent's name (its id, name, type, whether it
//! runs in the background, what it was started to do): a background agent's question comes
//! while the agent that started it is busy elsewhere.

use std::fs::File;
use std::io::{BufRead as _, BufReader, Write as _};
use std::sync::{Arc, Mutex, PoisonError};

use toolbelt_core::BoxFuture;
use toolbelt_policy::{Approval, Approver, CallInfo, Verdict};

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
    rules: Vec<String>,
    edits: bool,
}

impl Question {
    fn of(call: &CallInfo<'_>, verdict: &Verdict) -> Self {
        Self {
            agent: toolbelt_agent::SubAgent::of(call.session).map(|a| a.label()),
            tool: call.tool.name.clone(),
            wants: call.wants(),
            reason: verdict.reason.clone(),
            source: verdict.source.to_string(),
            rules: verdict.allow_rules.clone(),
            edits: verdict.offers_accept_edits,
        }
    }

    fn ask(&self, tty: &mut File) -> std::io::Result<Approval> {
        let mut text = match &self.agent {
            Some(agent) => format!("\n{agent} asks:\n{} wants to {}\n", self.tool, self.wants),
            None => format!("\n{} wants to {}\n", self.tool, self.wants),
        };
        text.push_str(&format!("  why it asks: {} [{}]\n", self.reason, self.source));
        text.push_str("  y  allow once\n  s  allow for this session\n");
        if !self.rules.is_empty() {
            text.push_str(&format!("  a  always allow {}\n", self.rules.join(", ")));
        }
        if self.edits {
            text.push_str("  e  allow all edits for the rest of this session (acceptEdits mode)\n");
        }
        text.push_str("  n  deny\n");
        tty.write_all(text.as_bytes())?;
        let choices =
            format!("y/s{}{}/n", if self.rules.is_empty() { "" } else { "/a" }, if self.edits { "/e" } else { "" });
        let mut reader = BufReader::new(tty.try_clone()?);
        loop {
            tty.write_all(format!("choice [{choices}]: ").as_bytes())?;
            tty.flush()?;
            let mut answer = String::new();
            if reader.read_line(&mut answer)? == 0 {
                return Ok(Approval::Deny { reason: "the person at the terminal gave no answer".into() });
            }
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Ok(Approval::AllowOnce),
                "s" | "session" => return Ok(Approval::AllowSession),
                "a" | "always" if !self.rules.is_empty() => return Ok(Approval::AllowAlways),
                "e" | "edits" if self.edits => return Ok(Approval::AcceptEditsForSession),
                "n" | "no" => {
                    tty.write_all(b"reason for the model (optional): ")?;
                    tty.flush()?;
                    let mut why = String::new();
                    reader.read_line(&mut why)?;
                    let why = why.trim();
                    let reason = if why.is_empty() {
                        "the user denied this call".to_string()
                    } else {
                        format!("the user denied this call: {why}")
                    };
                    return Ok(Approval::Deny { reason });
                }
                _ => tty.write_all(format!("please answer one of {choices}\n").as_bytes())?,
            }
        }
    }
}
