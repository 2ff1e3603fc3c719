//! What `Read` shows of files that are not lines of text: images, as images, and PDFs, as
//! their text page by page.

use std::time::SystemTime;

use base64::Engine as _;
use toolbelt_core::{ToolContext, ToolError, human_size};

use crate::files::support::change::read_bytes;
use crate::files::support::ledger::{FileLedger, FileState};
use crate::files::support::read_output::{ImageInfo, MAX_IMAGE_BYTES, PdfInfo, ReadOutput};
use crate::formats::pdf::{self, Pages, PdfError};
use crate::fs::roots::{Located, OpenRoots};

/// The largest PDF read, in bytes (the whole file is parsed).
pub const MAX_PDF_BYTES: u64 = 100 * 1024 * 1024;

/// An image file as an image, when it is small enough to return.
pub fn image(
    ws: &OpenRoots,
    cx: &ToolContext,
    real: &Located,
    name: String,
    mime: &str,
    size: u64,
    mtime: Option<SystemTime>,
) -> Result<ReadOutput, ToolError> {
    if size > MAX_IMAGE_BYTES {
        return Err(ToolError::failed(format!(
            "{name} is an image of {}, over the {} limit for returning images; make a smaller copy first (e.g. \
             `convert {name} -resize 50% small.png`) and read that",
            human_size(size),
            human_size(MAX_IMAGE_BYTES)
        )));
    }
    let bytes = read_bytes(ws, real)?;
    FileLedger::record(cx, &real.abs, FileState::of(&bytes, mtime));
    let dims = imagesize::blob_size(&bytes).ok();
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let info = ImageInfo { mime_type: mime.to_string(), width: dims.map(|d| d.width), height: dims.map(|d| d.height) };
    Ok(ReadOutput::image(name, size, info, data))
}

/// A PDF as its text: the `pages` selected, or every page of a short document.
pub fn pdf(
    ws: &OpenRoots,
    cx: &ToolContext,
    real: &Located,
    name: String,
    pages: Option<&str>,
    size: u64,
    mtime: Option<SystemTime>,
) -> Result<ReadOutput, ToolError> {
    let failed = |e: PdfError| ToolError::failed(format!("{name}: {e}"));
    let wanted = match pdf::selection(pages).map_err(failed)? {
        Some(set) => Pages::These(set),
        None => Pages::AllIfFew,
    };
    if size > MAX_PDF_BYTES {
        return Err(ToolError::failed(format!(
            "{name} is a PDF of {}, over the {} Read parses; extract its text with a command (`pdftotext -f 1 -l 5 \
             {name} -`) instead",
            human_size(size),
            human_size(MAX_PDF_BYTES)
        )));
    }
    let bytes = read_bytes(ws, real)?;
    FileLedger::record(cx, &real.abs, FileState::of(&bytes, mtime));
    let text = pdf::text(bytes, wanted).map_err(failed)?;
    let info = PdfInfo { total_pages: text.total_pages, pages: text.pages.iter().map(|(n, _)| *n).collect() };
    let body = if text.pages.is_empty() { "(The PDF has no pages.)".to_string() } else { text.joined() };
    Ok(ReadOutput::pdf(name, size, info, body))
}
