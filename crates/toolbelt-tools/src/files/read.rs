//! `Read`: a file's lines, numbered like `cat -n`, an image as an image, a notebook as cells.
//!
//! Text in any encoding the codecs know is shown as text (and noted when not UTF-8); binary
//! files are refused with their type and size; directories are refused with a pointer to
//! ListDir. Files up to [`WHOLE_FILE_LIMIT`] are decoded whole; larger ones are streamed, so
//! reading a slice of a multi-gigabyte file keeps memory bounded. Every read records the
//! file's content hash in the session ledger, which Write and Edit check.

use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{Access, Category, Tool, ToolContext, ToolError, ToolSpec, thousands};

use crate::blocking::run_blocking;

use crate::files::support::ledger::{FileLedger, FileState};
use crate::files::support::read_media;
use crate::formats::{encoding, pdf};
use crate::fs::error::io_error;
use crate::fs::roots::{OpenRoots, Unconfirmed, absolute};
use crate::fs::shown::shown;

pub use crate::files::support::read_output::{
    ImageInfo, MAX_IMAGE_BYTES, MAX_LINE_CHARS, PdfInfo, ReadKind, ReadOutput, binary, cut_line,
};

/// Lines shown when no limit is given.
pub const DEFAULT_LIMIT: usize = 2_000;
/// Files up to this size are decoded whole (every encoding); larger ones are streamed.
pub const WHOLE_FILE_LIMIT: u64 = 32 * 1024 * 1024;

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
        let abs = absolute(&cx, &input.file_path);
        let ws = OpenRoots::open_for_reading(&cx)?;
        let loc = ws.locate(&abs)?;
        let opened = match ws.open_unconfirmed(&loc) {
            Ok(opened) => opened,
            Err(_) if ws.metadata(&loc).is_ok_and(|m| m.is_dir()) => {
                return Err(ToolError::failed(format!(
                    "{} is a directory, not a file; use ListDir to see what it contains",
                    abs.display()
                )));
            }
            Err(e) => return Err(e),
        };
        // A small file with one name is read right here: handing a read of a few kilobytes
        // to the blocking pool costs two thread wake-ups, more than the read itself. Its size
        // comes from the open handle: a lookup of the path first was more system calls for
        // what the handle says.
        let meta = opened.metadata();
        let out = if meta.len() <= INLINE_MAX && meta.nlink() <= 1 {
            read(&input, &cx, &ws, &abs, opened)
        } else {
            run_blocking(&cx, move |cx| read(&input, cx, &ws, &abs, opened)).await
        };
        out.map(ReadOutput::noted)
    }
}

/// Files up to this size are read on the calling thread.
const INLINE_MAX: u64 = 64 * 1024;

/// Reads the file `input` names (`abs`), opened beneath the roots `ws`.
fn read(
    input: &ReadInput,
    cx: &ToolContext,
    ws: &OpenRoots,
    abs: &Path,
    opened: Unconfirmed,
) -> Result<ReadOutput, ToolError> {
    let (real, mut file, meta) = ws.confirm(opened)?;
    let mtime = meta.modified().ok();
    let size = meta.len();
    let name = shown(cx, abs);
    let offset = usize::try_from(input.offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    let limit = usize::try_from(input.limit.unwrap_or(DEFAULT_LIMIT as u64).max(1)).unwrap_or(usize::MAX);

    let (head, whole) = first_bytes(&mut file, size).map_err(|e| io_error(abs, &e))?;

    if let Some(mime) = encoding::image_mime(&head) {
        return read_media::image(ws, cx, &real, name, mime, size, mtime);
    }
    if pdf::is_pdf(&head) {
        drop(file);
        return read_media::pdf(ws, cx, &real, name, input.pages.as_deref(), size, mtime);
    }
    if input.pages.is_some() {
        return Err(ToolError::failed(format!(
            "{name} is not a PDF; `pages` is for PDFs (use offset and limit for lines)"
        )));
    }
    if size > WHOLE_FILE_LIMIT {
        drop(file);
        return crate::files::support::read_stream::read_large(ws, cx, &real, name, offset, limit);
    }
    let mut bytes = head;
    if !whole {
        // The size is known: room for it and one byte more, and read through `take`, whose
        // reading does not ask the file its size and position again (two system calls).
        bytes.reserve(usize::try_from(size).unwrap_or(0).saturating_sub(bytes.len()) + 1);
        (&mut file).take(u64::MAX).read_to_end(&mut bytes).map_err(|e| io_error(abs, &e))?;
    }
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

/// How much of a file's start tells what it is (an image, a PDF).
const HEAD: usize = 8192;

/// Reads the start of `file`, `size` bytes long when it was opened: [`HEAD`] bytes, or the
/// whole file and room for one byte more when it is no longer. Returns the bytes and whether
/// they are the whole file: the read stops as soon as `size` bytes have come, which is the
/// end the open handle gave (asking again to be told "end of file" was a system call per
/// read); a file that grew since fills the byte more, and is read on by the caller.
fn first_bytes(file: &mut std::fs::File, size: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let want = if size < HEAD { size + 1 } else { HEAD };
    let mut buf = vec![0u8; want];
    let mut got = 0;
    while got < want {
        match file.read(&mut buf[got..]) {
            Ok(0) => {
                buf.truncate(got);
                return Ok((buf, true));
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if got == size {
            buf.truncate(got);
            return Ok((buf, true));
        }
    }
    Ok((buf, false))
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

#[cfg(test)]
mod tests {
    use toolbelt_core::Render as _;

    use super::*;

    fn render_lines(text: &str, name: &str, offset: usize, limit: usize) -> Result<String, ToolError> {
        let out = window(text, name.to_string(), 0, offset, limit)?.noted();
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
        let out = window(text, "f".into(), 6, 2, 1).unwrap().noted();
        let structured = serde_json::to_value(&out).unwrap();
        assert_eq!(
            structured,
            serde_json::json!({"file_path": "f", "type": "text", "bytes": 6, "start_line": 2, "num_lines": 1,
                "total_lines": 3, "content": "     2\tb",
                "notes": ["Showing lines 2-2 of 3. Continue with offset=3 to read more."]})
        );
    }

    #[test]
    fn the_first_read_stops_at_the_size_the_handle_gave_and_reads_on_past_it() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let read_with = |content: &[u8], size: u64| {
            std::fs::write(&path, content).unwrap();
            first_bytes(&mut std::fs::File::open(&path).unwrap(), size).unwrap()
        };
        assert_eq!(read_with(b"hello", 5), (b"hello".to_vec(), true));
        assert_eq!(read_with(b"", 0), (Vec::new(), true));
        // Grown since its size was taken: one byte more comes, and the caller reads on.
        assert_eq!(read_with(b"hello world", 5), (b"hello ".to_vec(), false));
        // A file that says it is empty but is not (as /proc's): read on.
        assert_eq!(read_with(b"cpu 1 2 3", 0), (b"c".to_vec(), false));
        // Shrunk: what there is, whole.
        assert_eq!(read_with(b"hi", 5), (b"hi".to_vec(), true));
        // Larger than the head: the head, and the rest is read on.
        let big = vec![b'x'; HEAD * 2];
        let (head, whole) = read_with(&big, big.len() as u64);
        assert_eq!((head.len(), whole), (HEAD, false));
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let long = "é".repeat(MAX_LINE_CHARS + 5);
        let cut = cut_line(&long);
        assert!(cut.starts_with(&"é".repeat(MAX_LINE_CHARS)));
        assert!(cut.ends_with("… [line cut: 5 more characters]"));
    }
}
