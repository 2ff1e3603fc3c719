//! `Grep`: search file contents with ripgrep's engine, answering in ripgrep's own output
//! format.
//!
//! Same parameters as Claude Code's Grep (`pattern, path, glob, type, output_mode, -i, -n,
//! -A, -B, -C, multiline, head_limit, offset`), and the same results as `rg --sort path` on
//! the same tree: the walk, the regex syntax, the file types, binary detection and the text
//! shape (`path:line:text`, `path-line-text` for context, `--` between groups, `path:count`)
//! are ripgrep's, because models read and write that format fluently. Differences, each on
//! purpose: ignore files apply outside a git repository too; a `glob` with a `/` is anchored
//! at the searched `path` rather than at the working directory (a known trap in other
//! agents); lines over 2,000 characters are cut with a marker; `head_limit`/`offset` page
//! over the output with a notice saying how to get the rest.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec, thousands};

use crate::blocking::run_blocking;

use crate::fs::walk::guard::Skipped;
use crate::fs::walk::{Page, Shown, Start, WalkOptions, append_note, clean_glob, globs, target, walker};
use crate::search::support::content::{Found, LineKind, MAX_LINE_CHARS, Mode, Outcome, Plan};
use crate::search::support::engine;
use crate::search::support::listing::Listing;
use crate::search::support::matcher;

/// Entries of the structured result at most (the text is cut by the output budget).
pub const STRUCTURED_LIMIT: usize = 1_000;

/// What Grep reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The paths of the files that match, one per line (`rg -l`).
    #[default]
    FilesWithMatches,
    /// The matching lines, as `path:line:text` (`rg -n`), with optional context lines.
    Content,
    /// How many lines match in each file, as `path:count` (`rg -c`).
    Count,
}

/// Input of `Grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// The regular expression to search for in file contents (ripgrep syntax, like Rust's
    /// regex crate: `log.*Error`, `fn\s+\w+`). Escape special characters to match them
    /// literally: `interface\{\}` finds `interface{}`.
    pub pattern: String,
    /// File or directory to search in (default: the working directory).
    pub path: Option<String>,
    /// Only search files whose names match this glob, e.g. `*.js` or `*.{ts,tsx}` (rg
    /// --glob). A glob with `/` matches paths below `path` (`src/**/*.rs`); `!` excludes
    /// (`!*.min.js`); several globs separated by spaces all apply. As with rg, a glob that
    /// names files outright also reaches ignored or hidden ones (`.env`, `*.log`).
    pub glob: Option<String>,
    /// Only search files of this type (rg --type), e.g. `js`, `py`, `rust`, `go`, `java`,
    /// `ts`, `cpp`, `md`; several separated by commas. Faster than `glob` for standard
    /// types.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// `files_with_matches` (default) lists matching file paths; `content` shows matching
    /// lines (`-A`/`-B`/`-C`, `-n` apply); `count` shows match counts per file.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Case-insensitive search (rg -i).
    #[serde(rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Show line numbers (rg -n; content mode only; default true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines to show after each match (rg -A; content mode only).
    #[serde(rename = "-A")]
    pub after: Option<u32>,
    /// Lines to show before each match (rg -B; content mode only).
    #[serde(rename = "-B")]
    pub before: Option<u32>,
    /// Lines to show before and after each match (rg -C; content mode only; `-A`/`-B`
    /// take precedence).
    #[serde(rename = "-C")]
    pub context: Option<u32>,
    /// Let patterns span lines, with `.` matching newlines too (rg -U --multiline-dotall).
    /// Default false.
    pub multiline: Option<bool>,
    /// Show at most this many entries: output lines (content), files (files_with_matches)
    /// or count entries (count), like `| head -N`. Default (or 0): all; long output is cut
    /// to the output budget.
    pub head_limit: Option<u64>,
    /// Skip this many entries first, like `| tail -n +N+1`; use with `head_limit` to page.
    pub offset: Option<u64>,
}

/// One output line of content mode.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepLine {
    /// The file, relative to the working directory when inside it.
    pub path: String,
    /// 1-based line number (absent when `-n` is false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The line's text (cut after [`MAX_LINE_CHARS`] characters).
    #[schemars(description = format!("The line's text (cut after {} characters).", thousands(MAX_LINE_CHARS)))]
    pub text: String,
    /// True for a context line (absent for a matching line).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context: bool,
}

/// One file's count.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepCount {
    /// The file, relative to the working directory when inside it.
    pub path: String,
    /// Matching lines (with `multiline`: matches).
    pub count: u64,
}

/// The structured result of `Grep`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepOutput {
    /// The mode that produced the result.
    pub mode: OutputMode,
    /// files_with_matches: the matching files, in path order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    /// content: the output lines (matches and context lines; `--` breaks left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<GrepLine>>,
    /// count: the files with matches and their counts, in path order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<GrepCount>>,
    /// Entries in all: files, output lines (content, `--` breaks included) or count entries.
    pub total: usize,
    /// Entries skipped before the first returned.
    pub offset: usize,
    /// The offset that continues after the returned entries, when some were left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// What the text says besides the entries, in order: why there are none (nothing
    /// matched, the file is binary), which part of the results this page shows and how to
    /// get the rest, paths that could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The page's entries in ripgrep's format (`path`, `path:count`, `path:line:text` with
    /// `--` breaks), for the text only: unlike the lists above it is not capped at
    /// [`STRUCTURED_LIMIT`] entries or the output budget (the runtime cuts the text to the
    /// budget, keeping its head and tail).
    #[serde(skip)]
    pub(crate) listing: Listing,
    /// The start as shown, when it is a binary file (so nothing was searched).
    #[serde(skip)]
    pub(crate) binary: Option<String>,
}

/// What a search looked for and where, as the text says when nothing matched.
#[derive(Debug, Default)]
pub(crate) struct Searched {
    /// The pattern, as given.
    pattern: String,
    /// The `glob` filter, as given.
    glob: Option<String>,
    /// The `type` filter, as given.
    file_type: Option<String>,
    /// The start, as a sentence shows it.
    place: String,
    /// Whether the start is a directory (so ignored, hidden and binary files were skipped).
    is_dir: bool,
}

impl Searched {
    /// "No matches found for `x` in src, glob `*.rs`; .gitignore'd, hidden and binary files
    /// were skipped."
    fn no_match(&self) -> String {
        let mut filters = String::new();
        if let Some(glob) = &self.glob {
            filters.push_str(&format!(", glob `{glob}`"));
        }
        if let Some(t) = &self.file_type {
            filters.push_str(&format!(", type `{t}`"));
        }
        let skipped = if self.is_dir { "; .gitignore'd, hidden and binary files were skipped" } else { "" };
        format!("No matches found for `{}` in {}{filters}{skipped}.", self.pattern, self.place)
    }
}

impl Render for GrepOutput {
    /// The entries in ripgrep's format, then a notice when the page does not show them all
    /// and a note when some paths could not be read; or what was searched when nothing
    /// matched; or that the file is binary.
    fn render(&self) -> Vec<Content> {
        let text = self.listed().then(|| self.listing.render(self.spare()));
        self.content(text)
    }

    /// As `render`, handing over the search's text when the page is all of it.
    fn into_content(mut self) -> Vec<Content> {
        let listing = std::mem::take(&mut self.listing);
        let text = self.listed().then(|| listing.into_text(self.spare()));
        self.content(text)
    }
}

impl GrepOutput {
    /// Whether the text shows the listing (else why there is none).
    fn listed(&self) -> bool {
        self.binary.is_none() && self.total > 0
    }

    /// Room for the notes after the listing, so the text is not moved to make it.
    fn spare(&self) -> usize {
        self.notes.iter().map(|n| n.len() + 2).sum()
    }

    /// The content: the listing's text when [`GrepOutput::listed`] (else the first note, which
    /// says why there is none), then the notes.
    fn content(&self, listing: Option<String>) -> Vec<Content> {
        let mut notes = self.notes.iter();
        let mut text = match listing {
            Some(listing) => listing,
            None => notes.next().cloned().unwrap_or_default(),
        };
        for note in notes {
            append_note(&mut text, note);
        }
        vec![Content::text(text)]
    }

    /// Sets the notes from what was searched, the page asked for and the paths that could
    /// not be read.
    fn noted(mut self, searched: &Searched, page: Page, walk_errors: Option<String>) -> Self {
        if let Some(path) = &self.binary {
            self.notes =
                vec![format!("{path} is a binary file (it contains NUL bytes); Grep searches text files only.")];
            return self;
        }
        if self.total == 0 {
            self.notes.push(searched.no_match());
        }
        // None when nothing matched: a page of nothing shows all there is.
        if let Some(notice) = page.notice(self.total, entries(self.mode), " (in path order)", "narrow the search") {
            self.notes.push(notice);
        }
        self.notes.extend(walk_errors);
        self
    }
}

/// The `Grep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

const DESCRIPTION: &str = "A powerful search tool built on ripgrep. Searches file contents with a regular \
expression (ripgrep syntax: `log.*Error`, `function\\s+\\w+`; escape literal braces: `interface\\{\\}`). Filter \
files with `glob` (`*.js`, `**/*.{ts,tsx}`) or `type` (`js`, `py`, `rust`). `output_mode`: `files_with_matches` \
(default) lists matching files; `content` shows matching lines as `path:line:text` with optional context (`-A`, \
`-B`, `-C`); `count` shows `path:count`. Results are in path order; .gitignore'd, hidden and binary files are \
skipped. Patterns match within a line unless `multiline` is true. Page long results with `head_limit` and \
`offset`. Use this tool for searching file contents instead of running grep or rg in a shell.";

impl Tool for Grep {
    type Input = GrepInput;
    type Output = GrepOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Grep", DESCRIPTION)
            .title("Search file contents")
            .aliases(["grep", "search_file_content", "grep_search"])
            .category(Category::Search)
            .tags(["fs", "search", "read"])
            .read_only()
            .search_hint("grep ripgrep rg search find text regex pattern in files contents code usages")
    }

    fn access(&self, input: &GrepInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().reads(target(cx, input.path.as_deref())))
    }

    async fn call(&self, input: GrepInput, cx: ToolContext) -> Result<GrepOutput, ToolError> {
        let out = run_blocking(&cx, move |cx| Ok(grep(&input, cx))).await?;
        if cx.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        out
    }
}

fn grep(input: &GrepInput, cx: &ToolContext) -> Result<GrepOutput, ToolError> {
    let multiline = input.multiline.unwrap_or(false);
    let mode = match input.output_mode {
        OutputMode::FilesWithMatches => Mode::Files,
        OutputMode::Content => Mode::Content,
        OutputMode::Count => Mode::Count,
    };
    let context = input.context.unwrap_or(0) as usize;
    let plan = Plan {
        matcher: matcher::regex(
            &input.pattern,
            matcher::RegexFlags { case_insensitive: input.case_insensitive.unwrap_or(false), multiline },
        )?,
        mode,
        line_numbers: input.line_numbers.unwrap_or(true),
        before: input.before.map_or(context, |n| n as usize),
        after: input.after.map_or(context, |n| n as usize),
        multiline,
    };
    let types = input.file_type.as_deref().map(matcher::types).transpose()?;
    let start = Start::resolve(cx, input.path.as_deref())?;
    let cancel = cx.cancellation();
    let shown = Shown::new(cx);
    let page = Page::new(input.offset, input.head_limit, usize::MAX);
    // A single start file that is binary: nothing is searched, the text says why.
    let mut binary = None;
    let mut found = if start.is_dir {
        let overrides = match input.glob.as_deref().map(str::trim).filter(|g| !g.is_empty()) {
            Some(glob) => Some(globs(&start.loc.abs, glob.split_whitespace().map(clean_glob), "glob")?),
            None => None,
        };
        let options = WalkOptions { overrides, types, ..WalkOptions::default() };
        let skipped = Skipped::default();
        let walk = walker(&start.loc.abs, cx, options, &skipped)?;
        let mut found = engine::search_tree(&plan, &start, &shown, &walk, cancel);
        found.errors.merge(skipped.take());
        found
    } else {
        let (outcome, found) = engine::search_start_file(&plan, &start, &shown, cancel)?;
        if let Outcome::Binary = outcome {
            binary = Some(shown.show(&start.loc.abs));
        }
        found
    };
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }

    let walk_errors = std::mem::take(&mut found.errors).note();
    let budget = cx.limits().output_budget;
    let mut out = match mode {
        Mode::Files => page_files(&found, page, budget),
        Mode::Count => page_counts(&found, page, budget),
        Mode::Content => page_content(found, page, budget),
    };
    let searched = Searched {
        pattern: input.pattern.clone(),
        glob: input.glob.clone(),
        file_type: input.file_type.clone(),
        place: shown.place(&start.loc.abs),
        is_dir: start.is_dir,
    };
    out.binary = binary;
    Ok(out.noted(&searched, page, walk_errors))
}

/// What the entries of a mode are called in a notice.
fn entries(mode: OutputMode) -> &'static str {
    match mode {
        OutputMode::FilesWithMatches => "files",
        OutputMode::Count => "count entries",
        OutputMode::Content => "lines",
    }
}

fn output(mode: OutputMode, total: usize, page: Page, returned: usize) -> GrepOutput {
    let shown = page.range(total);
    let end = shown.start + returned;
    GrepOutput {
        mode,
        files: None,
        matches: None,
        counts: None,
        total,
        offset: page.offset,
        next_offset: (end < total && returned > 0).then_some(end),
        notes: Vec::new(),
        listing: Listing::default(),
        binary: None,
    }
}

/// Whether the structured list may take one more entry of `chars` characters, having taken
/// `len` entries of `used` characters: at most [`STRUCTURED_LIMIT`] entries, within the output
/// budget (the rest is reached with `next_offset`).
fn room_for(len: usize, used: &mut usize, chars: usize, budget: usize) -> bool {
    if len >= STRUCTURED_LIMIT || (len > 0 && *used + chars > budget) {
        return false;
    }
    *used += chars;
    true
}

fn page_files(found: &Found, page: Page, budget: usize) -> GrepOutput {
    let hits = &found.files;
    let on_page = &hits[page.range(hits.len())];
    let mut text = String::with_capacity(on_page.iter().map(|h| found.shown(h).len() + 1).sum());
    let mut files = Vec::new();
    let (mut used, mut full) = (0, false);
    for hit in on_page {
        text.push_str(found.shown(hit));
        text.push('\n');
        full = full || !room_for(files.len(), &mut used, found.shown(hit).len(), budget);
        if !full {
            files.push(found.shown(hit).to_string());
        }
    }
    text.pop();
    let mut out = output(OutputMode::FilesWithMatches, hits.len(), page, files.len());
    out.files = Some(files);
    out.listing = Listing::whole(text);
    out
}

fn page_counts(found: &Found, page: Page, budget: usize) -> GrepOutput {
    let hits = &found.files;
    let mut text = String::new();
    let mut counts = Vec::new();
    let (mut used, mut full) = (0, false);
    for hit in &hits[page.range(hits.len())] {
        let shown = found.shown(hit);
        text.push_str(&format!("{shown}:{}\n", hit.count));
        full = full || !room_for(counts.len(), &mut used, shown.len() + 8, budget);
        if !full {
            counts.push(GrepCount { path: shown.to_string(), count: hit.count });
        }
    }
    text.pop();
    let mut out = output(OutputMode::Count, hits.len(), page, counts.len());
    out.counts = Some(counts);
    out.listing = Listing::whole(text);
    out
}

/// `path:line:text` for matches, `path-line-text` for context lines (without line numbers
/// `path:text` / `path-text`), `--` between non-adjacent groups and, with context, between
/// files: ripgrep's standard format. The lines were formatted while searching, in order; the
/// page is a range of them (handed over whole, or that range copied, when rendered).
fn page_content(found: Found, page: Page, budget: usize) -> GrepOutput {
    let total = found.line_count();
    let lines = page.range(total);
    let mut matches = Vec::new();
    let mut used = 0;
    let mut structured_end = None;
    let first = found.files.partition_point(|hit| hit.lines.end <= lines.start);
    'files: for (i, hit) in found.files.iter().enumerate().skip(first) {
        for (k, (_, line)) in found.lines(i).enumerate() {
            let n = hit.lines.start + k;
            if n < lines.start || line.kind == LineKind::Break {
                continue;
            }
            if n >= lines.end {
                break 'files;
            }
            let (number, body) = found.number_and_body(i, &line);
            if !room_for(matches.len(), &mut used, found.shown(hit).len() + body.len() + 8, budget) {
                structured_end = Some(n);
                break 'files;
            }
            matches.push(GrepLine {
                path: found.shown(hit).to_string(),
                line: number,
                text: body.to_string(),
                context: line.kind == LineKind::Context,
            });
        }
    }
    let mut out = output(OutputMode::Content, total, page, 0);
    out.next_offset = structured_end.or((lines.end < total).then_some(lines.end));
    out.matches = Some(matches);
    let bytes = found.line_start(lines.start)..found.line_start(lines.end);
    out.listing = Listing::lines(found, bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbelt_core::erase;

    #[test]
    fn schema_uses_claude_code_parameter_names() {
        let tool = erase(Grep);
        let props = &tool.spec().input_schema["properties"];
        for key in ["pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "multiline"] {
            assert!(props.get(key).is_some(), "missing {key}");
        }
        assert!(props.get("head_limit").is_some() && props.get("offset").is_some());
        assert_eq!(tool.spec().input_schema["required"], serde_json::json!(["pattern"]));
        let output = tool.spec().output_schema.clone().unwrap_or_default();
        let line = &output["properties"]["matches"]["items"];
        assert_eq!(line["required"], serde_json::json!(["path", "text"]), "optional fields may be left out");
        assert!(tool.spec().annotations.read_only);
    }
}
