//! What of a long page is shown: a window of it (`offset`, `max_chars`), or — when the
//! caller said what it wants (`prompt`) — its most relevant sections first.
//!
//! Relevance is BM25 over the page's sections (split at its headings, long sections cut at
//! paragraphs), with a section's heading counted three times. Nothing is paraphrased: the
//! sections come through as written, and those left out are listed by heading so the caller
//! can page to them.

use std::collections::HashMap;

/// Sections longer than this are cut at paragraphs into parts about this long.
const PART_CHARS: usize = 2_500;
/// BM25's term-frequency saturation and length normalization.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words that say nothing about what a page is about.
const STOPWORDS: [&str; 48] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "get", "has", "have", "how",
    "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "page", "please", "show", "tell", "that", "the",
    "their", "this", "to", "use", "was", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
];

/// A window of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The characters shown.
    pub text: String,
    /// Where they start, in characters.
    pub offset: usize,
    /// The text's length, in characters.
    pub total: usize,
    /// Where the next window starts, when there is more.
    pub next: Option<usize>,
}

/// Up to `max_chars` characters of `text` from `offset`, ending at a line break when one is
/// in the last half of the window.
pub fn window(text: &str, offset: usize, max_chars: usize) -> Window {
    let total = text.chars().count();
    let start = byte_at(text, offset.min(total));
    let rest = &text[start..];
    let cut = match rest.char_indices().nth(max_chars) {
        None => rest.len(),
        Some((end, _)) => {
            let half = rest[..end].char_indices().nth(max_chars / 2).map_or(0, |(i, _)| i);
            rest[half..end].rfind('\n').map_or(end, |nl| half + nl + 1)
        }
    };
    let shown = &rest[..cut];
    let shown_chars = shown.chars().count();
    let end = offset.min(total) + shown_chars;
    Window { text: shown.to_string(), offset: offset.min(total), total, next: (end < total).then_some(end) }
}

fn byte_at(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i)
}

/// A page's most relevant sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// The sections shown, most relevant first, as written.
    pub text: String,
    /// Their headings (or first words), in the order shown.
    pub shown: Vec<String>,
    /// The headings of the sections left out, in page order.
    pub skipped: Vec<String>,
}

struct Section {
    heading: String,
    body: String,
    order: usize,
}

/// The sections of `text` most relevant to `prompt` that fit in `budget` characters, most
/// relevant first; `None` when no section shares a word with the prompt.
pub fn rank(text: &str, prompt: &str, budget: usize) -> Option<Ranked> {
    let query: Vec<String> = words(prompt).filter(|w| !STOPWORDS.contains(&w.as_str())).collect();
    if query.is_empty() {
        return None;
    }
    let sections = sections(text);
    let docs: Vec<HashMap<String, usize>> = sections
        .iter()
        .map(|s| {
            let mut tf = HashMap::new();
            for w in words(&s.body) {
                *tf.entry(w).or_insert(0) += 1;
            }
            for w in words(&s.heading) {
                *tf.entry(w).or_insert(0) += 3;
            }
            tf
        })
        .collect();
    let lengths: Vec<f64> = docs.iter().map(|d| d.values().sum::<usize>() as f64).collect();
    let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
    let n = docs.len() as f64;
    let mut scored: Vec<(f64, usize)> = docs
        .iter()
        .enumerate()
        .map(|(i, tf)| {
            let score = query
                .iter()
                .map(|term| {
                    let df = docs.iter().filter(|d| d.contains_key(term)).count() as f64;
                    let f = *tf.get(term).unwrap_or(&0) as f64;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * lengths[i] / average.max(1.0)))
                })
                .sum::<f64>();
            (score, i)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    if scored.is_empty() {
        return None;
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut used = 0;
    let mut chosen = Vec::new();
    for (_, i) in &scored {
        let s = &sections[*i];
        let size = s.body.chars().count() + 2;
        if used + size <= budget {
            used += size;
            chosen.push(*i);
        }
    }
    if chosen.is_empty() {
        // The best section alone is over the budget: show its beginning.
        let best = &sections[scored[0].1];
        let cut = window(&best.body, 0, budget.saturating_sub(40).max(1));
        let text = format!("{}\n[… the rest of this section is cut]", cut.text.trim_end());
        let skipped = sections.iter().filter(|s| s.order != best.order).map(|s| s.heading.clone()).collect();
        return Some(Ranked { text, shown: vec![best.heading.clone()], skipped });
    }
    let text = chosen.iter().map(|i| sections[*i].body.trim_end()).collect::<Vec<_>>().join("\n\n");
    let shown = chosen.iter().map(|i| sections[*i].heading.clone()).collect();
    let skipped = sections.iter().filter(|s| !chosen.contains(&s.order)).map(|s| s.heading.clone()).collect();
    Some(Ranked { text, shown, skipped })
}

/// The lower-cased words of `text`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() > 1).map(str::to_lowercase)
}

/// `text` cut at its Markdown headings, long sections cut again at paragraphs.
fn sections(text: &str) -> Vec<Section> {
    let mut raw: Vec<(String, String)> = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        let heading = !in_code && line.starts_with('#') && line.trim_start_matches('#').starts_with(' ');
        if heading || raw.is_empty() {
            let title = if heading { line.trim().to_string() } else { String::new() };
            raw.push((title, String::new()));
        }
        if let Some((_, body)) = raw.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    let mut out = Vec::new();
    for (heading, body) in raw {
        if body.trim().is_empty() {
            continue;
        }
        let label = |part: &str| {
            if heading.is_empty() {
                let first: String = part.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
                format!("\"{first}…\"")
            } else {
                heading.clone()
            }
        };
        if body.chars().count() <= PART_CHARS {
            out.push(Section { heading: label(&body), body, order: out.len() });
            continue;
        }
        let mut part = String::new();
        let mut k = 0;
        for para in body.split("\n\n") {
            if !part.is_empty() && part.chars().count() + para.chars().count() > PART_CHARS {
                k += 1;
                let label = if heading.is_empty() { label(&part) } else { format!("{heading} (part {k})") };
                out.push(Section { heading: label, body: std::mem::take(&mut part), order: out.len() });
                // A later part shown on its own still says which section it belongs to.
                if !heading.is_empty() {
                    part.push_str(&format!("{heading} (continued)\n\n"));
                }
            }
            part.push_str(para);
            part.push_str("\n\n");
        }
        if !part.trim().is_empty() {
            k += 1;
            let heading = if heading.is_empty() { label(&part) } else { format!("{heading} (part {k})") };
            out.push(Section { heading, body: part, order: out.len() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_end_at_lines_and_say_where_to_go_on() {
        let text = "line one\nline two\nline three\n";
        let w = window(text, 0, 12);
        assert_eq!(w.text, "line one\n");
        assert_eq!(w.next, Some(9));
        let w = window(text, 9, 100);
        assert_eq!((w.text.as_str(), w.next), ("line two\nline three\n", None));
        let w = window("ééééé", 1, 2);
        assert_eq!((w.text.as_str(), w.offset, w.next, w.total), ("éé", 1, Some(3), 5));
        assert_eq!(window("abc", 10, 5).text, "");
    }

    #[test]
    fn the_sections_that_answer_the_prompt_come_first() {
        let mut page = String::from("# Guide\nIntro text about the product.\n\n");
        page.push_str("## Installation\nRun the installer with cargo install.\n\n");
        page.push_str("## Configuration\nSet the timeout in config.toml; the timeout is in seconds.\n\n");
        page.push_str("## License\nMIT or Apache.\n\n");
        let ranked = rank(&page, "how do I set the timeout?", 10_000).unwrap();
        assert_eq!(ranked.shown[0], "## Configuration");
        assert!(ranked.text.starts_with("## Configuration\nSet the timeout"), "{}", ranked.text);
        assert!(ranked.skipped.contains(&"## License".to_string()));
        // A tight budget keeps only what fits, best first.
        let tight = rank(&page, "timeout installer", 80).unwrap();
        assert_eq!(tight.shown, ["## Configuration"]);
        assert!(rank(&page, "the of and", 1000).is_none(), "stopwords alone rank nothing");
        assert!(rank(&page, "kubernetes", 1000).is_none());
    }

    #[test]
    fn long_sections_are_cut_at_paragraphs() {
        let para = "word ".repeat(200);
        let page = format!("## Big\n{para}\n\n{para}\n\n{para}\n\nneedle here\n");
        let s = sections(&page);
        assert!(
            s.len() >= 2 && s[0].heading == "## Big (part 1)",
            "{:?}",
            s.iter().map(|s| &s.heading).collect::<Vec<_>>()
        );
        let ranked = rank(&page, "needle", 1_500).unwrap();
        assert!(ranked.text.contains("needle here"));
    }
}
