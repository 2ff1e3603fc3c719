//! Where a session lives: the working directory, the workspace roots, the project's
//! `.toolbelt/` directory, and named sessions saved there.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use toolbelt_runtime::{ClientInfo, Runtime, Session};

use crate::Usage;
use crate::cli::Global;

/// The directories a command works in.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The session's working directory (absolute).
    pub cwd: PathBuf,
    /// Whether `--cwd` was given (it then overrides a named session's saved cwd).
    pub cwd_given: bool,
    /// The workspace roots: the cwd, every `--add-dir`, and the settings'
    /// `permissions.additional_directories`.
    pub roots: Vec<PathBuf>,
    /// The project root: the nearest ancestor of the cwd holding `.toolbelt/` or `.git`.
    pub project: PathBuf,
    /// The project's `.toolbelt/` directory (it may not exist yet).
    pub state_dir: PathBuf,
}

impl Workspace {
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
        let project = project_root(&cwd);
        let state_dir = project.join(".toolbelt");
        Ok(Self { cwd, cwd_given: global.cwd.is_some(), roots, project, state_dir })
    }

    /// The directory holding every session's files.
    pub fn sessions_dir(&self) -> PathBuf {
        self.state_dir.join("sessions")
    }
}

fn existing_dir(base: &Path, dir: &Path, flag: &str) -> anyhow::Result<PathBuf> {
    let joined = base.join(dir);
    match std::fs::canonicalize(&joined) {
        Ok(p) if p.is_dir() => Ok(p),
        Ok(p) => Err(Usage(format!("{flag} {}: not a directory", p.display())).into()),
        Err(e) => Err(Usage(format!("{flag} {}: {e}", joined.display())).into()),
    }
}

/// The nearest ancestor of `cwd` (itself included) holding `.toolbelt/`, else the nearest
/// holding `.git`, else `cwd`.
pub(crate) fn project_root(cwd: &Path) -> PathBuf {
    for marker in [".toolbelt", ".git"] {
        if let Some(dir) = cwd.ancestors().find(|d| d.join(marker).exists()) {
            return dir.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

/// A session opened for one command, and where to save it (named sessions only).
pub struct OpenSession {
    /// The session.
    pub session: Session,
    state_file: Option<PathBuf>,
    sessions_dir: PathBuf,
}

impl OpenSession {
    /// Opens the named session (restoring its saved state) or a fresh one for this command.
    pub fn open(ws: &Workspace, name: Option<&str>, kind: &str) -> anyhow::Result<Self> {
        let sessions_dir = ws.sessions_dir();
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
        }
        Ok(Self { session, state_file, sessions_dir })
    }

    /// Runs the SessionStart hooks (`resume` for a named session with saved state).
    pub async fn start(&self, runtime: &Runtime) {
        let source = if self.state_file.as_ref().is_some_and(|f| f.exists()) { "resume" } else { "startup" };
        runtime.start_session(&self.session, source).await;
    }

    /// Runs the SessionEnd hooks and saves a named session's state; keeps session files out
    /// of git.
    pub async fn close(self, runtime: &Runtime) -> anyhow::Result<()> {
        runtime.end_session(&self.session, "exit").await;
        if let Some(file) = &self.state_file {
            self.session.save_state(file)?;
        }
        if self.sessions_dir.is_dir() {
            let ignore = self.sessions_dir.join(".gitignore");
            if !ignore.exists() {
                std::fs::write(&ignore, "# Session state and spilled output: local, never committed.\n*\n")
                    .with_context(|| format!("cannot write {}", ignore.display()))?;
            }
        }
        Ok(())
    }
}

fn fresh_id(kind: &str) -> String {
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("{kind}-{millis}-{}", std::process::id())
}
