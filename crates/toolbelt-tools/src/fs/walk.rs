//! What Grep, Glob and ListDir share: where a search starts, how the tree is walked, and how
//! paths and pages read in their output.
//!
//! The walk is ripgrep's own (`ignore::WalkBuilder`), configured the way `rg` configures it:
//! `.gitignore`, `.ignore` and `.rgignore` files, `.git/info/exclude` and the global git
//! excludes are honoured, hidden files are skipped, symlinks are not followed. One deliberate
//! difference: ignore files apply outside a git repository too (`require_git(false)`), so a
//! fresh project with a `.gitignore` and no `git init` yet is searched the way its owner means.
//!
//! Confinement: the start is resolved with [`OpenRoots::real`] (symlinks and `..` resolved
//! beneath a root), so a start outside the roots is refused before anything is read. The walk
//! never follows symlinks, so it stays beneath the start, and Grep opens every file it reads
//! beneath its directory's handle, itself opened beneath the root's, so a directory swapped for
//! a symlink mid-walk still cannot make it read a file outside the roots. The walker lists
//! directories by path, so such a swap could make it list another place's names: every entry
//! Glob and ListDir report is therefore looked up again beneath the root's handle
//! ([`Start::confirm`]) and kept only when it is the very file the walk saw (same inode), its
//! size and time read from that confined lookup; Grep keeps a file only when the handle it
//! opened is the inode the walk listed, and passes over, unnamed, a listed file that is not
//! there beneath the root — names, sizes and times from outside never reach a result. Ignore files in the
//! start's parent directories are consulted as `rg` consults them (they only ever hide files).

pub(crate) mod guard;
pub(crate) mod open;

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::Types;
use toolbelt_core::{ToolContext, ToolError, thousands};

use crate::fs::roots::{Located, OpenRoots, absolute};

/// Where a search starts, resolved and confined.
pub struct Start {
    /// The opened workspace.
    pub ws: OpenRoots,
    /// The start with symlinks resolved; `abs` is its real absolute path.
    pub loc: Located,
    /// Whether the start is a directory (else a single file).
    pub is_dir: bool,
}

impl Start {
    /// Resolves `raw` (absolute, or relative to the session cwd; the cwd when absent).
    pub fn resolve(cx: &ToolContext, raw: Option<&str>) -> Result<Self, ToolError> {
        let abs = target(cx, raw);
        let ws = OpenRoots::open_for_reading(cx)?;
        let loc = ws.real(&ws.locate(&abs)?)?;
        let is_dir = ws.metadata(&loc)?.is_dir();
        Ok(Self { ws, loc, is_dir })
    }

    /// The metadata of an entry the walk found, looked up again beneath the root's handle
    /// (not following a final symlink): `None` when its path no longer leads, inside the
    /// root, to the very file the walk listed (a directory on the way was swapped for a
    /// symlink, so the walk listed somewhere else).
    pub fn confirm(&self, entry: &ignore::DirEntry) -> Option<cap_std::fs::Metadata> {
        use cap_std::fs::MetadataExt as _;
        let rel = self.rel_in_root(entry.path()).filter(|rel| !rel.as_os_str().is_empty())?;
        let meta = self.ws.dir(&self.loc).symlink_metadata(rel).ok()?;
        (entry.ino() == Some(meta.ino())).then_some(meta)
    }

    /// A path under the start, relative to its root's directory handle (what a confined open
    /// takes).
    pub fn rel_in_root<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        let root = self.ws.root_path(&self.loc);
        below(path, root).or_else(|| path.strip_prefix(root).ok())
    }
}

/// `path` below `dir` when its bytes are `dir`'s, a `/` and a plain rest (no leading `/` or
/// `./`, no trailing `/` or `/.`): then what `Path::strip_prefix` gives, without parsing both
/// paths into components, which a walk of many files feels. `None` for anything else, which
/// `strip_prefix` is left to judge.
fn below<'p>(path: &'p Path, dir: &Path) -> Option<&'p Path> {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = dir.as_os_str().as_bytes();
    let rest = path.as_os_str().as_bytes().strip_prefix(dir)?;
    let rest = if dir.ends_with(b"/") { rest } else { rest.strip_prefix(b"/")? };
    let plain = !rest.is_empty()
        && rest != b"."
        && !rest.starts_with(b"/")
        && !rest.starts_with(b"./")
        && !rest.ends_with(b"/")
        && !rest.ends_with(b"/.");
    plain.then(|| Path::new(std::ffi::OsStr::from_bytes(rest)))
}

/// The absolute path a tool's optional `path` input names (the cwd when absent or empty).
pub fn target(cx: &ToolContext, raw: Option<&str>) -> PathBuf {
    match raw.map(str::trim) {
        None | Some("") => cx.cwd(),
        Some(raw) => absolute(cx, raw),
    }
}

/// Shows paths the way the model should read them: relative to the session cwd when inside
/// it, absolute otherwise. Cheap enough to call once per file of a large search.
pub struct Shown {
    cwd: PathBuf,
    /// The cwd as given and, when it differs, with symlinks resolved (search paths are real).
    bases: Vec<Vec<u8>>,
}

impl Shown {
    /// For the call's session.
    pub fn new(cx: &ToolContext) -> Self {
        let cwd = cx.cwd();
        let mut bases = Vec::with_capacity(2);
        if let Ok(real) = std::fs::canonicalize(&cwd)
            && real != cwd
        {
            bases.push(real.into_os_string().into_encoded_bytes());
        }
        bases.push(cwd.clone().into_os_string().into_encoded_bytes());
        Self { cwd, bases }
    }

    /// The path as shown (`.` for the cwd itself).
    pub fn show(&self, path: &Path) -> String {
        let mut shown = String::new();
        self.show_into(path, &mut shown);
        shown
    }

    /// [`Shown::show`], appended to `out`.
    pub fn show_into(&self, path: &Path, out: &mut String) {
        let bytes = path.as_os_str().as_encoded_bytes();
        for base in &self.bases {
            let Some(rest) = bytes.strip_prefix(base.as_slice()) else { continue };
            let rest = if base.ends_with(b"/") {
                Some(rest)
            } else {
                rest.strip_prefix(b"/").or(Some(rest).filter(|r| r.is_empty()))
            };
            match rest {
                Some([]) => return out.push('.'),
                Some(rest) => return out.push_str(&String::from_utf8_lossy(rest)),
                None => {}
            }
        }
        out.push_str(&path.to_string_lossy());
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

/// Path order as `rg --sort path` gives it: component by component, so `a/b` comes before
/// `a.txt`. The same as comparing `Path`s, but on bytes with `/` ranked first, which is
/// several times faster on the long shared prefixes of a search's results.
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (a.as_os_str().as_encoded_bytes(), b.as_os_str().as_encoded_bytes());
    let rank = |c: u8| if c == b'/' { 0 } else { u16::from(c) + 1 };
    // Skip the shared prefix eight bytes at a time.
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    if i < n { rank(a[i]).cmp(&rank(b[i])) } else { a.len().cmp(&b.len()) }
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

/// A walker over `start`, configured like `rg`'s (see the module docs). Paths the call must
/// not see (a `Read(…)` deny rule's) are skipped, directories with everything in them; so
/// is a directory whose ignore file is a FIFO or a device, recorded in `skipped` ([`guard`]).
/// Refused when the start or a parent holds such an ignore file.
pub fn walker(
    start: &Path,
    cx: &ToolContext,
    options: WalkOptions,
    skipped: &guard::Skipped,
) -> Result<WalkBuilder, ToolError> {
    let mut builder = WalkBuilder::new(start);
    let respect = !options.no_ignore;
    if respect {
        guard::check_start(start)?;
    }
    let hidden = cx.hidden();
    if hidden.is_some() || respect {
        let skipped = skipped.clone();
        builder.filter_entry(move |entry| {
            if hidden.as_ref().is_some_and(|h| h.is_hidden(entry.path())) {
                return false;
            }
            // Every directory visited has its ignore files read, at the depth limit too.
            !respect || !entry.file_type().is_some_and(|t| t.is_dir()) || skipped.may_enter(entry.path())
        });
    }
    builder
        .current_dir(cx.cwd())
        .hidden(!options.hidden)
        .parents(respect)
        .ignore(respect)
        .git_ignore(respect)
        .git_global(respect)
        .git_exclude(respect)
        .require_git(false)
        .follow_links(false)
        .max_depth(options.max_depth)
        // As many as the walker would choose itself, without asking the system each time.
        .threads(crate::blocking::processors().min(12));
    if respect {
        builder.add_custom_ignore_filename(".rgignore");
    }
    if let Some(overrides) = options.overrides {
        builder.overrides(overrides);
    }
    if let Some(types) = options.types {
        builder.types(types);
    }
    Ok(builder)
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
#[derive(Debug, Default)]
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

/// Appends a notice after the output, separated by a blank line (alone when there is no
/// output).
pub fn append_note(text: &mut String, note: &str) {
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(note);
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(Page::new(Some(1), Some(2), 100).range(100), 1..3);
    }

    #[test]
    fn path_order_is_component_order() {
        let mut paths: Vec<&Path> =
            ["a.txt", "a/b", "ab/c", "a", "a/b/c", "a-b", "b", "/x/y", "/x.y"].into_iter().map(Path::new).collect();
        let mut by_components = paths.clone();
        by_components.sort();
        paths.sort_by(|a, b| path_order(a, b));
        assert_eq!(paths, by_components);
    }

    #[test]
    fn below_is_strip_prefix_for_plain_paths() {
        let dirs = ["/", "/w", "/w/", "/w/a", "/w/./a", "/w//a", "/w/a/."];
        let rests = ["", "b", "b/c", "b/", "b/.", "./b", "/b", ".", "..", "b/./c", "b//c", ".b", "b.", "bc"];
        for dir in dirs {
            for rest in rests {
                for glue in ["", "/", "//"] {
                    let path = PathBuf::from(format!("{dir}{glue}{rest}"));
                    if let Some(fast) = below(&path, Path::new(dir)) {
                        let slow = path.strip_prefix(dir).ok();
                        assert_eq!(Some(fast), slow, "{path:?} below {dir:?}");
                        assert_eq!(fast.as_os_str(), slow.map(Path::as_os_str).unwrap_or_default(), "{path:?}");
                    }
                }
            }
        }
        assert_eq!(below(Path::new("/w/a/b.rs"), Path::new("/w/a")), Some(Path::new("b.rs")));
        assert_eq!(below(Path::new("/w/ab/c"), Path::new("/w/a")), None);
    }

    #[test]
    fn shown_paths_are_relative_inside_the_cwd() {
        let shown = Shown { cwd: PathBuf::from("/w/app"), bases: vec![b"/w/app".to_vec()] };
        assert_eq!(shown.show(Path::new("/w/app/src/a.rs")), "src/a.rs");
        assert_eq!(shown.show(Path::new("/w/app")), ".");
        assert_eq!(shown.show(Path::new("/w/app2/a.rs")), "/w/app2/a.rs");
        assert_eq!(shown.place(Path::new("/w/app")), "/w/app");
        let root = Shown { cwd: PathBuf::from("/"), bases: vec![b"/".to_vec()] };
        assert_eq!(root.show(Path::new("/etc/hosts")), "etc/hosts");
    }

    #[test]
    fn leading_dot_slash_is_dropped() {
        assert_eq!(clean_glob("./src/*.rs"), "src/*.rs");
        assert_eq!(clean_glob("**/*.rs"), "**/*.rs");
    }
}
