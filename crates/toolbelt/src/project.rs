//! Where a session lives: the working directory, the workspace roots, the project, and the
//! session's files (saved state, spilled output, task logs) in the user's state directory,
//! per project — nothing lands in the project unless the user asked for it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use toolbelt_runtime::{ClientInfo, EndReason, Runtime, Session, StartSource};

use crate::Usage;
use crate::cli::Global;

/// The directories a command works in.
#[derive(Debug, Clone)]
pub struct WorkDirs {
    /// The session's working directory (absolute).
    pub cwd: PathBuf,
    /// Whether `--cwd` was given (it then overrides a named session's saved cwd).
    pub cwd_given: bool,
    /// The workspace roots: the cwd, every `--add-dir`, and the settings'
    /// `permissions.additional_directories`.
    pub roots: Vec<PathBuf>,
    /// Where sessions keep their files: `sessions/` in the project's state directory
    /// (`$XDG_STATE_HOME/toolbelt/projects/<project>-<hash>/sessions`).
    pub sessions: PathBuf,
}

impl WorkDirs {
    /// Resolves `--cwd` and `--add-dir`; each must be an existing directory.
    pub fn from_flags(global: &Global) -> anyhow::Result<Self> {
        let here = std::env::current_dir().context("cannot read the current directory")?;
        let cwd = existing_dir(&here, global.cwd.as_deref().unwrap_or(Path::new(".")), "--cwd")?;
        let mut roots = vec![cwd.clone()];
        for dir in &global.add_dir {
            let dir = existing_dir(&here, dir, "--add-dir")?;
            if !roots.contains(&dir) {
                roots.push(dir);
            }
        }
        let project = toolbelt::assemble::project_root(&cwd);
        let sessions = toolbelt::settings::Locations::discover(&cwd, &project).project_state_dir().join("sessions");
        Ok(Self { cwd, cwd_given: global.cwd.is_some(), roots, sessions })
    }

    /// The directory holding every session's files.
    pub fn sessions_dir(&self) -> PathBuf {
        self.sessions.clone()
    }
}

fn existing_dir(base: &Path, dir: &Path, flag: &str) -> anyhow::Result<PathBuf> {
    toolbelt::assemble::existing_dir(base, dir, flag).map_err(|e| Usage(e.to_string()).into())
}

/// A session opened for one command, and where to save it (named sessions only).
pub struct OpenSession {
    /// The session.
    pub session: Session,
    state_file: Option<PathBuf>,
}

impl OpenSession {
    /// Opens the named session (restoring its saved state) or a fresh one for this command.
    pub fn open(ws: &WorkDirs, name: Option<&str>, kind: &str) -> anyhow::Result<Self> {
        let sessions_dir = ws.sessions_dir();
        toolbelt::sessions::clean(&sessions_dir);
        let (id, state_file) = match name {
            Some(name) => {
                if name.is_empty()
                    || name.starts_with('.')
                    || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                {
                    return Err(Usage(format!(
                        "--session {name:?}: use letters, digits, `-`, `_` and `.` only (not starting with `.`)"
                    ))
                    .into());
                }
                (name.to_string(), Some(sessions_dir.join(name).join("state.json")))
            }
            None => (fresh_id(kind), None),
        };
        let session = Session::new(id.clone(), ws.cwd.clone(), ws.roots.clone(), sessions_dir.join(&id))
            .with_client(ClientInfo::cli());
        if let Some(file) = &state_file {
            session.load_state(file)?;
            if ws.cwd_given {
                session.state().set_cwd(ws.cwd.clone());
            }
            // Saved in a worktree (EnterWorktree): back into it, with this command's roots.
            if let Some(notice) = toolbelt_tools::planning::resume_worktree(session.state(), &ws.roots) {
                tracing::warn!("{notice}");
            }
        }
        Ok(Self { session, state_file })
    }

    /// Runs the SessionStart hooks (`resume` for a named session with saved state).
    pub async fn start(&self, runtime: &Runtime) {
        let resumed = self.state_file.as_ref().is_some_and(|f| f.exists());
        let source = if resumed { StartSource::Resume } else { StartSource::Startup };
        runtime.start_session(&self.session, source).await;
    }

    /// Runs the SessionEnd hooks, shuts the language servers down and saves a named
    /// session's state.
    pub async fn close(self, runtime: &Runtime) -> anyhow::Result<()> {
        runtime.end_session(&self.session, EndReason::Exit).await;
        if let Some(servers) = runtime.services().get::<toolbelt_tools::language_servers::LanguageServers>() {
            servers.shutdown_all().await;
        }
        if let Some(file) = &self.state_file {
            self.session.save_state(file)?;
        }
        Ok(())
    }
}

fn fresh_id(kind: &str) -> String {
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("{kind}-{millis}-{}", std::process::id())
}
