//! The patch grammar, read into file operations and hunks.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path            (then `+line` lines)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: other/path       (optional)
//! @@ optional anchor line       (one or more; each is sought in turn)
//!  context / -removed / +added
//! *** End of File               (optional: the hunk matches at the end of the file)
//! *** End Patch
//! ```
//!
//! Markers start at column 0 (so a context line ` *** x` is content, never a marker) and may
//! carry trailing whitespace. The parser is lenient where the intent is unambiguous, as models
//! write it: a shell heredoc wrapper (`apply_patch <<'EOF'` … `EOF`) is ignored, the first
//! hunk of a file may omit its `@@`, an empty line inside a hunk is an empty context line
//! (blank lines ending a hunk are separators), a unified-diff header (`@@ -3,7 +3,8 @@ fn x`)
//! keeps only its trailing text as the anchor, and `\ No newline at end of file` is skipped.

use std::fmt;

/// What one line of a hunk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Present before and after (` `).
    Context,
    /// Removed (`-`).
    Remove,
    /// Added (`+`).
    Add,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// What the line does.
    pub kind: Kind,
    /// The text, without its prefix or line ending.
    pub text: String,
    /// Its line number in the patch (1-based).
    pub at: usize,
    /// Whether it came from an empty patch line (a context line without its space).
    blank: bool,
}

/// One `@@` hunk of an `Update File`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The line number in the patch where the hunk starts (1-based).
    pub at: usize,
    /// The `@@` anchors, in order; each is sought after the previous.
    pub headers: Vec<String>,
    /// The hunk's lines, in order.
    pub lines: Vec<HunkLine>,
    /// Whether the hunk must match at the end of the file.
    pub end_of_file: bool,
}

impl Hunk {
    /// The lines the file must have: context and removed lines, with their patch line numbers.
    pub fn old(&self) -> Vec<(&str, usize)> {
        self.lines.iter().filter(|l| l.kind != Kind::Add).map(|l| (l.text.as_str(), l.at)).collect()
    }

    /// How many lines the hunk adds and removes.
    pub fn counts(&self) -> (usize, usize) {
        let n = |k: Kind| self.lines.iter().filter(|l| l.kind == k).count();
        (n(Kind::Add), n(Kind::Remove))
    }

    /// The headers as written (`@@ a`, `@@ b`), for messages.
    pub fn describe_headers(&self) -> String {
        let parts: Vec<String> = self.headers.iter().map(|h| format!("@@ {h}")).collect();
        parts.join(", ")
    }
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file that must not exist.
    Add {
        /// The path as written.
        path: String,
        /// The patch line of the marker.
        at: usize,
        /// The file's lines.
        lines: Vec<String>,
    },
    /// Delete a file that must exist.
    Delete {
        /// The path as written.
        path: String,
        /// The patch line of the marker.
        at: usize,
    },
    /// Change a file that must exist, and possibly rename it.
    Update {
        /// The path as written.
        path: String,
        /// The patch line of the marker.
        at: usize,
        /// Where the file moves to, if it does.
        move_to: Option<String>,
        /// The hunks, in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// Every path the operation touches (the source, then the destination of a move).
    pub fn paths(&self) -> Vec<&str> {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path, .. } => vec![path],
            FileOp::Update { path, move_to, .. } => std::iter::once(path.as_str()).chain(move_to.as_deref()).collect(),
        }
    }
}

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations, in patch order.
    pub ops: Vec<FileOp>,
}

/// Why a patch could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The patch line (1-based).
    pub line: usize,
    /// What was expected there.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid patch, line {}: {}. Nothing was changed; fix the patch and send it again",
            self.line, self.message
        )
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
const OPS: &str = "`*** Add File: <path>`, `*** Update File: <path>`, `*** Delete File: <path>` or `*** End Patch`";

/// Reads a patch.
pub fn parse(input: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = input.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut p = Parser { lines, pos: 0 };
    p.skip_blank();
    let mut heredoc = None;
    if let Some(line) = p.peek()
        && line.trim() != BEGIN
        && let Some(tag) = heredoc_tag(line)
    {
        heredoc = Some(tag);
        p.pos += 1;
    }
    match p.peek() {
        Some(l) if l.trim() == BEGIN => p.pos += 1,
        Some(l) => return Err(p.error(format!("the patch must start with `{BEGIN}`, found `{}`", clip(l)))),
        None => return Err(p.error(format!("the patch is empty; it must start with `{BEGIN}`"))),
    }
    let mut ops = Vec::new();
    loop {
        p.skip_blank();
        let Some(line) = p.peek() else {
            return Err(p.error(format!(
                "the patch ends without `{END}` (was it cut short?); end it with `{END}` on its own line"
            )));
        };
        let at = p.pos + 1;
        let trimmed = line.trim_end();
        if trimmed.trim_start() == END && line.starts_with("***") {
            p.pos += 1;
            break;
        }
        if let Some(rest) = trimmed.strip_prefix(ADD) {
            let path = p.path(rest, ADD)?;
            p.pos += 1;
            ops.push(FileOp::Add { path, at, lines: p.added_lines()? });
        } else if let Some(rest) = trimmed.strip_prefix(DELETE) {
            let path = p.path(rest, DELETE)?;
            p.pos += 1;
            ops.push(FileOp::Delete { path, at });
        } else if let Some(rest) = trimmed.strip_prefix(UPDATE) {
            let path = p.path(rest, UPDATE)?;
            p.pos += 1;
            ops.push(p.update(path, at)?);
        } else if trimmed.starts_with(MOVE) {
            return Err(p.error(format!("`{MOVE}` must directly follow an `{UPDATE} <path>` line")));
        } else {
            return Err(p.error(format!("expected {OPS}, found `{}`", clip(line))));
        }
    }
    // After the end: blank lines, or the heredoc terminator.
    while let Some(line) = p.peek() {
        let t = line.trim();
        if !(t.is_empty() || heredoc.as_deref() == Some(t)) {
            return Err(p.error(format!("unexpected text after `{END}`: `{}`; send one patch per call", clip(line))));
        }
        p.pos += 1;
    }
    if ops.is_empty() {
        return Err(ParseError {
            line: p.pos.max(1),
            message: format!("the patch has no file operations; add at least one of {OPS}"),
        });
    }
    Ok(Patch { ops })
}

/// `apply_patch <<'EOF'` → `EOF`.
fn heredoc_tag(line: &str) -> Option<String> {
    let (_, tag) = line.split_once("<<")?;
    let tag = tag.trim().trim_start_matches('-').trim_matches(|c| c == '\'' || c == '"').trim();
    (!tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then(|| tag.to_string())
}

/// A line cut for an error message.
fn clip(line: &str) -> String {
    const MAX: usize = 80;
    if line.chars().count() <= MAX {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(MAX).collect::<String>())
    }
}

struct Parser<'a> {
    lines: Vec<&'a str>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        // A final empty piece after the last newline is not a line.
        match self.lines.get(self.pos) {
            Some(l) if l.is_empty() && self.pos + 1 == self.lines.len() => None,
            other => other.copied(),
        }
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(|l| l.trim().is_empty()) {
            self.pos += 1;
        }
    }

    fn error(&self, message: String) -> ParseError {
        ParseError { line: self.pos + 1, message }
    }

    fn path(&self, rest: &str, marker: &str) -> Result<String, ParseError> {
        let path = rest.trim();
        if path.is_empty() {
            return Err(self.error(format!("`{marker}` needs a path after it (`{marker} src/main.rs`)")));
        }
        Ok(path.to_string())
    }

    /// The `+` lines of an `Add File`. Empty lines between them count as empty lines of the
    /// file; empty lines before the next marker are separators.
    fn added_lines(&mut self) -> Result<Vec<String>, ParseError> {
        let mut out = Vec::new();
        let mut blanks = 0;
        while let Some(line) = self.peek() {
            if let Some(text) = line.strip_prefix('+') {
                out.extend(std::iter::repeat_n(String::new(), blanks));
                blanks = 0;
                out.push(text.to_string());
            } else if line.is_empty() {
                blanks += 1;
            } else if line.starts_with("***") {
                break;
            } else {
                return Err(self.error(format!(
                    "every line of an added file starts with `+` (a lone `+` for an empty line), found `{}`",
                    clip(line)
                )));
            }
            self.pos += 1;
        }
        Ok(out)
    }

    fn update(&mut self, path: String, at: usize) -> Result<FileOp, ParseError> {
        let mut move_to = None;
        if let Some(rest) = self.peek().and_then(|l| l.trim_end().strip_prefix(MOVE)) {
            move_to = Some(self.path(rest, MOVE)?);
            self.pos += 1;
        }
        let mut hunks = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self.peek() else { break };
            if line.starts_with("***") {
                if line.trim_end() == END_OF_FILE {
                    return Err(
                        self.error(format!("`{END_OF_FILE}` must end a hunk; put it after the hunk's last line"))
                    );
                }
                break;
            }
            let first = hunks.is_empty();
            if !(line.starts_with("@@") || (first && starts_hunk_line(line))) {
                return Err(self.error(format!(
                    "expected a hunk (`@@`, optionally followed by a line to anchor it) or {OPS}, found `{}`",
                    clip(line)
                )));
            }
            hunks.push(self.hunk()?);
        }
        if hunks.is_empty() && move_to.is_none() {
            return Err(ParseError {
                line: at,
                message: format!(
                    "`{UPDATE} {path}` has no hunks; add `@@` hunks of ` `/`-`/`+` lines after it, or remove it"
                ),
            });
        }
        Ok(FileOp::Update { path, at, move_to, hunks })
    }

    fn hunk(&mut self) -> Result<Hunk, ParseError> {
        let at = self.pos + 1;
        let mut headers = Vec::new();
        while let Some(line) = self.peek().filter(|l| l.starts_with("@@")) {
            if let Some(h) = header(line) {
                headers.push(h);
            }
            self.pos += 1;
        }
        let mut lines: Vec<HunkLine> = Vec::new();
        let mut end_of_file = false;
        while let Some(line) = self.peek() {
            let at = self.pos + 1;
            let (kind, text, blank) = match line.chars().next() {
                None => (Kind::Context, "", true),
                Some(' ') => (Kind::Context, &line[1..], false),
                Some('-') => (Kind::Remove, &line[1..], false),
                Some('+') => (Kind::Add, &line[1..], false),
                Some('\\') => {
                    self.pos += 1;
                    continue;
                }
                Some('@') if line.starts_with("@@") => break,
                Some('*') if line.starts_with("***") => {
                    if line.trim_end() == END_OF_FILE {
                        self.pos += 1;
                        end_of_file = true;
                    }
                    break;
                }
                Some(_) => {
                    return Err(self.error(format!(
                        "every line of a hunk starts with ` ` (context), `-` (removed) or `+` (added), found `{}`",
                        clip(line)
                    )));
                }
            };
            lines.push(HunkLine { kind, text: text.to_string(), at, blank });
            self.pos += 1;
        }
        while lines.last().is_some_and(|l| l.blank) {
            lines.pop();
        }
        if lines.is_empty() {
            return Err(ParseError {
                line: at,
                message: "this hunk has no lines; give it ` ` context, `-` removed and `+` added lines, or remove it"
                    .to_string(),
            });
        }
        Ok(Hunk { at, headers, lines, end_of_file })
    }
}

fn starts_hunk_line(line: &str) -> bool {
    line.starts_with([' ', '-', '+'])
}

/// The anchor of a `@@` line: `@@ fn x` → `fn x`; `@@` → none; `@@ -3,7 +3,8 @@ fn x` → `fn x`.
fn header(line: &str) -> Option<String> {
    let rest = line.strip_prefix("@@")?.trim();
    let rest = match unified_range(rest) {
        Some(tail) => tail,
        None => rest,
    };
    (!rest.is_empty()).then(|| rest.to_string())
}

/// For `-3,7 +3,8 @@ tail`, the tail.
fn unified_range(rest: &str) -> Option<&str> {
    let (range, tail) = rest.split_once("@@")?;
    let mut parts = range.split_whitespace();
    let is_range = |p: Option<&str>, sign: char| {
        p.and_then(|p| p.strip_prefix(sign)).is_some_and(|r| {
            !r.is_empty() && r.split(',').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    (is_range(parts.next(), '-') && is_range(parts.next(), '+') && parts.next().is_none()).then(|| tail.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(patch: &str) -> (Option<String>, Vec<Hunk>) {
        match parse(patch).unwrap().ops.remove(0) {
            FileOp::Update { move_to, hunks, .. } => (move_to, hunks),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reads_every_operation() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+one\n\n+three\n\n*** Delete File: b.txt\n\
                     *** Update File: c.rs\n*** Move to: d.rs\n@@ fn main()\n ctx\n-old\n+new\n*** End of File\n*** End Patch\n";
        let p = parse(patch).unwrap();
        assert_eq!(p.ops.len(), 3);
        assert_eq!(
            p.ops[0],
            FileOp::Add { path: "a.txt".into(), at: 2, lines: vec!["one".into(), "".into(), "three".into()] }
        );
        assert_eq!(p.ops[1], FileOp::Delete { path: "b.txt".into(), at: 7 });
        let FileOp::Update { path, move_to, hunks, at } = &p.ops[2] else { panic!() };
        assert_eq!((path.as_str(), move_to.as_deref(), *at), ("c.rs", Some("d.rs"), 8));
        assert_eq!(hunks[0].headers, vec!["fn main()".to_string()]);
        assert!(hunks[0].end_of_file);
        assert_eq!(hunks[0].old(), vec![("ctx", 11), ("old", 12)]);
        assert_eq!(hunks[0].counts(), (1, 1));
        assert_eq!(p.ops[2].paths(), vec!["c.rs", "d.rs"]);
    }

    #[test]
    fn lenient_forms() {
        // Heredoc wrapper, CRLF, first hunk without @@, stacked @@ anchors, unified header,
        // blank context line inside, blank separator at the end.
        let patch = "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: x\r\n a\r\n-b\r\n+c\r\n\
                     @@ impl X\r\n@@ -10,3 +10,4 @@ fn y()\r\n a\r\n\r\n-b\r\n\r\n*** End Patch\r\nEOF\r\n";
        let (_, hunks) = update(patch);
        assert_eq!(hunks.len(), 2);
        assert!(hunks[0].headers.is_empty());
        assert_eq!(hunks[1].headers, vec!["impl X".to_string(), "fn y()".to_string()]);
        assert_eq!(hunks[1].old().iter().map(|(t, _)| *t).collect::<Vec<_>>(), vec!["a", "", "b"]);
        assert_eq!(header("@@ -1 +1 @@"), None);
        assert_eq!(header("@@ @@ weird"), Some("@@ weird".to_string()));
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let e = |p: &str| parse(p).unwrap_err();
        assert_eq!(e("hello").line, 1);
        assert!(e("hello").message.contains("must start with `*** Begin Patch`"));
        let err = e("*** Begin Patch\n*** Update File: a\n@@\n ctx\nbad line\n*** End Patch");
        assert_eq!(err.line, 5);
        assert!(err.message.contains("found `bad line`"), "{err}");
        let err = e("*** Begin Patch\n*** Add File: a\n+x\n");
        assert_eq!(err.line, 4);
        assert!(err.message.contains("ends without `*** End Patch`"), "{err}");
        let err = e("*** Begin Patch\n*** Frobnicate: a\n*** End Patch");
        assert_eq!((err.line, err.message.starts_with("expected `*** Add File")), (2, true), "{err}");
        let err = e("*** Begin Patch\n*** Update File: a\n*** End Patch");
        assert!(err.message.contains("has no hunks"), "{err}");
        let err = e("*** Begin Patch\n*** Update File: a\n@@ x\n*** End Patch");
        assert_eq!(err.line, 3);
        let err = e("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch");
        assert_eq!(err.line, 3);
        let err = e("*** Begin Patch\n*** Add File:   \n*** End Patch");
        assert!(err.message.contains("needs a path"), "{err}");
        let err = e("*** Begin Patch\n*** End Patch");
        assert!(err.message.contains("no file operations"), "{err}");
        assert!(err.to_string().starts_with("invalid patch, line "), "{err}");
    }

    #[test]
    fn markers_only_at_column_zero() {
        let (_, hunks) = update("*** Begin Patch\n*** Update File: a\n@@\n *** End Patch\n-x\n+y\n*** End Patch\n");
        assert_eq!(hunks[0].old()[0].0, "*** End Patch");
    }

    #[test]
    fn pure_rename_is_allowed() {
        let (move_to, hunks) = update("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch");
        assert_eq!((move_to.as_deref(), hunks.len()), (Some("b"), 0));
    }
}
