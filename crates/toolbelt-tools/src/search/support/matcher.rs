//! Grep's regex and file types, built as `rg` builds them, with errors that say how to fix
//! the input.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use ignore::types::{Types, TypesBuilder};
use toolbelt_core::ToolError;

/// How a pattern is matched.
#[derive(Debug, Clone, Copy, Default)]
pub struct RegexFlags {
    /// Letters match either case (`rg -i`).
    pub case_insensitive: bool,
    /// Matches may span lines and `.` matches a newline (`rg -U --multiline-dotall`).
    pub multiline: bool,
}

/// Builds the matcher for `pattern`: ripgrep's regex syntax, `^`/`$` at line boundaries,
/// with the given flags.
pub fn regex(pattern: &str, flags: RegexFlags) -> Result<RegexMatcher, ToolError> {
    let RegexFlags { case_insensitive, multiline } = flags;
    let mut builder = RegexMatcherBuilder::new();
    builder.multi_line(true).unicode(true).octal(false).case_insensitive(case_insensitive);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n')).dot_matches_new_line(false);
    }
    // Binary files are skipped at their first NUL byte; a match must not reach across one.
    builder.ban_byte(Some(b'\0'));
    builder.build(pattern).map_err(|e| invalid_regex(pattern, &e.to_string(), multiline))
}

fn invalid_regex(pattern: &str, error: &str, multiline: bool) -> ToolError {
    let error = error.trim();
    let hint = if !multiline && error.contains(r"\n") && error.contains("is not allowed") {
        "To match across lines, set `multiline: true`."
    } else {
        "The pattern is a regular expression (ripgrep syntax): escape special characters to \
         match them literally (`\\(`, `\\[`, `\\{`, `\\.`, `\\*`, `\\+`, `\\?`, `\\|`, `\\\\`), e.g. \
         `interface\\{\\}` to find `interface{}`."
    };
    ToolError::failed(format!("invalid regex `{pattern}`:\n{error}\n{hint}"))
}

/// The file-type filter for `names` (ripgrep's type names, several separated by commas or
/// spaces). An unknown name is an error listing the closest known ones.
pub fn types(names: &str) -> Result<Types, ToolError> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let defs = builder.definitions();
    let mut any = false;
    for name in names.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
        if !defs.iter().any(|d| d.name() == name) {
            return Err(unknown_type(name, &defs));
        }
        builder.select(name);
        any = true;
    }
    if !any {
        return Err(ToolError::failed(
            "`type` is empty; give a file type such as `rust`, `py`, `js`, `ts`, `go`, `java`, or leave it out",
        ));
    }
    builder.build().map_err(|e| ToolError::failed(format!("invalid `type`: {e}")))
}

fn unknown_type(name: &str, defs: &[ignore::types::FileTypeDef]) -> ToolError {
    let lower = name.to_ascii_lowercase();
    let ext = format!("*.{lower}");
    // Types that cover `*.name` first (a model writing `rs` means `rust`), then near spellings.
    let mut close: Vec<(usize, &str)> = defs
        .iter()
        .filter_map(|d| {
            let by_ext = d.globs().iter().any(|g| g.eq_ignore_ascii_case(&ext));
            let distance = edit_distance(&lower, d.name());
            let near = distance <= 2 || (lower.len() >= 3 && d.name().contains(lower.as_str()));
            match (by_ext, near) {
                (true, _) => Some((0, d.name())),
                (false, true) => Some((1 + distance, d.name())),
                (false, false) => None,
            }
        })
        .collect();
    close.sort();
    close.truncate(6);
    let names: Vec<String> = close.iter().map(|(_, n)| format!("`{n}`")).collect();
    let suggestion = if names.is_empty() {
        "common ones are `rust`, `py`, `js`, `ts`, `go`, `java`, `c`, `cpp`, `md`, `json`, `yaml`".to_string()
    } else {
        format!("did you mean {}?", names.join(", "))
    };
    ToolError::failed(format!(
        "unknown file type `{name}`: {suggestion} Or filter by file name with `glob` (e.g. `*.{lower}`)."
    ))
}

/// Levenshtein distance over bytes (type names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.as_bytes().iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_regex_shows_the_error_and_how_to_escape() {
        let e = regex("foo(", RegexFlags::default()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("invalid regex `foo(`:"), "{e}");
        assert!(e.contains("unclosed group"), "{e}");
        assert!(e.contains("escape special characters"), "{e}");
        let e = regex(r"a\nb", RegexFlags::default()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("multiline: true"), "{e}");
        assert!(regex(r"a\nb", RegexFlags { multiline: true, ..RegexFlags::default() }).is_ok());
    }

    #[test]
    fn unknown_types_suggest_close_names() {
        let e = types("rs").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("unknown file type `rs`: did you mean `rust`"), "{e}");
        let e = types("pyhton").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("`python`"), "{e}");
        assert!(types("rust").is_ok());
        assert!(types("rust, py").is_ok());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
