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

/// Most sockets covered for one command; with more listening outside the workspace, the
/// command is not started sandboxed (leaving some reachable would be no sandbox).
pub(super) const MAX_SOCKETS: usize = 256;

/// The listening path sockets outside `dirs`; `Err(())` when there are more than
/// [`MAX_SOCKETS`].
pub(super) fn outside(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, ()> {
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(text) = table.read() else { return Ok(Vec::new()) };
    let mut out: Vec<PathBuf> = Vec::new();
    for path in listening_paths(text) {
        if !dirs.iter().any(|d| path.starts_with(d)) && !out.contains(&path) && is_socket(&path) {
            if out.len() == MAX_SOCKETS {
                return Err(());
            }
            out.push(path);
        }
    }
    Ok(out)
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
    fn read(&mut self) -> Option<&[u8]> {
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
        self.buf.get(..len)
    }
}

/// The paths of the sockets `/proc/net/unix` lists (`@…` abstract names left out: Landlock
/// scopes those). The kernel prints a path's bytes as they are, after seven fields and one
/// space: a name that is not UTF-8 or holds a space is read whole, and costs no other socket
/// its mask (a socket any process can bind must not turn the masking off).
fn listening_paths(table: &[u8]) -> impl Iterator<Item = PathBuf> + '_ {
    use std::os::unix::ffi::OsStrExt as _;
    table.split(|&b| b == b'\n').skip(1).filter_map(|line| {
        let mut rest = line;
        for _ in 0..7 {
            rest = rest.trim_ascii_start();
            let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            rest = rest.get(end..)?;
        }
        let path = rest.strip_prefix(b" ")?;
        path.starts_with(b"/").then(|| PathBuf::from(std::ffi::OsStr::from_bytes(path)))
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
        let paths: Vec<PathBuf> = listening_paths(table.as_bytes()).collect();
        assert_eq!(paths, [PathBuf::from("/run/docker.sock")]);
    }

    #[test]
    fn a_name_that_is_not_utf8_or_holds_a_space_is_read_whole() {
        use std::os::unix::ffi::OsStrExt as _;
        let mut table = b"Num       RefCount Protocol Flags    Type St Inode Path\n".to_vec();
        table.extend_from_slice(b"0000: 00000002 00000000 00010000 0001 01   77 /tmp/\xff\xfe.sock\n");
        table.extend_from_slice(b"0000: 00000002 00000000 00010000 0001 01 1234 /run/docker.sock\n");
        table.extend_from_slice(b"0000: 00000002 00000000 00010000 0001 01 1236 /tmp/a b.sock\n");
        let paths: Vec<PathBuf> = listening_paths(&table).collect();
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xff\xfe.sock"));
        assert_eq!(paths, [odd, PathBuf::from("/run/docker.sock"), PathBuf::from("/tmp/a b.sock")]);
    }

    #[test]
    fn a_listening_socket_outside_is_found() {
        use std::os::unix::ffi::OsStrExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // Beside a socket whose name is not UTF-8, which any process may bind.
        let odd = dir.path().canonicalize().unwrap().join(std::ffi::OsStr::from_bytes(b"\xff s.sock"));
        let _odd = std::os::unix::net::UnixListener::bind(&odd).unwrap();
        let found = outside(&[]).expect("fewer listening sockets on this machine than the cap");
        assert!(found.contains(&path) && found.contains(&odd), "{found:?}");
        let inside = outside(&[path.parent().unwrap().to_path_buf()]).expect("under the cap");
        assert!(!inside.contains(&path), "inside a writable root");
    }
}
