//! Finding and replacing `old_string` in a file's text, and explaining a miss.
//!
//! Matching is exact, with one tolerance: line endings. A CRLF file matches an LF
//! `old_string` (and the other way round); the replacement is then written with the file's
//! line endings, so every byte outside the edited region stays as it was. When nothing
//! matches, the error shows the closest region of the file, numbered, and says what differs
//! line by line (indentation, trailing whitespace, quotes and dashes, the text itself) — or
//! that the `old_string` carries line-number prefixes copied from Read's output.

use crate::files::support::change::numbered;

/// A successful replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The whole new text.
    pub text: String,
    /// How many occurrences were replaced.
    pub count: usize,
    /// The line (1-based) where the first replacement starts.
    pub first_line: usize,
    /// How many lines the first replacement spans.
    pub span: usize,
}

/// Why a replacement could not be made. `Display` is the model-facing message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// `old_string` equals `new_string`.
    Same,
    /// `old_string` is empty (only allowed to create a file).
    EmptyOld,
    /// No occurrence; the diagnosis says where the closest region is and what differs.
    NotFound(String),
    /// Several occurrences without `replace_all`, at these lines.
    Ambiguous(Vec<usize>),
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Miss::Same => f.write_str("old_string and new_string are the same; there is nothing to change"),
            Miss::EmptyOld => f.write_str(
                "old_string is empty, but the file already has content; give the exact text to replace (or use Write to replace the whole file)",
            ),
            Miss::NotFound(diagnosis) => f.write_str(diagnosis),
            Miss::Ambiguous(lines) => {
                let list: Vec<String> = lines.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "old_string matches {} places (lines {}); add surrounding lines to make it unique, or set replace_all to true to change every one",
                    lines.len(),
                    list.join(", ")
                )
            }
        }
    }
}

/// Replaces `old` with `new` in `text` (every occurrence with `all`, else exactly one).
pub fn replace(text: &str, old: &str, new: &str, all: bool) -> Result<Replaced, Miss> {
    if old == new {
        return Err(Miss::Same);
    }
    if old.is_empty() {
        return Err(Miss::EmptyOld);
    }
    for (old, new) in variants(text, old, new) {
        let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
        let Some(&first) = starts.first() else { continue };
        if starts.len() > 1 && !all {
            return Err(Miss::Ambiguous(line_numbers(text, &starts)));
        }
        let text = if all { text.replace(old.as_str(), &new) } else { text.replacen(old.as_str(), &new, 1) };
        let first_line = text[..first].matches('\n').count() + 1;
        let span = new.matches('\n').count() + 1;
        return Ok(Replaced { text, count: starts.len(), first_line, span });
    }
    Err(Miss::NotFound(diagnose(text, old)))
}

/// The spellings of (old, new) to try: as given, then in the file's other line ending.
fn variants(text: &str, old: &str, new: &str) -> Vec<(String, String)> {
    let mut out = vec![(old.to_string(), new.to_string())];
    let to_lf = |s: &str| s.replace("\r\n", "\n");
    if text.contains("\r\n") && old.contains('\n') {
        let crlf = |s: &str| to_lf(s).replace('\n', "\r\n");
        out.push((crlf(old), crlf(new)));
    }
    if old.contains("\r\n") {
        out.push((to_lf(old), to_lf(new)));
    }
    out.dedup();
    out
}

/// 1-based line numbers of byte offsets (ascending).
fn line_numbers(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut pos = 0;
    starts
        .iter()
        .map(|&s| {
            line += text[pos..s].matches('\n').count();
            pos = s;
            line
        })
        .collect()
}

/// Explains why `old` is not in `text`: the closest region and how it differs.
fn diagnose(text: &str, old: &str) -> String {
    let old_lines: Vec<&str> = old.lines().map(|l| l.trim_end_matches('\r')).collect();
    if !old_lines.is_empty() && old_lines.iter().all(|l| has_line_number_prefix(l)) {
        return "old_string was not found: it seems to include the line-number prefixes from Read's output (like \
                `    12\\t`); remove them and keep only the text after the tab"
            .to_string();
    }
    let file_lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let Some(start) = closest_window(&file_lines, &old_lines) else {
        return "old_string was not found in the file, and no similar region exists; Read the file again to see its \
                current content, then copy the text to replace exactly"
            .to_string();
    };
    let end = (start + old_lines.len()).min(file_lines.len());
    let region = numbered(file_lines[start..end].iter().copied(), start + 1);
    let mut differences = Vec::new();
    for (i, (f, o)) in file_lines[start..end].iter().zip(&old_lines).enumerate() {
        if let Some(d) = difference(f, o) {
            differences.push(format!("line {}: {d}", start + i + 1));
        }
        if differences.len() == 5 {
            differences.push("…".to_string());
            break;
        }
    }
    if old_lines.len() > end - start {
        differences.push(format!("old_string has {} lines but the file ends after line {end}", old_lines.len()));
    }
    format!(
        "old_string was not found in the file. The closest match is at lines {}-{end}:\n{region}\nWhat differs: {}.\n\
         Copy the text exactly as Read shows it (without the line-number prefix) and retry.",
        start + 1,
        if differences.is_empty() { "the line breaks around it".to_string() } else { differences.join("; ") }
    )
}

fn has_line_number_prefix(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (t[digits..].starts_with('\t') || t[digits..].starts_with('→'))
}

/// The 0-based start of the window of `file` most like `old`, if any is alike enough.
fn closest_window(file: &[&str], old: &[&str]) -> Option<usize> {
    if file.is_empty() || old.is_empty() {
        return None;
    }
    let k = old.len().min(file.len());
    // Anchors: windows where some line matches once whitespace is ignored.
    let key = |s: &str| s.split_whitespace().collect::<String>();
    let old_keys: Vec<String> = old.iter().map(|l| key(l)).collect();
    let mut starts: Vec<usize> = Vec::new();
    for (j, line) in file.iter().enumerate() {
        let fk = key(line);
        if fk.is_empty() {
            continue;
        }
        for (i, ok) in old_keys.iter().enumerate() {
            if *ok == fk && j >= i {
                starts.push((j - i).min(file.len() - k));
            }
        }
        if starts.len() > 2_000 {
            break;
        }
    }
    if starts.is_empty() {
        // No line matches even loosely: rank windows by their first line's likeness.
        let first = truncate(old[0].trim(), 200);
        let mut ranked: Vec<(f64, usize)> = file
            .iter()
            .take(50_000)
            .enumerate()
            .map(|(j, l)| (strsim::normalized_levenshtein(truncate(l.trim(), 200), first), j.min(file.len() - k)))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        starts = ranked.into_iter().take(20).map(|(_, j)| j).collect();
    }
    starts.sort_unstable();
    starts.dedup();
    let score = |j: usize| -> f64 {
        old.iter()
            .zip(&file[j..j + k])
            .map(|(o, f)| strsim::normalized_levenshtein(truncate(f.trim(), 200), truncate(o.trim(), 200)))
            .sum::<f64>()
            / old.len() as f64
    };
    let (best, best_score) =
        starts.into_iter().map(|j| (j, score(j))).max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
    (best_score >= 0.5).then_some(best)
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// What differs between a file line and an old_string line, if anything.
fn difference(file: &str, old: &str) -> Option<String> {
    if file == old {
        return None;
    }
    let indent = |s: &str| s.len() - s.trim_start().len();
    if file.trim_end() == old.trim_end() {
        return Some("trailing whitespace differs".to_string());
    }
    if file.trim() == old.trim() {
        return Some(format!(
            "indentation differs (file: {}, old_string: {})",
            describe_indent(&file[..indent(file)]),
            describe_indent(&old[..indent(old)])
        ));
    }
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if squash(file) == squash(old) {
        return Some("whitespace inside the line differs".to_string());
    }
    if normalize_punctuation(file) == normalize_punctuation(old) {
        return Some("quote, dash or space characters differ (e.g. curly vs straight quotes)".to_string());
    }
    Some(format!("text differs (file: `{}`, old_string: `{}`)", truncate(file.trim(), 80), truncate(old.trim(), 80)))
}

fn describe_indent(ws: &str) -> String {
    if ws.is_empty() {
        return "no indentation".to_string();
    }
    let tabs = ws.matches('\t').count();
    let spaces = ws.matches(' ').count();
    match (tabs, spaces) {
        (0, n) => format!("{n} space{}", if n == 1 { "" } else { "s" }),
        (n, 0) => format!("{n} tab{}", if n == 1 { "" } else { "s" }),
        (t, s) => format!("{t} tab{} and {s} space{}", if t == 1 { "" } else { "s" }, if s == 1 { "" } else { "s" }),
    }
}

/// Folds Unicode dashes, quotes and spaces to their ASCII look-alikes.
pub fn normalize_punctuation(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_one_or_all() {
        let r = replace("a\nb\nc\n", "b", "B", false).unwrap();
        assert_eq!((r.text.as_str(), r.count, r.first_line, r.span), ("a\nB\nc\n", 1, 2, 1));
        let r = replace("x y x", "x", "z", true).unwrap();
        assert_eq!((r.text.as_str(), r.count), ("z y z", 2));
    }

    #[test]
    fn checks_come_in_order() {
        assert_eq!(replace("a", "a", "a", false), Err(Miss::Same));
        assert_eq!(replace("a", "", "b", false), Err(Miss::EmptyOld));
        assert_eq!(replace("x\ny\nx\nx", "x", "z", false), Err(Miss::Ambiguous(vec![1, 3, 4])));
    }

    #[test]
    fn line_endings_are_matched_normalized_and_kept() {
        let r = replace("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "1\n2\n", false).unwrap();
        assert_eq!(r.text, "1\r\n2\r\nthree\r\n");
        let r = replace("one\ntwo\n", "one\r\ntwo", "1\r\n2", false).unwrap();
        assert_eq!(r.text, "1\n2\n");
    }

    #[test]
    fn a_miss_shows_the_closest_region_and_what_differs() {
        let file = "fn main() {\n    let x = 1;\n    let y = 2;\n    println!(\"{x}\");\n}\n";
        let msg = replace(file, "  let x = 1;\n  let y = 3;", "z", false).unwrap_err().to_string();
        assert!(msg.starts_with("old_string was not found in the file. The closest match is at lines 2-3:\n"), "{msg}");
        assert!(msg.contains("     2\t    let x = 1;\n     3\t    let y = 2;"), "{msg}");
        assert!(msg.contains("line 2: indentation differs (file: 4 spaces, old_string: 2 spaces)"), "{msg}");
        assert!(msg.contains("line 3: text differs (file: `let y = 2;`, old_string: `let y = 3;`)"), "{msg}");

        let msg = replace("say \u{201C}hi\u{201D} now\n", "say \"hi\" now", "x", false).unwrap_err().to_string();
        assert!(msg.contains("quote, dash or space characters differ"), "{msg}");
        let msg = replace("let a = 1;   \n", "let a = 1;\nfoo", "x", false).unwrap_err().to_string();
        assert!(msg.contains("line 1: trailing whitespace differs"), "{msg}");
        let msg = replace("abc\n", "    12\tabc", "x", false).unwrap_err().to_string();
        assert!(msg.contains("line-number prefixes"), "{msg}");
        let msg = replace("completely\nunrelated\n", "zzz qqq www", "x", false).unwrap_err().to_string();
        assert!(msg.contains("no similar region exists"), "{msg}");
    }
}
