//! Where settings and toolbelt's own files are: the project a directory belongs to, and the
//! user's directories (config, state, data, cache) from `HOME` and the XDG variables.

use std::path::{Path, PathBuf};

use super::Layer;

/// The project of a directory: the nearest ancestor (itself included) marked by `.git` or by
/// one of toolbelt's settings files (`.toolbelt/config.toml`, `.toolbelt/config.local.toml`),
/// else the directory itself. A bare `.toolbelt/` (data a toolbelt left there) marks
/// nothing: a stray one in a parent directory must not make every directory below it share
/// its settings, grants and sessions.
///
/// Nor does a mark another user planted above the directory: in a shared directory (`/tmp`),
/// anyone can create `/tmp/.toolbelt/config.toml` or `/tmp/.git`, and every folder below would
/// then read its agents, skills and settings. An ancestor's mark counts only when it is owned
/// by the user toolbelt runs as, by root, or by the owner of the directory itself (root
/// working in a user's checkout); the directory's own marks always count, since working
/// there was the user's choice.
pub fn project_root(dir: &Path) -> PathBuf {
    let me = nix::unistd::geteuid().as_raw();
    let here = owner(dir);
    for candidate in dir.ancestors() {
        let Some(marks) = marks(candidate) else { continue };
        let foreign = marks
            .iter()
            .filter_map(|m| owner(m).map(|uid| (m, uid)))
            .find(|(_, uid)| *uid != me && *uid != 0 && Some(*uid) != here);
        match foreign {
            Some((mark, uid)) if candidate != dir => warn_foreign_once(mark, uid),
            _ => return candidate.to_path_buf(),
        }
    }
    dir.to_path_buf()
}

/// The paths that make `dir` a project (each one whose owner counts), or `None` when
/// nothing marks it.
fn marks(dir: &Path) -> Option<Vec<PathBuf>> {
    let git = dir.join(".git");
    if git.exists() {
        return Some(vec![git]);
    }
    let settings = dir.join(".toolbelt");
    ["config.toml", "config.local.toml"]
        .iter()
        .map(|name| settings.join(name))
        .find(|file| file.is_file())
        .map(|file| vec![settings.clone(), file])
}

/// The user owning `path` itself (a symbolic link's own owner, not its target's).
fn owner(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

/// Says once per process that an ancestor's mark was passed over, and why.
fn warn_foreign_once(mark: &Path, uid: u32) {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !warned.iter().any(|w| w == mark) {
        warned.push(mark.to_path_buf());
        tracing::warn!(
            "{} is owned by another user (uid {uid}), so its directory is not taken as this folder's project; \
             run toolbelt from that directory itself if it is yours to use",
            mark.display()
        );
    }
}

/// Where the settings files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locations {
    /// The directory toolbelt works in.
    pub cwd: PathBuf,
    /// The project root (nearest ancestor marked by `.git` or toolbelt's settings files).
    pub project: PathBuf,
    /// The home directory.
    pub home: PathBuf,
    /// The user's toolbelt settings file.
    pub user_file: PathBuf,
    /// Managed files, lowest first: `$TOOLBELT_MANAGED_CONFIG` when set, then
    /// `/etc/toolbelt/managed.toml` (which so always has the last word).
    pub managed_files: Vec<PathBuf>,
    /// The user's git configuration directory (`$XDG_CONFIG_HOME/git`).
    pub git_config: PathBuf,
    /// What toolbelt keeps for the user, outside every project: `$XDG_STATE_HOME/toolbelt`
    /// (`~/.local/state/toolbelt`). The trust store and each project's audit log live here,
    /// where no project file and no sandboxed command can reach them.
    pub state_dir: PathBuf,
    /// What toolbelt keeps for the user to reuse across projects: `$XDG_DATA_HOME/toolbelt`
    /// (`~/.local/share/toolbelt`). The snippets live here unless `snippets.scope` is
    /// `project`.
    pub data_dir: PathBuf,
    /// What toolbelt can always rebuild: `$XDG_CACHE_HOME/toolbelt` (`~/.cache/toolbelt`). The
    /// code index lives here.
    pub cache_dir: PathBuf,
}

impl Locations {
    /// The standard locations for a project, from `HOME`, `XDG_CONFIG_HOME`,
    /// `XDG_STATE_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME` and `TOOLBELT_MANAGED_CONFIG`.
    pub fn discover(cwd: &Path, project: &Path) -> Self {
        Self::discover_with(cwd, project, |name| std::env::var_os(name))
    }

    /// [`Locations::discover`] reading the variables through `var`.
    pub fn discover_with(cwd: &Path, project: &Path, var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Self {
        let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME").unwrap_or_else(|| PathBuf::from("/"));
        let config_home = var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
        let state_home = var("XDG_STATE_HOME").unwrap_or_else(|| home.join(".local/state"));
        let data_home = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
        let cache_home = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
        let mut managed_files: Vec<PathBuf> = var("TOOLBELT_MANAGED_CONFIG").into_iter().collect();
        managed_files.push(PathBuf::from("/etc/toolbelt/managed.toml"));
        Self {
            cwd: cwd.to_path_buf(),
            project: project.to_path_buf(),
            home,
            user_file: config_home.join("toolbelt/config.toml"),
            git_config: config_home.join("git"),
            managed_files,
            state_dir: state_home.join("toolbelt"),
            data_dir: data_home.join("toolbelt"),
            cache_dir: cache_home.join("toolbelt"),
        }
    }

    /// This project's directory under [`Locations::state_dir`]:
    /// `projects/<project dir name>-<16 hex digits of its path's SHA-256>`, so two projects of
    /// the same name never share one and the name still says whose it is.
    pub fn project_state_dir(&self) -> PathBuf {
        let name: String = self
            .project
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                    .collect()
            })
            .unwrap_or_else(|| "root".to_string());
        let digest = toolbelt_core::sha256_hex(self.project.as_os_str().as_encoded_bytes());
        self.state_dir.join("projects").join(format!("{name}-{}", &digest[..16]))
    }

    /// The project-local file (`.toolbelt/config.local.toml`), where the `Config` tool writes.
    pub fn local_file(&self) -> PathBuf {
        self.project.join(".toolbelt/config.local.toml")
    }

    /// Where the user's plugins are: `plugins/` beside the user's settings file.
    pub fn user_plugins(&self) -> PathBuf {
        self.user_file.parent().map_or_else(|| self.home.join(".config/toolbelt"), Path::to_path_buf).join("plugins")
    }

    /// Where the project's plugins are: `.toolbelt/plugins/`.
    pub fn project_plugins(&self) -> PathBuf {
        self.project.join(".toolbelt/plugins")
    }

    /// Where the rules a person allowed "always" in this project are kept: `grants.toml` in
    /// the project's state directory, the user's own (see `settings/store.rs` for why not in
    /// the project).
    pub fn grants_file(&self) -> PathBuf {
        self.project_state_dir().join("grants.toml")
    }

    /// The settings files of every layer in precedence order (lowest first), whether they
    /// exist or not; Claude Code's only when `claude` is set.
    pub fn files(&self, claude: bool) -> Vec<(Layer, PathBuf)> {
        let mut files = Vec::new();
        if claude {
            files.push((Layer::ClaudeUser, self.home.join(".claude/settings.json")));
        }
        files.push((Layer::User, self.user_file.clone()));
        if claude {
            files.push((Layer::ClaudeProject, self.project.join(".claude/settings.json")));
        }
        files.push((Layer::Project, self.project.join(".mcp.json")));
        files.push((Layer::Project, self.project.join(".toolbelt/config.toml")));
        if claude {
            files.push((Layer::ClaudeLocal, self.project.join(".claude/settings.local.json")));
        }
        files.push((Layer::Local, self.local_file()));
        files.push((Layer::Grants, self.grants_file()));
        files.extend(self.managed_files.iter().map(|f| (Layer::Managed, f.clone())));
        files
    }

    /// The directory a layer's `/path` anchors and relative directories are relative to.
    pub fn base_of(&self, layer: Layer) -> &Path {
        match layer {
            Layer::UserPlugin | Layer::ClaudeUser | Layer::User => &self.home,
            Layer::ProjectPlugin
            | Layer::ClaudeProject
            | Layer::Project
            | Layer::ClaudeLocal
            | Layer::Local
            | Layer::Grants => &self.project,
            Layer::Env | Layer::Flags => &self.cwd,
            Layer::Managed => Path::new("/"),
        }
    }
}
