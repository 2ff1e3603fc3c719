//! HTML to the readable part of the page, as Markdown or plain text.
//!
//! The page is parsed once (html5ever, through `dom_query`); scripts, styles, navigation,
//! headers, footers, sidebars, forms and the usual boilerplate (cookie banners, share
//! buttons, "related" boxes) are dropped; links and images are made absolute. Then the
//! readable part is taken: the page's own `<main>` (or `[role=main]`, or its one `<article>`)
//! when it has one with enough text, else the part Mozilla's Readability algorithm picks
//! (`dom_smoothie`; on a page over [`DENSE_ABOVE`] bytes, its scoring in one pass,
//! [`super::dense`]), else the cleaned body. That part becomes Markdown with headings, links,
//! lists, tables and code blocks kept.
//!
//! A hostile page can make tree code slow or deep: the conversion runs on a thread of its
//! own with a large stack, on at most [`MAX_HTML`] bytes, within [`DEADLINE`]; a page nested
//! deeper than [`MAX_DEPTH`] (measured by a linear scan before any tree is built) or one
//! that runs out of time is reduced to its text by a linear pass instead ([`flatten`]).

use std::time::Duration;

use dom_query::Document;
use dom_smoothie::{Config, Readability, TextMode};
use url::Url;

/// HTML bytes converted at most; the rest of a larger page is left out, with a notice.
pub const MAX_HTML: usize = 5 * 1024 * 1024;
/// Nesting deeper than this is not given to the tree code.
pub const MAX_DEPTH: usize = 512;
/// How long a conversion may take before the page is flattened instead.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// The converter thread's stack.
const STACK: usize = 256 * 1024 * 1024;
/// Pages with more HTML than this are read with one pass of Readability's scoring
/// ([`super::dense`]) instead of the whole algorithm, which is quadratic in places.
const DENSE_ABOVE: usize = 256 * 1024;
/// Less text than this in `<main>` means the page's own marking is not to be trusted.
const MIN_MAIN_CHARS: usize = 200;

/// Elements that are never the content.
const BOILERPLATE_TAGS: [&str; 19] = [
    "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "form", "button", "input",
    "select", "textarea", "nav", "header", "footer", "aside", "dialog",
];

/// `role` values of elements that are never the content.
const BOILERPLATE_ROLES: [&str; 6] = ["navigation", "banner", "contentinfo", "complementary", "search", "dialog"];

/// Class and id fragments of boilerplate blocks (never on `html`, `body`, `main` or `article`).
const BOILERPLATE_NAMES: [&str; 18] = [
    "cookie",
    "consent",
    "banner",
    "sidebar",
    "breadcrumb",
    "share",
    "social",
    "newsletter",
    "subscribe",
    "popup",
    "modal",
    "advert",
    "sponsor",
    "promo",
    "related",
    "comments",
    "menu",
    "skip-link",
];

/// What a page is shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Markdown.
    Markdown,
    /// Plain text.
    Text,
}

/// How the text was taken from the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Extraction {
    /// The page's own main content element.
    Main,
    /// The part that reads as the page's body (Mozilla's Readability algorithm; on pages over
    /// 256 KiB, its scoring in one pass).
    Readable,
    /// The whole page, boilerplate removed.
    Page,
    /// The page's text by a linear pass (nested too deeply, or too slow to convert).
    Flattened,
}

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The page's title, when it has one.
    pub title: Option<String>,
    /// The content.
    pub text: String,
    /// How it was taken.
    pub extraction: Extraction,
    /// What the reader should know (cut, flattened).
    pub notices: Vec<String>,
}

/// Converts `html` (from `url`) to `shape`, on a thread of its own within [`DEADLINE`].
pub async fn convert(html: String, url: Url, shape: Shape) -> Converted {
    let mut notices = Vec::new();
    let mut html = html;
    if html.len() > MAX_HTML {
        let mut cut = MAX_HTML;
        while !html.is_char_boundary(cut) {
            cut -= 1;
        }
        html.truncate(cut);
        notices.push(format!(
            "the page's HTML was cut at {} before conversion",
            toolbelt_core::human_size(MAX_HTML as u64)
        ));
    }
    let depth = nesting_depth(&html);
    if depth > MAX_DEPTH {
        let mut flat = flatten(&html);
        flat.notices.insert(0, format!("the page nests {depth} levels deep, so only its text is shown"));
        flat.notices.extend(notices);
        return flat;
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    // Shared with the converter thread, not copied: the fallback below needs it too.
    let html = std::sync::Arc::new(html);
    let source = std::sync::Arc::clone(&html);
    let spawned = std::thread::Builder::new().name("toolbelt-html".into()).stack_size(STACK).spawn(move || {
        let converted = std::panic::catch_unwind(|| tree_convert(&source, &url, shape));
        drop(source);
        let _ = tx.send(converted);
    });
    let failed = match spawned {
        Err(_) => "the page could not be converted, so only its text is shown".to_string(),
        Ok(_) => match tokio::time::timeout(DEADLINE, rx).await {
            Ok(Ok(Ok(mut converted))) => {
                converted.notices.extend(notices);
                return converted;
            }
            Ok(_) => "the page could not be converted, so only its text is shown".to_string(),
            // The thread is left to finish on its own; its result is dropped.
            Err(_) => format!("converting the page took over {} s, so only its text is shown", DEADLINE.as_secs()),
        },
    };
    let mut flat = flatten(&html);
    flat.notices.insert(0, failed);
    flat.notices.extend(notices);
    flat
}

/// The conversion proper, on the converter thread.
fn tree_convert(html: &str, url: &Url, shape: Shape) -> Converted {
    let (doc, title) = cleaned(html, url);
    let render = |node: &dom_query::NodeRef<'_>| {
        tidy(&match shape {
            Shape::Markdown => node.md(None),
            Shape::Text => node.formatted_text(),
        })
    };
    let main = doc.select("main, [role=main]");
    let main = if main.length() == 1 { main } else { doc.select("article") };
    if main.length() == 1
        && let Some(node) = main.nodes().first()
    {
        let text = render(node);
        if text.chars().nth(MIN_MAIN_CHARS).is_some() {
            return Converted { title, text, extraction: Extraction::Main, notices: Vec::new() };
        }
    }
    if html.len() > DENSE_ABOVE {
        // The full algorithm matches selectors over and over: on a large page, its scoring
        // in one pass instead.
        let body = super::dense::body(&doc);
        let text = body.iter().map(render).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n");
        if text.chars().nth(MIN_MAIN_CHARS).is_some() {
            return Converted { title, text, extraction: Extraction::Readable, notices: Vec::new() };
        }
        return whole_page(html, url, title, &render);
    }
    let mode = match shape {
        Shape::Markdown => TextMode::Markdown,
        Shape::Text => TextMode::Formatted,
    };
    let config = Config { text_mode: mode, ..Config::default() };
    let readable = Readability::with_document(doc, Some(url.as_str()), Some(config)).and_then(|mut r| r.parse());
    match readable {
        Ok(article) if article.text_content.trim().chars().nth(MIN_MAIN_CHARS).is_some() => {
            let title = title.or_else(|| Some(article.title.clone()).filter(|t| !t.trim().is_empty()));
            Converted {
                title,
                text: tidy(&article.text_content),
                extraction: Extraction::Readable,
                notices: Vec::new(),
            }
        }
        // Readability took the document; the whole page is rare enough to parse again.
        _ => whole_page(html, url, title, &render),
    }
}

/// The whole page, boilerplate removed.
fn whole_page(
    html: &str,
    url: &Url,
    title: Option<String>,
    render: &dyn Fn(&dom_query::NodeRef<'_>) -> String,
) -> Converted {
    let (doc, _) = cleaned(html, url);
    let body = doc.select("body");
    let text = body.nodes().first().map(render).unwrap_or_else(|| tidy(&doc.md(None)));
    Converted { title, text, extraction: Extraction::Page, notices: Vec::new() }
}

/// `html` parsed, its boilerplate removed and its links made absolute against `url`; and
/// its title.
fn cleaned(html: &str, url: &Url) -> (Document, Option<String>) {
    let doc = Document::from(html);
    let title = title_of(&doc);
    // One walk over the elements, judging each by its name and attributes (selectors over a
    // large page cost a walk each).
    let doomed: Vec<dom_query::NodeRef<'_>> = doc.root().descendants_it().filter(is_boilerplate).collect();
    for node in doomed {
        node.remove_from_parent();
    }
    absolutize(&doc, url);
    (doc, title)
}

/// Whether `node` is an element that is never the content.
fn is_boilerplate(node: &dom_query::NodeRef<'_>) -> bool {
    let Some(el) = node.element_ref() else { return false };
    let tag: &str = &el.name.local;
    if BOILERPLATE_TAGS.contains(&tag) {
        return true;
    }
    let keeps_names = matches!(tag, "html" | "body" | "main" | "article");
    el.attrs.iter().any(|attr| {
        let value: &str = &attr.value;
        match &*attr.name.local {
            "hidden" => true,
            "aria-hidden" => value.eq_ignore_ascii_case("true"),
            "role" => BOILERPLATE_ROLES.iter().any(|r| value.eq_ignore_ascii_case(r)),
            "class" | "id" if !keeps_names => {
                let value = value.to_ascii_lowercase();
                BOILERPLATE_NAMES.iter().any(|n| value.contains(n))
            }
            _ => false,
        }
    })
}

/// The page's `<title>`, else its first `<h1>`.
fn title_of(doc: &Document) -> Option<String> {
    let text = |sel: &str| {
        let t = doc.select(sel).first().text().split_whitespace().collect::<Vec<_>>().join(" ");
        (!t.is_empty()).then_some(t)
    };
    text("head title").or_else(|| text("h1"))
}

/// Links and images made absolute against the page's URL; `javascript:` links dropped.
fn absolutize(doc: &Document, base: &Url) {
    for (sel, attr) in [("a[href]", "href"), ("img[src]", "src")] {
        for node in doc.select(sel).nodes() {
            let Some(value) = node.attr(attr) else { continue };
            match base.join(value.trim()) {
                Ok(abs) if matches!(abs.scheme(), "http" | "https" | "mailto") => node.set_attr(attr, abs.as_str()),
                _ => node.remove_attr(attr),
            }
        }
    }
}

/// Blank lines squeezed to one, trailing spaces dropped.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

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
