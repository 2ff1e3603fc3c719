//! The working directory across calls: where a command starts, and whether the directory it
//! ended in carries over to the next call (only inside the workspace roots).

use std::path::{Path, PathBuf};

use toolbelt_core::{ToolContext, ToolError};

/// The directory a command starts in: the session's cwd, or, when that no longer exists
/// (a command deleted it), the first workspace root that does — the session moves there
/// and the notice says so.
pub fn start_dir(cx: &ToolContext) -> Result<(PathBuf, Option<String>), ToolError> {
    let cwd = cx.cwd();
    if cwd.is_dir() {
        return Ok((cwd, None));
    }
    match cx.roots().into_iter().find(|r| r.is_dir()) {
        Some(root) => {
            cx.session().set_cwd(root.clone());
            let notice = format!(
                "The working directory {} no longer exists; the command ran in {} instead, which is now the \
                 working directory.",
                cwd.display(),
                root.display()
            );
            Ok((root, Some(notice)))
        }
        None => Err(ToolError::failed(format!(
            "the working directory {} and every workspace root are gone; ask the user to restore them or restart \
             the session with an existing directory",
            cwd.display()
        ))),
    }
}

/// Carries `ended_in` (the command's final `pwd -P`) over to the session when it is inside
/// one of the session's workspace roots; returns a notice when the directory changed or was
/// not kept.
///
/// Only the session's own roots count, not the directories opened for this call alone (a
/// path outside that a rule, the mode or a person let this command read): reading a
/// directory is not moving the session there, and a working directory outside the roots
/// would make every later relative path — of commands and of the file tools — mean a place
/// nobody chose. The session has one working directory, and each result reports it.
pub fn carry_over(cx: &ToolContext, started_in: &Path, ended_in: &Path) -> Option<String> {
    let before = std::fs::canonicalize(started_in).unwrap_or_else(|_| started_in.to_path_buf());
    if ended_in == before {
        return None;
    }
    let inside = cx
        .session()
        .roots()
        .iter()
        .any(|root| ended_in.starts_with(std::fs::canonicalize(root).unwrap_or_else(|_| root.clone())));
    if inside {
        cx.session().set_cwd(ended_in.to_path_buf());
        Some(format!("Working directory is now {}", ended_in.display()))
    } else {
        Some(format!(
            "cd outside the workspace roots is not kept: the command ended in {}, and the working directory stays \
             {}. Use absolute paths there, or ask the user to add that directory to the workspace.",
            ended_in.display(),
            started_in.display()
        ))
    }
}
