//! Where a declared path really is, and whether it lies inside the workspace roots.
//!
//! The policy judges paths as tools declared them (absolute, resolved against the cwd) and as
//! they really are (symlinks followed), because a rule about one must hold for the other: an
//! allow rule must match both, a deny rule either. Nothing here opens a file for a tool — the
//! tools confine themselves at open time — so these answers only ever decide *whether to
//! ask*, never what a tool can reach.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use toolbelt_core::{Access, Touch};

pub use toolbelt_core::paths::{normalize, real_path};

/// Workspace roots, each as given and as it really is: resolved once per list of roots, then
/// asked about every path a call touches.
#[derive(Debug, Clone)]
pub struct Roots(Arc<[PathBuf]>);

/// Lists of roots already resolved, the newest last: a session's roots and read roots (and a
/// sub-agent's) change seldom, and resolving each root's real location — `realpath`, a system
/// call per component — for each call was a tenth of a small call's cost over MCP.
static RESOLVED: Mutex<Vec<(Vec<PathBuf>, Roots)>> = Mutex::new(Vec::new());

/// How many lists [`RESOLVED`] remembers.
const REMEMBERED: usize = 16;

impl Roots {
    /// The roots and their real locations. A list seen before keeps the real locations found
    /// then: a root made a symlink afterwards (by a command inside another root) does not
    /// carry the roots to where it now leads.
    pub fn new(roots: &[PathBuf]) -> Self {
        let mut resolved = RESOLVED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, known)) = resolved.iter().find(|(list, _)| list.as_slice() == roots) {
            return known.clone();
        }
        let mut all: Vec<PathBuf> = Vec::with_capacity(roots.len() * 2);
        for root in roots {
            for candidate in [root.clone(), real_path(root)] {
                if !all.contains(&candidate) {
                    all.push(candidate);
                }
            }
        }
        let made = Roots(all.into());
        if resolved.len() >= REMEMBERED {
            resolved.remove(0);
        }
        resolved.push((roots.to_vec(), made.clone()));
        made
    }

    /// Whether a path, as declared (`given`, normalized) and as it really is (`real`), lies
    /// inside the roots, compared component by component (`/w/app2` is not inside `/w/app`).
    /// Both must be inside: a symlink inside the roots that leads out is outside.
    pub fn contain(&self, given: &Path, real: &Path) -> bool {
        let inside = |p: &Path| self.0.iter().any(|r| p.starts_with(r));
        inside(given) && inside(real)
    }

    /// The path to name as outside the roots, `None` when both views are inside: where a
    /// symlink leads when that is outside (it is what needs approving or adding as a root),
    /// else the path as declared.
    pub fn outside_view(&self, given: &Path, real: &Path) -> Option<PathBuf> {
        let inside = |p: &Path| self.0.iter().any(|r| p.starts_with(r));
        if !inside(real) {
            Some(real.to_path_buf())
        } else if !inside(given) {
            Some(given.to_path_buf())
        } else {
            None
        }
    }
}

/// Whether `path` is one of `roots` or lies beneath one; see [`Roots::contain`].
pub fn inside_roots(path: &Path, roots: &[PathBuf]) -> bool {
    Roots::new(roots).contain(&normalize(path), &real_path(path))
}

/// The paths a call reads or writes outside what the session may read (its roots and data
/// directory) or write (its roots), in declaration order.
pub fn outside_session(access: &Access, session: &toolbelt_core::SessionState) -> Vec<PathBuf> {
    let (write, read) = (Roots::new(&session.roots()), Roots::new(&session.read_roots()));
    let mut out: Vec<PathBuf> = Vec::new();
    for touch in &access.touches {
        let outside = match touch {
            Touch::Read(p) => read.outside_view(&normalize(p), &real_path(p)),
            Touch::Write(p) => write.outside_view(&normalize(p), &real_path(p)),
            _ => None,
        };
        if let Some(p) = outside
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

/// The paths a call reads or writes that lie outside the roots, in declaration order.
pub fn outside_roots(access: &Access, roots: &[PathBuf]) -> Vec<PathBuf> {
    let roots = Roots::new(roots);
    let mut out: Vec<PathBuf> = Vec::new();
    for touch in &access.touches {
        if let Touch::Read(p) | Touch::Write(p) = touch
            && let Some(p) = roots.outside_view(&normalize(p), &real_path(p))
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_dots_and_compares_components() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        let roots = vec![PathBuf::from("/nonexistent-root/app")];
        assert!(inside_roots(Path::new("/nonexistent-root/app/src/x.rs"), &roots));
        assert!(inside_roots(Path::new("/nonexistent-root/app"), &roots));
        assert!(!inside_roots(Path::new("/nonexistent-root/app2/x"), &roots));
        assert!(!inside_roots(Path::new("/nonexistent-root/app/../etc"), &roots));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leading_out_is_outside() {
        let dir = std::env::temp_dir().join(format!("tb-paths-{}", std::process::id()));
        let root = dir.join("root");
        let other = dir.join("other");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&other, root.join("link")).unwrap();
        let roots = vec![root.clone()];
        assert!(inside_roots(&root.join("new-file"), &roots));
        assert!(!inside_roots(&root.join("link/secret"), &roots));
        assert_eq!(real_path(&root.join("link/new")), std::fs::canonicalize(&other).unwrap().join("new"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
