//! What Grep, Glob and ListDir share: where a search starts, how the tree is walked, and how
//! paths and pages read in their output.
//!
//! The walk is ripgrep's own (`ignore::WalkBuilder`), configured the way `rg` configures it:
//! `.gitignore`, `.ignore` and `.rgignore` files, `.git/info/exclude` and the global git
//! excludes are honoured, hidden files are skipped, symlinks are not followed. One deliberate
//! difference: ignore files apply outside a git repository too (`require_git(false)`), so a
//! fresh project with a `.gitignore` and no `git init` yet is searched the way its owner means.
//!
//! Confinement: the start is resolved with [`Workspace::real`] (symlinks and `..` resolved
//! beneath a root), so a start outside the roots is refused before anything is read. The walk
//! never follows symlinks, so it stays beneath the start, and Grep opens every file it reads
//! through the root's directory handle, so a directory swapped for a symlink mid-walk still
//! cannot make it read a file outside the roots. Ignore files in the start's parent
//! directories are consulted as `rg` consults them (they only ever hide files).

pub mod content;
pub mod matcher;

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::Types;
use toolbelt_core::{ToolContext, ToolError};

use super::workspace::{Located, Workspace, absolute};

/// Where a search starts, resolved and confined.
pub struct Start {
    /// The opened workspace.
    pub ws: Workspace,
    /// The start with symlinks resolved; `abs` is its real absolute path.
    pub loc: Located,
    /// Whether the start is a directory (else a single file).
    pub is_dir: bool,
}

impl Start {
    /// Resolves `raw` (absolute, or relative to the session cwd; the cwd when absent).
    pub fn resolve(cx: &ToolContext, raw: Option<&str>) -> Result<Self, ToolError> {
        let abs = target(cx, raw);
        let ws = Workspace::open(cx)?;
        let loc = ws.real(&ws.locate(&abs)?)?;
        let is_dir = ws.metadata(&loc)?.is_dir();
        Ok(Self { ws, loc, is_dir })
    }

    /// The start's path relative to its root's directory handle, for a path under the start.
    pub fn rel_in_root<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(self.ws.root_path(&self.loc)).ok()
    }
}

/// The absolute path a tool's optional `path` input names (the cwd when absent or empty).
pub fn target(cx: &ToolContext, raw: Option<&str>) -> PathBuf {
    match raw.map(str::trim) {
        None | Some("") => cx.cwd(),
        Some(raw) => absolute(cx, raw),
    }
}

/// Shows paths the way the model should read them: relative to the session cwd when inside
/// it, absolute otherwise.
pub struct Shown {
    cwd: PathBuf,
    real_cwd: Option<PathBuf>,
}

impl Shown {
    /// For the call's session.
    pub fn new(cx: &ToolContext) -> Self {
        let cwd = cx.cwd();
        let real_cwd = std::fs::canonicalize(&cwd).ok().filter(|real| *real != cwd);
        Self { cwd, real_cwd }
    }

    /// The path as shown (`.` for the cwd itself).
    pub fn show(&self, path: &Path) -> String {
        for base in self.real_cwd.iter().chain(std::iter::once(&self.cwd)) {
            if let Ok(rest) = path.strip_prefix(base) {
                if rest.as_os_str().is_empty() {
                    return ".".to_string();
                }
                return rest.to_string_lossy().into_owned();
            }
        }
        path.to_string_lossy().into_owned()
    }

    /// The path for a sentence or a heading: as [`Shown::show`], except that the working
    /// directory itself reads as its absolute path rather than `.`.
    pub fn place(&self, path: &Path) -> String {
        match self.show(path) {
            dot if dot == "." => self.cwd.to_string_lossy().into_owned(),
            shown => shown,
        }
    }
}

/// How a walk filters what it visits.
#[derive(Default)]
pub struct WalkOptions {
    /// Visit hidden files and directories (names starting with `.`). Visitors skip `.git`'s
    /// contents themselves (returning `WalkState::Skip`): nobody searching means git's store.
    pub hidden: bool,
    /// Ignore `.gitignore`, `.ignore`, `.rgignore` and git excludes.
    pub no_ignore: bool,
    /// How deep to go below the start (1 = its entries only).
    pub max_depth: Option<usize>,
    /// Globs a file must match (ripgrep's `--glob` semantics).
    pub overrides: Option<Override>,
    /// File types a file must have (ripgrep's `--type`).
    pub types: Option<Types>,
}

/// A walker over `start`, configured like `rg`'s (see the module docs).
pub fn walker(start: &Path, cwd: &Path, options: WalkOptions) -> WalkBuilder {
    let mut builder = WalkBuilder::new(start);
    let respect = !options.no_ignore;
    builder
        .current_dir(cwd)
        .hidden(!options.hidden)
        .parents(respect)
        .ignore(respect)
        .git_ignore(respect)
        .git_global(respect)
        .git_exclude(respect)
        .require_git(false)
        .follow_links(false)
        .max_depth(options.max_depth);
    if respect {
        builder.add_custom_ignore_filename(".rgignore");
    }
    if let Some(overrides) = options.overrides {
        builder.overrides(overrides);
    }
    if let Some(types) = options.types {
        builder.types(types);
    }
    builder
}

/// Globs with `rg --glob` semantics, anchored at `root`: a glob without `/` matches a file
/// name at any depth, one with `/` matches the path below `root`, `!` excludes, `{a,b}`
/// alternates.
pub fn globs<'g>(root: &Path, globs: impl IntoIterator<Item = &'g str>, param: &str) -> Result<Override, ToolError> {
    let mut builder = OverrideBuilder::new(root);
    for glob in globs {
        builder.add(glob).map_err(|e| {
            ToolError::failed(format!(
                "invalid glob in `{param}`: {e}; use `*` within a name, `**` across directories and \
                 `{{a,b}}` for alternatives (e.g. `**/*.{{ts,tsx}}`)"
            ))
        })?;
    }
    builder.build().map_err(|e| ToolError::failed(format!("invalid glob in `{param}`: {e}")))
}

/// A file-name pattern with the same matching rules as [`globs`], used as a plain filter:
/// unlike an `rg --glob` override it never lifts ignore rules or hidden-file skipping, so
/// `*` does not descend into an ignored `target/`.
pub fn file_pattern(root: &Path, pattern: &str, ignore_case: bool) -> Result<Gitignore, ToolError> {
    let mut builder = GitignoreBuilder::new(root);
    builder.case_insensitive(ignore_case).map_err(|e| ToolError::internal(e.to_string()))?;
    builder.add_line(None, pattern).map_err(|e| {
        ToolError::failed(format!(
            "invalid glob in `pattern`: {e}; use `*` within a name, `**` across directories and \
             `{{a,b}}` for alternatives (e.g. `**/*.{{ts,tsx}}`)"
        ))
    })?;
    builder.build().map_err(|e| ToolError::failed(format!("invalid glob in `pattern`: {e}")))
}

/// A glob pattern cleaned of what models add out of habit: a leading `./`.
pub fn clean_glob(pattern: &str) -> &str {
    let mut pattern = pattern.trim();
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest;
    }
    pattern
}

/// Problems met while walking (unreadable directories, broken ignore files): counted, the
/// first few kept for a note.
#[derive(Default)]
pub struct WalkErrors {
    /// How many there were.
    pub count: usize,
    /// The first few messages.
    pub first: Vec<String>,
}

impl WalkErrors {
    /// Records one.
    pub fn push(&mut self, error: &ignore::Error) {
        self.count += 1;
        if self.first.len() < 3 {
            self.first.push(error.to_string());
        }
    }

    /// Records a message (a file that could not be opened or read).
    pub fn push_message(&mut self, message: String) {
        self.count += 1;
        if self.first.len() < 3 {
            self.first.push(message);
        }
    }

    /// Adds another set.
    pub fn merge(&mut self, other: WalkErrors) {
        self.count += other.count;
        for message in other.first {
            if self.first.len() < 3 {
                self.first.push(message);
            }
        }
    }

    /// A note for the end of the output, if anything went wrong.
    pub fn note(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        Some(format!(
            "[{} path{} could not be read and {} skipped: {}{}]",
            thousands(self.count),
            if self.count == 1 { "" } else { "s" },
            if self.count == 1 { "was" } else { "were" },
            self.first.join("; "),
            if self.count > self.first.len() { "; …" } else { "" }
        ))
    }
}

/// One page of a longer list: which items to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Items skipped before the page.
    pub offset: usize,
    /// Most items on the page (`usize::MAX` for no limit).
    pub limit: usize,
}

impl Page {
    /// From optional `offset` and `limit` inputs; a limit of 0 means no limit.
    pub fn new(offset: Option<u64>, limit: Option<u64>, default_limit: usize) -> Self {
        let offset = offset.map_or(0, |o| usize::try_from(o).unwrap_or(usize::MAX));
        let limit = match limit {
            None => default_limit,
            Some(0) => usize::MAX,
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        };
        Self { offset, limit }
    }

    /// Whether item `i` (0-based) is on the page.
    pub fn contains(&self, i: usize) -> bool {
        i >= self.offset && i - self.offset < self.limit
    }

    /// The range of `total` items on the page.
    pub fn range(&self, total: usize) -> std::ops::Range<usize> {
        let start = self.offset.min(total);
        start..start.saturating_add(self.limit).min(total)
    }

    /// The notice for a page of `total` items, when the page does not show them all:
    /// which ones are shown and how to get the rest.
    pub fn notice(&self, total: usize, what: &str, order: &str, narrow: &str) -> Option<String> {
        let shown = self.range(total);
        if shown.start == 0 && shown.end == total {
            return None;
        }
        if shown.is_empty() {
            return Some(format!(
                "[No {what} at offset {}: there are {} in all; use a smaller offset.]",
                thousands(self.offset),
                thousands(total)
            ));
        }
        let rest =
            if shown.end < total { format!("; use offset={} for more, or {narrow}", shown.end) } else { String::new() };
        Some(format!(
            "[Showing {what} {}–{} of {}{order}{rest}.]",
            thousands(shown.start + 1),
            thousands(shown.end),
            thousands(total)
        ))
    }
}

/// `12,345`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn pages_say_what_is_shown_and_how_to_get_more() {
        let page = Page::new(None, None, 100);
        assert_eq!(page.notice(50, "files", "", "narrow"), None);
        assert_eq!(
            page.notice(2345, "files", " (newest first)", "narrow the pattern").as_deref(),
            Some("[Showing files 1–100 of 2,345 (newest first); use offset=100 for more, or narrow the pattern.]")
        );
        let last = Page::new(Some(2300), None, 100);
        assert_eq!(last.notice(2345, "files", "", "narrow").as_deref(), Some("[Showing files 2,301–2,345 of 2,345.]"));
        let past = Page::new(Some(3000), Some(0), 100);
        assert!(past.notice(2345, "files", "", "narrow").is_some_and(|n| n.starts_with("[No files at offset 3,000")));
        assert!(Page::new(Some(1), Some(2), 100).contains(2) && !Page::new(Some(1), Some(2), 100).contains(3));
    }

    #[test]
    fn leading_dot_slash_is_dropped() {
        assert_eq!(clean_glob("./src/*.rs"), "src/*.rs");
        assert_eq!(clean_glob("**/*.rs"), "**/*.rs");
    }
}
