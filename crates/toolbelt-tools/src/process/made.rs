//! Protected places a sandboxed process made where there were none: kept when a person
//! approves, moved aside otherwise (`sandbox/protect/set_aside.rs` says why and how).
//!
//! A foreground command or a linter ends inside its call, so the person is asked there, as
//! for any access a running call learns it needs ([`ToolContext::authorize`]): the entry is
//! judged as a write to it, which for a protected path asks in every mode unless an allow
//! rule names it (`Edit(./.git)`). `git init` in a new project asks once. A background
//! command, a hook or a project's server ends with no call to ask in: what appeared while it
//! ran is moved aside and said on stderr (and in the task's output) with how to restore it —
//! toolbelt cannot tell who made it, so the notice says so too.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use toolbelt_core::{Access, ToolContext};

use crate::process::sandbox::Confinement;
use crate::process::sandbox::protect::{self, Missing};

/// The protected places a process started under a [`Confinement`] may make where there were
/// none, looked at once it has ended: by the call that ran it ([`PlacesWatch::settle`]), or
/// with nobody to ask ([`PlacesWatch::ended`]). Looks are one at a time, so a background
/// command stopped while its watcher also ends it moves each place once.
#[derive(Debug, Default)]
pub struct PlacesWatch(Mutex<Missing>);

impl PlacesWatch {
    /// The watch of a process started under `confinement` (none: nothing to watch).
    pub fn of(confinement: Option<&Confinement>) -> Self {
        Self(Mutex::new(confinement.map(|c| c.missing().clone()).unwrap_or_default()))
    }

    /// The process of the call `cx` has ended: asks whether to keep each place it made (judged
    /// as a write to a protected path), keeps what was approved, moves the rest aside.
    /// Returns what the model must be told.
    pub async fn settle(&self, cx: &ToolContext) -> Vec<String> {
        let made = self.0.lock().unwrap_or_else(PoisonError::into_inner).made();
        let mut notices = Vec::new();
        for path in made {
            let holds = protect::holds(&path);
            let access = Access::exclusive().writes(path.clone()).because(format!(
                "the command made {} where there was none{}; answering no moves it aside",
                path.display(),
                described(&holds)
            ));
            match cx.authorize(access).await {
                Ok(()) => {
                    protect::keep(&path);
                    notices.push(format!(
                        "This command made `{}`{} where there was none; it is kept, as the user or an allow rule \
                         approved. Commands cannot change it from now on.",
                        path.display(),
                        described(&holds)
                    ));
                }
                Err(refused) => notices.push(set_aside(&path, &holds, &not_approved(&refused))),
            }
        }
        warn(&notices);
        notices
    }

    /// The program `who` ("the background command `bash_2`") and every process it started
    /// have ended, with nobody to ask: moves aside what appeared while it ran; returns what
    /// was said on stderr.
    pub fn ended(&self, who: &str) -> Vec<String> {
        let missing = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let notices: Vec<String> = missing
            .made()
            .into_iter()
            .map(|path| {
                let holds = protect::holds(&path);
                set_aside(&path, &holds, &format!("it appeared while {who} ran, and nobody could be asked about it"))
            })
            .collect();
        warn(&notices);
        notices
    }
}

/// Says each notice on stderr, for the person.
fn warn(notices: &[String]) {
    for notice in notices {
        tracing::warn!("{notice}");
    }
}

/// Moves `path` aside; the notice saying what happened, why and how to undo it.
fn set_aside(path: &Path, holds: &str, why: &str) -> String {
    let what = format!("`{}`{}", path.display(), described(holds));
    match protect::set_aside(path) {
        Ok(went) => format!(
            "{what} was made where there was none — a protected place (git, editors and agent hosts run what it \
             configures) — and {why}, so it was moved to `{}`. Do not make it again or move it back: tell the \
             user, who can look at it and restore it with `mv {} {}`.",
            went.display(),
            quoted(&went),
            quoted(path)
        ),
        Err(e) => format!(
            "{what} was made where there was none — a protected place (git, editors and agent hosts run what it \
             configures) — and {why}, but it could not be moved aside ({e}). Tell the user, who should look at it \
             before running git or opening the folder in an editor."
        ),
    }
}

/// Why it was not kept, in a few words: nobody to ask (with the rule that would keep it
/// without asking), or the person's no (with their reason).
fn not_approved(refused: &toolbelt_core::ToolError) -> String {
    let reason = match refused {
        toolbelt_core::ToolError::Denied { reason } => reason.clone(),
        other => other.to_string(),
    };
    if reason.contains("nobody is available") {
        let rule = reason.find("to allow it, ").map(|at| format!(" ({})", &reason[at..])).unwrap_or_default();
        format!("nobody was there to approve keeping it{rule}")
    } else {
        format!("keeping it was not approved ({reason})")
    }
}

/// ` (it holds …)`, or nothing.
fn described(holds: &str) -> String {
    if holds.is_empty() { String::new() } else { format!(" (it holds {holds})") }
}

/// `path` quoted for a shell.
fn quoted(path: &Path) -> String {
    let text = path.display().to_string();
    if text.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b)) {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
