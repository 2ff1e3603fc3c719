//! Reading a definition file as the file tools read theirs: regular files only, decided on
//! the open handle, and never more than a cap.
//!
//! A path in an agents directory can be a FIFO (whose `open` would block until a writer
//! comes), a device (`/dev/zero` reads forever) or a symlink to one. So a file is opened with
//! `O_NONBLOCK` (a FIFO's open returns at once; for a regular file the flag changes nothing)
//! and `O_NOCTTY`, its type is read from the open handle (`fstat`, so nothing can be swapped
//! in between a check and the open), and anything but a regular file is refused by name.

use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

use super::parse::{DefinitionError, Parsed};
use super::{AgentDefinition, DefinitionSource, Scope};

/// The most bytes of a definition file read (512 KiB, a prompt of some 100,000 words): a
/// larger file is reported, not read.
pub const MAX_FILE_BYTES: u64 = 512 * 1024;

impl AgentDefinition {
    /// Reads the definition file at `path` of `scope`: opened as a regular file only, at most
    /// [`MAX_FILE_BYTES`], UTF-8, then [`AgentDefinition::parse`]d. A definition without a
    /// `name` takes the file's stem.
    pub fn read(path: &Path, scope: Scope) -> Result<Parsed, DefinitionError> {
        let text = read_text(path)?;
        let stem = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let stem = strip_md(&stem);
        AgentDefinition::parse(&text, stem, DefinitionSource::File { path: path.to_path_buf(), scope })
    }
}

/// `name` without a final `.md` (in any case).
pub(super) fn strip_md(name: &str) -> &str {
    match name.len().checked_sub(3) {
        Some(cut) if name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".md") => &name[..cut],
        _ => name,
    }
}

fn read_text(path: &Path) -> Result<String, DefinitionError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| DefinitionError::Unreadable(e.to_string()))?;
    check_regular(&file)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| DefinitionError::Unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(DefinitionError::TooLarge { limit: MAX_FILE_BYTES });
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..valid].iter().filter(|b| **b == b'\n').count() + 1;
        DefinitionError::NotUtf8 { line }
    })
}

fn check_regular(file: &File) -> Result<(), DefinitionError> {
    let kind = file.metadata().map_err(|e| DefinitionError::Unreadable(e.to_string()))?.file_type();
    if kind.is_file() {
        return Ok(());
    }
    Err(DefinitionError::NotRegular(if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }))
}
