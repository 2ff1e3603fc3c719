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

mod flat;

pub use flat::{flatten, nesting_depth};

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
pub(super) fn tidy(text: &str) -> String {
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
