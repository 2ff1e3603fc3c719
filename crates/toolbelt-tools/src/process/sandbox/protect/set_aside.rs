//! What becomes of a protected entry (`.git`, `.vscode`, `.idea`, `.toolbelt`, `.claude`,
//! `.mcp.json`) that a sandboxed process made in a project folder that had none.
//!
//! Nothing can hold a name before it exists without costing the workspace: Landlock cannot
//! refuse one name in a directory while allowing others, sealing the folder refuses every
//! new file, and a placeholder on disk is a stray `.git` that makes the folder look like a
//! repository to git, ripgrep and toolbelt's own project discovery. So the entry is looked for
//! when the process has ended ([`super::Missing::made`]) and, unless a person approved keeping
//! it, moved aside: renamed in its own folder to `NAME.set-aside` (`NAME.set-aside-2`, …),
//! where git, editors and agent hosts no longer find it. In place, so the move never crosses
//! file systems or copies a large repository, and restoring it is one `mv`. A command could
//! move it back as easily as it made it the first time — and is then caught the same way.
//!
//! The rename happens in the folder opened without following links and checked to be the one
//! looked into, with `RENAME_NOREPLACE`: a folder swapped for a link in the meantime moves
//! nothing elsewhere, and nothing that already has the new name is replaced. An entry a person
//! approved is remembered by its identity (device and inode) for as long as toolbelt runs, so a
//! later look (a background command that ran meanwhile) leaves it alone; a different entry put
//! in its place is not the approved one.

use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::process::git_config;

/// Most entries of a made directory named when saying what it holds.
const SHOWN: usize = 6;

/// The entries a person approved keeping: path, device, inode.
static KEPT: Mutex<Vec<(PathBuf, u64, u64)>> = Mutex::new(Vec::new());

/// Remembers that a person approved keeping `path` as it is now.
pub fn keep(path: &Path) {
    if let Ok(meta) = path.symlink_metadata() {
        let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|(p, ..)| p != path);
        kept.push((path.to_path_buf(), meta.dev(), meta.ino()));
    }
}

/// Whether `path` is an entry a person approved keeping (the same one, not one put in its
/// place since).
pub fn is_kept(path: &Path) -> bool {
    let Ok(meta) = path.symlink_metadata() else { return false };
    let kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    kept.iter().any(|(p, dev, ino)| p == path && *dev == meta.dev() && *ino == meta.ino())
}

/// Moves `path` aside in its own folder; returns where it went.
pub fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not an entry of a folder"));
    };
    let folder = open_folder(dir)?;
    for n in 1..=100 {
        let suffix = if n == 1 { ".set-aside".to_string() } else { format!(".set-aside-{n}") };
        let mut to = name.to_os_string();
        to.push(&suffix);
        match nix::fcntl::renameat2(&folder, name, &folder, to.as_os_str(), nix::fcntl::RenameFlags::RENAME_NOREPLACE) {
            Ok(()) => return Ok(dir.join(to)),
            Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "every name it could be moved to is taken"))
}

/// `dir`, opened without following a link at its last step and checked to be `dir` itself
/// (no link on the way to it either).
fn open_folder(dir: &Path) -> std::io::Result<OwnedFd> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let folder = nix::fcntl::open(dir, flags, nix::sys::stat::Mode::empty())?;
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", folder.as_raw_fd()))?;
    if opened != dir {
        return Err(std::io::Error::other(format!(
            "{} leads to {} now (a link was put on the way)",
            dir.display(),
            opened.display()
        )));
    }
    Ok(folder)
}

/// What `path` holds that a person deciding whether to keep it should know: for a `.git`,
/// the hooks and the programs its configuration names; for another folder, its first
/// entries; for a link, where it leads. Empty when there is nothing to say.
pub fn holds(path: &Path) -> String {
    let Ok(meta) = path.symlink_metadata() else { return String::new() };
    if meta.file_type().is_symlink() {
        return std::fs::read_link(path).map(|to| format!("a link to {}", to.display())).unwrap_or_default();
    }
    if !meta.is_dir() {
        return String::new();
    }
    if path.file_name().is_some_and(|n| n == ".git") {
        let mut said: Vec<String> = hooks(&path.join("hooks")).into_iter().map(|h| format!("the {h} hook")).collect();
        said.extend(settings(&path.join("config")));
        return one_line(&said);
    }
    let Ok(entries) = std::fs::read_dir(path) else { return String::new() };
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    one_line(&names)
}

/// What a git configuration sets beyond what `git init` writes, as `key = value` (hooks
/// paths, fsmonitors, filters, aliases, includes: whatever makes git run something).
fn settings(config: &Path) -> Vec<String> {
    const INIT: [&str; 7] = [
        "repositoryformatversion",
        "filemode",
        "bare",
        "logallrefupdates",
        "ignorecase",
        "precomposeunicode",
        "symlinks",
    ];
    let Ok(text) = std::fs::read_to_string(config) else { return Vec::new() };
    let Ok(entries) = git_config::parse(&text) else {
        return vec![format!("a configuration git may read differently than this check ({})", config.display())];
    };
    entries
        .into_iter()
        .filter(|e| !(e.section == "core" && e.subsection.is_none() && INIT.contains(&e.name.as_str())))
        .map(|e| {
            let key = match &e.subsection {
                Some(sub) => format!("{}.{sub}.{}", e.section, e.name),
                None => format!("{}.{}", e.section, e.name),
            };
            format!("{key} = {}", e.value.unwrap_or_default())
        })
        .collect()
}

/// The hooks in `dir`, not counting git's samples.
fn hooks(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample"))
        .collect();
    names.sort();
    names
}

fn one_line(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().take(SHOWN).map(|i| crate::process::capture::one_line(i, 120)).collect();
    match items.len() {
        0 => String::new(),
        n if n > SHOWN => format!("{}, and {} more", shown.join(", "), n - SHOWN),
        _ => shown.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_aside_in_place_without_replacing_anything_and_remembers_what_was_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-push.sample"), "").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n\tfsmonitor = ./spy\n").unwrap();
        let said = holds(&root.join(".git"));
        assert!(said.contains("the pre-commit hook") && said.contains("core.fsmonitor = ./spy"), "{said}");
        assert!(!said.contains("pre-push") && !said.contains("bare"), "{said}");

        // A name already taken is left alone: the next one is used.
        std::fs::create_dir(root.join(".git.set-aside")).unwrap();
        let went = set_aside(&root.join(".git")).unwrap();
        assert_eq!(went, root.join(".git.set-aside-2"));
        assert!(went.join("hooks/pre-commit").is_file() && !root.join(".git").exists());

        // An approved entry is known by its identity, not its name.
        std::fs::create_dir(root.join(".vscode")).unwrap();
        keep(&root.join(".vscode"));
        assert!(is_kept(&root.join(".vscode")));
        // (Renamed rather than removed, so its inode cannot be reused.)
        std::fs::rename(root.join(".vscode"), root.join("approved")).unwrap();
        std::fs::create_dir(root.join(".vscode")).unwrap();
        assert!(!is_kept(&root.join(".vscode")), "another folder put in its place is not the approved one");
    }

    #[test]
    fn a_folder_swapped_for_a_link_moves_nothing_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("elsewhere/.git")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("app")).unwrap();
        let err = set_aside(&root.join("app/.git")).unwrap_err();
        assert!(root.join("elsewhere/.git").is_dir(), "{err}");
        // A link further up the way is caught too.
        std::fs::create_dir_all(root.join("real/sub/.idea")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("up")).unwrap();
        assert!(set_aside(&root.join("up/sub/.idea")).is_err());
        assert!(root.join("real/sub/.idea").is_dir());
    }
}
