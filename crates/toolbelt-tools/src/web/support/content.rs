//! A fetched page made readable: HTML as its readable part in Markdown (or text, or as it
//! is), JSON pretty-printed, text as is, a PDF as its text page by page, an image as an
//! image, anything else saved to a file the model can be pointed at.

use std::io::Write as _;

use base64::Engine as _;
use toolbelt_core::{ToolContext, ToolError, human_size};

use super::client::MAX_BODY;
use super::decode::decode;
use super::fetched::Page;
use super::html::{self, Extraction, Shape};
use crate::formats::encoding::{MAX_IMAGE_BYTES, image_mime, sniff};
use crate::formats::pdf;
use crate::process::spill::SpillTarget;

/// How a page is shown, as the caller asked (`format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// HTML's readable part as Markdown (the default).
    Markdown,
    /// HTML's readable part as plain text.
    Text,
    /// HTML as it is.
    Html,
}

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BodyKind {
    /// An HTML page.
    Html,
    /// Text (plain, Markdown, XML, CSS, code…).
    Text,
    /// JSON, pretty-printed.
    Json,
    /// A PDF, as its text.
    Pdf,
    /// An image, returned as an image.
    Image,
    /// Another kind of file, saved for the model to use by its path.
    File,
}

/// A body made readable.
#[derive(Debug, Clone)]
pub struct Readable {
    /// What it is.
    pub kind: BodyKind,
    /// Its text (for the text kinds).
    pub text: String,
    /// Its title, for HTML.
    pub title: Option<String>,
    /// How HTML's text was taken.
    pub extraction: Option<Extraction>,
    /// The encoding text was decoded from, when not UTF-8.
    pub encoding: Option<String>,
    /// A PDF's page count.
    pub pages: Option<usize>,
    /// An image: its type and base64 data.
    pub image: Option<(String, String)>,
    /// Where a file was saved.
    pub saved_to: Option<String>,
    /// What the reader should know.
    pub notices: Vec<String>,
}

impl Readable {
    fn of(kind: BodyKind, text: String) -> Self {
        Self {
            kind,
            text,
            title: None,
            extraction: None,
            encoding: None,
            pages: None,
            image: None,
            saved_to: None,
            notices: Vec::new(),
        }
    }
}

/// What `page`'s body is, from its `Content-Type` and its first bytes.
pub fn kind_of(page: &Page) -> BodyKind {
    let mime = page
        .content_type
        .as_deref()
        .and_then(|c| c.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let body = &page.body;
    if pdf::is_pdf(body) || mime == "application/pdf" {
        return BodyKind::Pdf;
    }
    if image_mime(body).is_some() {
        return BodyKind::Image;
    }
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => return BodyKind::Html,
        "application/json" => return BodyKind::Json,
        m if m.ends_with("+json") => return BodyKind::Json,
        m if m.starts_with("text/") || m.ends_with("+xml") || m.ends_with("/xml") || m.contains("javascript") => {
            return BodyKind::Text;
        }
        _ => {}
    }
    let head = &body[..body.len().min(1024)];
    let start = String::from_utf8_lossy(head).trim_start().to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return BodyKind::Html;
    }
    if content_inspector::inspect(head).is_text() {
        return BodyKind::Text;
    }
    BodyKind::File
}

/// `page`'s body made readable in `format`.
pub async fn readable(cx: &ToolContext, page: &Page, format: Format) -> Result<Readable, ToolError> {
    let kind = kind_of(page);
    let ct = page.content_type.as_deref();
    let cut_notice = format!("the body was cut at {} (the most the web tools read)", human_size(MAX_BODY as u64));
    let too_big = |what: &str| {
        ToolError::failed(format!(
            "{} is {what} larger than {}, the most the web tools read; nothing of it is shown",
            page.url,
            human_size(MAX_BODY as u64)
        ))
    };
    let mut out = match kind {
        BodyKind::Html => {
            let (text, encoding) = decode(&page.body, ct, true);
            let mut out = match format {
                Format::Html => Readable::of(BodyKind::Html, text),
                Format::Markdown | Format::Text => {
                    let shape = if format == Format::Text { Shape::Text } else { Shape::Markdown };
                    let converted = html::convert(text, page.url.clone(), shape).await;
                    let mut out = Readable::of(BodyKind::Html, converted.text);
                    out.title = converted.title;
                    out.extraction = Some(converted.extraction);
                    out.notices = converted.notices;
                    out
                }
            };
            out.encoding = (encoding != "UTF-8").then(|| encoding.to_string());
            out
        }
        BodyKind::Json => {
            let (text, _) = decode(&page.body, ct, false);
            let pretty = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok());
            match pretty {
                Some(pretty) => Readable::of(BodyKind::Json, pretty),
                None => {
                    let mut out = Readable::of(BodyKind::Json, text);
                    out.notices.push("the body is not valid JSON, so it is shown as sent".into());
                    out
                }
            }
        }
        BodyKind::Text => {
            let (text, encoding) = decode(&page.body, ct, false);
            let mut out = Readable::of(BodyKind::Text, text);
            out.encoding = (encoding != "UTF-8").then(|| encoding.to_string());
            out
        }
        BodyKind::Pdf => {
            if page.truncated {
                return Err(too_big("a PDF"));
            }
            let bytes = page.body.clone();
            let text = crate::blocking::run_blocking(cx, move |_| {
                pdf::text(bytes, pdf::Pages::All)
                    .map_err(|e| ToolError::failed(format!("the PDF's text cannot be read: {e}")))
            })
            .await
            .map_err(|e| ToolError::failed(format!("{}: {e}", page.url)))?;
            let mut out = Readable::of(BodyKind::Pdf, text.joined());
            out.pages = Some(text.total_pages);
            out
        }
        BodyKind::Image if !page.truncated && page.body.len() as u64 <= MAX_IMAGE_BYTES => {
            let mime = image_mime(&page.body).unwrap_or("image/png").to_string();
            let data = base64::engine::general_purpose::STANDARD.encode(&page.body);
            let mut out = Readable::of(BodyKind::Image, String::new());
            out.image = Some((mime, data));
            out
        }
        BodyKind::Image | BodyKind::File => {
            if page.truncated {
                return Err(too_big("a file"));
            }
            let path = save(cx, page)?;
            let mut out = Readable::of(BodyKind::File, String::new());
            out.notices.push(format!(
                "{} ({}) was saved to {path}",
                sniff(&page.body),
                human_size(page.body.len() as u64)
            ));
            out.saved_to = Some(path);
            out
        }
    };
    if page.truncated && matches!(out.kind, BodyKind::Html | BodyKind::Text | BodyKind::Json) {
        out.notices.push(cut_notice);
    }
    Ok(out)
}

/// Saves `page`'s body in the session's data directory (a read-only root of the session,
/// outside the project), named after the URL's last segment.
fn save(cx: &ToolContext, page: &Page) -> Result<String, ToolError> {
    let last = page.url.path_segments().and_then(|mut s| s.next_back()).filter(|s| !s.is_empty()).unwrap_or("download");
    let (stem, ext) = match last.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.len() <= 8 => (stem, ext),
        _ => (last, "bin"),
    };
    let (mut file, path) = SpillTarget::new(cx, "downloads", stem)
        .with_extension(ext)
        .create()
        .map_err(|e| ToolError::failed(format!("the file could not be saved: {e}")))?;
    file.write_all(&page.body).map_err(|e| ToolError::failed(format!("the file could not be saved: {e}")))?;
    Ok(path.display().to_string())
}
