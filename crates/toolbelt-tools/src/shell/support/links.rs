//! Where a command that follows symbolic links would read: the links below the directories
//! it walks that lead out of the workspace roots.
//!
//! `rg -L secret` names no file outside the roots, but a repository shipping `keys ->
//! ~/.ssh` makes it read the user's keys. So for a program that follows links
//! ([`toolbelt_command::operands::Follow`]) the shell tool walks what it would walk, follows
//! the links that stay inside the roots as it would (each directory once), and declares
//! every link that leads out as a path the command reads: the permission engine sees it as
//! declared and as it really is, so it asks like `cat keys/id_rsa` (and a `Read(~/.ssh/**)`
//! deny rule refuses it), suggesting the rule for where the link leads. A tree whose links
//! all stay inside adds no question.
//!
//! The walk is bounded ([`MAX_ENTRIES`]); a tree larger than that is not proved free of
//! links out, and the call then asks saying so.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Most directory entries the walks of one call look at.
pub const MAX_ENTRIES: usize = 200_000;

/// What the walks found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LinksOut {
    /// The links (as found below the walked directories) whose target lies outside the roots.
    pub links: Vec<PathBuf>,
    /// The walks stopped at [`MAX_ENTRIES`] before seeing everything.
    pub unfinished: bool,
}

/// The links below `starts` that lead outside `roots`, following the links that stay inside
/// (each directory walked once); with `recursive` false only the starts' own entries are
/// looked at (`ls -L` without `-R`). Starts outside the roots are not walked: reading them
/// asks already.
pub fn links_out(starts: &[PathBuf], roots: &[PathBuf], recursive: bool) -> LinksOut {
    let roots: Vec<PathBuf> = roots.iter().map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone())).collect();
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    let mut out = LinksOut::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut pending: Vec<PathBuf> = Vec::new();
    for start in starts {
        let Ok(real) = std::fs::canonicalize(start) else { continue };
        if !inside(&real) {
            continue;
        }
        if real.is_dir() && seen.insert(real.clone()) {
            pending.push(real);
        }
    }
    let mut entries = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else { continue };
        for entry in read.flatten() {
            entries += 1;
            if entries > MAX_ENTRIES {
                out.unfinished = true;
                return out;
            }
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            let next = if kind.is_symlink() {
                let Ok(target) = std::fs::canonicalize(&path) else { continue };
                if !inside(&target) {
                    out.links.push(path);
                    continue;
                }
                Some(target).filter(|t| t.is_dir())
            } else {
                kind.is_dir().then_some(path)
            };
            if let Some(next) = next.filter(|_| recursive)
                && seen.insert(next.clone())
            {
                pending.push(next);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_out_are_found_through_links_that_stay_in() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("c")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("key"), "k").unwrap();
        symlink(&outside, root.join("c/out")).unwrap();
        symlink(root.join("c"), root.join("a/b/to-c")).unwrap();
        symlink(root.join("a"), root.join("a/b/loop")).unwrap();
        symlink(base.join("missing"), root.join("a/dangling")).unwrap();
        let roots = [root.clone()];
        // From `a`, only through the inside link `to-c`.
        assert_eq!(links_out(&[root.join("a")], &roots, true).links, [root.join("c/out")]);
        assert_eq!(
            links_out(&[root.join("a/b/loop")], &roots, true).links,
            [root.join("c/out")],
            "a start that is a link"
        );
        // Without recursion only the start's own entries: `c/out` is two levels below `a`.
        assert_eq!(links_out(&[root.join("a")], &roots, false), LinksOut::default());
        assert_eq!(links_out(&[root.join("c")], &roots, false).links, [root.join("c/out")]);
        // Nothing leads out of `a/b` once `c` is gone.
        std::fs::remove_file(root.join("c/out")).unwrap();
        assert_eq!(links_out(&[root.join("a")], &roots, true), LinksOut::default());
        // A start outside the roots is not walked.
        symlink(&outside, outside.join("self")).unwrap();
        assert_eq!(links_out(std::slice::from_ref(&outside), &roots, true), LinksOut::default());
    }
}
