//! A temporary directory out of the sandbox's reach, for tests that check what sandboxed
//! commands cannot write (shared with the binary's attack tests).

use std::path::{Path, PathBuf};

/// A temp directory the sandbox does not leave writable: outside `/tmp`, `$TMPDIR` and
/// `/dev/shm` (which workspace-write allows), wherever the checkout itself lives. Tries
/// `/var/tmp`, then `$HOME`, then the target directory.
pub fn beyond_tmp() -> tempfile::TempDir {
    let writable_by_policy = |p: &Path| {
        let mut bases = vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
        if let Some(t) = std::env::var_os("TMPDIR") {
            bases.push(PathBuf::from(t));
        }
        bases.iter().any(|b| p.starts_with(b) || b.canonicalize().is_ok_and(|c| p.starts_with(c)))
    };
    let candidates = [
        Some(PathBuf::from("/var/tmp")),
        std::env::var_os("HOME").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
    ];
    for base in candidates.into_iter().flatten() {
        let Ok(real) = base.canonicalize() else { continue };
        if writable_by_policy(&real) {
            continue;
        }
        if let Ok(dir) = tempfile::tempdir_in(&real) {
            return dir;
        }
    }
    panic!("no writable directory outside /tmp, $TMPDIR and /dev/shm for the sandbox tests");
}
