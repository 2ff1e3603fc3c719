//! `ListDir`: what a directory holds, as an indented tree with types and sizes.
//!
//! Directories come first, then files, each group by name; `.gitignore`'d and hidden
//! entries are left out unless asked for. One level by default, any depth with `recursive`
//! or `depth`. Past the limit ([`DEFAULT_LIMIT`] entries) the listing is cut breadth first,
//! so the top levels stay whole, and the notice says how many entries were left out.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, WalkState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec, human_size, thousands};

use crate::blocking::run_blocking;

use crate::fs::walk::guard::Skipped;
use crate::fs::walk::{Page, Shown, Start, WalkErrors, WalkOptions, append_note, clean_glob, target, walker};

/// Entries listed when no limit is given.
pub const DEFAULT_LIMIT: usize = 1_000;

/// Input of `ListDir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirInput {
    /// The directory to list: absolute, or relative to the working directory (default: the
    /// working directory).
    pub path: Option<String>,
    /// List the contents of subdirectories too, to any depth (within `limit`). Default false.
    pub recursive: Option<bool>,
    /// How many levels to list: 1 is the directory's own entries, 2 adds its
    /// subdirectories' entries, and so on. Takes precedence over `recursive`.
    #[schemars(range(min = 1))]
    pub depth: Option<u32>,
    /// Only list entries whose names match this glob (`*.rs`, `*.{md,txt}`; with a `/` it
    /// matches paths below `path`). Directories are kept when something inside matches.
    pub pattern: Option<String>,
    /// Globs of entries to leave out, with what is inside them (`node_modules`, `*.log`).
    pub ignore: Option<Vec<String>>,
    /// Also list hidden entries (names starting with `.`). Default false.
    pub hidden: Option<bool>,
    /// Also list entries that .gitignore (or .ignore) excludes. Default false.
    pub no_ignore: Option<bool>,
    /// Most entries to list ([`DEFAULT_LIMIT`] when left out; 0 for no limit).
    #[schemars(description = format!("Most entries to list (default {}; 0 for no limit).", thousands(DEFAULT_LIMIT)))]
    pub limit: Option<u64>,
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (not followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One listed entry.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListEntry {
    /// The path below the listed directory (`src/main.rs`).
    pub path: String,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: EntryType,
    /// Size in bytes (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Where a symlink points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// The structured result of `ListDir`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListDirOutput {
    /// The listed directory, relative to the working directory when inside it.
    pub path: String,
    /// The entries listed, in display order (directories first, then by name, as a tree).
    pub entries: Vec<ListEntry>,
    /// Entries found in all (within the depth); more than `entries` when cut at the limit.
    pub total: usize,
    /// What the text says besides the entries, in order: for an empty listing, which kinds
    /// of entries it leaves out; how many more entries there are past the limit and how to
    /// see them; paths that could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Which kinds of entries a listing leaves out.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LeftOut {
    /// Hidden entries (names starting with `.`).
    hidden: bool,
    /// Entries .gitignore (or .ignore) excludes.
    ignored: bool,
    /// Entries whose names do not match `pattern`.
    non_matching: bool,
}

impl LeftOut {
    /// "; hidden, .gitignore'd entries are not listed", or nothing when nothing is left out.
    fn said(self) -> String {
        let mut skipped = Vec::new();
        if self.hidden {
            skipped.push("hidden");
        }
        if self.ignored {
            skipped.push(".gitignore'd");
        }
        if self.non_matching {
            skipped.push("non-matching");
        }
        if skipped.is_empty() { String::new() } else { format!("; {} entries are not listed", skipped.join(", ")) }
    }
}

impl Render for ListDirOutput {
    /// The directory, then one line per entry indented by its depth: directories with a
    /// trailing `/`, files with their size, symlinks with their target; then what was left
    /// out at the limit, and a note when some paths could not be read.
    fn render(&self) -> Vec<Content> {
        let mut text = format!("{}/", self.path.trim_end_matches('/'));
        for entry in &self.entries {
            let rel = Path::new(&entry.path);
            text.push('\n');
            text.push_str(&"  ".repeat(rel.components().count()));
            text.push_str(&rel.file_name().map_or(rel.as_os_str(), |n| n).to_string_lossy());
            match entry.kind {
                EntryType::Dir => text.push('/'),
                EntryType::File => text.push_str(&format!("  {}", human_size(entry.size.unwrap_or(0)))),
                EntryType::Symlink => text.push_str(&format!(" -> {}", entry.target.as_deref().unwrap_or("?"))),
                EntryType::Other => text.push_str("  (special file)"),
            }
        }
        let mut notes = self.notes.iter();
        if self.total == 0
            && let Some(empty) = notes.next()
        {
            text.push_str(&format!("\n  ({empty})"));
        }
        for note in notes {
            append_note(&mut text, note);
        }
        vec![Content::text(text)]
    }
}

/// The `ListDir` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

/// The description, with the default limit.
fn description() -> String {
    format!(
        "Lists a directory's files and subdirectories as an indented tree: directories first (with a trailing `/`), \
         then files with their sizes, each group by name; symlinks show their target. One level by default; set \
         `recursive` (or `depth`) to see inside subdirectories. .gitignore'd and hidden entries are left out unless \
         `no_ignore` / `hidden` is set; `pattern` keeps only matching names, `ignore` drops entries. At most {} \
         entries (breadth first); the notice says how many more there are. Prefer Glob to find files by name and \
         Grep to search contents.",
        thousands(DEFAULT_LIMIT)
    )
}

impl Tool for ListDir {
    type Input = ListDirInput;
    type Output = ListDirOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ListDir", description())
            .title("List a directory")
            .aliases(["LS", "list_dir", "file_list", "list_directory", "ls"])
            .param_alias("directory", "path")
            .param_alias("dir_path", "path")
            .param_alias("include_hidden", "hidden")
            .param_alias("include_ignored", "no_ignore")
            .category(Category::Files)
            .tags(["fs", "read"])
            .read_only()
            .search_hint("ls list directory folder contents tree files subdirectories sizes")
    }

    fn access(&self, input: &ListDirInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().reads(target(cx, input.path.as_deref())))
    }

    async fn call(&self, input: ListDirInput, cx: ToolContext) -> Result<ListDirOutput, ToolError> {
        let out = run_blocking(&cx, move |cx| Ok(list(&input, cx))).await?;
        if cx.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        out
    }
}

/// An entry as found by the walk.
struct Found {
    /// Path below the listed directory.
    rel: PathBuf,
    depth: usize,
    kind: EntryType,
    size: Option<u64>,
    target: Option<PathBuf>,
}

impl Found {
    fn name(&self) -> &Path {
        self.rel.file_name().map_or(self.rel.as_path(), Path::new)
    }
}

fn list(input: &ListDirInput, cx: &ToolContext) -> Result<ListDirOutput, ToolError> {
    let start = Start::resolve(cx, input.path.as_deref())?;
    let shown = Shown::new(cx);
    let here = shown.place(&start.loc.abs);
    if !start.is_dir {
        return Err(ToolError::failed(format!("{here} is a file, not a directory; use Read to read it")));
    }
    let max_depth = match (input.depth, input.recursive) {
        (Some(depth), _) => Some(depth.max(1) as usize),
        (None, Some(true)) => None,
        (None, _) => Some(1),
    };
    let pattern = input.pattern.as_deref().map(clean_glob).filter(|p| !p.is_empty());
    let pattern = pattern.map(|p| glob_set([p], "pattern")).transpose()?;
    let ignore = match &input.ignore {
        Some(globs) if !globs.is_empty() => Some(glob_set(globs.iter().map(|g| clean_glob(g)), "ignore")?),
        _ => None,
    };
    let options = WalkOptions {
        hidden: input.hidden.unwrap_or(false),
        no_ignore: input.no_ignore.unwrap_or(false),
        max_depth,
        ..WalkOptions::default()
    };
    let (mut found, errors) = walk(cx, &start, options, ignore.as_ref())?;
    if cx.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    if let Some(pattern) = &pattern {
        keep_matching(&mut found, pattern);
    }
    let total = found.len();
    // Breadth first for the cut, so the upper levels are listed whole.
    found.sort_unstable_by(|a, b| a.depth.cmp(&b.depth).then_with(|| tree_order(a, b)));
    let page = Page::new(None, input.limit, DEFAULT_LIMIT);
    found.truncate(page.range(total).end);
    found.sort_unstable_by(tree_order);

    let entries = found
        .iter()
        .map(|entry| ListEntry {
            path: entry.rel.to_string_lossy().into_owned(),
            kind: entry.kind,
            size: entry.size,
            target: entry.target.as_ref().map(|t| t.to_string_lossy().into_owned()),
        })
        .collect();
    let left_out = LeftOut {
        hidden: !input.hidden.unwrap_or(false),
        ignored: !input.no_ignore.unwrap_or(false),
        non_matching: input.pattern.is_some(),
    };
    let mut notes = Vec::new();
    let listed = found.len();
    if total == 0 {
        notes.push(format!("no entries{}", left_out.said()));
    } else if listed < total {
        notes.push(format!(
            "[Listed {} of {} entries (breadth first); {} more not shown: list a subdirectory, lower `depth`, or \
             raise `limit`.]",
            thousands(listed),
            thousands(total),
            thousands(total - listed)
        ));
    }
    notes.extend(errors.note());
    Ok(ListDirOutput { path: here, entries, total, notes })
}

/// Every entry below the start within the walk's depth, except `.git`'s contents and what
/// `ignore` matches.
fn walk(
    cx: &ToolContext,
    start: &Start,
    options: WalkOptions,
    ignore: Option<&GlobSet>,
) -> Result<(Vec<Found>, WalkErrors), ToolError> {
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    let errors: Mutex<WalkErrors> = Mutex::new(WalkErrors::default());
    let cancel = cx.cancellation();
    let root = start.loc.abs.as_path();
    let skipped = Skipped::default();
    walker(root, cx, options, &skipped)?.build_parallel().run(|| {
        let (found, errors) = (&found, &errors);
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    errors.lock().unwrap_or_else(PoisonError::into_inner).push(&e);
                    return WalkState::Continue;
                }
            };
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else { return WalkState::Continue };
            if ignore.is_some_and(|set| set.is_match(rel) || set.is_match(entry.file_name())) {
                return WalkState::Skip;
            }
            // Looked up again beneath the root: an entry a swapped directory showed from
            // outside is left out (and not descended into).
            let Some(meta) = start.confirm(&entry) else { return WalkState::Skip };
            let item = describe(start, &entry, &meta, rel.to_path_buf());
            let descend = !(item.kind == EntryType::Dir && entry.file_name() == ".git");
            found.lock().unwrap_or_else(PoisonError::into_inner).push(item);
            if descend { WalkState::Continue } else { WalkState::Skip }
        })
    });
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut errors = errors.into_inner().unwrap_or_else(PoisonError::into_inner);
    errors.merge(skipped.take());
    Ok((found, errors))
}

fn describe(start: &Start, entry: &DirEntry, meta: &cap_std::fs::Metadata, rel: PathBuf) -> Found {
    let file_type = meta.file_type();
    let kind = if file_type.is_dir() {
        EntryType::Dir
    } else if file_type.is_file() {
        EntryType::File
    } else if file_type.is_symlink() {
        EntryType::Symlink
    } else {
        EntryType::Other
    };
    let size = (kind == EntryType::File).then(|| meta.len());
    // Read through the root's handle, so the link is read where the walk found it.
    let target = match (kind, start.rel_in_root(entry.path())) {
        (EntryType::Symlink, Some(in_root)) => start.ws.dir(&start.loc).read_link_contents(in_root).ok(),
        _ => None,
    };
    Found { rel, depth: entry.depth(), kind, size, target }
}

/// Keeps the entries whose name (or, for a pattern with `/`, path) matches, and the
/// directories leading to them.
fn keep_matching(found: &mut Vec<Found>, pattern: &GlobSet) {
    let mut keep: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    for entry in found.iter() {
        if pattern.is_match(entry.name()) || pattern.is_match(&entry.rel) {
            let mut at = Some(entry.rel.as_path());
            while let Some(path) = at.filter(|p| !p.as_os_str().is_empty()) {
                if !keep.insert(path.to_path_buf()) {
                    break;
                }
                at = path.parent();
            }
        }
    }
    found.retain(|entry| keep.contains(&entry.rel));
}

fn glob_set<'g>(globs: impl IntoIterator<Item = &'g str>, param: &str) -> Result<GlobSet, ToolError> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let glob = GlobBuilder::new(glob.trim_end_matches('/')).literal_separator(true).build().map_err(|e| {
            ToolError::failed(format!("invalid glob in `{param}`: {e}; use e.g. `*.rs`, `*.{{md,txt}}` or `src/**`"))
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| ToolError::failed(format!("invalid glob in `{param}`: {e}")))
}

/// Tree order: a directory right before what it holds; among siblings, directories first,
/// then by name.
fn tree_order(a: &Found, b: &Found) -> Ordering {
    let (mut ia, mut ib) = (a.rel.components().peekable(), b.rel.components().peekable());
    loop {
        match (ia.next(), ib.next()) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                let x_dir = ia.peek().is_some() || a.kind == EntryType::Dir;
                let y_dir = ib.peek().is_some() || b.kind == EntryType::Dir;
                return y_dir.cmp(&x_dir).then_with(|| by_name(x.as_os_str(), y.as_os_str()));
            }
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (None, None) => return Ordering::Equal,
        }
    }
}

/// Names as `ls` orders them for people: ignoring case, then byte order for a tie.
fn by_name(a: &OsStr, b: &OsStr) -> Ordering {
    let (a, b) = (a.as_encoded_bytes(), b.as_encoded_bytes());
    a.iter().map(u8::to_ascii_lowercase).cmp(b.iter().map(u8::to_ascii_lowercase)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(rel: &str, kind: EntryType) -> Found {
        let rel = PathBuf::from(rel);
        Found { depth: rel.components().count(), rel, kind, size: None, target: None }
    }

    #[test]
    fn tree_order_puts_directories_first_and_children_under_parents() {
        let mut items = [
            found("b.txt", EntryType::File),
            found("a.txt", EntryType::File),
            found("z", EntryType::Dir),
            found("z/y.txt", EntryType::File),
            found("z/m", EntryType::Dir),
            found("c", EntryType::Dir),
            found("z/m/n.txt", EntryType::File),
        ];
        items.sort_by(tree_order);
        let order: Vec<String> = items.iter().map(|f| f.rel.to_string_lossy().into_owned()).collect();
        assert_eq!(order, ["c", "z", "z/m", "z/m/n.txt", "z/y.txt", "a.txt", "b.txt"]);
    }
}
