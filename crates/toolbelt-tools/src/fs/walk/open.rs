//! How Grep opens each file a walk yields: with the same checks as every file tool
//! ([`open_regular`](crate::fs::regular::open_regular), then
//! [`OpenRoots::check_links`]), in fewer system calls, which a search of tens of thousands of
//! files feels.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _};
use std::os::unix::fs::MetadataExt as _;

use crate::fs::regular::{NotRegular, OpenError};
use crate::fs::roots::OpenRoots;

/// Opens `rel` beneath `dir` (confined at open time) for reading, and only if the handle is a
/// regular file whose other names, when it has any, are all inside the roots and none of them
/// hidden; `path` is the file as the walk named it, for the messages. The checks and the
/// messages are those of `open_regular` and `check_links`; what differs is the cost: one
/// `fstat` serves both checks (the links are only looked up again for a file with several
/// names), and `O_NONBLOCK`, which only keeps a FIFO swapped in since the walk from
/// blocking the open, is left set, as it changes nothing when reading a regular file (the
/// handle is only read by the searcher, then closed).
pub fn open_searched(ws: &OpenRoots, dir: &Dir, rel: &Path, path: &Path) -> io::Result<File> {
    open_searched_sized(ws, dir, rel, path).map(|(file, _)| file)
}

/// [`open_searched`], with the file's metadata when it was opened (the same `fstat`): its
/// length, and its inode, to tell whether it is the file a walk listed.
pub fn open_searched_sized(ws: &OpenRoots, dir: &Dir, rel: &Path, path: &Path) -> io::Result<(File, Metadata)> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = dir.open_with(rel, &options)?.into_std();
    let meta = file.metadata()?;
    if let Some(kind) = NotRegular::of(meta.file_type()) {
        return Err(io::Error::other(OpenError::NotRegular(kind).to_string()));
    }
    if meta.nlink() > 1 {
        ws.check_links(&file, path).map_err(|e| io::Error::other(e.to_string()))?;
    }
    Ok((file, meta))
}
