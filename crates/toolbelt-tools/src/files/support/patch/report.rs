//! Saying exactly why a hunk did not apply: where the nearest candidate region is, which of
//! its lines is the first that differs, and how it differs.
//!
//! The candidate is found by voting: every hunk line that occurs in the file (compared at
//! the loosest level) votes for the start its position implies; the start with most votes
//! wins, ties going to the one nearest where the hunk was sought. That finds the region the
//! patch author had in mind even when a line was added, dropped or rewritten.

use std::collections::HashMap;

use super::doc::Doc;
use super::doc::loose;
use super::seek::{self, Miss};

/// A line shown in a message: cut when long, inside backticks.
fn quote(line: &str) -> String {
    const MAX: usize = 120;
    if line.chars().count() <= MAX {
        format!("`{line}`")
    } else {
        format!("`{}…`", line.chars().take(MAX).collect::<String>())
    }
}

/// "after line 12" or "in the file".
fn place_of(from: usize) -> String {
    if from == 0 { "in the file".to_string() } else { format!("after line {from}") }
}

/// Explains a miss. `old` is the hunk's old lines with their patch line numbers.
pub fn explain(doc: &Doc<'_>, miss: &Miss, old: &[(&str, usize)], end_of_file: bool) -> String {
    match miss {
        Miss::Anchor { anchor, from } => anchor_missing(doc, anchor, *from),
        Miss::Lines { from, anchored } => lines_missing(doc, old, *from, *anchored, end_of_file),
    }
}

fn anchor_missing(doc: &Doc<'_>, anchor: &str, from: usize) -> String {
    if from > 0
        && let Some(found) = seek::seek_anchor(doc, anchor, 0)
    {
        return format!(
            "its anchor `@@ {anchor}` is at line {}, before where it was sought ({}, where the previous hunk or anchor ended); \
             hunks must be in file order — reorder them",
            found.start + 1,
            place_of(from)
        );
    }
    let want = tokens(anchor);
    let score = |line: &str| {
        let have = tokens(line);
        want.iter()
            .map(|w| if have.contains(w) { 2 } else { usize::from(have.iter().any(|h| h.contains(w.as_str()))) })
            .sum::<usize>()
    };
    let best = (0..doc.len())
        .map(|i| (score(doc.line(i)), i))
        .filter(|(score, _)| *score > 0)
        .max_by_key(|&(score, i)| (score, i >= from, std::cmp::Reverse(i.abs_diff(from))));
    let hint = match best {
        Some((_, i)) => format!("the most similar line is line {}: {}", i + 1, quote(doc.line(i))),
        None => "no line of the file resembles it".to_string(),
    };
    format!(
        "its anchor `@@ {anchor}` was not found {}; {hint}. An anchor must be (part of) one line of the file, \
         such as a function signature; or use a bare `@@`",
        place_of(from)
    )
}

fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|t| t.len() > 1).map(|t| t.to_lowercase()).collect()
}

fn lines_missing(doc: &Doc<'_>, old: &[(&str, usize)], from: usize, anchored: bool, eof: bool) -> String {
    let n = old.len();
    let texts: Vec<&str> = old.iter().map(|(t, _)| *t).collect();
    let where_sought = if anchored {
        format!("after its @@ anchor (line {from})")
    } else if from == 0 {
        "in the file".to_string()
    } else {
        format!("after line {from}, where the previous hunk ended")
    };
    // The lines are all there, just not where they may go.
    if let Some(found) = seek::seek(doc, &texts, 0, false) {
        let (a, b) = (found.start + 1, found.start + n);
        if eof && found.start >= from {
            return format!(
                "its {n} lines are at lines {a}-{b}, but the hunk is marked `*** End of File` and the file has {} lines; \
                 remove `*** End of File`, or extend the hunk to the end of the file",
                doc.len()
            );
        }
        return format!(
            "its {n} lines are at lines {a}-{b}, which is before where this hunk was sought ({where_sought}); \
             hunks must be in file order, each after the previous one and after its @@ anchor — reorder them"
        );
    }
    let Some(start) = candidate(doc, &texts, from) else {
        let advice = if doc.len() == 0 { "the file is empty".to_string() } else { "check the file path".to_string() };
        return format!(
            "none of its {n} context and removed lines occur in the file (first: {}, patch line {}); {advice}, or Read the file again",
            quote(texts[0]),
            old[0].1
        );
    };
    let at = |k: usize| {
        let j = start + k as isize;
        (j >= 0 && (j as usize) < doc.len()).then_some(j as usize)
    };
    let agree = (0..n).filter(|&k| at(k).is_some_and(|j| doc.loose(j) == loose(texts[k]))).count();
    let first = (0..n).find(|&k| at(k).is_none_or(|j| doc.loose(j) != loose(texts[k]))).unwrap_or(0);
    let (lo, hi) = (start.max(0) + 1, (start + n as isize).min(doc.len() as isize).max(start.max(0) + 1));
    let mut out = format!(
        "its lines were not found {where_sought}. Nearest candidate: lines {lo}-{hi} of the file \
         ({agree} of {n} lines agree); the first that differs:"
    );
    let (pat, patch_line) = old[first];
    match at(first) {
        Some(j) => {
            out.push_str(&format!(
                "\n    line {} in the file: {}\n    vs patch line {patch_line}:  {}\n    ({})",
                j + 1,
                quote(doc.line(j)),
                quote(pat),
                difference(doc, &texts, first, j)
            ));
        }
        None => {
            let edge =
                if start + (first as isize) < 0 { "before the start of the file" } else { "past the end of the file" };
            out.push_str(&format!(
                "\n    patch line {patch_line}: {} would be {edge} (the file has {} lines)",
                quote(pat),
                doc.len()
            ));
        }
    }
    if start >= 0 && (start as usize) < from {
        out.push_str(&format!(
            "\n    (this candidate starts before where the hunk was sought, {where_sought}; hunks must be in file order)"
        ));
    }
    out
}

/// The start (possibly before the file) with the most hunk lines in place.
fn candidate(doc: &Doc<'_>, texts: &[&str], from: usize) -> Option<isize> {
    let mut index: HashMap<&str, Vec<usize>> = HashMap::new();
    for j in 0..doc.len() {
        let l = doc.loose(j);
        if !l.is_empty() {
            index.entry(l).or_default().push(j);
        }
    }
    let mut votes: HashMap<isize, usize> = HashMap::new();
    for (k, t) in texts.iter().enumerate() {
        let key = loose(t);
        for &j in index.get(key.as_str()).map(Vec::as_slice).unwrap_or_default() {
            *votes.entry(j as isize - k as isize).or_default() += 1;
        }
    }
    let from = from as isize;
    votes.into_iter().max_by_key(|&(s, v)| (v, s >= from, std::cmp::Reverse(s.abs_diff(from)))).map(|(s, _)| s)
}

/// What differs between hunk line `k` and file line `j`.
fn difference(doc: &Doc<'_>, texts: &[&str], k: usize, j: usize) -> String {
    let same = |a: &str, b: &str| loose(a) == loose(b);
    if texts.get(k + 1).is_some_and(|next| same(next, doc.line(j))) {
        return format!("the patch has {} here, which the file does not have", quote(texts[k]));
    }
    // The patch's line is just below or (when the rest of the hunk lines up after it) just
    // above: the file has a line here the patch does not.
    if (j + 1 < doc.len() && same(texts[k], doc.line(j + 1))) || (j > 0 && same(texts[k], doc.line(j - 1))) {
        return format!("the file has an extra line {} ({}) here that the patch leaves out", j + 1, quote(doc.line(j)));
    }
    let (file, pat) = (doc.line(j), texts[k]);
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    if squeeze(file) == squeeze(pat) {
        return "they differ only in whitespace inside the line".to_string();
    }
    if file.to_lowercase() == pat.to_lowercase() {
        return "they differ only in letter case".to_string();
    }
    let (f, p): (Vec<char>, Vec<char>) = (file.chars().collect(), pat.chars().collect());
    let col = f.iter().zip(&p).take_while(|(a, b)| a == b).count();
    let piece = |s: &[char]| {
        let rest: String = s.iter().skip(col).take(20).collect();
        if rest.is_empty() { "end of line".to_string() } else { format!("`{rest}`") }
    };
    format!("they first differ at column {}: the file has {}, the patch {}", col + 1, piece(&f), piece(&p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::support::patch::parse::{FileOp, Hunk, parse};

    fn hunk(body: &str) -> Hunk {
        let patch = format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n");
        match parse(&patch).unwrap().ops.remove(0) {
            FileOp::Update { mut hunks, .. } => hunks.remove(0),
            _ => unreachable!(),
        }
    }

    fn why(text: &str, body: &str, from: usize) -> String {
        let doc = Doc::new(text);
        let h = hunk(body);
        let miss = seek::place(&doc, &h, from).unwrap_err();
        explain(&doc, &miss, &h.old(), h.end_of_file)
    }

    #[test]
    fn names_the_first_differing_line_of_the_nearest_region() {
        let text = "fn a() {\n    let x = 1;\n    let y = 2;\n    x + y\n}\n";
        let msg = why(text, "@@\n fn a() {\n-    let x = 2;\n+    let x = 3;\n     let y = 2;\n", 0);
        assert!(msg.contains("Nearest candidate: lines 1-3"), "{msg}");
        assert!(msg.contains("(2 of 3 lines agree)"), "{msg}");
        assert!(msg.contains("line 2 in the file: `    let x = 1;`\n    vs patch line 5:  `    let x = 2;`"), "{msg}");
        assert!(msg.contains("column 13: the file has `1;`, the patch `2;`"), "{msg}");
    }

    #[test]
    fn extra_and_missing_lines() {
        let text = "a\nb\nc\nd\n";
        assert!(why(text, "@@\n a\n c\n-d\n", 0).contains("the file has an extra line 2 (`b`) here"));
        assert!(why(text, "@@\n a\n b\n x\n-c\n", 0).contains("the patch has `x` here, which the file does not have"));
        assert!(why(text, "@@\n a\n-B  x\n", 0).contains("they first differ at column 1"));
        assert!(why("let  x = 1;\nz\n", "@@\n-let x = 1;\n z\n", 0).contains("only in whitespace inside"));
    }

    #[test]
    fn order_eof_and_anchor_problems() {
        let text = "a\nb\nc\nd\n";
        assert!(why(text, "@@\n-a\n", 2).contains("lines 1-1, which is before where this hunk was sought"));
        assert!(
            why(text, "@@\n-b\n*** End of File\n", 0).contains("marked `*** End of File` and the file has 4 lines")
        );
        assert!(why(text, "@@\n-zzz\n+y\n", 0).contains("none of its 1 context and removed lines occur"));
        let msg = why("fn alpha() {}\nfn beta_gamma() {}\n", "@@ fn beta()\n-x\n", 0);
        assert!(msg.contains("the most similar line is line 2: `fn beta_gamma() {}`"), "{msg}");
        assert!(why(text, "@@ c\n-a\n", 3).contains("anchor `@@ c` is at line 3, before"));
    }
}
