//! Hard links: a file's content is reachable under every name it has, so a second name must
//! not carry what the first is kept from.
//!
//! A hard link inside the workspace to a file outside it (`ln /etc/shadow notes.txt`, made by
//! a command or shipped in an archive) would let Read reach what it may not open, and a link
//! to a file a `Read(…)` deny rule hides (`ln secret.txt innocent.txt`) would read it under
//! another name. Confinement at open time cannot see either: the kernel opens the inode the
//! name points to.
//!
//! How it is decided: a regular file with one link is fine (the common case, one `fstat` on
//! the open handle). For a file with `n > 1` links, every workspace root is walked once per
//! call (hidden and ignored files included, symlinks not followed, at most
//! [`MAX_ENTRIES`] entries) collecting the names of every multiply-linked file by device and
//! inode. The file is read only if all `n` of its names were found inside the roots and none
//! of them is hidden by a deny rule; otherwise it is refused with the reason. Package
//! managers that link files from a store outside the project (pnpm) are refused too: their
//! files' other names cannot be proven to lie inside the roots.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolbelt_core::{HiddenPaths, ToolError};

/// Most entries walked to find a file's other names; beyond, the rest cannot be proven.
pub const MAX_ENTRIES: usize = 500_000;

/// The hard-link check of one call's workspace.
pub struct Links {
    roots: Vec<PathBuf>,
    hidden: Option<Arc<dyn HiddenPaths>>,
    index: OnceLock<Index>,
}

/// Every multiply-linked file's names inside the roots.
#[derive(Default)]
struct Index {
    names: HashMap<(u64, u64), Vec<PathBuf>>,
    complete: bool,
}

impl Links {
    /// A check over these (canonical) roots, refusing links to files `hidden` hides.
    pub fn new(roots: Vec<PathBuf>, hidden: Option<Arc<dyn HiddenPaths>>) -> Self {
        Self { roots, hidden, index: OnceLock::new() }
    }

    /// Refuses `file` (opened as `path`) when it has other names that are not all inside the
    /// roots, or when one of them is hidden.
    pub fn check(&self, file: &std::fs::File, path: &Path) -> Result<(), ToolError> {
        let meta = file.metadata().map_err(|e| crate::fs::error::io_error(path, &e))?;
        self.check_metadata(&meta, path)
    }

    /// [`Links::check`] for a file whose handle's metadata is at hand.
    pub fn check_metadata(&self, meta: &std::fs::Metadata, path: &Path) -> Result<(), ToolError> {
        if !meta.is_file() || meta.nlink() <= 1 {
            return Ok(());
        }
        let index = self.index.get_or_init(|| Index::build(&self.roots));
        let names = index.names.get(&(meta.dev(), meta.ino())).map(Vec::as_slice).unwrap_or_default();
        let found = u64::try_from(names.len()).unwrap_or(u64::MAX);
        if found < meta.nlink() {
            let why = if index.complete {
                format!("only {found} of them {} inside the workspace roots", if found == 1 { "is" } else { "are" })
            } else {
                format!("the workspace has more than {MAX_ENTRIES} entries, so its other names cannot all be found")
            };
            return Err(ToolError::failed(format!(
                "{} is not read: it has {} hard links (names for the same file) and {why}, so it may be a file from \
                 outside the workspace under another name. Read the file where it really lives (ask the user to add \
                 its directory with --add-dir), or work on a copy the user makes",
                path.display(),
                meta.nlink()
            )));
        }
        if let Some(hidden) = &self.hidden
            && let Some(name) = names.iter().find(|n| hidden.is_hidden(n))
        {
            return Err(ToolError::failed(format!(
                "{} is not read: it is a hard link to {}, which a deny rule keeps from being read",
                path.display(),
                name.display()
            )));
        }
        Ok(())
    }
}

/// The other names (hard links) of the file at `path` inside `roots`.
pub fn other_names(roots: &[PathBuf], path: &Path) -> Vec<PathBuf> {
    let Ok(meta) = std::fs::metadata(path) else { return Vec::new() };
    if meta.nlink() <= 1 || roots.is_empty() {
        return Vec::new();
    }
    let index = Index::build(roots);
    let names = index.names.get(&(meta.dev(), meta.ino())).cloned().unwrap_or_default();
    names.into_iter().filter(|n| n != path).collect()
}

impl Index {
    fn build(roots: &[PathBuf]) -> Index {
        let mut index = Index { names: HashMap::new(), complete: true };
        let mut seen = 0usize;
        for root in roots {
            let walk = ignore::WalkBuilder::new(root).standard_filters(false).follow_links(false).build();
            for entry in walk {
                seen += 1;
                if seen > MAX_ENTRIES {
                    index.complete = false;
                    return index;
                }
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(meta) = entry.metadata() else { continue };
                if meta.nlink() > 1 {
                    let names = index.names.entry((meta.dev(), meta.ino())).or_default();
                    if !names.iter().any(|n| n == entry.path()) {
                        names.push(entry.path().to_path_buf());
                    }
                }
            }
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct HideSecret;
    impl HiddenPaths for HideSecret {
        fn is_hidden(&self, path: &Path) -> bool {
            path.ends_with("secret.txt")
        }
    }

    #[test]
    fn links_must_all_be_inside_and_visible() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("plain.txt"), "p").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::hard_link(root.join("a.txt"), root.join("sub/b.txt")).unwrap();
        std::fs::write(outside.join("shadow"), "s").unwrap();
        std::fs::hard_link(outside.join("shadow"), root.join("notes.txt")).unwrap();
        std::fs::write(root.join("secret.txt"), "k").unwrap();
        std::fs::hard_link(root.join("secret.txt"), root.join("innocent.txt")).unwrap();

        let links = Links::new(vec![root.clone()], Some(Arc::new(HideSecret)));
        let check = |name: &str| {
            let path = root.join(name);
            links.check(&std::fs::File::open(&path).unwrap(), &path)
        };
        check("plain.txt").unwrap();
        check("a.txt").unwrap();
        check("sub/b.txt").unwrap();
        let outside_link = check("notes.txt").unwrap_err().to_string();
        assert!(
            outside_link.contains("2 hard links") && outside_link.contains("only 1 of them is inside"),
            "{outside_link}"
        );
        let hidden_link = check("innocent.txt").unwrap_err().to_string();
        assert!(hidden_link.contains("hard link to") && hidden_link.contains("secret.txt"), "{hidden_link}");
    }
}
