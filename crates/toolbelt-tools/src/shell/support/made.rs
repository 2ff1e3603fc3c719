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

use toolbelt_core::{Access, ToolContext};

use crate::shell::support::sandbox::protect::{self, Missing};

/// Settles what a command of the call `cx` made (`missing`'s entries that exist now): asks
/// whether to keep each, keeps what was approved, moves the rest aside. Returns what the
/// model must be told.
pub async fn settle(cx: &ToolContext, missing: &Missing) -> Vec<String> {
    let mut notices = Vec::new();
    for path in missing.made() {
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
    for notice in &notices {
        tracing::warn!("{notice}");
    }
    notices
}

/// Moves aside what `missing`'s process (`who`: "the background command `bash_2`") made,
/// with nobody to ask; returns what was said on stderr.
pub fn set_aside_unasked(missing: &Missing, who: &str) -> Vec<String> {
    let notices: Vec<String> = missing
        .made()
        .into_iter()
        .map(|path| {
            let holds = protect::holds(&path);
            set_aside(&path, &holds, &format!("it appeared while {who} ran, and nobody could be asked about it"))
        })
        .collect();
    for notice in &notices {
        tracing::warn!("{notice}");
    }
    notices
}

/// The protected places a program started under a [`crate::shell::Confinement`] may make
/// where there were none, looked for once it has ended (a project's hook or server).
#[derive(Debug, Clone)]
pub struct PlacesWatch(pub(crate) Missing);

impl PlacesWatch {
    /// The program `who` and every process it started have ended: moves aside what appeared
    /// while it ran; returns what was said on stderr.
    pub fn ended(&self, who: &str) -> Vec<String> {
        set_aside_unasked(&self.0, who)
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
