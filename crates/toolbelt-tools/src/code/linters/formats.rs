//! Reading what linters print into one shape, [`Finding`]: each linter's own
//! machine-readable format (`cargo clippy --message-format=json`, `ruff check
//! --output-format=json`, `eslint -f json`, `shellcheck -f json1`), SARIF (what many others
//! can print), and `path:line:col: severity: message` lines (compilers, `go vet`, mypy,
//! flake8).
//!
//! Paths come back as the linter printed them; [`resolve`] makes them absolute against the
//! folder the linter ran in.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// How a linter's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Cargo's JSON messages, one object a line (`--message-format=json`).
    Cargo,
    /// Ruff's JSON array (`--output-format=json`).
    Ruff,
    /// ESLint's JSON formatter (`-f json`).
    Eslint,
    /// ShellCheck's `json1` (`{"comments": […]}`).
    Shellcheck,
    /// SARIF 2.1 (`runs[].results[]`).
    Sarif,
    /// Text lines `path:line[:col]: [severity:] message`, from stdout and stderr.
    Lines,
}

impl Format {
    /// The format a settings table names (`cargo`/`clippy`, `ruff`, `eslint`, `shellcheck`,
    /// `sarif`, `lines`).
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "cargo" | "clippy" | "rustc" => Format::Cargo,
            "ruff" => Format::Ruff,
            "eslint" => Format::Eslint,
            "shellcheck" | "json1" => Format::Shellcheck,
            "sarif" => Format::Sarif,
            "lines" | "text" | "gcc" => Format::Lines,
            _ => return None,
        })
    }

    /// The names [`Format::parse`] takes, for errors.
    pub const NAMES: &'static str = "cargo, ruff, eslint, shellcheck, sarif or lines";

    /// Whether the linter's stderr is read too (text formats print findings there).
    pub fn reads_stderr(self) -> bool {
        self == Format::Lines
    }
}

/// One finding, as the linter reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, as printed (absolute or relative to where the linter ran).
    pub path: String,
    /// 1-based line (0 when the linter gave none).
    pub line: u32,
    /// 1-based column (0 when the linter gave none).
    pub column: u32,
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The rule or error code (`F401`, `SC2086`, `clippy::needless_return`).
    pub code: Option<String>,
    /// What is wrong.
    pub message: String,
    /// Whether the linter can fix it itself.
    pub fixable: bool,
}

/// How serious a finding is, on one scale for every linter.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Must be fixed: the linter fails on it.
    Error,
    /// Should be looked at.
    Warning,
    /// Style, notes, hints.
    Info,
}

impl Severity {
    /// Its name: `error`, `warning`, `info`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// Every severity, the most serious first.
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Info];

    /// A severity as linters spell it (`error`, `warn`, `note`, `style`, …).
    fn from_word(word: &str) -> Severity {
        match word.to_ascii_lowercase().as_str() {
            "error" | "fatal" | "fatal error" | "err" | "failure" | "failure-note" | "critical" | "high" => {
                Severity::Error
            }
            "warning" | "warn" | "medium" => Severity::Warning,
            _ => Severity::Info,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What could not be read: the output is not in the format the linter was set to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// The findings in a linter's `stdout` (and, for text formats, `stderr`).
pub fn parse(format: Format, stdout: &str, stderr: &str) -> Result<Vec<Finding>, Unreadable> {
    match format {
        Format::Cargo => Ok(cargo(stdout)),
        Format::Ruff => Ok(ruff(typed(stdout)?)),
        Format::Eslint => Ok(eslint(typed(stdout)?)),
        Format::Shellcheck => Ok(shellcheck(typed(stdout)?)),
        Format::Sarif => sarif(&typed::<Value>(stdout)?),
        Format::Lines => Ok(stdout.lines().chain(stderr.lines()).filter_map(line).collect()),
    }
}

/// The file a finding names, absolute: a `file://` URI or an absolute path as it is, a
/// relative one against `base` (the folder the linter ran in).
pub fn resolve(base: &Path, printed: &str) -> PathBuf {
    let printed = printed.strip_prefix("file://").unwrap_or(printed);
    let decoded = percent_decode(printed);
    let path = Path::new(&decoded);
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    normalize(&joined)
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `%20` and the like in a URI path, decoded (bytes that do not form UTF-8 are kept encoded).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// The report read as `T`: the linter's own shape, decoded straight into the fields used
/// (the rest, fixes and suggestions, skipped without being built), several times faster
/// than a tree of values on a report of thousands of findings.
fn typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Unreadable> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Unreadable("it printed nothing on stdout".into()));
    }
    serde_json::from_str(text).map_err(|e| {
        let start: String = text.chars().take(120).collect();
        Unreadable(format!("its output is not the JSON expected ({e}); it begins: {start}"))
    })
}

/// Present and not null: a fix, a suggestion.
type Present = Option<serde::de::IgnoredAny>;

#[derive(serde::Deserialize)]
struct RuffItem {
    code: Option<String>,
    #[serde(default)]
    filename: String,
    location: Option<RuffAt>,
    #[serde(default)]
    message: String,
    severity: Option<String>,
    fix: Present,
}

#[derive(serde::Deserialize)]
struct RuffAt {
    #[serde(default)]
    row: u32,
    #[serde(default)]
    column: u32,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct EslintFile {
    #[serde(default)]
    file_path: String,
    #[serde(default)]
    messages: Vec<EslintMessage>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct EslintMessage {
    rule_id: Option<String>,
    #[serde(default)]
    fatal: bool,
    #[serde(default)]
    severity: u8,
    #[serde(default)]
    message: String,
    #[serde(default)]
    line: u32,
    #[serde(default)]
    column: u32,
    fix: Present,
}

/// ShellCheck's `json1` (`{"comments": […]}`), or the older `json` (the bare list).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ShellcheckReport {
    Json1 { comments: Vec<ShellcheckComment> },
    Json(Vec<ShellcheckComment>),
}

#[derive(serde::Deserialize)]
struct ShellcheckComment {
    #[serde(default)]
    file: String,
    #[serde(default)]
    line: u32,
    #[serde(default)]
    column: u32,
    level: Option<String>,
    code: Option<u64>,
    #[serde(default)]
    message: String,
    fix: Present,
}

fn u32_of(v: Option<&Value>) -> u32 {
    v.and_then(Value::as_u64).map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

fn str_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned).filter(|s| !s.is_empty())
}

/// Cargo's messages: each `compiler-message` with a primary span; lines that are not JSON
/// (a build script printing) are passed over.
fn cargo(text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('{')) {
        let Ok(record) = serde_json::from_str::<Value>(line) else { continue };
        if record.get("reason").and_then(Value::as_str) != Some("compiler-message") {
            continue;
        }
        let Some(message) = record.get("message") else { continue };
        let spans = message.get("spans").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        // Summaries ("aborting due to 2 previous errors") have no span.
        let Some(span) = spans.iter().find(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true)) else {
            continue;
        };
        let level = message.get("level").and_then(Value::as_str).unwrap_or("warning");
        let fixable = spans
            .iter()
            .chain(
                message
                    .get("children")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .flat_map(|c| c.get("spans").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()),
            )
            .any(|s| s.get("suggestion_applicability").and_then(Value::as_str) == Some("MachineApplicable"));
        found.push(Finding {
            path: str_of(span.get("file_name")).unwrap_or_default(),
            line: u32_of(span.get("line_start")),
            column: u32_of(span.get("column_start")),
            severity: Severity::from_word(level),
            code: str_of(message.get("code").and_then(|c| c.get("code"))),
            message: str_of(message.get("message")).unwrap_or_default(),
            fixable,
        });
    }
    found
}

fn ruff(items: Vec<RuffItem>) -> Vec<Finding> {
    items
        .into_iter()
        .map(|item| Finding {
            path: item.filename,
            line: item.location.as_ref().map_or(0, |l| l.row),
            column: item.location.as_ref().map_or(0, |l| l.column),
            // Ruff fails on every finding; syntax errors have no code, or `invalid-syntax`.
            severity: item.severity.as_deref().map_or(Severity::Error, Severity::from_word),
            code: item.code.filter(|c| !c.is_empty()),
            message: item.message,
            fixable: item.fix.is_some(),
        })
        .collect()
}

fn eslint(files: Vec<EslintFile>) -> Vec<Finding> {
    let mut found = Vec::new();
    for file in files {
        for m in file.messages {
            let severity = match m.severity {
                _ if m.fatal => Severity::Error,
                2 => Severity::Error,
                1 => Severity::Warning,
                _ => Severity::Info,
            };
            found.push(Finding {
                path: file.file_path.clone(),
                line: m.line,
                column: m.column,
                severity,
                code: m.rule_id.filter(|c| !c.is_empty()),
                message: m.message,
                fixable: m.fix.is_some(),
            });
        }
    }
    found
}

fn shellcheck(report: ShellcheckReport) -> Vec<Finding> {
    let (ShellcheckReport::Json1 { comments } | ShellcheckReport::Json(comments)) = report;
    comments
        .into_iter()
        .map(|c| Finding {
            path: c.file,
            line: c.line,
            column: c.column,
            severity: c.level.as_deref().map_or(Severity::Warning, Severity::from_word),
            code: c.code.map(|n| format!("SC{n}")),
            message: c.message,
            fixable: c.fix.is_some(),
        })
        .collect()
}

fn sarif(value: &Value) -> Result<Vec<Finding>, Unreadable> {
    let runs =
        value.get("runs").and_then(Value::as_array).ok_or_else(|| Unreadable("the SARIF log has no `runs`".into()))?;
    let mut found = Vec::new();
    for run in runs {
        for result in run.get("results").and_then(Value::as_array).into_iter().flatten() {
            let location = result
                .get("locations")
                .and_then(Value::as_array)
                .and_then(|l| l.first())
                .and_then(|l| l.get("physicalLocation"));
            let region = location.and_then(|l| l.get("region"));
            let level = result.get("level").and_then(Value::as_str).unwrap_or("warning");
            found.push(Finding {
                path: str_of(location.and_then(|l| l.get("artifactLocation")).and_then(|a| a.get("uri")))
                    .unwrap_or_default(),
                line: u32_of(region.and_then(|r| r.get("startLine"))),
                column: u32_of(region.and_then(|r| r.get("startColumn"))),
                severity: Severity::from_word(level),
                code: str_of(result.get("ruleId")),
                message: str_of(result.get("message").and_then(|m| m.get("text"))).unwrap_or_default(),
                fixable: result.get("fixes").and_then(Value::as_array).is_some_and(|f| !f.is_empty()),
            });
        }
    }
    Ok(found)
}

/// One `path:line[:col]: [severity[\[code\]]:] message` line, or None. A code leading the
/// message (`F401 …`, flake8) or closing it in brackets (`… [name-defined]`, mypy) is taken
/// as the finding's code.
fn line(text: &str) -> Option<Finding> {
    let text = text.trim_end();
    // `go vet` prefixes `vet: `.
    let text = text.strip_prefix("vet: ").unwrap_or(text);
    let mut parts = text.splitn(4, ':');
    let path = parts.next()?.trim();
    if path.is_empty() || path.contains(char::is_whitespace) && !Path::new(path).exists() {
        return None;
    }
    let line: u32 = parts.next()?.trim().parse().ok()?;
    let third = parts.next()?;
    let (column, rest) = match third.trim().parse::<u32>() {
        Ok(col) => (col, parts.next().unwrap_or("").to_owned()),
        // No column: the third piece is the message's start.
        Err(_) => (0, parts.next().map_or_else(|| third.to_owned(), |fourth| format!("{third}:{fourth}"))),
    };
    let mut rest = rest.trim();
    let mut severity = None;
    let mut code = None;
    for word in ["fatal error", "error", "warning", "warn", "note", "info", "hint", "style"] {
        if let Some(after) = strip_word(rest, word) {
            severity = Some(Severity::from_word(word));
            let after = after.trim_start();
            let after = match after.strip_prefix('[').and_then(|a| a.split_once(']')) {
                Some((c, tail)) => {
                    code = Some(c.to_owned());
                    tail
                }
                None => after,
            };
            rest = after.trim_start_matches(':').trim();
            break;
        }
    }
    if code.is_none()
        && let Some((first, tail)) = rest.split_once(' ')
        && is_code(first)
    {
        code = Some(first.to_owned());
        rest = tail.trim();
    }
    let mut message = rest.to_owned();
    if code.is_none()
        && message.ends_with(']')
        && let Some(open) = message.rfind("  [")
    {
        code = Some(message[open + 3..message.len() - 1].to_owned());
        message.truncate(open);
    }
    if message.is_empty() {
        return None;
    }
    Some(Finding {
        path: path.to_owned(),
        line,
        column,
        severity: severity.unwrap_or(Severity::Warning),
        code,
        message,
        fixable: false,
    })
}

/// `text` after `word` when it begins with it as a whole word (case-insensitive).
fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let after = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && after.starts_with([':', '[', ' '])).then_some(after)
}

/// A rule code such as `F401`, `E501`, `SC2086`, `W0611`: capitals then digits.
fn is_code(word: &str) -> bool {
    let letters = word.chars().take_while(char::is_ascii_uppercase).count();
    let digits = word.len() - letters;
    (1..=4).contains(&letters) && (2..=5).contains(&digits) && word[letters..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests;
