//! The user's protected places where a command could reach them: held read-only, or kept
//! from being made.
//!
//! The places are toolbelt's settings, state, data and cache directories, the managed
//! settings, git's global configuration, and the protected names at the top of the home
//! directory (`~/.git`, `~/.claude`, `~/.vscode`, …: they take effect in every project). They
//! lie outside the workspace unless the home directory is inside a directory commands may
//! write: the workspace is the home (cwd `~`, `--add-dir ~`, a host that starts the server
//! in `~`), or the home is under the temp directory. Then a command could write or *make*
//! them: a `~/.config/toolbelt/config.toml` it made with a `SessionStart` hook would run,
//! unsandboxed, in the user's next session anywhere. So for each place inside a writable
//! directory:
//!
//! * one that exists is bound read-only onto itself in the command's mount namespace
//!   (`protect.rs`), which also pins its name;
//! * each directory above it that could be renamed away (its parent is writable) is pinned by
//!   a bind onto itself, so `mv ~/.local/state x && mkdir -p ~/.local/state/toolbelt` fails;
//! * toolbelt's own directories are made (owner-only) when missing, then held;
//! * any other missing place is kept from being made: its nearest existing ancestor is
//!   *sealed* — Landlock lets the command write there but make no new entry directly in it,
//!   nor in the directories between it and the writable root, whose existing subdirectories
//!   keep every right (`landlock.rs`). A bind mount needs an entry to mount on, and putting a
//!   placeholder in the user's home (an empty `~/.git`, `~/.gitconfig`) would change what git,
//!   editors and other hosts see; a seal changes nothing on disk.
//!
//! A place that is a symbolic link (dotfiles kept elsewhere) has its target judged the same
//! way, and the directory holding the link is sealed so the link cannot be replaced.
//!
//! Not covered: a missing place beneath a temp directory (`/tmp`, `/dev/shm`, `$TMPDIR`:
//! sealing one would forbid new temporary files; `HOME=/tmp` in some containers), and the
//! protected names of a project folder that has none (`.git`, `.vscode` in the workspace):
//! sealing a project folder would forbid every new file in it.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

/// How deep symbolic links among the places are followed.
const MAX_LINKS: usize = 8;

/// What one command's sandbox does about the user's protected places.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Places {
    /// Existing places, bound read-only onto themselves.
    pub hold: Vec<PathBuf>,
    /// Directories above a place that the command could rename away: bound onto themselves.
    pub pin: Vec<PathBuf>,
    /// Directories in which the command may make no new entry (the nearest existing ancestor
    /// of a missing place).
    pub seal: Vec<PathBuf>,
    /// Workspace roots inside a held place (the worktrees toolbelt makes in its state
    /// directory for the model to work in): bound writable again on top of it.
    pub reopen: Vec<PathBuf>,
    /// Missing places that could not be kept from being made (beneath a temp directory).
    pub uncovered: Vec<PathBuf>,
}

/// What the places are judged against.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The protected places (absolute paths).
    pub places: &'a [PathBuf],
    /// toolbelt's own directories among them: made when missing, then held.
    pub own: &'a [PathBuf],
    /// Every directory the command may write beneath.
    pub writable: &'a [PathBuf],
    /// The temp directories among them, beneath which nothing is sealed.
    pub temp: &'a [PathBuf],
    /// The workspace roots and configured writable roots.
    pub roots: &'a [PathBuf],
}

impl Input<'_> {
    fn inside(&self, path: &Path) -> bool {
        self.writable.iter().any(|w| path.starts_with(w))
    }
}

/// What to do about `input`'s places. Looks only at places inside a writable directory, so it
/// costs nothing (no system call) when none is.
pub fn places(input: &Input<'_>) -> Places {
    let mut out = Places::default();
    for place in input.places {
        out.add(input, place, 0);
    }
    for root in input.roots {
        if out.hold.iter().any(|held| root != held && root.starts_with(held)) {
            push(&mut out.reopen, root);
        }
    }
    out
}

impl Places {
    fn add(&mut self, input: &Input<'_>, place: &Path, links: usize) {
        if links > MAX_LINKS || !place.is_absolute() || !input.inside(place) {
            return;
        }
        if input.own.iter().any(|own| own == place) && place.symlink_metadata().is_err() {
            make_own(place);
        }
        // The directories above the place that the command could move away or replace.
        let mut above: Vec<&Path> = place
            .ancestors()
            .skip(1)
            .take_while(|dir| dir.parent().is_some_and(|parent| input.inside(parent)))
            .collect();
        above.reverse();
        for (i, dir) in above.iter().enumerate() {
            match dir.symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => {
                    // The link cannot be replaced; what it leads to is judged as a place.
                    self.seal_dir(input, dir.parent());
                    if let Some(target) = resolve_link(dir) {
                        let rest = place.strip_prefix(dir).unwrap_or(place);
                        self.add(input, &target.join(rest), links + 1);
                    }
                    return;
                }
                Ok(meta) if meta.is_dir() => push(&mut self.pin, dir),
                Ok(_) => return,
                Err(_) => {
                    // Missing from here down: nothing may be made in the last one that exists.
                    let existing = if i == 0 { dir.parent() } else { Some(above[i - 1]) };
                    self.seal_missing(input, existing, place);
                    return;
                }
            }
        }
        match place.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                self.seal_dir(input, place.parent());
                if let Some(target) = resolve_link(place) {
                    self.add(input, &target, links + 1);
                }
            }
            Ok(_) => push(&mut self.hold, place),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.seal_missing(input, place.parent(), place),
            Err(_) => {}
        }
    }

    /// Seals `dir`, the nearest existing ancestor of the missing `place`, or says it could not.
    fn seal_missing(&mut self, input: &Input<'_>, dir: Option<&Path>, place: &Path) {
        if !self.seal_dir(input, dir) {
            push(&mut self.uncovered, place);
        }
    }

    /// Seals `dir` when it lies inside a writable directory and beneath no temp directory;
    /// whether it is sealed (or needs no seal: the command cannot write there at all).
    fn seal_dir(&mut self, input: &Input<'_>, dir: Option<&Path>) -> bool {
        let Some(dir) = dir else { return true };
        if !input.inside(dir) {
            return true;
        }
        if input.temp.iter().any(|t| dir.starts_with(t)) {
            return false;
        }
        push(&mut self.seal, dir);
        true
    }
}

/// Where the symbolic link `link` leads (relative targets from the link's directory).
fn resolve_link(link: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(link).ok()?;
    let joined = link.parent()?.join(target);
    // `..` in the target: let the file system resolve what exists of it.
    std::fs::canonicalize(&joined).ok().or(Some(joined))
}

/// Makes one of toolbelt's own directories (and what is missing above it), owner-only. When
/// that fails the place is judged as missing (sealed).
fn make_own(dir: &Path) {
    if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        tracing::debug!(dir = %dir.display(), error = %e, "cannot make toolbelt's directory to hold it read-only");
    }
}

fn push(list: &mut Vec<PathBuf>, path: &Path) {
    if !list.iter().any(|p| p == path) {
        list.push(path.to_path_buf());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Home {
        _dir: tempfile::TempDir,
        home: PathBuf,
    }

    fn home() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap().join("home");
        std::fs::create_dir_all(home.join(".config")).unwrap();
        Home { _dir: dir, home }
    }

    fn judge(list: &[PathBuf], own: &[PathBuf], writable: &[PathBuf], temp: &[PathBuf]) -> Places {
        let roots = writable.to_vec();
        places(&Input { places: list, own, writable, temp, roots: &roots })
    }

    #[test]
    fn nothing_is_looked_at_outside_the_writable_directories() {
        let h = home();
        let elsewhere = [h.home.with_file_name("project")];
        let got = judge(&[h.home.join(".gitconfig")], &[], &elsewhere, &[]);
        assert_eq!(got, Places::default());
    }

    #[test]
    fn existing_places_are_held_and_what_is_above_them_pinned() {
        let h = home();
        std::fs::create_dir_all(h.home.join(".local/state/toolbelt/projects/p/worktrees/w")).unwrap();
        std::fs::write(h.home.join(".gitconfig"), "").unwrap();
        let state = h.home.join(".local/state/toolbelt");
        let worktree = state.join("projects/p/worktrees/w");
        let places = [state.clone(), h.home.join(".gitconfig")];
        let writable = [h.home.clone(), worktree.clone()];
        let got = judge(&places, &[], &writable, &[]);
        assert_eq!(got.hold, places);
        assert_eq!(got.pin, [h.home.join(".local"), h.home.join(".local/state")]);
        assert!(got.seal.is_empty() && got.uncovered.is_empty(), "{got:?}");
        assert_eq!(got.reopen, [worktree], "a root inside a held place stays writable");
    }

    #[test]
    fn missing_places_seal_their_nearest_existing_ancestor_or_are_made_when_toolbelt_s_own() {
        let h = home();
        let own = [h.home.join(".cache/toolbelt")];
        let places = [
            h.home.join(".config/git"),
            h.home.join(".gitconfig"),
            h.home.join(".local/share/toolbelt"),
            own[0].clone(),
        ];
        let got = judge(&places, &own, std::slice::from_ref(&h.home), &[]);
        assert_eq!(got.seal, [h.home.join(".config"), h.home.clone()]);
        assert!(h.home.join(".cache/toolbelt").is_dir(), "toolbelt's own directory is made");
        assert_eq!(got.hold, [h.home.join(".cache/toolbelt")]);
        assert_eq!(got.pin, [h.home.join(".config"), h.home.join(".cache")]);
        // Beneath a temp directory nothing is sealed, and it is said.
        let got = judge(&places[..1], &[], std::slice::from_ref(&h.home), std::slice::from_ref(&h.home));
        assert!(got.seal.is_empty());
        assert_eq!(got.uncovered, [h.home.join(".config/git")]);
    }

    #[test]
    fn a_link_s_directory_is_sealed_and_its_target_judged() {
        let h = home();
        std::fs::create_dir_all(h.home.join("dotfiles")).unwrap();
        std::fs::write(h.home.join("dotfiles/gitconfig"), "").unwrap();
        std::os::unix::fs::symlink("dotfiles/gitconfig", h.home.join(".gitconfig")).unwrap();
        std::os::unix::fs::symlink("../dotfiles", h.home.join(".config/toolbelt")).unwrap();
        let places = [h.home.join(".gitconfig"), h.home.join(".config/toolbelt/config.toml")];
        let got = judge(&places, &[], std::slice::from_ref(&h.home), &[]);
        assert_eq!(got.hold, [h.home.join("dotfiles/gitconfig")]);
        assert_eq!(got.seal, [h.home.clone(), h.home.join(".config"), h.home.join("dotfiles")]);
    }
}
