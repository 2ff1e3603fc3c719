//! Paths as they are written and as they really are, shared by the policy (which judges
//! both) and the tools (which locate a path among the roots).

use std::path::{Component, Path, PathBuf};

/// The path with `.` and `..` folded lexically and symlinks followed as far as the path
/// exists (the missing tail is kept as written): where a write to a new file would land.
///
/// The part that exists is opened (`O_PATH`: nothing is read, a FIFO does not block) and the
/// kernel asked where the handle is ([`of_handle`]): three system calls whatever the depth,
/// where `realpath` reads each component as a link (eight for `/home/u/src/app/src/lib.rs`).
pub fn real_path(path: &Path) -> PathBuf {
    let path = normalize(path);
    let mut existing = path.as_path();
    let mut tail = Vec::new();
    loop {
        if let Some(mut real) = resolved(existing) {
            for part in tail.iter().rev() {
                real.push(part);
            }
            return real;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                existing = parent;
            }
            _ => return path,
        }
    }
}

/// Where `path` really is, when it exists.
fn resolved(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let handle = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH).open(path).ok()?;
    of_handle(&handle).or_else(|| std::fs::canonicalize(path).ok())
}

/// The absolute path the kernel holds for an open handle (`/proc/self/fd/N`, through a
/// `/proc` checked to be the real procfs with nothing mounted over it); `None` when it cannot
/// say (no usable `/proc`), or says something that is not a path to an existing file (a
/// pipe, a socket, a file removed since it was opened: its link reads "<path> (deleted)"; a
/// file really named so is left to the caller's slower way, which is as right).
pub fn of_handle(handle: &impl std::os::fd::AsFd) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt as _;
    let proc_fd = rustix_linux_procfs::proc_self_fd().ok()?;
    let link = rustix::fs::readlinkat(proc_fd, rustix::path::DecInt::from_fd(handle), Vec::new()).ok()?;
    let path = PathBuf::from(std::ffi::OsString::from_vec(link.into_bytes()));
    let removed = path.as_os_str().as_encoded_bytes().ends_with(b" (deleted)");
    (path.is_absolute() && !removed).then_some(path)
}

/// Folds `.` and `..` without touching the file system (`/a/b/../c` → `/a/c`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_names_the_opened_file_where_it_really_is() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("dir")).unwrap();
        std::fs::write(real.join("dir/a.txt"), "x").unwrap();
        std::os::unix::fs::symlink(real.join("dir"), real.join("link")).unwrap();
        let file = std::fs::File::open(real.join("link/a.txt")).unwrap();
        assert_eq!(of_handle(&file), Some(real.join("dir/a.txt")));
        // Renamed while open: the new name. Removed: nothing.
        std::fs::rename(real.join("dir/a.txt"), real.join("dir/b.txt")).unwrap();
        assert_eq!(of_handle(&file), Some(real.join("dir/b.txt")));
        std::fs::remove_file(real.join("dir/b.txt")).unwrap();
        assert_eq!(of_handle(&file), None);
    }

    #[test]
    fn a_real_path_follows_links_as_far_as_the_path_exists() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(real.join("a/b")).unwrap();
        std::os::unix::fs::symlink(real.join("a"), real.join("l")).unwrap();
        std::os::unix::fs::symlink("missing", real.join("dangling")).unwrap();
        std::fs::write(real.join("f"), "").unwrap();
        let cases = [
            ("l/b", real.join("a/b")),
            ("l/b/new/deeper.txt", real.join("a/b/new/deeper.txt")),
            ("l/./b/../b", real.join("a/b")),
            ("dangling", real.join("dangling")),
            ("f/under-a-file", real.join("f/under-a-file")),
        ];
        for (given, expected) in cases {
            assert_eq!(real_path(&tmp.path().join(given)), expected, "{given}");
        }
        assert_eq!(real_path(Path::new("/nonexistent-root/x")), PathBuf::from("/nonexistent-root/x"));
    }
}
