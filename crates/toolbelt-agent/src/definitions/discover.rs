//! Finding the definitions: the project's and the user's agent directories, in precedence
//! order, then the built-ins.

use std::collections::HashSet;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use super::builtin::builtin_definitions;
use super::read::strip_md;
use super::{AgentDefinition, DefinitionSource, Problem, Scope};

/// How deep below an agents directory definitions are looked for.
const MAX_DEPTH: usize = 8;

/// How many `.md` files one agents directory may hold before the rest are left unread.
const MAX_FILES: usize = 2000;

/// Documentation files an agent collection carries beside its agents (`README.md`…): left
/// alone when they have no frontmatter, rather than reported.
const DOC_FILES: [&str; 6] = ["readme", "changelog", "contributing", "license", "code_of_conduct", "security"];

/// Where definitions are looked for: the project, the home directory and the user's
/// configuration directory (`$XDG_CONFIG_HOME`, else `~/.config`). Discovery reads only
/// below these, so tests give it temporary directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDirs {
    /// The project's root.
    pub project: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// The user's configuration directory.
    pub config_home: PathBuf,
    /// The enabled plugins' `agents/` folders, after the user's own, each with whose plugin
    /// it is.
    pub plugins: Vec<(Scope, PathBuf)>,
}

impl SearchDirs {
    /// The directories of `project`, `home` and `config_home`.
    pub fn new(project: impl Into<PathBuf>, home: impl Into<PathBuf>, config_home: impl Into<PathBuf>) -> Self {
        Self { project: project.into(), home: home.into(), config_home: config_home.into(), plugins: Vec::new() }
    }

    /// The agents directories in precedence order: the project's `.toolbelt/agents`,
    /// `.claude/agents` and `.agents/agents`, then the user's `toolbelt/agents` in the
    /// configuration directory and `~/.claude/agents`, then the plugins'.
    pub fn directories(&self) -> Vec<(Scope, PathBuf)> {
        vec![
            (Scope::Project, self.project.join(".toolbelt/agents")),
            (Scope::Project, self.project.join(".claude/agents")),
            (Scope::Project, self.project.join(".agents/agents")),
            (Scope::User, self.config_home.join("toolbelt/agents")),
            (Scope::User, self.home.join(".claude/agents")),
        ]
        .into_iter()
        .chain(self.plugins.iter().cloned())
        .collect()
    }
}

/// A definition hidden by an earlier one of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The hidden definition.
    pub definition: AgentDefinition,
    /// Where the definition that hides it came from.
    pub by: DefinitionSource,
}

/// Every definition found: the ones in force, the ones they hide, and the problems met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// The definitions in force, in precedence order (project files, user files, then the
    /// built-ins no file replaced); no two share a name (ignoring ASCII case).
    pub definitions: Vec<AgentDefinition>,
    /// Definitions hidden by an earlier one of the same name.
    pub shadowed: Vec<Shadowed>,
    /// Files that could not be used (errors) and odd things in the ones used (warnings).
    pub problems: Vec<Problem>,
}

impl Catalog {
    /// The built-in definitions alone.
    pub fn builtin() -> Self {
        let mut catalog = Catalog::default();
        for def in builtin_definitions() {
            catalog.add(def);
        }
        catalog
    }

    /// The definition named `name`: exactly, else ignoring ASCII case.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.definitions
            .iter()
            .find(|d| d.name == name)
            .or_else(|| self.definitions.iter().find(|d| d.name.eq_ignore_ascii_case(name)))
    }

    /// The names of the definitions in force.
    pub fn names(&self) -> Vec<&str> {
        self.definitions.iter().map(|d| d.name.as_str()).collect()
    }

    /// Adds `def`: in force when no definition of its name is, else shadowed by that one.
    pub fn add(&mut self, def: AgentDefinition) {
        match self.definitions.iter().find(|d| d.name.eq_ignore_ascii_case(&def.name)) {
            Some(first) => self.shadowed.push(Shadowed { by: first.source.clone(), definition: def }),
            None => self.definitions.push(def),
        }
    }
}

/// Every definition of `dirs`, in precedence order, then the built-ins; with every problem
/// met. Nothing here fails: a directory or file that cannot be used is a [`Problem`].
pub fn discover(dirs: &SearchDirs) -> Catalog {
    let mut catalog = Catalog::default();
    let mut scanned: HashSet<PathBuf> = HashSet::new();
    for (scope, dir) in dirs.directories() {
        let canonical = match std::fs::canonicalize(&dir) {
            Ok(path) => path,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => {
                catalog.problems.push(Problem::error(&dir, None, format!("cannot read this agents directory: {e}")));
                continue;
            }
        };
        // The project may be the home directory: its `.claude/agents` is then read once.
        if !scanned.insert(canonical) {
            continue;
        }
        for path in walk(&dir, &mut catalog.problems) {
            load(&mut catalog, &path, scope);
        }
    }
    for def in builtin_definitions() {
        catalog.add(def);
    }
    catalog
}

fn load(catalog: &mut Catalog, path: &Path, scope: Scope) {
    match AgentDefinition::read(path, scope) {
        Ok(parsed) => {
            let warnings = parsed.warnings.into_iter().map(|w| Problem::warning(path, w.line, w.message));
            catalog.problems.extend(warnings);
            catalog.add(parsed.definition);
        }
        Err(super::DefinitionError::NoFrontmatter) if is_doc_file(path) => {}
        Err(e) => catalog.problems.push(Problem::error(path, e.line(), e.to_string())),
    }
}

fn is_doc_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    DOC_FILES.contains(&strip_md(&name))
}

/// The `.md` files below `root`: each directory's files in name order, then its
/// subdirectories, to [`MAX_DEPTH`]; hidden entries skipped, symlinks followed once (a loop
/// is cut where it closes).
fn walk(root: &Path, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut visited: HashSet<(u64, u64)> = HashSet::new();
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = pending.pop() {
        let meta = match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => meta,
            Ok(_) if depth == 0 => {
                problems.push(Problem::error(
                    &dir,
                    None,
                    "this agents directory is not a directory; move the file away",
                ));
                continue;
            }
            Ok(_) => continue,
            Err(e) => {
                problems.push(Problem::error(&dir, None, format!("cannot read this directory: {e}")));
                continue;
            }
        };
        if !visited.insert((meta.dev(), meta.ino())) {
            continue;
        }
        let mut entries: Vec<(PathBuf, bool)> = match std::fs::read_dir(&dir) {
            Ok(read) => read
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| {
                    let path = e.path();
                    // A symlink counts as what it points to; a broken one as a file, so the
                    // open reports it.
                    let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
                    (path, is_dir)
                })
                .collect(),
            Err(e) => {
                problems.push(Problem::error(&dir, None, format!("cannot list this directory: {e}")));
                continue;
            }
        };
        entries.sort();
        let mut subdirs = Vec::new();
        for (path, is_dir) in entries {
            if is_dir {
                if depth < MAX_DEPTH {
                    subdirs.push((path, depth + 1));
                }
            } else if path.extension().is_some_and(|x| x.eq_ignore_ascii_case("md")) {
                if files.len() == MAX_FILES {
                    let message =
                        format!("more than {MAX_FILES} .md files below this directory; the rest were not read");
                    problems.push(Problem::warning(root, None, message));
                    return files;
                }
                files.push(path);
            }
        }
        // Popped last-in first-out: push in reverse so subdirectories are read in name order.
        pending.extend(subdirs.into_iter().rev());
    }
    files
}
