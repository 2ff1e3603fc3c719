//! What a journal says, and how it is written to and read from its file.
//!
//! A journal file is one JSON line (the [`Header`]: the roots and every entry), then — once
//! every new content is staged and every original is backed up — the line `commit`. A file
//! that does not end with exactly that line has not reached the first rename.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format's version, in every header.
pub const VERSION: u32 = 1;

/// The line that says every staged file and backup is in place and renames may begin.
pub const COMMIT_LINE: &[u8] = b"commit\n";

/// A path, kept byte for byte: as a string when it is UTF-8, else as hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PathText {
    /// A UTF-8 path.
    Text(String),
    /// Any other path, its bytes in hex.
    Bytes {
        /// The bytes, two hex digits each.
        hex: String,
    },
}

impl PathText {
    /// The text of `path`.
    pub fn of(path: &Path) -> Self {
        match path.to_str() {
            Some(s) => Self::Text(s.to_string()),
            None => Self::Bytes { hex: path.as_os_str().as_bytes().iter().map(|b| format!("{b:02x}")).collect() },
        }
    }

    /// The path again; `None` when the hex is malformed.
    pub fn path(&self) -> Option<PathBuf> {
        match self {
            Self::Text(s) => Some(PathBuf::from(s)),
            Self::Bytes { hex } => {
                let bytes: Option<Vec<u8>> = (0..hex.len())
                    .step_by(2)
                    .map(|i| hex.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
                    .collect();
                bytes.map(|b| PathBuf::from(OsStr::from_bytes(&b)))
            }
        }
    }
}

/// One path's change, all paths relative to the entry's root.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Entry {
    /// New content for `path`, staged in `temp`.
    Write {
        /// Index into [`Header::roots`].
        root: usize,
        /// The target.
        path: PathText,
        /// The staged new content, beside the target.
        temp: PathText,
        /// A second name (hard link, or copy) of the original file, when there was one.
        backup: Option<PathText>,
        /// Where a symlink at `path` is set aside before the file replaces it.
        aside: Option<PathText>,
        /// SHA-256 of the new content (hex), to tell a staged file or a written target
        /// that is whole and ours from anything else.
        sha256: String,
        /// The mode the new file has once in place.
        mode: u32,
        /// Directories created for the file, deepest first (removed again on a rollback
        /// when empty).
        dirs: Vec<PathText>,
    },
    /// `path` removed: set aside to `aside`, which is removed at the end.
    Delete {
        /// Index into [`Header::roots`].
        root: usize,
        /// The entry to delete.
        path: PathText,
        /// Its hidden name while the commit runs.
        aside: PathText,
    },
}

impl Entry {
    /// The root index of the entry.
    pub fn root(&self) -> usize {
        match self {
            Self::Write { root, .. } | Self::Delete { root, .. } => *root,
        }
    }
}

/// The first line of a journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// [`VERSION`].
    pub version: u32,
    /// The committing process.
    pub pid: u32,
    /// The canonical workspace roots the entries are relative to.
    pub roots: Vec<PathText>,
    /// Every change, in the order they are made.
    pub entries: Vec<Entry>,
}

/// A journal read back from its file.
pub struct Read {
    /// What it says.
    pub header: Header,
    /// Whether it reached the `commit` line.
    pub committed: bool,
}

/// Parses a journal file's bytes; `None` for a header that was never completely written
/// (the process died before it staged anything) or a version this build does not know.
pub fn parse(bytes: &[u8]) -> Option<Read> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let header: Header = serde_json::from_slice(&bytes[..end]).ok()?;
    if header.version != VERSION {
        return None;
    }
    let committed = &bytes[end + 1..] == COMMIT_LINE;
    Some(Read { header, committed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_byte_for_byte() {
        for raw in [&b"src/a.rs"[..], b"caf\xc3\xa9/x", b"bad\xff\xfe.txt"] {
            let path = PathBuf::from(OsStr::from_bytes(raw));
            let text = PathText::of(&path);
            let json = serde_json::to_string(&text).unwrap();
            let back: PathText = serde_json::from_str(&json).unwrap();
            assert_eq!(back.path().unwrap(), path, "{json}");
        }
    }

    #[test]
    fn only_a_complete_commit_line_counts() {
        let header = Header { version: VERSION, pid: 1, roots: vec![PathText::of(Path::new("/w"))], entries: vec![] };
        let mut bytes = serde_json::to_vec(&header).unwrap();
        bytes.push(b'\n');
        assert!(!parse(&bytes).unwrap().committed);
        let mut torn = bytes.clone();
        torn.extend_from_slice(b"comm");
        assert!(!parse(&torn).unwrap().committed);
        bytes.extend_from_slice(COMMIT_LINE);
        assert!(parse(&bytes).unwrap().committed);
        assert!(parse(&bytes[..10]).is_none(), "a torn header is no journal");
    }
}
