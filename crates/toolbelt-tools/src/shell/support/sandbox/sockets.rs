//! Unix sockets bound to paths outside the workspace: `docker.sock`, an ssh agent, D-Bus,
//! a tmux server. With the network off, a command must not reach them.
//!
//! Landlock controls connecting to path sockets from ABI 9; on older kernels the sockets
//! listening at the moment a command starts (as `/proc/net/unix` lists them) that lie outside
//! the writable roots are covered by `/dev/null` in the command's mount namespace, so a
//! `connect` finds no socket there. A socket created after the command started is not
//! covered, and neither is one in another network namespace; `toolbelt sandbox check` says
//! which mechanism holds.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Most sockets covered for one command.
const MAX_SOCKETS: usize = 256;

/// The listening path sockets outside `dirs`.
pub(super) fn outside(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(text) = table.read() else { return Vec::new() };
    let mut out: Vec<PathBuf> = Vec::new();
    for path in listening_paths(text) {
        if out.len() >= MAX_SOCKETS {
            break;
        }
        if !dirs.iter().any(|d| path.starts_with(d)) && !out.contains(&path) && is_socket(&path) {
            out.push(path);
        }
    }
    out
}

/// `/proc/net/unix`, opened once, and a buffer to read it into.
static TABLE: Mutex<Table> = Mutex::new(Table { file: None, buf: Vec::new() });

#[derive(Debug)]
struct Table {
    file: Option<File>,
    buf: Vec<u8>,
}

impl Table {
    /// The table, read in as few calls as it takes: the kernel walks its whole socket table
    /// for every `read`, so the small first reads of a plain `read_to_string` (32 bytes, then
    /// doubling) would cost a walk each; with room for 64 KiB, a table of up to that size comes
    /// in one read (and one more that returns nothing). The file stays open and is read again
    /// from the start each time (looking the path up is a third of the cost); the lock makes
    /// each read one whole listing.
    fn read(&mut self) -> Option<&str> {
        use std::os::unix::fs::FileExt as _;
        if self.file.is_none() {
            self.file = Some(File::open("/proc/net/unix").ok()?);
        }
        let file = self.file.as_ref()?;
        if self.buf.len() < 64 * 1024 {
            self.buf.resize(64 * 1024, 0);
        }
        let mut len = 0;
        loop {
            if len == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match file.read_at(&mut self.buf[len..], len as u64) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        std::str::from_utf8(&self.buf[..len]).ok()
    }
}

/// The paths of the sockets `/proc/net/unix` lists (`@…` abstract names left out: Landlock
/// scopes those).
fn listening_paths(table: &str) -> impl Iterator<Item = PathBuf> + '_ {
    table.lines().skip(1).filter_map(|line| {
        let path = line.split_whitespace().nth(7)?;
        path.starts_with('/').then(|| PathBuf::from(path))
    })
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_paths_and_leaves_abstract_names() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000: 00000002 00000000 00010000 0001 01 1234 /run/docker.sock\n\
            0000: 00000002 00000000 00010000 0001 01 1235 @/tmp/.X11-unix/X0\n\
            0000: 00000003 00000000 00000000 0001 03 1236\n";
        let paths: Vec<PathBuf> = listening_paths(table).collect();
        assert_eq!(paths, [PathBuf::from("/run/docker.sock")]);
    }

    #[test]
    fn a_listening_socket_outside_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(outside(&[]).contains(&path));
        assert!(!outside(&[path.parent().unwrap().to_path_buf()]).contains(&path), "inside a writable root");
    }
}
