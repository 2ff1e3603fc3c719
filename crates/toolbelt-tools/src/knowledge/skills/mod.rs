//! Skills: folders holding a `SKILL.md` (frontmatter and an instruction) and whatever files it
//! refers to, found where a session works and in the user's directories.
//!
//! Where they are looked for, nearest first (the nearest wins a name clash): from the session's
//! working directory up to the repository root, at each level `.toolbelt/skills/`,
//! `.claude/skills/` and `.agents/skills/`; then the user's `~/.config/toolbelt/skills/`,
//! `~/.claude/skills/` and `~/.agents/skills/`; then the enabled plugins' `skills/` folders,
//! and their `commands/` (one `.md` file per skill).
//!
//! A repository is hostile until shown otherwise: a project's `SKILL.md` is opened beneath
//! the repository root (a symlink leading out of it is refused at the open, never followed),
//! only as a regular file (a FIFO or device is refused without blocking), at most
//! [`MAX_FILE_BYTES`]. A file that cannot be used is reported with its path and why; it never
//! stops the others.

mod args;
pub mod parse;
mod prompts;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

pub use args::substitute;
pub use prompts::SkillPrompts;

use crate::fs::regular::open_regular;

/// The most bytes of a `SKILL.md` read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// How many skill folders one skills directory may hold before the rest are left unread.
const MAX_SKILLS_PER_DIR: usize = 500;

/// Where the user's skills are: the home and configuration directories. The front end says
/// (the binary: the locations its settings come from); without it, `HOME` and
/// `XDG_CONFIG_HOME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDirs {
    /// The user's home directory.
    pub home: PathBuf,
    /// The user's configuration directory (`~/.config`).
    pub config_home: PathBuf,
    /// The enabled plugins' skills, after the user's own.
    pub plugins: Vec<PluginSkills>,
}

/// The skills a plugin bundles: folders holding skill folders (`skills/`), and commands
/// (Claude Code's: one `.md` file per skill, named after the file), each a file or a folder of
/// them (`commands/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSkills {
    /// The plugin's folder (a project's plugin's files are opened beneath it).
    pub root: PathBuf,
    /// Whether it is the project's plugin or the user's.
    pub scope: Scope,
    /// Its folders of skill folders.
    pub skills: Vec<PathBuf>,
    /// Its command files and folders of them.
    pub commands: Vec<PathBuf>,
}

impl SkillDirs {
    /// The user's directories from `HOME` and `XDG_CONFIG_HOME`.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME").unwrap_or_default();
        let config_home = var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
        Self { home, config_home, plugins: Vec::new() }
    }
}

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// In the project (the repository).
    Project,
    /// In the user's own directories.
    User,
}

impl Scope {
    /// `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// One skill in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// What its `SKILL.md` says.
    pub text: parse::SkillText,
    /// Its folder.
    pub dir: PathBuf,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// Whether it is the project's or the user's.
    pub scope: Scope,
}

/// A `SKILL.md` that could not be used, or something odd in one that was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
    /// Whether the skill was left out (an error) or used (a warning).
    pub fatal: bool,
}

/// Every skill found for one working directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// The skills in force, nearest first; no two share a name.
    pub skills: Vec<Skill>,
    /// Skills hidden by a nearer one of the same name: the hidden one and the path of the one
    /// in force.
    pub shadowed: Vec<(Skill, PathBuf)>,
    /// Files that could not be used, and odd things in those that were.
    pub problems: Vec<Problem>,
}

impl Catalog {
    /// The skill named `name` (a leading `/` ignored).
    pub fn find(&self, name: &str) -> Option<&Skill> {
        let name = name.trim().trim_start_matches('/');
        self.skills.iter().find(|s| s.text.name == name)
    }
}

/// The repository root above `cwd` (the nearest directory holding `.git`), if any.
fn repository_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok()).map(Path::to_path_buf)
}

/// The skills directories for `cwd`, nearest first, each with its scope and, for the
/// project's, the root it must stay beneath.
fn directories(cwd: &Path, dirs: &SkillDirs) -> Vec<(Scope, PathBuf, Option<PathBuf>)> {
    let mut out = Vec::new();
    let top = repository_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    for level in cwd.ancestors() {
        for sub in [".toolbelt/skills", ".claude/skills", ".agents/skills"] {
            out.push((Scope::Project, level.join(sub), Some(top.clone())));
        }
        if level == top {
            break;
        }
    }
    for base in
        [dirs.config_home.join("toolbelt/skills"), dirs.home.join(".claude/skills"), dirs.home.join(".agents/skills")]
    {
        if !base.as_os_str().is_empty() && !out.iter().any(|(_, d, _)| *d == base) {
            out.push((Scope::User, base, None));
        }
    }
    out
}

/// Finds the skills for a session working in `cwd`.
pub fn discover(cwd: &Path, dirs: &SkillDirs) -> Catalog {
    let mut catalog = Catalog::default();
    let mut places = directories(cwd, dirs);
    for plugin in &dirs.plugins {
        let beneath = (plugin.scope == Scope::Project).then(|| plugin.root.clone());
        places.extend(plugin.skills.iter().map(|dir| (plugin.scope, dir.clone(), beneath.clone())));
    }
    for (scope, base, beneath) in places {
        let Ok(entries) = std::fs::read_dir(&base) else { continue };
        let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        folders.sort();
        if folders.len() > MAX_SKILLS_PER_DIR {
            catalog.problems.push(Problem {
                path: base.clone(),
                message: format!("it holds more than {MAX_SKILLS_PER_DIR} entries; the rest were not read"),
                fatal: false,
            });
            folders.truncate(MAX_SKILLS_PER_DIR);
        }
        for dir in folders {
            let path = dir.join("SKILL.md");
            let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if folder.starts_with('.') {
                continue;
            }
            let text = match read(&path, beneath.as_deref()) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(message) => {
                    catalog.problems.push(Problem { path, message, fatal: true });
                    continue;
                }
            };
            add(&mut catalog, &text, &folder, dir, path, scope);
        }
    }
    for plugin in &dirs.plugins {
        let beneath = (plugin.scope == Scope::Project).then(|| plugin.root.clone());
        for place in &plugin.commands {
            commands(&mut catalog, place, plugin.scope, beneath.as_deref());
        }
    }
    catalog
}

/// Adds the skill `text` (of `path`, in `dir`) names, `folder` standing in for a name it does
/// not give; a name already in force shadows it.
fn add(catalog: &mut Catalog, text: &str, folder: &str, dir: PathBuf, path: PathBuf, scope: Scope) {
    match parse::parse(text, folder) {
        Ok(mut parsed) => {
            for message in std::mem::take(&mut parsed.warnings) {
                catalog.problems.push(Problem { path: path.clone(), message, fatal: false });
            }
            let skill = Skill { text: parsed, dir, path, scope };
            match catalog.skills.iter().find(|s| s.text.name == skill.text.name) {
                Some(nearer) => {
                    let by = nearer.path.clone();
                    catalog.shadowed.push((skill, by));
                }
                None => catalog.skills.push(skill),
            }
        }
        Err(message) => catalog.problems.push(Problem { path, message, fatal: true }),
    }
}

/// A plugin's `commands/`: each `NAME.md` a skill named `NAME` (its frontmatter may name it
/// otherwise), its folder the commands folder.
fn commands(catalog: &mut Catalog, place: &Path, scope: Scope, beneath: Option<&Path>) {
    let (base, mut files): (&Path, Vec<PathBuf>) = match std::fs::read_dir(place) {
        Ok(entries) => (place, entries.flatten().map(|e| e.path()).collect()),
        // A command file named on its own.
        Err(_) if place.is_file() => (place.parent().unwrap_or(place), vec![place.to_path_buf()]),
        Err(_) => return,
    };
    files.retain(|p| p.extension().is_some_and(|e| e == "md"));
    files.sort();
    files.truncate(MAX_SKILLS_PER_DIR);
    for path in files {
        let name = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        match read(&path, beneath) {
            Ok(Some(text)) => add(catalog, &text, &name, base.to_path_buf(), path, scope),
            Ok(None) => {}
            Err(message) => catalog.problems.push(Problem { path, message, fatal: true }),
        }
    }
}

/// The text of the `SKILL.md` at `path`: `None` when there is none (a folder that is not a
/// skill); beneath `beneath` when given (a project's), else wherever it is (the user's own).
fn read(path: &Path, beneath: Option<&Path>) -> Result<Option<String>, String> {
    use crate::fs::regular::{OpenError, check_regular};
    let opened = match beneath.and_then(|root| path.strip_prefix(root).ok().map(|rel| (root, rel))) {
        Some((root, rel)) => {
            let dir =
                Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| format!("cannot open its folder: {e}"))?;
            open_regular(&dir, rel)
        }
        None => {
            use std::os::unix::fs::OpenOptionsExt as _;
            let mut options = std::fs::OpenOptions::new();
            options.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
            options.open(path).map_err(OpenError::Io).and_then(|f| check_regular(&f).map(|()| f))
        }
    };
    let file = match opened {
        Ok(file) => file,
        Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(OpenError::Io(e)) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
        Err(e @ OpenError::Io(_)) if beneath.is_some() => {
            return Err(format!(
                "cannot read it ({e}); a project's skill must be a regular file inside the repository, not a link \
                 leading out of it"
            ));
        }
        Err(e) => return Err(format!("cannot read it ({e})")),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("it is larger than {MAX_FILE_BYTES} bytes; move detail into other files of the skill"));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| "it is not UTF-8 text; save it as UTF-8".to_string())
}
