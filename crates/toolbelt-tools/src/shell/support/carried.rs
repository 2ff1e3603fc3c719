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
//! What it changes in the policy: once the carried environment defines a function or an alias
//! or changes `PATH`, a command's text no longer says what it runs (`ls` may be a function),
//! so no command line of the session counts as read-only ([`CarriedShell::redefines`]).

use std::io::{Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, ToolContext};

use crate::process::spawn::CONTROL_FD;

/// The variable naming the file a call's exit trap writes its shell's state to.
const STATE_VAR: &str = "TOOLBELT_SHELL_STATE";
/// The most bytes of a shell's state kept (a larger one is not carried, and said to be).
const MAX_STATE: u64 = 1024 * 1024;

/// The shell state a session carries between Bash calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CarriedShell {
    /// The script that restores it (`declare -p` lines, functions, aliases, options).
    pub state: String,
    /// Why a command's text no longer says what it runs, when it does not: the functions and
    /// aliases defined, and whether `PATH` changed.
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
}

impl Carry {
    /// Prepares a call of `cx`'s session: its carried state in a file of its own (owner-only)
    /// and the file its exit trap writes; `None` when the files cannot be made (the call
    /// then runs without carrying, as if the setting were off).
    pub fn prepare(cx: &ToolContext) -> Option<Carry> {
        let state = cx.session().with_slot(|carried: &mut CarriedShell| carried.state.clone());
        let restore = if state.is_empty() { None } else { Some(private_file("restore", state.as_bytes())?) };
        let capture = private_file("state", b"")?;
        Some(Carry { restore, capture })
    }

    /// The command line wrapped: the state restored first (on a line of its own, so aliases
    /// apply to the command), and an exit trap that reports the working directory (as
    /// Bash's own trap does) and writes the shell's state.
    pub fn wrap(&self, command: &str) -> String {
        let restore = match &self.restore {
            Some(file) => format!("builtin source {} 2>/dev/null\n", quote(file)),
            None => String::new(),
        };
        let dump = format!(
            "builtin pwd -P >&{CONTROL_FD} 2>&{CONTROL_FD}; {{ for __tb_n in $(builtin compgen -e); do case $__tb_n in \
             TOOLBELT_*|PWD|OLDPWD|SHLVL|_) ;; *) builtin declare -p \"$__tb_n\";; esac; done; builtin declare -f; \
             builtin alias -p; builtin shopt -p; builtin set +o; }} > \"${STATE_VAR}\" 2>/dev/null"
        );
        format!("{restore}builtin trap '{dump}' EXIT\n{command}")
    }

    /// The variable the exit trap reads its file's path from.
    pub fn env(&self) -> (String, PathBuf) {
        (STATE_VAR.to_string(), self.capture.clone())
    }

    /// After the call: keeps the state it wrote as the session's, and returns a notice when
    /// there is something to say. `exited`: the command ended by itself (not killed at its
    /// time limit or cancelled; then the state it had is unknown and the earlier one stays).
    pub fn keep(self, cx: &ToolContext, exited: bool) -> Option<String> {
        let written = read_capped(&self.capture);
        if !exited {
            return None;
        }
        match written {
            Some(state) if !state.trim().is_empty() => {
                let redefines = redefinitions(&state);
                cx.session().with_slot(|carried: &mut CarriedShell| {
                    *carried = CarriedShell { state, redefines };
                });
                None
            }
            Some(_) => {
                cx.session().with_slot(|carried: &mut CarriedShell| *carried = CarriedShell::default());
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
    }
}

/// What of a state redefines commands: its functions, its aliases, a changed `PATH`.
fn redefinitions(state: &str) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for line in state.lines() {
        if let Some(name) = line.strip_suffix(" () ").filter(|n| !n.contains(' ')) {
            names.push(format!("function `{name}`"));
        } else if let Some(rest) = line.strip_prefix("alias ") {
            names.push(format!("alias `{}`", rest.split('=').next().unwrap_or(rest)));
        }
    }
    let path_now = state.lines().find_map(|l| l.strip_prefix("declare -x PATH=")).map(unquote);
    if path_now.is_some_and(|p| std::env::var("PATH").is_ok_and(|before| p != before)) {
        names.push("`PATH`".into());
    }
    if names.is_empty() {
        return None;
    }
    let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    let more = if names.len() > 5 { format!(" and {} more", names.len() - 5) } else { String::new() };
    Some(format!(
        "the session's carried shell redefines commands ({}{more}), so a command's text does not say what it runs",
        shown.join(", ")
    ))
}

/// A `declare -p` value as bash writes it (`"…"` with `\"`, `\\`, `\$` and `` \` ``).
fn unquote(value: &str) -> String {
    let inner = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
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
    fn functions_aliases_and_a_changed_path_redefine_commands() {
        assert_eq!(redefinitions("declare -x FOO=\"1\"\nshopt -u extglob\nset +o errexit\n"), None);
        let why = redefinitions("ls () \n{ \n    rm -rf x\n}\nalias ll='ls -la'\n").unwrap();
        assert!(why.contains("function `ls`") && why.contains("alias `ll`"), "{why}");
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(redefinitions(&format!("declare -x PATH=\"{path}\"\n")), None);
        assert!(redefinitions("declare -x PATH=\"/evil:/usr/bin\"\n").unwrap().contains("`PATH`"));
        assert_eq!(unquote(r#""a\"b\\c\$d""#), r#"a"b\c$d"#);
    }
}
