//! Regular files only: how every file tool opens what it reads or replaces.
//!
//! A path in the workspace can name a character device (`mknod zero c 1 5` makes an endless
//! `/dev/zero`), a named pipe (whose `open` blocks until a writer comes), a socket or a block
//! device. Reading one whole would fill memory or block for the call's whole timeout;
//! replacing one with a regular file would destroy what it was. So a file is opened with
//! `O_NONBLOCK` (a FIFO's open returns at once, a device's open cannot wait for a carrier)
//! and `O_NOCTTY`, its type is read from the **open handle** (`fstat`, so a swap between a
//! check and the open changes nothing), and anything but a regular file is refused with a
//! message naming what it is. For a regular file `O_NONBLOCK` has no effect, but it is
//! cleared again so the handle behaves as any other.

use std::fmt;
use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _};
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use toolbelt_core::ToolError;

/// What a path is when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRegular {
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A Unix socket.
    Socket,
    /// Anything else the kernel may report.
    Other,
}

impl NotRegular {
    /// The kind of `file_type`, or `None` for a regular file (and a symlink, which the
    /// callers resolve or refuse on their own terms).
    pub fn of(file_type: std::fs::FileType) -> Option<Self> {
        let t = file_type;
        Self::from_kind(
            t.is_file() || t.is_symlink(),
            t.is_dir(),
            t.is_fifo(),
            t.is_char_device(),
            t.is_block_device(),
            t.is_socket(),
        )
    }

    /// The kind of a cap-std file type (from a `symlink_metadata` or a walk).
    pub fn of_cap(file_type: cap_std::fs::FileType) -> Option<Self> {
        use cap_std::fs::FileTypeExt as _;
        let t = file_type;
        Self::from_kind(
            t.is_file() || t.is_symlink(),
            t.is_dir(),
            t.is_fifo(),
            t.is_char_device(),
            t.is_block_device(),
            t.is_socket(),
        )
    }

    fn from_kind(regular_or_link: bool, dir: bool, fifo: bool, chr: bool, block: bool, socket: bool) -> Option<Self> {
        Some(if regular_or_link {
            return None;
        } else if dir {
            Self::Directory
        } else if fifo {
            Self::Fifo
        } else if chr {
            Self::CharDevice
        } else if block {
            Self::BlockDevice
        } else if socket {
            Self::Socket
        } else {
            Self::Other
        })
    }

    /// "a character device", to go in a sentence.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Directory => "a directory",
            Self::Fifo => "a named pipe (FIFO)",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Socket => "a socket",
            Self::Other => "a special file",
        }
    }

    /// The model-facing refusal for `path`. A directory keeps its own message.
    pub fn error(self, path: &Path) -> ToolError {
        match self {
            Self::Directory => crate::fs::error::is_a_directory(path),
            _ => ToolError::failed(self.sentence(path)),
        }
    }

    /// "`x` is a character device, not a regular file: …", with what to do instead.
    pub fn sentence(self, path: &Path) -> String {
        format!(
            "`{}` is {}, not a regular file: toolbelt reads and writes regular files only. Leave it as it is; if its \
             content really matters, look at it with a bounded shell command (e.g. `ls -l`, `head -c 200`)",
            path.display(),
            self.describe()
        )
    }
}

/// Why a file could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The open (or the `fstat` after it) failed.
    Io(std::io::Error),
    /// The path is not a regular file.
    NotRegular(NotRegular),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::NotRegular(kind) => write!(f, "{}, not a regular file", kind.describe()),
        }
    }
}

impl std::error::Error for OpenError {}

impl From<std::io::Error> for OpenError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

impl OpenError {
    /// The model-facing error for this failure at `path`.
    pub fn tool_error(&self, path: &Path) -> ToolError {
        match self {
            Self::Io(e) => crate::fs::error::io_error(path, e),
            Self::NotRegular(kind) => kind.error(path),
        }
    }
}

/// Opens `rel` beneath `dir` for reading, without blocking, and only if the handle is a
/// regular file.
pub fn open_regular(dir: &Dir, rel: &Path) -> Result<std::fs::File, OpenError> {
    open_regular_with_metadata(dir, rel).map(|(file, _)| file)
}

/// [`open_regular`], with the handle's metadata (taken once, for the check and the caller).
pub fn open_regular_with_metadata(dir: &Dir, rel: &Path) -> Result<(std::fs::File, std::fs::Metadata), OpenError> {
    let (file, meta) = open_regular_to_read(dir, rel)?;
    clear_nonblocking(&file)?;
    Ok((file, meta))
}

/// [`open_regular_with_metadata`] for a handle that is only read and then closed: `O_NONBLOCK`
/// is left set, as it changes nothing when reading a regular file (open(2)), which spares a
/// system call (Grep's walk opens its files so too).
pub fn open_regular_to_read(dir: &Dir, rel: &Path) -> Result<(std::fs::File, std::fs::Metadata), OpenError> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = dir.open_with(rel, &options)?.into_std();
    let meta = file.metadata()?;
    if let Some(kind) = NotRegular::of(meta.file_type()) {
        return Err(OpenError::NotRegular(kind));
    }
    Ok((file, meta))
}

/// Refuses an open handle that is not a regular file.
pub fn check_regular(file: &std::fs::File) -> Result<(), OpenError> {
    match NotRegular::of(file.metadata()?.file_type()) {
        None => Ok(()),
        Some(kind) => Err(OpenError::NotRegular(kind)),
    }
}

/// Clears `O_NONBLOCK` again (it changes nothing for a regular file; the handle is left as a
/// plain open would have made it). `F_SETFL` sets only the status flags a handle can change
/// (`O_APPEND`, `O_ASYNC`, `O_DIRECT`, `O_NOATIME`, `O_NONBLOCK`); of those the open set only
/// `O_NONBLOCK`, so setting none of them clears it without reading the flags first.
fn clear_nonblocking(file: &std::fs::File) -> std::io::Result<()> {
    fcntl(file, FcntlArg::F_SETFL(OFlag::empty())).map_err(std::io::Error::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_fifo_is_refused_at_once_and_a_file_opens_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        nix::unistd::mkfifo(&tmp.path().join("pipe"), nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        std::fs::write(tmp.path().join("plain.txt"), "x").unwrap();
        std::fs::create_dir(tmp.path().join("sub")).unwrap();

        let started = Instant::now();
        let e = open_regular(&root, Path::new("pipe")).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "the open blocked");
        assert!(matches!(e, OpenError::NotRegular(NotRegular::Fifo)), "{e}");
        let message = NotRegular::Fifo.sentence(Path::new("pipe"));
        assert!(message.starts_with("`pipe` is a named pipe (FIFO), not a regular file: "), "{message}");

        let file = open_regular(&root, Path::new("plain.txt")).unwrap();
        let flags = OFlag::from_bits_truncate(fcntl(&file, FcntlArg::F_GETFL).unwrap());
        assert!(!flags.contains(OFlag::O_NONBLOCK));
        assert!(matches!(open_regular(&root, Path::new("sub")), Err(OpenError::NotRegular(NotRegular::Directory))));
        assert!(tmp.path().join("pipe").exists(), "the pipe is left as it was");
    }
}
