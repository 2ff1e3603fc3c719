//! Appending one chained record: under an advisory lock on the log, find where the chain
//! stands (from memory when nobody else wrote since, else from the file's tail and the head
//! anchor), rotate if the record would not fit, append, and move the anchor.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};

use nix::fcntl::{Flock, FlockArg};

use super::AuditConfig;
use super::chain::{self, Link};

/// How often a writer starts over because another process rotated or removed the log under
/// it before giving up on this record.
const ATTEMPTS: usize = 4;

/// What this process knows of the live file since it last wrote.
struct Known {
    dev: u64,
    ino: u64,
    /// The file's size right after our last write.
    end: u64,
    /// The record we wrote last.
    link: Link,
    /// The `seq` of the oldest record kept.
    first: u64,
}

/// The open log and where its chain stands.
#[derive(Default)]
pub(super) struct Writer {
    file: Option<File>,
    known: Option<Known>,
    /// The head anchor's spare this writer left beside the log (see [`chain::write_head`]),
    /// removed when the writer closes.
    spare: Option<std::path::PathBuf>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

impl Writer {
    /// Removes the head anchor's spare, under the log's lock so that no other process is
    /// between writing and exchanging it; the next record makes it again. Nothing but the log
    /// and its anchor stays beside it once the process is done.
    pub fn close(&mut self) {
        let Some(spare) = self.spare.take() else { return };
        let Some(file) = self.file.take() else { return };
        self.known = None;
        if let Ok(locked) = Flock::lock(file, FlockArg::LockExclusive) {
            if let Err(e) = std::fs::remove_file(&spare)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::debug!("could not remove {}: {e}", spare.display());
            }
            drop(locked);
        }
    }

    /// Appends the record whose JSON (without `seq` and `prev`) is `body`.
    pub fn append(&mut self, config: &AuditConfig, body: &[u8]) -> std::io::Result<()> {
        let result = self.try_append(config, body);
        if result.is_err() {
            // Start afresh next time: the file may have been removed or the disk freed.
            self.file = None;
            self.known = None;
        }
        result
    }

    fn try_append(&mut self, config: &AuditConfig, body: &[u8]) -> std::io::Result<()> {
        for _ in 0..ATTEMPTS {
            let file = match self.file.take() {
                Some(file) => file,
                None => open(config)?,
            };
            let locked = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| std::io::Error::from(e))?;
            let meta = locked.metadata()?;
            // Another process may have rotated the log, or somebody removed it, while we
            // waited: then this is no longer the live file.
            let live = std::fs::metadata(&config.path).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino());
            if !live {
                self.known = None;
                continue;
            }
            let size = meta.len();
            let (link, newline, first) = match &self.known {
                Some(k) if (k.dev, k.ino, k.end) == (meta.dev(), meta.ino(), size) => (k.link.clone(), false, k.first),
                _ => recover(config, &locked, size)?,
            };
            let line = chain_line(link.seq, &link.sha256, body);
            let len = (line.len() + 1 + usize::from(newline)) as u64;
            if size > 0 && size + len > config.max_bytes {
                rotate(config)?;
                // The oldest file may have been dropped: the anchor says where the log starts now.
                if config.anchor {
                    let first = chain::first_seq(&config.path)?.unwrap_or(first);
                    chain::write_head(&config.path, &link, first)?;
                }
                self.known = None;
                continue;
            }
            let mut bytes = Vec::with_capacity(line.len() + 2);
            if newline {
                // A line cut short is not continued: it stays as it is, for `verify` to name.
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
            (&*locked).write_all(&bytes)?;
            let link = Link { seq: link.seq + 1, sha256: toolbelt_core::sha256_hex(&line) };
            let first = if first == 0 { link.seq } else { first };
            let anchored = if config.anchor { chain::write_head(&config.path, &link, first) } else { Ok(()) };
            if config.anchor && self.spare.is_none() {
                self.spare = Some(chain::head_spare_path(&config.path));
            }
            self.known = Some(Known { dev: meta.dev(), ino: meta.ino(), end: size + len, link, first });
            // Closing the file releases the lock too, should unlocking fail.
            self.file = locked.unlock().ok();
            return anchored;
        }
        Err(std::io::Error::other("the log was rotated or removed under every attempt to append to it"))
    }
}

/// Opens the live file for appending: its directory created 0700, the file 0600 (an existing
/// looser one tightened).
fn open(config: &AuditConfig) -> std::io::Result<File> {
    if let Some(dir) = config.path.parent().filter(|d| !d.as_os_str().is_empty()) {
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let file = OpenOptions::new().read(true).append(true).create(true).mode(0o600).open(&config.path)?;
    if file.metadata()?.permissions().mode() & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Where the chain stands when this process does not know: the last complete line of the
/// live file (or of the newest rotated one when the live file has none), unless the head
/// anchor is further on — then records were removed from the end, and the chain continues
/// from the anchor so that `verify` shows the gap instead of it closing over. Also says
/// whether the file ends in a partial line, and where the log starts (the anchor's word for
/// it, else the oldest record on disk; 0 when there is none yet).
fn recover(config: &AuditConfig, file: &File, size: u64) -> std::io::Result<(Link, bool, u64)> {
    let tail = chain::read_tail(file, size)?;
    let mut link = match &tail.last {
        Some(line) => Some(Link::of_line(line)),
        None => newest_rotated(config)?,
    };
    let head = if config.anchor { chain::read_head(&config.path).ok().flatten() } else { None };
    if let Some(head) = &head
        && link.as_ref().is_none_or(|l| head.seq > l.seq)
    {
        link = Some(head.link());
    }
    let first = match head.filter(|h| h.first > 0) {
        Some(head) => head.first,
        None => chain::first_seq(&config.path)?.unwrap_or(0),
    };
    Ok((link.unwrap_or_else(Link::genesis), tail.partial, first))
}

fn newest_rotated(config: &AuditConfig) -> std::io::Result<Option<Link>> {
    let file = match File::open(chain::numbered(&config.path, 1)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    Ok(chain::read_tail(&file, size)?.last.map(|line| Link::of_line(&line)))
}

/// The line of the record after `seq` (whose line's SHA-256 is `prev`): `seq` and `prev`
/// first, then the fields of `body` (a JSON object).
pub fn chain_line(seq: u64, prev: &str, body: &[u8]) -> Vec<u8> {
    let mut line = format!("{{\"seq\":{},\"prev\":\"{prev}\"", seq + 1).into_bytes();
    match body.strip_prefix(b"{").filter(|rest| rest.len() > 1) {
        Some(rest) => {
            line.push(b',');
            line.extend_from_slice(rest);
        }
        None => line.push(b'}'),
    }
    line
}

/// `path.N-1` → `path.N` … `path` → `path.1`, the oldest dropped. Nothing is ever truncated:
/// `keep = 0` is read as 1, so the chain can always be followed across the last rotation.
fn rotate(config: &AuditConfig) -> std::io::Result<()> {
    let path = &config.path;
    let keep = config.keep.max(1);
    for n in (1..keep).rev() {
        match std::fs::rename(chain::numbered(path, n), chain::numbered(path, n + 1)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    std::fs::rename(path, chain::numbered(path, 1))
}
