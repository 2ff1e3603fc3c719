//! The linear pass for pages the tree code must not see (nested too deep, or too slow): how
//! deep a page nests, measured without building a tree, and the page reduced to its text.

use super::{Converted, Extraction, tidy};

/// Elements that never contain others, or whose end tag may be left out (an unclosed one is
/// closed by the next, not nested in it): they add no depth.
const FLAT: [&str; 31] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "p", "li",
    "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot", "colgroup", "rt", "rp", "html",
    "head", "body",
];

/// How deeply `html`'s elements nest, by one pass over its tags (no tree). An estimate on
/// the high side for sloppy pages; exact for well-formed ones.
pub fn nesting_depth(html: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr(b'<', &bytes[i..]) {
        i += at + 1;
        let Some(tag) = Tag::at(html, i) else { continue };
        i = tag.end;
        match tag.kind {
            TagKind::Open(name) if name == "script" || name == "style" => {
                i = skip_raw(html, i, &name);
            }
            TagKind::Open(name) if !FLAT.contains(&name.as_str()) && !tag.self_closing => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            TagKind::Close(name) if !FLAT.contains(&name.as_str()) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The page's text by one linear pass: tags dropped (blocks become line breaks), script and
/// style skipped, entities decoded. Works on any page, however nested.
pub fn flatten(html: &str) -> Converted {
    let mut out = String::with_capacity(html.len() / 2);
    let mut title = None;
    let bytes = html.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let Some(at) = memchr(b'<', &bytes[i..]) else {
            push_text(&mut out, &html[i..]);
            break;
        };
        push_text(&mut out, &html[i..i + at]);
        i += at + 1;
        let Some(tag) = Tag::at(html, i) else {
            push_text(&mut out, "<");
            continue;
        };
        i = tag.end;
        let name = match &tag.kind {
            TagKind::Open(n) | TagKind::Close(n) => n.as_str(),
            TagKind::Other => continue,
        };
        if matches!(tag.kind, TagKind::Open(_)) && matches!(name, "script" | "style" | "title") {
            let end = skip_raw(html, i, name);
            if name == "title" && title.is_none() {
                let inner = &html[i..html[i..end].rfind("</").map_or(end, |p| i + p)];
                title = Some(decode_entities(inner).split_whitespace().collect::<Vec<_>>().join(" "));
            }
            i = end;
            continue;
        }
        if matches!(
            name,
            "p" | "div"
                | "br"
                | "li"
                | "tr"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "section"
                | "article"
                | "pre"
                | "blockquote"
                | "table"
                | "ul"
                | "ol"
        ) {
            out.push('\n');
        }
    }
    let text =
        tidy(&out.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n"));
    Converted { title: title.filter(|t| !t.is_empty()), text, extraction: Extraction::Flattened, notices: Vec::new() }
}

fn push_text(out: &mut String, text: &str) {
    if !text.is_empty() {
        out.push_str(&decode_entities(text));
    }
}

/// The common named entities and numeric references.
fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[..rest.len().min(12)].find(';');
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, end + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

enum TagKind {
    Open(String),
    Close(String),
    /// A comment, doctype or processing instruction.
    Other,
}

struct Tag {
    kind: TagKind,
    self_closing: bool,
    /// The byte after the tag's `>`.
    end: usize,
}

impl Tag {
    /// The tag whose `<` is just before `start`; `None` when `<` starts no tag (text).
    fn at(html: &str, start: usize) -> Option<Tag> {
        let rest = &html[start..];
        if let Some(comment) = rest.strip_prefix("!--") {
            let end = comment.find("-->").map_or(html.len(), |p| start + 3 + p + 3);
            return Some(Tag { kind: TagKind::Other, self_closing: false, end });
        }
        let first = *rest.as_bytes().first()?;
        let (closing, name_start) = match first {
            b'/' => (true, 1),
            b'!' | b'?' => {
                let end = rest.find('>').map_or(html.len(), |p| start + p + 1);
                return Some(Tag { kind: TagKind::Other, self_closing: false, end });
            }
            c if c.is_ascii_alphabetic() => (false, 0),
            _ => return None,
        };
        let name_len = rest[name_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
            .unwrap_or(rest.len() - name_start);
        let name = rest[name_start..name_start + name_len].to_ascii_lowercase();
        let end = tag_end(rest).map_or(html.len(), |p| start + p + 1);
        let self_closing = html[..end].ends_with("/>");
        let kind = if closing { TagKind::Close(name) } else { TagKind::Open(name) };
        Some(Tag { kind, self_closing, end })
    }
}

/// Where a tag's `>` is, skipping quoted attribute values.
fn tag_end(rest: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The byte after the end tag of raw-text element `name` that opened before `from`.
fn skip_raw(html: &str, from: usize, name: &str) -> usize {
    let close = format!("</{name}");
    let hay = &html.as_bytes()[from..];
    let needle = close.as_bytes();
    let found = hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle));
    match found {
        Some(p) => html[from + p..].find('>').map_or(html.len(), |q| from + p + q + 1),
        None => html.len(),
    }
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|b| *b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_real_nesting_only() {
        assert_eq!(nesting_depth("<div><div><span>x</span></div></div>"), 3);
        assert_eq!(nesting_depth("<p>a<p>b<p>c<br><img src=x>"), 0, "unclosed paragraphs do not nest");
        assert_eq!(nesting_depth("<script>if (a<b) { '<div>' }</script><div></div>"), 1);
        assert_eq!(nesting_depth(&"<div>".repeat(10_000)), 10_000);
        assert_eq!(nesting_depth("<!-- <div><div> --><br/><x-y/>"), 0);
    }

    #[test]
    fn flattening_keeps_the_text_and_its_lines() {
        let flat = flatten(
            "<html><head><title>T &amp; U</title><style>p{}</style></head><body><h1>Head</h1><p>One &lt;two&gt; &#x263A;</p><div>Three<br>Four</div></body></html>",
        );
        assert_eq!(flat.title.as_deref(), Some("T & U"));
        assert_eq!(flat.text, "Head\n\nOne <two> ☺\n\nThree\nFour");
    }
}
