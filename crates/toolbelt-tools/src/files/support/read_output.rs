//! What `Read` returns and how it is shown: the output type and its rendering, and the line
//! cut and binary-file refusal the whole-file and streamed readers share (so the readers
//! beside `Read` depend on this, not on the tool).

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{Content, Render, ToolError, human_size};

use crate::files::support::change::numbered;
pub use crate::formats::encoding::MAX_IMAGE_BYTES;
use crate::formats::pdf;

/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2_000;

/// What `Read` returns: what was shown of the file — its numbered lines, cells or text, and
/// how to read more — in the text and in the structured result alike. An image's bytes go
/// as image content only; the structured result describes the image.
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
    /// What was read: the lines shown, numbered like `cat -n` (the line number, a tab, the
    /// line), a notebook's cells, or a PDF's text. Absent for an image (sent as image
    /// content) and an empty file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content: String,
    /// What the text says after the content: how to read the rest (`offset`, `pages`), the
    /// encoding it was decoded from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Base64 of the image, for images: sent as image content, not in the structured result
    /// (base64 in a structured value would reach a model as text, in the megabytes).
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
    fn of(file_path: String, kind: ReadKind, bytes: u64, content: String) -> Self {
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
            content,
            notes: Vec::new(),
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
    pub(crate) fn notebook(file_path: String, bytes: u64, cells: String) -> Self {
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

    /// The result with its notes: how to read the rest and how it was decoded. What `Read`
    /// returns once every field is set.
    pub(crate) fn noted(mut self) -> Self {
        let mut notes = Vec::new();
        if let (Some(start), Some(shown), Some(total)) = (self.start_line, self.num_lines, self.total_lines) {
            let shown_to = start - 1 + shown;
            if shown_to < total {
                notes.push(format!(
                    "Showing lines {start}-{shown_to} of {total}. Continue with offset={} to read more.",
                    shown_to + 1
                ));
            }
        }
        if let Some(pdf) = &self.pdf {
            let (first, last) = (pdf.pages.first().copied().unwrap_or(0), pdf.pages.last().copied().unwrap_or(0));
            if last < pdf.total_pages || first > 1 {
                notes.push(format!(
                    "Pages {first}-{last} of {}. Read others with pages, e.g. pages: \"{}-{}\".",
                    pdf.total_pages,
                    last + 1,
                    (last + pdf::MAX_PAGES_PER_CALL).min(pdf.total_pages).max(last + 1)
                ));
            }
        }
        if let Some(encoding) = &self.encoding {
            notes.push(if self.streamed {
                format!("Decoded as {encoding}.")
            } else {
                format!("Decoded as {encoding}; Edit and Write keep that encoding.")
            });
        }
        self.notes = notes;
        self
    }
}

impl Render for ReadOutput {
    fn render(&self) -> Vec<Content> {
        self.rendered(self.content.clone())
    }

    /// As `render`, handing the content over instead of copying it.
    fn into_content(mut self) -> Vec<Content> {
        let content = std::mem::take(&mut self.content);
        self.rendered(content)
    }
}

impl ReadOutput {
    /// The content for the model: `content` (this result's, taken or copied), then the notes;
    /// an image as its caption and the image.
    fn rendered(&self, content: String) -> Vec<Content> {
        let name = &self.file_path;
        let mut text = match (self.kind, self.total_lines) {
            (ReadKind::Text, Some(0)) => return vec![Content::text(format!("({name} exists but is empty.)"))],
            _ => content,
        };
        for note in &self.notes {
            text.push_str(&format!("\n\n({note})"));
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
