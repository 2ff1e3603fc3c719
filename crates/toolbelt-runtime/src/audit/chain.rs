//! The pieces of the hash chain both the writer and the verifier read: links, the tail of a
//! file, the head anchor, and the names of rotated files.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The `prev` of the very first record: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Where the chain stands: a record's `seq` and the SHA-256 of its line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Link {
    /// The record's sequence number (0 before the first record).
    pub seq: u64,
    /// The SHA-256 (hex) of the record's line, without its newline.
    pub sha256: String,
}

impl Link {
    /// Before the first record.
    pub fn genesis() -> Self {
        Self { seq: 0, sha256: GENESIS.to_string() }
    }

    /// The link a record's line makes: its digest, and its `seq` when it has one (0 when the
    /// line is not a record, so any anchor that knows better wins).
    pub fn of_line(line: &[u8]) -> Self {
        #[derive(Deserialize)]
        struct Seq {
            seq: u64,
        }
        let seq = serde_json::from_slice::<Seq>(line).map_or(0, |s| s.seq);
        Self { seq, sha256: toolbelt_core::sha256_hex(line) }
    }
}

/// The head anchor: the last record, and where the log starts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Head {
    /// The last record's `seq`.
    pub seq: u64,
    /// The SHA-256 of the last record's line.
    pub sha256: String,
    /// The `seq` of the oldest record kept (the first line of the oldest rotated file), so
    /// removing records from the start shows too; 0 when unknown.
    #[serde(default)]
    pub first: u64,
}

impl Head {
    /// The last record's link.
    pub fn link(&self) -> Link {
        Link { seq: self.seq, sha256: self.sha256.clone() }
    }
}

/// The end of a log file.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    /// The last complete (newline-terminated) line, without its newline.
    pub last: Option<Vec<u8>>,
    /// Whether bytes follow it without a newline (a write cut short, or an edit).
    pub partial: bool,
}

/// Reads the end of `file` (`size` bytes long) backwards until it holds the last complete
/// line, so recovering the chain costs the same on a small log and a large one.
pub(crate) fn read_tail(file: &File, size: u64) -> std::io::Result<Tail> {
    if size == 0 {
        return Ok(Tail::default());
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut start = size;
    let mut chunk = 8 * 1024u64;
    loop {
        let from = start.saturating_sub(chunk);
        let mut piece = vec![0; usize::try_from(start - from).unwrap_or(0)];
        file.read_exact_at(&mut piece, from)?;
        piece.extend_from_slice(&buf);
        buf = piece;
        start = from;
        let partial = buf.last() != Some(&b'\n');
        // The newline ending the last complete line, then the one before it.
        if let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
            let before = buf[..end].iter().rposition(|&b| b == b'\n');
            if before.is_some() || start == 0 {
                let begin = before.map_or(0, |i| i + 1);
                return Ok(Tail { last: Some(buf[begin..end].to_vec()), partial });
            }
        } else if start == 0 {
            return Ok(Tail { last: None, partial });
        }
        chunk = chunk.saturating_mul(2);
    }
}

/// The head anchor beside a log: `audit.jsonl` → `audit.jsonl.head`.
pub fn head_path(log: &Path) -> PathBuf {
    suffixed(log, ".head")
}

/// The head anchor's spare beside a log: `audit.jsonl` → `audit.jsonl.head.tmp`.
pub(crate) fn head_spare_path(log: &Path) -> PathBuf {
    suffixed(log, ".head.tmp")
}

/// Rotated file `n` of a log: `audit.jsonl` → `audit.jsonl.3`.
pub(crate) fn numbered(log: &Path, n: u32) -> PathBuf {
    suffixed(log, &format!(".{n}"))
}

fn suffixed(log: &Path, suffix: &str) -> PathBuf {
    let mut p = log.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// The head anchor; `Ok(None)` when there is none, an error when it cannot be read or is not
/// an anchor.
pub(crate) fn read_head(log: &Path) -> std::io::Result<Option<Head>> {
    match std::fs::read(head_path(log)) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(std::io::Error::other),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The head anchor's size: its JSON, padded with spaces, and a newline. A fixed size lets
/// the temp file be overwritten in place.
const HEAD_LEN: usize = 160;

/// Replaces the head anchor atomically, mode 0600: the new anchor is written into a temp
/// file beside it, which then trades places with the anchor (`renameat2` with
/// `RENAME_EXCHANGE`; a plain rename where that is not supported). Callers hold the log's
/// lock, so one temp name is enough.
///
/// Overwriting the temp file in place and exchanging, instead of creating a new file and
/// renaming it over the anchor, keeps ext4 from flushing the new file at every record (its
/// replace-by-rename and replace-by-truncate heuristics): about 4 µs a record instead of 200.
pub(crate) fn write_head(log: &Path, link: &Link, first: u64) -> std::io::Result<()> {
    let head = head_path(log);
    let tmp = head_spare_path(log);
    let mut text = format!("{{\"seq\":{},\"sha256\":\"{}\",\"first\":{first}}}", link.seq, link.sha256);
    text.truncate(HEAD_LEN - 1);
    text.extend(std::iter::repeat_n(' ', HEAD_LEN - 1 - text.len()));
    text.push('\n');
    let file = OpenOptions::new().write(true).create(true).truncate(false).mode(0o600).open(&tmp)?;
    file.write_all_at(text.as_bytes(), 0)?;
    if file.metadata()?.len() > HEAD_LEN as u64 {
        file.set_len(HEAD_LEN as u64)?;
    }
    drop(file);
    exchange(&tmp, &head)
}

/// Puts `from` at `to`, atomically: exchanged when `to` exists and the file system can,
/// renamed over it otherwise.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn exchange(from: &Path, to: &Path) -> std::io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    match renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_EXCHANGE) {
        Ok(()) => Ok(()),
        Err(Errno::ENOENT | Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => std::fs::rename(from, to),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn exchange(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::rename(from, to)
}

/// The `seq` of the oldest record on disk: the first record line of the oldest file that
/// has one.
pub(crate) fn first_seq(log: &Path) -> std::io::Result<Option<u64>> {
    use std::io::BufRead as _;
    let mut files = rotated(log)?;
    files.push(log.to_path_buf());
    for path in files {
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let mut line = Vec::new();
        std::io::BufReader::new(file).read_until(b'\n', &mut line)?;
        let link = Link::of_line(line.strip_suffix(b"\n").unwrap_or(&line));
        if link.seq > 0 {
            return Ok(Some(link.seq));
        }
    }
    Ok(None)
}

/// The rotated files of a log that exist, oldest (highest number) first.
pub(crate) fn rotated(log: &Path) -> std::io::Result<Vec<PathBuf>> {
    let dir = log.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Some(name) = log.file_name().map(|n| n.to_string_lossy().into_owned()) else { return Ok(Vec::new()) };
    let prefix = format!("{name}.");
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found: Vec<(u32, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = file_name.strip_prefix(&prefix).and_then(|rest| rest.parse::<u32>().ok()) {
            found.push((n, entry.path()));
        }
    }
    found.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail_of(text: &[u8]) -> Tail {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, text).unwrap();
        read_tail(&File::open(&path).unwrap(), text.len() as u64).unwrap()
    }

    #[test]
    fn the_tail_is_the_last_complete_line() {
        let t = tail_of(b"");
        assert!(t.last.is_none() && !t.partial);
        let t = tail_of(b"one\ntwo\n");
        assert_eq!((t.last.as_deref(), t.partial), (Some(&b"two"[..]), false));
        let t = tail_of(b"one\ntwo\nthr");
        assert_eq!((t.last.as_deref(), t.partial), (Some(&b"two"[..]), true));
        let t = tail_of(b"only");
        assert!(t.last.is_none() && t.partial);
        let t = tail_of(b"only\n");
        assert_eq!(t.last.as_deref(), Some(&b"only"[..]));
        // Lines longer than the first chunk are read whole.
        let long = "x".repeat(50_000);
        let t = tail_of(format!("a\n{long}\n{long}").as_bytes());
        assert_eq!((t.last.map(|l| l.len()), t.partial), (Some(50_000), true));
    }

    #[test]
    fn links_and_anchors() {
        let line = br#"{"seq":7,"prev":"x"}"#;
        assert_eq!(Link::of_line(line), Link { seq: 7, sha256: toolbelt_core::sha256_hex(line) });
        assert_eq!(Link::of_line(b"{\"seq\":").seq, 0);
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.jsonl");
        assert!(read_head(&log).unwrap().is_none());
        let link = Link { seq: 3, sha256: "ab".into() };
        write_head(&log, &Link { seq: 123_456_789, sha256: "cd".into() }, 9).unwrap();
        write_head(&log, &link, 2).unwrap();
        assert_eq!(read_head(&log).unwrap(), Some(Head { seq: 3, sha256: "ab".into(), first: 2 }));
        assert_eq!(std::fs::metadata(head_path(&log)).unwrap().len(), HEAD_LEN as u64);
        assert!(first_seq(&log).unwrap().is_none());
        std::fs::write(&log, "{\"seq\":5}\n{\"seq\":6}\n").unwrap();
        assert_eq!(first_seq(&log).unwrap(), Some(5));
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(head_path(&log)).unwrap().permissions().mode() & 0o777, 0o600);
        for n in [1, 10, 2] {
            std::fs::write(numbered(&log, n), "").unwrap();
        }
        std::fs::write(dir.path().join("audit.jsonl.old"), "").unwrap();
        assert_eq!(first_seq(&log).unwrap(), Some(5), "empty rotated files are passed over");
        let names: Vec<_> = rotated(&log).unwrap().iter().map(|p| p.file_name().unwrap().to_owned()).collect();
        assert_eq!(names, ["audit.jsonl.10", "audit.jsonl.2", "audit.jsonl.1"]);
    }
}
