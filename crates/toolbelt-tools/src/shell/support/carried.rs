//! A shell that remembers (`shell.persistent`): what one Bash call leaves in its shell —
//! exported variables, functions, aliases, `shopt` and `set` options — is where the next
//! call of the session starts. Each call is still a fresh process (its sandbox, its time
//! limit, the kill of its whole tree are as always); what carries over is a snapshot the
//! call's own exit trap writes and the next call reads back first.
//!
//! Why a snapshot and not one long-lived shell: a long-lived shell would share one process
//! tree, one sandbox and one time limit across calls, and a command that breaks it (`exit`,
//! `exec`, a stuck read) would take every later call with it. A snapshot is written on any
//! exit; a command that replaces the shell (`exec`) leaves none, and the next call starts a
//! fresh shell, saying so.
//!
//! What it changes in the policy: once the carried state differs from a fresh shell's in any
//! way, a command's text no longer says all it runs — `ls` may be a function, `git` may read
//! an exported `GIT_PAGER`, `LD_PRELOAD` changes every program, and the snapshot itself is
//! written by the shell of a command, so it may hold any code — so no command line of the
//! session counts as read-only ([`CarriedShell::redefines`]). A session whose commands leave
//! the shell as they found it keeps its read-only commands.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, ToolContext};

use crate::process::spawn::CONTROL_FD;

/// The variable naming the file a call's exit trap writes its shell's state to.
const STATE_VAR: &str = "TOOLBELT_SHELL_STATE";
/// The variable naming the file a session's first call writes a fresh shell's state to.
const BASE_VAR: &str = "TOOLBELT_SHELL_BASE";
/// The most bytes of a shell's state kept (a larger one is not carried, and said to be).
const MAX_STATE: u64 = 1024 * 1024;

/// The shell state a session carries between Bash calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CarriedShell {
    /// The script that restores it (`declare -p` lines, functions, aliases, options); empty
    /// when the shell is as a fresh one.
    pub state: String,
    /// A fresh shell's state, as the session's first call found it: what `state` is compared
    /// with.
    pub fresh: String,
    /// Why a command's text no longer says all it runs, when it does not: what differs from
    /// a fresh shell.
    pub redefines: Option<String>,
}

impl SessionSlot for CarriedShell {
    const KEY: &'static str = "carried_shell";
}

/// Why a session's command lines may not do what they read as (its carried shell redefines
/// commands), when the persistent shell is on and they may not.
pub fn redefines(cx: &ToolContext) -> Option<String> {
    cx.session().with_slot(|carried: &mut CarriedShell| carried.redefines.clone())
}

/// The files one call reads its starting state from and writes its final state to.
#[derive(Debug)]
pub struct Carry {
    restore: Option<PathBuf>,
    capture: PathBuf,
    /// Where a fresh shell's state is written, when the session has none yet.
    base: Option<PathBuf>,
}

impl Carry {
    /// Prepares a call of `cx`'s session: its carried state in a file of its own (owner-only)
    /// and the file its exit trap writes; `None` when the files cannot be made (the call
    /// then runs without carrying, as if the setting were off).
    pub fn prepare(cx: &ToolContext) -> Option<Carry> {
        let (state, fresh) =
            cx.session().with_slot(|carried: &mut CarriedShell| (carried.state.clone(), carried.fresh.clone()));
        let restore = if state.is_empty() { None } else { Some(private_file("restore", state.as_bytes())?) };
        let capture = private_file("state", b"")?;
        let base = if fresh.is_empty() { Some(private_file("base", b"")?) } else { None };
        Some(Carry { restore, capture, base })
    }

    /// The command line wrapped: the state restored first (on a line of its own, so aliases
    /// apply to the command), and an exit trap that reports the working directory (as
    /// Bash's own trap does) and writes the shell's state.
    pub fn wrap(&self, command: &str) -> String {
        let restore = match &self.restore {
            Some(file) => format!("builtin source {} 2>/dev/null\n", quote(file)),
            None => String::new(),
        };
        let base = match &self.base {
            Some(_) => format!("{} > \"${BASE_VAR}\" 2>/dev/null\n", dump()),
            None => String::new(),
        };
        let at_exit =
            format!("builtin pwd -P >&{CONTROL_FD} 2>&{CONTROL_FD}; {} > \"${STATE_VAR}\" 2>/dev/null", dump());
        format!("{base}{restore}builtin trap '{at_exit}' EXIT\n{command}")
    }

    /// The variables the script reads its files' paths from.
    pub fn env(&self) -> Vec<(String, PathBuf)> {
        let mut vars = vec![(STATE_VAR.to_string(), self.capture.clone())];
        vars.extend(self.base.iter().map(|base| (BASE_VAR.to_string(), base.clone())));
        vars
    }

    /// After the call: keeps the state it wrote as the session's, and returns a notice when
    /// there is something to say. `exited`: the command ended by itself (not killed at its
    /// time limit or cancelled; then the state it had is unknown and the earlier one stays).
    pub fn keep(self, cx: &ToolContext, exited: bool) -> Option<String> {
        let written = read_capped(&self.capture);
        if !exited {
            return None;
        }
        let base = self.base.as_deref().and_then(read_capped).filter(|b| !b.trim().is_empty());
        match written {
            Some(state) if !state.trim().is_empty() => {
                cx.session().with_slot(|carried: &mut CarriedShell| {
                    if let Some(base) = base {
                        carried.fresh = base;
                    }
                    // As a fresh shell: nothing to carry, and commands say what they run.
                    if carried.fresh == state {
                        carried.state.clear();
                        carried.redefines = None;
                    } else {
                        carried.redefines = Some(differences(&carried.fresh, &state));
                        carried.state = state;
                    }
                });
                None
            }
            Some(_) => {
                cx.session().with_slot(|carried: &mut CarriedShell| {
                    carried.state.clear();
                    carried.redefines = None;
                });
                Some(
                    "The shell's state was not saved (the command replaced the shell with `exec`, or its own EXIT \
                     trap replaced toolbelt's): the next command starts in a fresh shell."
                        .into(),
                )
            }
            None => Some(format!(
                "The shell's state is larger than {} KiB and was not carried over; the next command starts where \
                 this one started.",
                MAX_STATE / 1024
            )),
        }
    }
}

impl Drop for Carry {
    fn drop(&mut self) {
        if let Some(file) = &self.restore {
            let _ = std::fs::remove_file(file);
        }
        let _ = std::fs::remove_file(&self.capture);
        if let Some(file) = &self.base {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// The commands that write a shell's state: its exported variables (toolbelt's own and the
/// ones every shell sets for itself left out), functions, aliases and options.
fn dump() -> &'static str {
    "{ for __tb_n in $(builtin compgen -e); do case $__tb_n in TOOLBELT_*|PWD|OLDPWD|SHLVL|_) ;; *) builtin declare \
     -p \"$__tb_n\";; esac; done; builtin declare -f; builtin alias -p; builtin shopt -p; builtin set +o; }"
}

/// What `state` carries that a fresh shell (`fresh`) does not, in words: the variables,
/// functions and aliases it sets and the options it changes (the first few).
fn differences(fresh: &str, state: &str) -> String {
    let known: std::collections::HashSet<&str> = fresh.lines().collect();
    let mut items: Vec<String> = Vec::new();
    for line in state.lines().filter(|l| !known.contains(l)) {
        let item = if let Some(rest) = line.strip_prefix("declare -") {
            let name = rest.split_once(' ').map_or("", |(_, r)| r).split('=').next().unwrap_or_default();
            format!("`{name}`")
        } else if let Some(name) = line.strip_suffix(" () ").filter(|n| !n.contains(' ')) {
            format!("function `{name}`")
        } else if let Some(rest) = line.strip_prefix("alias ") {
            format!("alias `{}`", rest.split('=').next().unwrap_or(rest))
        } else if line.starts_with("shopt ") || line.starts_with("set ") {
            format!("`{line}`")
        } else {
            continue;
        };
        if !items.contains(&item) {
            items.push(item);
        }
    }
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    let more = if items.len() > 5 { format!(" and {} more", items.len() - 5) } else { String::new() };
    let what = if shown.is_empty() {
        "code its earlier commands left".to_string()
    } else {
        format!("{}{more}", shown.join(", "))
    };
    format!(
        "the session's shell carries what earlier commands left ({what}), which runs before it, so its text does not \
         say all it does"
    )
}

/// A new owner-only file in the temporary directory holding `bytes`.
fn private_file(what: &str, bytes: &[u8]) -> Option<PathBuf> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    for n in 0..16u32 {
        let path = std::env::temp_dir().join(format!("toolbelt-shell-{what}-{}-{stamp:x}-{n}", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(mut file) => {
                if file.write_all(bytes).is_ok() {
                    return Some(path);
                }
                let _ = std::fs::remove_file(&path);
                return None;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

/// The file's text when it is at most [`MAX_STATE`] bytes.
fn read_capped(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(MAX_STATE + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= MAX_STATE).then_some(text)
}

/// `path` as one bash word.
fn quote(path: &Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_differs_from_a_fresh_shell_is_named() {
        let fresh = "declare -x HOME=\"/h\"\nshopt -u extglob\nset +o errexit\n";
        let state = "declare -x FOO=\"1\"\ndeclare -x HOME=\"/h\"\nls () \n{ \n    rm -rf x\n}\nalias ll='ls -la'\nshopt -u extglob\nset -o errexit\n";
        let why = differences(fresh, state);
        for part in ["`FOO`", "function `ls`", "alias `ll`", "`set -o errexit`"] {
            assert!(why.contains(part), "{part}: {why}");
        }
        assert!(!why.contains("HOME"), "{why}");
    }
}
