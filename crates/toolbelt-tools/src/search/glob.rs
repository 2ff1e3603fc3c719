//! `Glob`: find files by name pattern, newest first.
//!
//! The pattern has `rg --glob` semantics, as Claude Code's Glob does: without a `/` it
//! matches file names at any depth (`*.rs`), with a `/` it matches the path below `path`
//! (`src/**/*.ts`), `{a,b}` alternates. Unlike there, a pattern with a `/` is anchored at the
//! searched `path`, not at the working directory. The walk is ripgrep's parallel walker:
//! `.gitignore` and hidden files are skipped unless asked for. Results come newest first
//! (ties by path), [`DEFAULT_LIMIT`] per page, with a notice giving the total and the next
//! offset.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec, thousands};

use crate::blocking::run_blocking;

use crate::fs::walk::guard::Skipped;
use crate::fs::walk::{
    Page, Shown, Start, WalkErrors, WalkOptions, append_note, clean_glob, file_pattern, path_order, target, walker,
};

/// Files shown when no limit is given.
pub const DEFAULT_LIMIT: usize = 100;

/// Input of `Glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The glob pattern to match files against, e.g. `**/*.rs`, `src/**/*.{ts,tsx}`, `*.md`.
    /// Without a `/` it matches file names at any depth; with a `/` it matches paths
    /// relative to `path`.
    pub pattern: String,
    /// The directory to search in (default: the working directory).
    pub path: Option<String>,
    /// Also list hidden files and directories (names starting with `.`; `.git` is always
    /// skipped). Default false.
    pub hidden: Option<bool>,
    /// Also list files that .gitignore (or .ignore) excludes. Default false.
    pub no_ignore: Option<bool>,
    /// Skip this many files first, to page past the first results.
    pub offset: Option<u64>,
    /// How many files to show ([`DEFAULT_LIMIT`] when left out; 0 for all).
    #[schemars(description = format!("How many files to show (default {DEFAULT_LIMIT}; 0 for all)."))]
    pub limit: Option<u64>,
}

/// The structured result of `Glob`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GlobOutput {
    /// The files on this page, newest first, relative to the working directory when inside it.
    pub files: Vec<String>,
    /// Matching files in all.
    pub total: usize,
    /// Files skipped before the first returned.
    pub offset: usize,
    /// The offset of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// What the text says besides the files, in order: where it looked when nothing
    /// matched, which part of the matches this page shows and how to get the rest, paths
    /// that could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Render for GlobOutput {
    /// The files, one per line, then a notice when the page does not show them all and a note
    /// when some paths could not be read.
    fn render(&self) -> Vec<Content> {
        let mut text = self.files.join("\n");
        for note in &self.notes {
            append_note(&mut text, note);
        }
        vec![Content::text(text)]
    }
}

/// The `Glob` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

/// The description, with the page size.
fn description() -> String {
    format!(
        "Fast file pattern matching for any codebase size. Supports glob patterns like `**/*.js`, \
         `src/**/*.{{ts,tsx}}` or `*.md` (a pattern without `/` matches file names at any depth; one with `/` matches \
         paths relative to `path`). Returns matching file paths, newest first (by modification time), \
         {DEFAULT_LIMIT} at a time: use `offset` for more. .gitignore'd and hidden files are skipped unless \
         `no_ignore` / `hidden` is set. Use this tool to find files by name; use Grep to search their contents."
    )
}

impl Tool for Glob {
    type Input = GlobInput;
    type Output = GlobOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Glob", description())
            .title("Find files by name")
            .aliases(["glob", "find_files", "file_search"])
            .param_alias("include_hidden", "hidden")
            .param_alias("include_ignored", "no_ignore")
            .category(Category::Search)
            .tags(["fs", "search", "read"])
            .read_only()
            .search_hint("glob find files by name pattern wildcard extension locate list matching paths")
    }

    fn access(&self, input: &GlobInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let (base, _) = split_pattern(cx, input);
        Ok(Access::shared().reads(base))
    }

    async fn call(&self, input: GlobInput, cx: ToolContext) -> Result<GlobOutput, ToolError> {
        let out = run_blocking(&cx, move |cx| Ok(glob(&input, cx))).await?;
        if cx.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        out
    }
}

/// The directory to search and the pattern below it. An absolute pattern
/// (`/repo/src/**/*.rs`) is split at its first component with a wildcard, so its literal
/// part becomes the directory.
fn split_pattern(cx: &ToolContext, input: &GlobInput) -> (PathBuf, String) {
    let pattern = clean_glob(&input.pattern);
    if Path::new(pattern).is_absolute() || pattern.starts_with("~/") {
        let parts: Vec<&str> = pattern.split('/').collect();
        let literal = parts.iter().take_while(|p| !p.contains(['*', '?', '[', '{'])).count();
        let literal = if literal == parts.len() { literal - 1 } else { literal };
        let base = parts[..literal].join("/");
        let base = if base.is_empty() { "/".to_string() } else { base };
        // Anchored: the rest of an absolute pattern is relative to its literal part exactly.
        return (target(cx, Some(&base)), format!("/{}", parts[literal..].join("/")));
    }
    // `src/` means what is in `src`, not a file named `src`.
    let pattern = if pattern.ends_with('/') { format!("{pattern}**") } else { pattern.to_string() };
    (target(cx, input.path.as_deref()), pattern)
}

fn glob(input: &GlobInput, cx: &ToolContext) -> Result<GlobOutput, ToolError> {
    let (base, pattern) = split_pattern(cx, input);
    let start = Start::resolve(cx, Some(&base.to_string_lossy()))?;
    let shown = Shown::new(cx);
    if !start.is_dir {
        return Err(ToolError::failed(format!(
            "{} is a file, not a directory; give Glob a directory as `path` (or use Read to read the file)",
            shown.show(&start.loc.abs)
        )));
    }
    if pattern.is_empty() {
        return Err(ToolError::failed("`pattern` is empty; give a glob such as `**/*.rs` or `*.md`"));
    }
    let (hidden, no_ignore) = (input.hidden.unwrap_or(false), input.no_ignore.unwrap_or(false));
    let (mut files, errors) = find(cx, &start, &pattern, hidden, no_ignore, false)?;
    if cx.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    // Newest first; ties (same mtime) in path order, so the order is deterministic.
    files.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| path_order(&a.0, &b.0)));

    let page = Page::new(input.offset, input.limit, DEFAULT_LIMIT);
    let range = page.range(files.len());
    let listed: Vec<String> = files[range.clone()].iter().map(|(p, _)| shown.show(p)).collect();
    let nothing_found =
        if files.is_empty() { nothing_found(cx, &start, &pattern, hidden, no_ignore, &shown)? } else { String::new() };
    let mut notes = Vec::new();
    if files.is_empty() {
        notes.push(nothing_found);
    } else if let Some(notice) = page.notice(files.len(), "files", " (newest first)", "narrow the pattern") {
        notes.push(notice);
    }
    notes.extend(errors.note());
    Ok(GlobOutput {
        files: listed,
        total: files.len(),
        offset: page.offset,
        next_offset: (range.end < files.len()).then_some(range.end),
        notes,
    })
}

/// Every file under the start matching `pattern`, with its modification time.
fn find(
    cx: &ToolContext,
    start: &Start,
    pattern: &str,
    hidden: bool,
    no_ignore: bool,
    ignore_case: bool,
) -> Result<(Vec<(PathBuf, SystemTime)>, WalkErrors), ToolError> {
    let matcher = file_pattern(&start.loc.abs, pattern, ignore_case)?;
    let options = WalkOptions { hidden, no_ignore, ..WalkOptions::default() };
    let found: Mutex<Vec<(PathBuf, SystemTime)>> = Mutex::new(Vec::new());
    let errors: Mutex<WalkErrors> = Mutex::new(WalkErrors::default());
    let cancel = cx.cancellation();
    let skipped = Skipped::default();
    walker(&start.loc.abs, cx, options, &skipped)?.build_parallel().run(|| {
        // Each thread gathers its own list and hands it over once, when it finishes.
        let mut local = Local { mine: Vec::new(), errors: WalkErrors::default(), found: &found, all_errors: &errors };
        let matcher = &matcher;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            match entry {
                Err(e) => local.errors.push(&e),
                Ok(entry) if entry.depth() > 0 && entry.file_name() == ".git" => return WalkState::Skip,
                Ok(entry)
                    if entry.file_type().is_some_and(|t| t.is_file())
                        && matcher.matched(entry.path(), false).is_ignore() =>
                {
                    // Looked up again beneath the root: an entry a swapped directory showed
                    // from outside is left out.
                    if let Some(meta) = start.confirm(&entry) {
                        let mtime = meta.modified().map(|t| t.into_std()).unwrap_or(SystemTime::UNIX_EPOCH);
                        local.mine.push((entry.into_path(), mtime));
                    }
                }
                Ok(_) => {}
            }
            WalkState::Continue
        })
    });
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut errors = errors.into_inner().unwrap_or_else(PoisonError::into_inner);
    errors.merge(skipped.take());
    Ok((found, errors))
}

/// One walker thread's findings, handed over when the thread is done with it.
struct Local<'a> {
    mine: Vec<(PathBuf, SystemTime)>,
    errors: WalkErrors,
    found: &'a Mutex<Vec<(PathBuf, SystemTime)>>,
    all_errors: &'a Mutex<WalkErrors>,
}

impl Drop for Local<'_> {
    fn drop(&mut self) {
        self.found.lock().unwrap_or_else(PoisonError::into_inner).append(&mut self.mine);
        self.all_errors.lock().unwrap_or_else(PoisonError::into_inner).merge(std::mem::take(&mut self.errors));
    }
}

/// "No files found", with what was skipped and, when the pattern matches in another case,
/// which files it would have found.
fn nothing_found(
    cx: &ToolContext,
    start: &Start,
    pattern: &str,
    hidden: bool,
    no_ignore: bool,
    shown: &Shown,
) -> Result<String, ToolError> {
    let mut skipped = Vec::new();
    if !no_ignore {
        skipped.push("files excluded by .gitignore (set no_ignore: true to include them)");
    }
    if !hidden {
        skipped.push("hidden files (set hidden: true to include them)");
    }
    let mut text = format!("No files found matching `{pattern}` in {}", shown.place(&start.loc.abs));
    if !skipped.is_empty() {
        text.push_str(&format!("; skipped {}", skipped.join(" and ")));
    }
    text.push('.');
    if pattern.chars().any(char::is_alphabetic) {
        let (mut other_case, _) = find(cx, start, pattern, hidden, no_ignore, true)?;
        if !other_case.is_empty() {
            other_case.sort_unstable_by(|a, b| path_order(&a.0, &b.0));
            let examples: Vec<String> = other_case.iter().take(3).map(|(p, _)| shown.show(p)).collect();
            text.push_str(&format!(
                " The pattern is case-sensitive; {} file{} match{} it ignoring case: {}{}.",
                thousands(other_case.len()),
                if other_case.len() == 1 { "" } else { "s" },
                if other_case.len() == 1 { "es" } else { "" },
                examples.join(", "),
                if other_case.len() > examples.len() { ", …" } else { "" }
            ));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(pattern: &str, path: Option<&str>) -> GlobInput {
        GlobInput {
            pattern: pattern.into(),
            path: path.map(Into::into),
            hidden: None,
            no_ignore: None,
            offset: None,
            limit: None,
        }
    }

    #[test]
    fn absolute_patterns_split_at_the_first_wildcard() {
        let cx = ToolContext::detached(PathBuf::from("/w"));
        assert_eq!(
            split_pattern(&cx, &input("/repo/src/**/*.rs", None)),
            (PathBuf::from("/repo/src"), "/**/*.rs".to_string())
        );
        assert_eq!(split_pattern(&cx, &input("/repo/a.rs", None)), (PathBuf::from("/repo"), "/a.rs".to_string()));
        assert_eq!(split_pattern(&cx, &input("./src/*.rs", Some("sub"))), (PathBuf::from("/w/sub"), "src/*.rs".into()));
        assert_eq!(split_pattern(&cx, &input("*.rs", None)), (PathBuf::from("/w"), "*.rs".to_string()));
        assert_eq!(split_pattern(&cx, &input("src/", None)), (PathBuf::from("/w"), "src/**".to_string()));
    }
}
