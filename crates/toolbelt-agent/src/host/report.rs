//! An agent's report: its answer, or what it last said and was doing — cut to the result
//! cap, the whole text kept in a file the model can read.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use toolbelt_core::{AgentReport, AgentStatus};

use crate::host::roster::AgentRecord;

/// The report of `agent` as it stands, its text cut to `cap` characters.
pub(crate) fn report(agent: &AgentRecord, cap: usize) -> AgentReport {
    let snap = agent.snapshot();
    let (text, error, doing) = match (&snap.outcome, snap.status) {
        (Some(outcome), status) if status != AgentStatus::Running => {
            (outcome.text.clone(), outcome.error.clone(), outcome.doing.clone())
        }
        _ => (snap.last_text.clone().unwrap_or_default(), None, snap.doing.clone()),
    };
    let (text, full_text_path) = cap_text(agent, text, cap);
    AgentReport {
        agent_id: agent.id.clone(),
        name: agent.name.clone(),
        agent_type: agent.agent_type.clone(),
        description: agent.description.clone(),
        team_name: agent.team.clone(),
        status: snap.status,
        text,
        full_text_path,
        doing,
        error,
        turns: snap.turns,
        tool_calls: snap.tool_calls,
        duration_ms: u64::try_from(snap.duration.as_millis()).unwrap_or(u64::MAX),
    }
}

/// `text` within `cap` characters; when cut, the whole of it is written to
/// `<spill dir>/<agent id>.md` (the path returned) and the cut text says where.
fn cap_text(agent: &AgentRecord, text: String, cap: usize) -> (String, Option<PathBuf>) {
    let Some((cut_at, _)) = text.char_indices().nth(cap) else {
        return (text, None);
    };
    let total = text.chars().count();
    let saved = agent.spill_dir.as_deref().and_then(|dir| save(dir, &agent.id, &text).ok());
    let mut shown = text[..cut_at].to_string();
    match &saved {
        Some(path) => shown.push_str(&format!(
            "\n\n[… {} more characters cut; the whole text is in {}]",
            toolbelt_core::thousands(total - cap),
            path.display()
        )),
        None => shown.push_str(&format!("\n\n[… {} more characters cut]", toolbelt_core::thousands(total - cap))),
    }
    (shown, saved)
}

/// Writes `text` to a new `0600` file in `dir` (made `0700`), never through an existing name
/// (`create_new` is `O_EXCL`, which refuses a planted symlink too).
fn save(dir: &Path, id: &str, text: &str) -> std::io::Result<PathBuf> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    for n in 0..1000 {
        let path = if n == 0 { dir.join(format!("{id}.md")) } else { dir.join(format!("{id}-{n}.md")) };
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(mut file) => {
                file.write_all(text.as_bytes())?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free file name"))
}
