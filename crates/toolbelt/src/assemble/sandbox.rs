//! What the assembly holds back: the paths no tool writes without approval, and the sandbox
//! commands, hooks and a project's servers run in.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolbelt_policy::confine::Confiner;
use toolbelt_policy::protected::ProtectedPaths;
use toolbelt_policy::{Authorizer as _, PermissionEngine};
use toolbelt_tools::shell::SandboxConfig;

use super::Assembly;
use crate::project_sandbox::ProjectSandbox;

impl Assembly {
    /// What no tool writes without an explicit approval: the entries of every project
    /// (`.git`, `.toolbelt`, `.claude`, …) and the user's toolbelt settings, toolbelt's state
    /// (the trust store, audit logs; not the worktrees made there), data (the snippets) and
    /// cache (the code index), the managed settings and the user's git configuration — and the
    /// audit log's files wherever the settings put it.
    pub fn protected_paths(&self) -> ProtectedPaths {
        let mut paths = vec![self.loc.state_dir.clone(), self.loc.data_dir.clone(), self.loc.cache_dir.clone()];
        if let Some(dir) = self.loc.user_file.parent() {
            paths.push(dir.to_path_buf());
        }
        paths.extend(self.loc.managed_files.iter().cloned());
        paths.push(self.loc.home.join(".gitconfig"));
        paths.push(self.loc.git_config.clone());
        // The worktrees EnterWorktree makes are where the model works once it entered one.
        let protected = ProtectedPaths::default().with_paths(paths).except([self.worktree_dir()]);
        // An audit log the user put elsewhere (`--audit FILE`, `audit.path`), maybe inside the
        // workspace: its files, as written and as they really are.
        let audit = &self.settings.audit;
        if self.settings.audit_enabled && protected.protects(&audit.path).is_none() {
            let files = audit.files();
            let real = files.iter().map(|f| toolbelt_core::paths::real_path(f)).collect::<Vec<_>>();
            return protected.with_paths(files.into_iter().chain(real));
        }
        protected
    }

    /// What a project's own hooks and stdio MCP servers start in: the shell commands'
    /// sandbox, over the workspace roots, hiding what `engine`'s Read deny rules name
    /// ([`crate::project_sandbox`]).
    pub fn project_sandbox(&self, engine: &PermissionEngine) -> Arc<dyn Confiner> {
        let masks = engine.hidden_paths().map(|h| h.masks()).unwrap_or_default();
        ProjectSandbox::confiner(self.sandbox(), self.roots.clone(), masks)
    }

    /// The sandbox settings, holding the protected paths read-only: the user's places of
    /// [`Assembly::protected_paths`] and the protected names at the top of the home directory
    /// (`~/.claude`, `~/.vscode`, `~/.git`…, which take effect in every project), toolbelt's
    /// own directories among them made when missing. The home is given as the file system
    /// resolves it (roots are real paths), the places below it as they are named, so a link
    /// among them is seen (`sandbox/places.rs`).
    pub fn sandbox(&self) -> SandboxConfig {
        let mut sandbox = self.settings.shell.sandbox.clone();
        let home = &self.loc.home;
        let real_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.clone());
        let real = |path: &Path| match path.strip_prefix(home) {
            Ok(rest) => real_home.join(rest),
            Err(_) => path.to_path_buf(),
        };
        let mut places: Vec<PathBuf> = self.protected_paths().paths().iter().map(|p| real(p)).collect();
        places.extend(toolbelt_core::PROTECTED_NAMES.iter().map(|name| real_home.join(name)));
        sandbox.protected_paths = places;
        let config_dir = self.loc.user_file.parent().map(Path::to_path_buf);
        sandbox.own_dirs = [
            Some(self.loc.state_dir.clone()),
            Some(self.loc.data_dir.clone()),
            Some(self.loc.cache_dir.clone()),
            config_dir,
        ]
        .into_iter()
        .flatten()
        .map(|p| real(&p))
        .collect();
        sandbox
    }
}
