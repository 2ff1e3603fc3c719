//! Loading a text file for a change and saving it back: what Write, Edit and MultiEdit share.
//!
//! Loading resolves the path through the workspace (confined), follows a symlink inside the
//! roots to its target, checks the read ledger (read in this session, unchanged since, by
//! content hash) and decodes the text. Saving encodes in the file's own encoding and BOM,
//! writes atomically, and records the new state so a following edit works.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use toolbelt_core::{Content, ToolContext, ToolError};

use crate::files::support::ledger::{FileLedger, FileState};
use crate::formats::encoding::{self, TextFormat};
use crate::fs::error::{io_error, is_a_directory};
use crate::fs::roots::{Located, OpenRoots};

/// A text file loaded for a change.
pub struct Loaded {
    /// Where it really is (symlinks resolved).
    pub real: Located,
    /// The decoded text, line endings as in the file.
    pub text: String,
    /// How it is stored.
    pub format: TextFormat,
}

/// Where a change will be written: an existing file (loaded), or a new one.
pub enum Target {
    /// The file exists and passed the ledger check.
    Existing(Loaded),
    /// The file does not exist yet; this is where it will be created.
    New(Located),
}

/// Opens the workspace for a change, first finishing or undoing a multi-file commit that a
/// killed process left halfway ([`crate::files::support::journal`]); the notes say what was done.
pub fn open_for_change(cx: &ToolContext) -> Result<(OpenRoots, Vec<String>), ToolError> {
    let ws = OpenRoots::open(cx)?;
    let notes = crate::files::support::journal::recover(&ws, cx);
    Ok((ws, notes))
}

/// `text`, then each note as its own text block: how a change tool's result reads.
pub fn with_notes(text: String, notes: &[String]) -> Vec<Content> {
    std::iter::once(Content::text(text))
        .chain(notes.iter().map(|note| Content::text(format!("Note: {note}"))))
        .collect()
}

/// Reads a whole file through the workspace.
pub fn read_bytes(ws: &OpenRoots, loc: &Located) -> Result<Vec<u8>, ToolError> {
    let mut file = ws.open_file(loc)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| io_error(&loc.abs, &e))?;
    Ok(bytes)
}

/// Locates `abs` and, if it exists, loads it for a change (ledger-checked, decoded).
pub fn load(ws: &OpenRoots, cx: &ToolContext, abs: &Path) -> Result<Target, ToolError> {
    let loc = ws.locate(abs)?;
    if !ws.exists(&loc)? {
        return Ok(Target::New(new_location(ws, &loc)?));
    }
    let real = ws.real(&loc)?;
    if ws.metadata(&real)?.is_dir() {
        return Err(is_a_directory(abs));
    }
    let bytes = read_bytes(ws, &real)?;
    FileLedger::check_fresh(cx, &real.abs, abs, &bytes)?;
    let (text, format) = encoding::decode(&bytes).map_err(|b| {
        ToolError::failed(format!(
            "{} is a binary file ({}); only text files can be changed this way",
            abs.display(),
            b.kind
        ))
    })?;
    Ok(Target::Existing(Loaded { real, text, format }))
}

/// Where a new file goes: a dangling symlink is refused rather than followed blindly.
/// A directory on the way reached through a symlink by absolute path is followed when it
/// leads inside the roots ([`OpenRoots::relocated`]).
fn new_location(ws: &OpenRoots, loc: &Located) -> Result<Located, ToolError> {
    match ws.dir(loc).symlink_metadata(&loc.rel) {
        Ok(_) => Err(ToolError::failed(format!(
            "{} is a symlink to a missing target; write to the target path instead",
            loc.abs.display()
        ))),
        Err(e) if crate::fs::error::escapes(&e) => ws.relocated(loc).ok_or_else(|| io_error(&loc.abs, &e)),
        Err(_) => Ok(loc.clone()),
    }
}

/// Encodes and writes `text` atomically at `loc`, records it in the ledger, and returns its
/// state. `loc` must be a real location (no symlink in its last component).
pub fn save(
    ws: &OpenRoots,
    cx: &ToolContext,
    loc: &Located,
    text: &str,
    format: TextFormat,
) -> Result<FileState, ToolError> {
    let bytes = encoding::encode(text, format).map_err(ToolError::failed)?;
    crate::files::support::atomic::write(ws.dir(loc), &loc.rel, &bytes).map_err(|e| io_error(&loc.abs, &e))?;
    let mtime = ws.metadata(loc).ok().and_then(|m| m.modified().ok()).map(|t| t.into_std());
    let state = FileState::of(&bytes, mtime);
    FileLedger::record(cx, &real_abs(ws, loc), state.clone());
    Ok(state)
}

/// The real absolute path of a location that now exists.
fn real_abs(ws: &OpenRoots, loc: &Located) -> PathBuf {
    ws.real(loc).map(|r| r.abs).unwrap_or_else(|_| loc.abs.clone())
}

/// `cat -n`-style numbering of `lines`, the first being line `first`.
pub fn numbered<'a>(lines: impl Iterator<Item = &'a str>, first: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{:>6}\t{}", first + i, line.trim_end_matches('\r')));
    }
    out
}
