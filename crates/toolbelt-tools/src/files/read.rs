//! `Read`: a file's lines, numbered like `cat -n`, an image as an image, a notebook as cells.
//!
//! Text in any encoding the codecs know is shown as text (and noted when not UTF-8); binary
//! files are refused with their type and size; directories are refused with a pointer to
//! ListDir. Files up to [`WHOLE_FILE_LIMIT`] are decoded whole; larger ones are streamed, so
//! reading a slice of a multi-gigabyte file keeps memory bounded. Every read records the
//! file's content hash in the session ledger, which Write and Edit check.

use std::io::Read as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec, human_size, thousands};

use crate::blocking::run_blocking;

use crate::files::support::change::{numbered, shown};
use crate::files::support::ledger::{FileLedger, FileState};
use crate::files::support::roots::{OpenRoots, absolute, io_error};
use crate::files::support::{encoding, pdf, read_media};

/// Lines shown when no limit is given.
pub const DEFAULT_LIMIT: usize = 2_000;
/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2_000;
/// Files up to this size are decoded whole (every encoding); larger ones are streamed.
pub const WHOLE_FILE_LIMIT: u64 = 32 * 1024 * 1024;
/// Largest image returned as image content (5 MB once base64-encoded).
pub const MAX_IMAGE_BYTES: u64 = 3_750_000;

/// Input of `Read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The file to read: an absolute path, or a path relative to the working directory.
    pub file_path: String,
    /// The line number to start reading from (1 is the first line). Use it with `limit` for
    /// files too long to read at once.
    pub offset: Option<u64>,
    /// How many lines to read (default 2,000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// For a PDF: the pages to read, as `3`, `1-5` or `1-3,7`. Needed for a PDF of more than
    /// 10 pages; at most 20 pages per call.
    pub pages: Option<String>,
}

/// The `Read` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Read;

/// The model-facing description, its numbers from the constants the behaviour uses.
fn description() -> String {
    format!(
        "Reads a file from the local filesystem. `file_path` may be absolute or relative to the working directory. \
         By default it reads up to {lines} lines from the start; for long files give `offset` (the line to start at, \
         1-based) and `limit`. Output is numbered like `cat -n`: the line number, a tab, then the line. Lines longer \
         than {chars} characters are cut. Text in UTF-8, UTF-16 (with BOM) and legacy encodings is shown as text. \
         Images (PNG, JPEG, GIF, WebP) are returned as images; Jupyter notebooks (.ipynb) as cells with their \
         outputs; PDFs as their text, page by page (a PDF of more than {pdf_whole} pages needs `pages`, e.g. \
         \"1-5\", at most {pdf_max} per call). Other binary files and directories are refused (use ListDir for \
         directories). Read a file before editing or overwriting it.",
        lines = thousands(DEFAULT_LIMIT),
        chars = thousands(MAX_LINE_CHARS),
        pdf_whole = pdf::WHOLE_MAX_PAGES,
        pdf_max = pdf::MAX_PAGES_PER_CALL,
    )
}

/// What `Read` returns. The numbered lines (or cells, or the image) go to the model as
/// content; the structured result says what was shown of what.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadOutput {
    /// The file, as results name it (relative to the working directory when inside it).
    pub file_path: String,
    /// What the file was read as.
    #[serde(rename = "type")]
    pub kind: ReadKind,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The first line shown (1-based), for text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    /// How many lines were shown, for text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_lines: Option<usize>,
    /// How many lines the file has, for text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<usize>,
    /// The encoding the text was decoded from, when it is not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// The image's type and size in pixels, for images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageInfo>,
    /// The pages read and how many there are, for PDFs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf: Option<PdfInfo>,
    /// What the model reads: numbered lines or rendered cells.
    #[serde(skip)]
    pub(crate) body: String,
    /// Base64 of the image, for images.
    #[serde(skip)]
    pub(crate) image_data: Option<String>,
    /// Whether the file was streamed (too large to decode whole), which Edit cannot take.
    #[serde(skip)]
    pub(crate) streamed: bool,
}

/// What a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadKind {
    /// Lines of text.
    Text,
    /// A Jupyter notebook, shown as cells.
    Notebook,
    /// An image, returned as an image.
    Image,
    /// A PDF, shown as its text.
    Pdf,
}

/// Which pages of a PDF were read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PdfInfo {
    /// Pages the document has.
    pub total_pages: usize,
    /// The pages read (1-based), in order.
    pub pages: Vec<usize>,
}

/// An image's type and dimensions.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImageInfo {
    /// `image/png`, `image/jpeg`, …
    pub mime_type: String,
    /// Width in pixels, when the header says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<usize>,
    /// Height in pixels, when the header says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<usize>,
}

impl ReadOutput {
    /// A result of `kind` with nothing about lines, encoding or image yet.
    fn of(file_path: String, kind: ReadKind, bytes: u64, body: String) -> Self {
        Self {
            file_path,
            kind,
            bytes,
            start_line: None,
            num_lines: None,
            total_lines: None,
            encoding: None,
            image: None,
            pdf: None,
            body,
            image_data: None,
            streamed: false,
        }
    }

    /// A window of lines of a text file: `lines` are the shown lines, already cut.
    pub(crate) fn text(file_path: String, bytes: u64, start: usize, lines: &[&str], total: usize) -> Self {
        let body = if lines.is_empty() { String::new() } else { numbered(lines.iter().copied(), start) };
        Self {
            start_line: (total > 0).then_some(start),
            num_lines: Some(lines.len()),
            total_lines: Some(total),
            ..Self::of(file_path, ReadKind::Text, bytes, body)
        }
    }

    /// A notebook, rendered as cells.
    fn notebook(file_path: String, bytes: u64, cells: String) -> Self {
        Self::of(file_path, ReadKind::Notebook, bytes, cells)
    }

    /// A PDF's text, with the pages read.
    pub(crate) fn pdf(file_path: String, bytes: u64, info: PdfInfo, text: String) -> Self {
        Self { pdf: Some(info), ..Self::of(file_path, ReadKind::Pdf, bytes, text) }
    }

    /// An image and its base64 data.
    pub(crate) fn image(file_path: String, bytes: u64, image: ImageInfo, data: String) -> Self {
        Self {
            image: Some(image),
            image_data: Some(data),
            ..Self::of(file_path, ReadKind::Image, bytes, String::new())
        }
    }
}

impl Render for ReadOutput {
    fn render(&self) -> Vec<Content> {
        let name = &self.file_path;
        let mut text = match (self.kind, self.total_lines) {
            (ReadKind::Text, Some(0)) => return vec![Content::text(format!("({name} exists but is empty.)"))],
            _ => self.body.clone(),
        };
        if let (Some(start), Some(shown), Some(total)) = (self.start_line, self.num_lines, self.total_lines) {
            let shown_to = start - 1 + shown;
            if shown_to < total {
                text.push_str(&format!(
                    "\n\n(Showing lines {start}-{shown_to} of {total}. Continue with offset={} to read more.)",
                    shown_to + 1
                ));
            }
        }
        if let Some(pdf) = &self.pdf {
            let (first, last) = (pdf.pages.first().copied().unwrap_or(0), pdf.pages.last().copied().unwrap_or(0));
            if last < pdf.total_pages || first > 1 {
                text.push_str(&format!(
                    "\n\n(Pages {first}-{last} of {}. Read others with pages, e.g. pages: \"{}-{}\".)",
                    pdf.total_pages,
                    last + 1,
                    (last + pdf::MAX_PAGES_PER_CALL).min(pdf.total_pages).max(last + 1)
                ));
            }
        }
        if let Some(encoding) = &self.encoding {
            if self.streamed {
                text.push_str(&format!("\n\n(Decoded as {encoding}.)"));
            } else {
                text.push_str(&format!("\n\n(Decoded as {encoding}; Edit and Write keep that encoding.)"));
            }
        }
        if let (Some(data), Some(image)) = (&self.image_data, &self.image) {
            let dims = match (image.width, image.height) {
                (Some(w), Some(h)) => format!(", {w}×{h}"),
                _ => String::new(),
            };
            let caption = format!("Image {name} ({}{dims}, {})", image.mime_type, human_size(self.bytes));
            return vec![
                Content::text(caption),
                Content::Image { data: data.clone(), mime_type: image.mime_type.clone() },
            ];
        }
        vec![Content::text(text)]
    }
}

impl Tool for Read {
    type Input = ReadInput;
    type Output = ReadOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Read", description())
            .title("Read a file")
            .aliases(["read_file", "file_read", "view"])
            .param_alias("path", "file_path")
            .param_alias("filePath", "file_path")
            .category(Category::Files)
            .tags(["fs", "read"])
            .read_only()
            .search_hint("read view open show file contents lines cat image notebook")
    }

    fn access(&self, input: &ReadInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().reads(absolute(cx, &input.file_path)))
    }

    async fn call(&self, input: ReadInput, cx: ToolContext) -> Result<ReadOutput, ToolError> {
        // A small file is read right here: handing a read of a few kilobytes to the blocking
        // pool costs two thread wake-ups, more than the read itself. (The size only chooses
        // the thread; confinement still happens when the file is opened.)
        let small =
            std::fs::metadata(absolute(&cx, &input.file_path)).is_ok_and(|m| m.is_file() && m.len() <= INLINE_MAX);
        if small { read(&input, &cx) } else { run_blocking(&cx, move |cx| read(&input, cx)).await }
    }
}

/// Files up to this size are read on the calling thread.
const INLINE_MAX: u64 = 64 * 1024;

fn read(input: &ReadInput, cx: &ToolContext) -> Result<ReadOutput, ToolError> {
    let abs = absolute(cx, &input.file_path);
    let ws = OpenRoots::open_for_reading(cx)?;
    let loc = ws.locate(&abs)?;
    let real = ws.real(&loc)?;
    let meta = ws.metadata(&real)?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is a directory, not a file; use ListDir to see what it contains",
            abs.display()
        )));
    }
    let mtime = meta.modified().ok().map(|t| t.into_std());
    let size = meta.len();
    let name = shown(cx, &abs);
    let offset = usize::try_from(input.offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    let limit = usize::try_from(input.limit.unwrap_or(DEFAULT_LIMIT as u64).max(1)).unwrap_or(usize::MAX);

    let mut file = ws.open_file(&real)?;
    let mut head = vec![0u8; 8192.min(usize::try_from(size).unwrap_or(8192))];
    file.read_exact(&mut head).map_err(|e| io_error(&abs, &e))?;

    if let Some(mime) = encoding::image_mime(&head) {
        return read_media::image(&ws, cx, &real, name, mime, size, mtime);
    }
    if pdf::is_pdf(&head) {
        drop(file);
        return read_media::pdf(&ws, cx, &real, name, input.pages.as_deref(), size, mtime);
    }
    if input.pages.is_some() {
        return Err(ToolError::failed(format!(
            "{name} is not a PDF; `pages` is for PDFs (use offset and limit for lines)"
        )));
    }
    if size > WHOLE_FILE_LIMIT {
        drop(file);
        return crate::files::support::read_stream::read_large(&ws, cx, &real, name, offset, limit);
    }
    let mut bytes = head;
    file.read_to_end(&mut bytes).map_err(|e| io_error(&abs, &e))?;
    FileLedger::record(cx, &real.abs, FileState::of(&bytes, mtime));

    if abs.extension().is_some_and(|e| e.eq_ignore_ascii_case("ipynb")) {
        let text = String::from_utf8_lossy(&bytes);
        let body = crate::files::support::notebook::render_for_read(&text)
            .map_err(|e| ToolError::failed(format!("{name}: {e}")))?;
        return Ok(ReadOutput::notebook(name, size, body));
    }
    let (text, format) = encoding::decode(&bytes).map_err(|b| binary(&name, b.kind, size))?;
    let mut out = window(&text, name, size, offset, limit)?;
    if format != encoding::TextFormat::UTF8 {
        out.encoding = Some(format.describe());
    }
    Ok(out)
}

/// The window of `text` starting at line `offset` (1-based).
fn window(text: &str, name: String, size: u64, offset: usize, limit: usize) -> Result<ReadOutput, ToolError> {
    if text.is_empty() {
        return Ok(ReadOutput::text(name, size, offset, &[], 0));
    }
    let total = text.lines().count();
    if offset > total {
        return Err(ToolError::failed(format!(
            "{name} has {total} line{}; offset {offset} is past the end. Read from an offset up to {total}.",
            if total == 1 { "" } else { "s" }
        )));
    }
    let cut: Vec<std::borrow::Cow<'_, str>> = text.lines().skip(offset - 1).take(limit).map(cut_line).collect();
    let lines: Vec<&str> = cut.iter().map(|c| c.as_ref()).collect();
    Ok(ReadOutput::text(name, size, offset, &lines, total))
}

/// A line cut to [`MAX_LINE_CHARS`] with a marker saying how much is left out.
pub fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.len() <= MAX_LINE_CHARS {
        return line.into();
    }
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.into(),
        Some((at, _)) => {
            let rest = line[at..].chars().count();
            format!("{}… [line cut: {rest} more characters]", &line[..at]).into()
        }
    }
}

/// The refusal for a binary file.
pub fn binary(name: &str, kind: &str, size: u64) -> ToolError {
    ToolError::failed(format!(
        "{name} is a binary file ({kind}, {}); Read shows text, images and notebooks only. Inspect it with a shell \
         command (`file`, `xxd | head`) instead.",
        human_size(size)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_lines(text: &str, name: &str, offset: usize, limit: usize) -> Result<String, ToolError> {
        let out = window(text, name.to_string(), 0, offset, limit)?;
        let content = out.render();
        Ok(content[0].as_text().unwrap_or_default().to_string())
    }

    #[test]
    fn windows_and_notices() {
        let text = "a\nb\nc\n";
        assert_eq!(render_lines(text, "f", 1, 2000).unwrap(), "     1\ta\n     2\tb\n     3\tc");
        assert_eq!(
            render_lines(text, "f", 2, 1).unwrap(),
            "     2\tb\n\n(Showing lines 2-2 of 3. Continue with offset=3 to read more.)"
        );
        assert!(render_lines(text, "f", 4, 1).unwrap_err().to_string().contains("offset 4 is past the end"));
        assert_eq!(render_lines("", "f", 1, 10).unwrap(), "(f exists but is empty.)");
        assert_eq!(render_lines("x\r\ny\r\n", "f", 1, 10).unwrap(), "     1\tx\n     2\ty");
        let out = window(text, "f".into(), 6, 2, 1).unwrap();
        let structured = serde_json::to_value(&out).unwrap();
        assert_eq!(
            structured,
            serde_json::json!({"file_path": "f", "type": "text", "bytes": 6, "start_line": 2, "num_lines": 1, "total_lines": 3})
        );
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let long = "é".repeat(MAX_LINE_CHARS + 5);
        let cut = cut_line(&long);
        assert!(cut.starts_with(&"é".repeat(MAX_LINE_CHARS)));
        assert!(cut.ends_with("… [line cut: 5 more characters]"));
    }
}
