//! Paths as they are written and as they really are, shared by the policy (which judges
//! both) and the tools (which locate a path among the roots).

use std::path::{Component, Path, PathBuf};

/// The path with `.` and `..` folded lexically and symlinks followed as far as the path
/// exists (the missing tail is kept as written): where a write to a new file would land.
pub fn real_path(path: &Path) -> PathBuf {
    let path = normalize(path);
    let mut existing = path.as_path();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut real = real;
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
