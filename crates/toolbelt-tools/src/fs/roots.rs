//! The workspace roots, and confinement to them **at open time**.
//!
//! Every file a tool touches is opened through an [`OpenRoots`]: each root is held as an open
//! directory handle (`cap_std::fs::Dir`), and a path is opened *beneath* that handle, with
//! every component resolved by the kernel relative to it (`openat2(RESOLVE_BENEATH)` where
//! available). `..` past the root and symlinks (to files or directories) that lead outside
//! fail at the open itself — there is no check-then-open window for a
//! swapped symlink to slip through, and no string-prefix comparison (`/work/app2` is not
//! inside `/work/app`: roots are matched component by component). A symlink naming a target
//! inside the roots by absolute path is found again where it really is and opened beneath
//! that root ([`OpenRoots::relocated`]).
//!
//! A path outside every root is refused with an error that says how to add a root (the
//! permission engine will later be able to ask instead; the path is already declared in the
//! call's access).

use std::path::{Component, Path, PathBuf};

use std::sync::Arc;

use cap_std::fs::Dir;
use toolbelt_core::paths::{normalize, of_handle, real_path};
use toolbelt_core::{HiddenPaths, ToolContext, ToolError};

use crate::fs::error::{escapes, io_error, is_a_directory};
use crate::fs::links::Links;
use crate::fs::opened::{self, Root, RootError};
use crate::fs::regular::{OpenError, open_regular_to_read, open_regular_with_metadata};

/// The session's workspace roots, opened.
pub struct OpenRoots {
    roots: Vec<Arc<Root>>,
    links: Links,
}

/// A path located inside a root: which root, and the path relative to it (as given, `..`
/// and symlinks still unresolved — the open resolves them, confined).
#[derive(Debug, Clone)]
pub struct Located {
    root: usize,
    /// The path relative to the root.
    pub rel: PathBuf,
    /// The absolute path as the caller named it (for messages).
    pub abs: PathBuf,
}

impl OpenRoots {
    /// Opens the roots of the call's session; files the call must not see (a deny rule's)
    /// stay out of reach under other names too (see [`Links`]).
    pub fn open(cx: &ToolContext) -> Result<Self, ToolError> {
        Self::with_hidden(&cx.roots(), cx.hidden(), false)
    }

    /// Opens the roots a call may read: the session's, and its data directory (spilled
    /// output, task logs), which no write tool opens.
    pub fn open_for_reading(cx: &ToolContext) -> Result<Self, ToolError> {
        Self::with_hidden(&cx.read_roots(), cx.hidden(), true)
    }

    /// Opens the given roots (canonicalizing them).
    #[cfg(test)]
    pub fn from_paths(paths: &[PathBuf]) -> Result<Self, ToolError> {
        Self::with_hidden(paths, None, false)
    }

    /// Opens `paths`; with `skip_missing`, a root that does not exist is left out.
    fn with_hidden(
        paths: &[PathBuf],
        hidden: Option<Arc<dyn HiddenPaths>>,
        skip_missing: bool,
    ) -> Result<Self, ToolError> {
        let mut roots = Vec::with_capacity(paths.len());
        for p in paths {
            let root = opened::root(p);
            if skip_missing && matches!(&root, Err(RootError::Resolve(e)) if e.kind() == std::io::ErrorKind::NotFound) {
                continue;
            }
            roots.push(root.map_err(|e| match e {
                RootError::Resolve(e) => {
                    ToolError::failed(format!("workspace root {} is not usable: {e}", p.display()))
                }
                RootError::Open(path, e) => {
                    ToolError::failed(format!("workspace root {} cannot be opened: {e}", path.display()))
                }
            })?);
        }
        let links = Links::new(roots.iter().map(|r| r.path.clone()).collect(), hidden);
        Ok(Self { roots, links })
    }

    /// The canonical root paths.
    pub fn root_paths(&self) -> Vec<&Path> {
        self.roots.iter().map(|r| r.path.as_path()).collect()
    }

    /// Finds the root a path lies under. `path` must be absolute (resolve it against the
    /// session cwd first). `.` and `..` are folded first, as the permission engine folds them
    /// when it judges the path, so `../other/x` is located in the root `../other` (when it is
    /// one) rather than escaping the cwd's root; the open stays confined beneath the root
    /// either way. The deepest matching root wins.
    pub fn locate(&self, path: &Path) -> Result<Located, ToolError> {
        let folded = normalize(path);
        let path = folded.as_path();
        let mut best: Option<(usize, PathBuf)> = None;
        for (i, root) in self.roots.iter().enumerate() {
            if let Ok(rest) = strip_root(path, &root.path)
                && best
                    .as_ref()
                    .is_none_or(|(b, _)| self.roots[*b].path.components().count() < root.path.components().count())
            {
                best = Some((i, rest));
            }
        }
        match best {
            Some((root, rel)) => Ok(Located { root, rel, abs: path.to_path_buf() }),
            None => Err(self.outside(path)),
        }
    }

    /// The error for a path outside every root.
    pub fn outside(&self, path: &Path) -> ToolError {
        let roots: Vec<String> = self.roots.iter().map(|r| r.path.display().to_string()).collect();
        let suggestion = path.parent().unwrap_or(path).display().to_string();
        ToolError::failed(format!(
            "{} is outside the workspace roots ({}); use a path inside them, or start toolbelt with `--add-dir {suggestion}` to add a root",
            path.display(),
            roots.join(", ")
        ))
    }

    /// The root directory handle a located path is relative to.
    pub fn dir(&self, loc: &Located) -> &Dir {
        &self.roots[loc.root].dir
    }

    /// The canonical path of the root a located path is in.
    pub fn root_path(&self, loc: &Located) -> &Path {
        &self.roots[loc.root].path
    }

    /// Resolves symlinks and `..` (confined) and returns the real location, whose `rel` has
    /// no symlink left and whose `abs` is the real absolute path. The file must exist.
    ///
    /// A symlink naming its target by absolute path (or leading into another root) cannot be
    /// followed beneath the root it starts in; when its target is inside a root, the path is
    /// located again where it really is ([`OpenRoots::relocated`]) and resolved there.
    pub fn real(&self, loc: &Located) -> Result<Located, ToolError> {
        if loc.rel.as_os_str().is_empty() {
            return Ok(Located { root: loc.root, rel: PathBuf::new(), abs: self.roots[loc.root].path.clone() });
        }
        match self.dir(loc).canonicalize(&loc.rel) {
            Ok(rel) => {
                let abs = self.roots[loc.root].path.join(&rel);
                Ok(Located { root: loc.root, rel, abs })
            }
            Err(e) if escapes(&e) => match self.relocated(loc) {
                Some(moved) => {
                    let rel = self.dir(&moved).canonicalize(&moved.rel).map_err(|e| io_error(&loc.abs, &e))?;
                    let abs = self.roots[moved.root].path.join(&rel);
                    Ok(Located { root: moved.root, rel, abs })
                }
                None => Err(io_error(&loc.abs, &e)),
            },
            Err(e) => Err(io_error(&loc.abs, &e)),
        }
    }

    /// Where `loc` really is when its symlinks lead by absolute path or into another root:
    /// the real path (symlinks followed for the part that exists) located among the roots;
    /// `None` when that is outside every root. This only picks the root and the path to open
    /// beneath it: the open itself stays confined there, so a symlink swapped meanwhile
    /// still cannot lead out.
    pub fn relocated(&self, loc: &Located) -> Option<Located> {
        let moved = self.locate(&real_path(&loc.abs)).ok()?;
        (moved.root != loc.root || moved.rel != loc.rel).then(|| Located { abs: loc.abs.clone(), ..moved })
    }

    /// Opens a regular file for reading, confined and without blocking (a FIFO, a device or
    /// a socket is refused, see [`crate::fs::regular`]); a file with other names (hard links) is
    /// read only when all of them are inside the roots and visible ([`Links`]).
    pub fn open_file(&self, loc: &Located) -> Result<std::fs::File, ToolError> {
        if loc.rel.as_os_str().is_empty() {
            return Err(is_a_directory(&loc.abs));
        }
        let (file, meta) = open_regular_with_metadata(self.dir(loc), &loc.rel).map_err(|e| e.tool_error(&loc.abs))?;
        self.links.check_metadata(&meta, &loc.abs)?;
        Ok(file)
    }

    /// Opens a regular file for reading, confined, as [`OpenRoots::open_file`] does (but with
    /// `O_NONBLOCK` left set: see [`open_regular_to_read`]), and leaves it unread until
    /// [`OpenRoots::confirm`] has checked its other names (a walk of the workspace when it has
    /// any): a caller on an async thread can look at its size and names first and confirm it
    /// on the blocking pool, without opening it again.
    pub fn open_unconfirmed(&self, loc: &Located) -> Result<Unconfirmed, ToolError> {
        if loc.rel.as_os_str().is_empty() {
            return Err(is_a_directory(&loc.abs));
        }
        match open_regular_to_read(self.dir(loc), &loc.rel) {
            Ok((file, meta)) => Ok(Unconfirmed { at: loc.clone(), file, meta }),
            Err(OpenError::Io(e)) if escapes(&e) => match self.relocated(loc) {
                Some(moved) => {
                    let (file, meta) =
                        open_regular_to_read(self.dir(&moved), &moved.rel).map_err(|e| e.tool_error(&loc.abs))?;
                    Ok(Unconfirmed { at: moved, file, meta })
                }
                None => Err(io_error(&loc.abs, &e)),
            },
            Err(e) => Err(e.tool_error(&loc.abs)),
        }
    }

    /// The file [`OpenRoots::open_unconfirmed`] opened, once its other names are checked
    /// ([`Links`]), with where it really is (as [`OpenRoots::real`] says): read from the open
    /// handle ([`of_handle`]), which spares resolving the path a second time (four system
    /// calls), and names what was opened rather than what the path names now.
    pub fn confirm(&self, opened: Unconfirmed) -> Result<(Located, std::fs::File, std::fs::Metadata), ToolError> {
        let Unconfirmed { at, file, meta } = opened;
        let root = &self.roots[at.root].path;
        let real = match of_handle(&file).and_then(|abs| Some((strip_root(&abs, root).ok()?, abs))) {
            Some((rel, abs)) => Located { root: at.root, rel, abs },
            None => self.real(&at)?,
        };
        self.links.check_metadata(&meta, &real.abs)?;
        Ok((real, file, meta))
    }

    /// The index of the root whose canonical path is `path`, if it is one of the roots.
    pub fn root_index(&self, path: &Path) -> Option<usize> {
        self.roots.iter().position(|r| r.path == path)
    }

    /// The handle of root number `index` (see [`OpenRoots::root_index`]).
    pub fn root_dir(&self, index: usize) -> Option<&Dir> {
        self.roots.get(index).map(|r| &r.dir)
    }

    /// Which root a located path is in (an index into [`OpenRoots::root_paths`]).
    pub fn root_of(&self, loc: &Located) -> usize {
        loc.root
    }

    /// Refuses a file opened some other way (Grep's walk) as [`OpenRoots::open_file`] would.
    pub fn check_links(&self, file: &std::fs::File, path: &Path) -> Result<(), ToolError> {
        self.links.check(file, path)
    }

    /// Metadata (following symlinks, confined).
    pub fn metadata(&self, loc: &Located) -> Result<cap_std::fs::Metadata, ToolError> {
        if loc.rel.as_os_str().is_empty() {
            return self.dir(loc).dir_metadata().map_err(|e| io_error(&loc.abs, &e));
        }
        self.dir(loc).metadata(&loc.rel).map_err(|e| io_error(&loc.abs, &e))
    }

    /// Whether the path exists (confined). A path that escapes the roots is an error, not a
    /// "no"; a dangling symlink counts as missing.
    pub fn exists(&self, loc: &Located) -> Result<bool, ToolError> {
        match self.metadata(loc) {
            Ok(_) => Ok(true),
            Err(_) => match self.dir(loc).metadata(&loc.rel) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
                Err(e) if escapes(&e) => match self.relocated(loc) {
                    Some(moved) => self.exists(&moved),
                    None => Err(io_error(&loc.abs, &e)),
                },
                Err(e) => Err(io_error(&loc.abs, &e)),
                Ok(_) => Ok(true),
            },
        }
    }
}

/// A file opened by [`OpenRoots::open_unconfirmed`], not yet readable: only its metadata
/// shows until [`OpenRoots::confirm`] hands the handle over.
#[derive(Debug)]
pub struct Unconfirmed {
    at: Located,
    file: std::fs::File,
    meta: std::fs::Metadata,
}

impl Unconfirmed {
    /// The open handle's metadata.
    pub fn metadata(&self) -> &std::fs::Metadata {
        &self.meta
    }
}

/// `path` relative to `root`, compared component by component. Fails when `path` is not
/// under `root`.
fn strip_root(path: &Path, root: &Path) -> Result<PathBuf, ()> {
    let mut rest = path.components();
    for rc in root.components() {
        match rest.next() {
            Some(pc) if pc == rc => {}
            _ => return Err(()),
        }
    }
    let rel: PathBuf = rest.filter(|c| !matches!(c, Component::CurDir)).collect();
    Ok(rel)
}

/// Resolves a model-supplied path against the session cwd, expanding a leading `~/`.
pub fn absolute(cx: &ToolContext, raw: &str) -> PathBuf {
    let expanded = match raw.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest)),
        None => None,
    };
    let path = expanded.unwrap_or_else(|| PathBuf::from(raw));
    cx.resolve(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_match_by_component_not_by_prefix() {
        assert_eq!(strip_root(Path::new("/w/app/src/a.rs"), Path::new("/w/app")), Ok(PathBuf::from("src/a.rs")));
        assert_eq!(strip_root(Path::new("/w/app"), Path::new("/w/app")), Ok(PathBuf::new()));
        assert_eq!(strip_root(Path::new("/w/app2/a.rs"), Path::new("/w/app")), Err(()));
        assert_eq!(strip_root(Path::new("/w/ap"), Path::new("/w/app")), Err(()));
        // `..` is kept for the confined open to judge.
        assert_eq!(strip_root(Path::new("/w/app/../x"), Path::new("/w/app")), Ok(PathBuf::from("../x")));
    }
}
