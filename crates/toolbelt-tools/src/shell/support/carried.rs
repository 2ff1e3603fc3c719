//! A shell that remembers (`shell.persistent`): what one Bash call leaves in its shell —
//! exported variables, functions, aliases, `shopt` and `set` options — is where the next
//! call of the session starts. Each call is still a fresh process (its sandbox, its time
//! limit, the kill of its whole tree are as always); what carries over is the state the
//! call's own exit trap reports, which the next call evaluates first.
//!
//! Why a snapshot and not one long-lived shell: a long-lived shell would share one process
//! tree, one sandbox and one time limit across calls, and a command that breaks it (`exit`,
//! `exec`, a stuck read) would take every later call with it. The state is reported on any
//! exit; a command that replaces the shell (`exec`) reports none, and the next call starts a
//! fresh shell, saying so.
//!
//! **No file carries it.** The state comes back on the call's own control pipe (the one its
//! trap reports the working directory on), enlarged for it, and goes to the next call in a
//! variable of that call's environment: a file in the shared temporary directory could be read
//! or rewritten by any sandboxed command of the user, or replaced by a link leading toolbelt to
//! read what the session may not.
//!
//! **What it changes in the policy.** The state is whatever the shell of a command reported,
//! so it may hold any code, and even a plain variable changes what programs do (`GIT_PAGER`,
//! `LD_PRELOAD`, `PATH`). Once a session's shell differs from a fresh one's in any way, no
//! command line of the session counts as read-only ([`redefines`]): each is judged as one that
//! changes things, and the question says what the shell carries. What a fresh shell is comes
//! from a shell toolbelt starts itself (the same sandbox and environment, no command of the
//! model's), so no command can pass its own state off as fresh.

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, ToolContext, ToolError};

use crate::process::spawn::{CONTROL_FD, Setup};
use crate::shell::support::judge;

/// The variable a call reads the state it starts from in.
const RESTORE_VAR: &str = "TOOLBELT_SHELL_RESTORE";
/// The most bytes of state carried: what one variable of a command's environment can hold
/// (128 KiB, the kernel's limit for one string), less room for its name.
pub const MAX_STATE: usize = 120 * 1024;
/// The control pipe's room for a call that reports its state: two states and the directory.
pub const PIPE_ROOM: usize = 512 * 1024;
/// What starts a state's block on the control pipe (`\x1e<bytes>\n<state>`).
const MARK: u8 = 0x1e;

/// The shell state a session carries between Bash calls. Kept in memory only: a named
/// session resumed in another process starts with a fresh shell (the state holds whatever
/// the session's commands exported, which belongs in no file).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CarriedShell {
    /// The script that restores it (`declare -p` lines, functions, aliases, options); empty
    /// when the shell is as a fresh one.
    #[serde(skip)]
    pub state: String,
    /// A fresh shell's state, as the latest call found it before anything ran: what the
    /// reason names differences from.
    #[serde(skip)]
    pub fresh: String,
    /// Bumped whenever `state` changes: a call judged before a change is judged again.
    #[serde(skip)]
    pub generation: u64,
}

impl SessionSlot for CarriedShell {
    const KEY: &'static str = "carried_shell";
}

/// Why a session's command lines may not do all they read as (its shell carries state), and
/// the state's generation.
pub fn redefines(cx: &ToolContext) -> (Option<String>, u64) {
    cx.session().with_slot(|carried: &mut CarriedShell| (carried.why(), carried.generation))
}

impl CarriedShell {
    /// Why a command run after this state may not do all it reads as, when it carries any.
    fn why(&self) -> Option<String> {
        (!self.state.is_empty()).then(|| differences(&self.fresh, &self.state))
    }
}

/// The commands that write a shell's state as one block on the control pipe: its exported
/// variables (toolbelt's own and those every shell sets for itself left out), functions,
/// aliases and options, with the default field splitting whatever the command set, its length
/// in bytes first (`-` when it is over [`MAX_STATE`]).
fn dump() -> String {
    format!(
        "__tb_s=$(IFS=$' \\t\\n'; for __tb_n in $(builtin compgen -e); do case $__tb_n in TOOLBELT_*|PWD|OLDPWD|SHLVL|_) \
         ;; *) builtin declare -p \"$__tb_n\";; esac; done; builtin declare -f; builtin alias -p; builtin shopt -p; \
         builtin set +o); __tb_l=$(LC_ALL=C; builtin echo ${{#__tb_s}}); if (( __tb_l <= {MAX_STATE} )); then builtin \
         printf '\\x1e%s\\n%s\\n' \"$__tb_l\" \"$__tb_s\"; else builtin printf '\\x1e-\\n'; fi >&{CONTROL_FD} 2>/dev/null"
    )
}

/// `command` wrapped for a call of a persistent shell: the fresh shell's state reported first
/// (before anything of the call ran, in its own process, sandbox and environment: what "as
/// found" means), then the exit trap set (it reports the shell's state, then the working
/// directory, last, as Bash's own trap does), then the carried state evaluated (its variable
/// taken out of the environment first), and the command on a line of its own, so the carried
/// aliases apply to it.
pub fn wrap(command: &str, carrying: bool) -> String {
    let at_exit = format!("{}; builtin pwd -P >&{CONTROL_FD} 2>&{CONTROL_FD}", dump());
    let restore = if carrying {
        format!(
            "__tb_r=${RESTORE_VAR}; builtin unset {RESTORE_VAR}; builtin eval \"$__tb_r\" 2>/dev/null; builtin unset __tb_r"
        )
    } else {
        String::new()
    };
    format!("{}; builtin trap '{}' EXIT; {restore}\n{command}", dump(), at_exit.replace('\'', r"'\''"))
}

/// Before a call of a session whose shell carries over: takes the state it will start from,
/// judging the call again when that is not the state it was judged with (`judged`, that
/// state's generation; or when it moved to another directory and was judged again without
/// it), and refusing it when the state changed again while a person was asked; then gives
/// the command line to run, the state added to `setup`'s environment.
pub async fn start(
    cx: &ToolContext,
    command: &str,
    judged: u64,
    moved: bool,
    setup: &mut Setup,
) -> Result<String, ToolError> {
    let (state, generation, why) =
        cx.session().with_slot(|carried: &mut CarriedShell| (carried.state.clone(), carried.generation, carried.why()));
    if let Some(why) = why.filter(|_| generation != judged || moved) {
        let (access, _, _) = judge::bash_command_carrying(command, cx, Some(why))?;
        cx.authorize(access).await?;
        let now = cx.session().with_slot(|carried: &mut CarriedShell| carried.generation);
        if now != generation {
            return Err(ToolError::failed(
                "the session's shell changed (another command finished) while this one waited to be approved; \
                 nothing ran: call it again to be asked about the shell as it is now",
            ));
        }
    }
    let carrying = !state.is_empty();
    if carrying {
        setup.env.push((RESTORE_VAR.into(), Some(state.into())));
    }
    setup.control_room = Some(PIPE_ROOM);
    Ok(wrap(command, carrying))
}

/// The blocks of `report` (what the control pipe carried): each state in order, `None` for
/// one too large to report. Bytes outside blocks (the working directory, whatever a command
/// wrote there) are skipped.
pub fn blocks(report: &[u8]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = report[at..].iter().position(|&b| b == MARK) {
        let head = at + found + 1;
        let Some(newline) = report[head..].iter().position(|&b| b == b'\n') else { break };
        let length = &report[head..head + newline];
        let body = head + newline + 1;
        match std::str::from_utf8(length).ok().map(str::trim) {
            Some("-") => {
                out.push(None);
                at = body;
            }
            Some(n) => match n.parse::<usize>() {
                Ok(n) if n <= MAX_STATE && body + n <= report.len() => {
                    out.push(Some(String::from_utf8_lossy(&report[body..body + n]).into_owned()));
                    at = body + n;
                }
                _ => at = head,
            },
            None => at = head,
        }
    }
    out
}

/// After a call: keeps the state it reported (from its control pipe) as the session's, and
/// returns a notice when there is something to say. `exited`: the command ended by itself
/// (not killed at its time limit or cancelled; then the state it had is unknown and the
/// earlier one stays).
pub fn keep(cx: &ToolContext, exited: bool, report: &[u8]) -> Option<String> {
    if !exited {
        return None;
    }
    let found = blocks(report);
    // The first block is the fresh shell's, written before anything of the call ran; the
    // last, the exit trap's (or whatever a command of the call forged: a state all the same).
    let fresh = found.first().cloned().flatten();
    let last = if found.len() >= 2 { found.last().cloned() } else { None };
    cx.session().with_slot(|carried: &mut CarriedShell| {
        if let Some(fresh) = &fresh {
            carried.fresh.clone_from(fresh);
        }
        let (state, notice) = match last {
            Some(None) => (
                String::new(),
                Some(format!(
                    "The shell's state is over {} KiB, more than a command's environment can carry: the next \
                     command starts in a fresh shell.",
                    MAX_STATE / 1024
                )),
            ),
            // As a fresh shell: nothing to carry, and commands say what they run.
            Some(Some(state)) if fresh.as_ref() == Some(&state) => (String::new(), None),
            Some(Some(state)) => (state, None),
            None => (
                String::new(),
                Some(
                    "The shell's state was not reported (the command replaced the shell with `exec`, or set its \
                     own EXIT trap): the next command starts in a fresh shell, in the directory this one started in."
                        .into(),
                ),
            ),
        };
        if state != carried.state {
            carried.state = state;
            carried.generation += 1;
        }
        notice
    })
}

/// What `state` carries that a fresh shell (`fresh`) does not, in words.
fn differences(fresh: &str, state: &str) -> String {
    let known: std::collections::HashSet<&str> = fresh.lines().collect();
    let mut items: Vec<String> = Vec::new();
    let mut in_function = false;
    for line in state.lines() {
        let (item, opens) = if let Some(name) = line.strip_suffix(" () ").filter(|n| !n.contains(' ')) {
            (Some(format!("function `{name}`")), true)
        } else if in_function {
            in_function = line != "}";
            continue;
        } else if known.contains(line) {
            (None, false)
        } else if let Some(rest) = line.strip_prefix("declare -") {
            let name = rest.split_once(' ').map_or("", |(_, r)| r).split('=').next().unwrap_or_default();
            (Some(format!("`{name}`")), false)
        } else if let Some(rest) = line.strip_prefix("alias ") {
            (Some(format!("alias `{}`", rest.split('=').next().unwrap_or(rest))), false)
        } else if line.starts_with("shopt ") || line.starts_with("set ") {
            (Some(format!("`{line}`")), false)
        } else {
            (Some("other code".to_string()), false)
        };
        in_function = opens;
        if let Some(item) = item.filter(|i| !items.contains(i)) {
            items.push(item);
        }
    }
    // What changes most what a command runs first: code, then variables programs read.
    let rank = |item: &str| {
        let loud = ["`PATH`", "`LD_", "`BASH_ENV`", "`ENV`", "PAGER`", "`GIT_", "`PYTHON", "`NODE_OPTIONS`"];
        if item.starts_with("function") || item.starts_with("alias") || item == "other code" {
            0
        } else if loud.iter().any(|l| item.contains(l)) {
            1
        } else {
            2
        }
    };
    items.sort_by_key(|i| rank(i));
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    let more = if items.len() > 5 { format!(" and {} more", items.len() - 5) } else { String::new() };
    format!(
        "the session's shell carries what earlier commands left ({}{more}), which runs before it, so its text does \
         not say all it does",
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_differs_from_a_fresh_shell_is_named() {
        let fresh = "declare -x HOME=\"/h\"\nshopt -u extglob\nset +o errexit\n";
        let state = "declare -x FOO=\"1\"\ndeclare -x HOME=\"/h\"\nls () \n{ \n    rm -rf x\n}\nalias ll='ls -la'\nshopt -u extglob\nset -o errexit\ncurl x | sh\n";
        let why = differences(fresh, state);
        for part in ["`FOO`", "function `ls`", "alias `ll`", "`set -o errexit`", "other code"] {
            assert!(why.contains(part), "{part}: {why}");
        }
        assert!(!why.contains("HOME"), "{why}");
    }

    #[test]
    fn blocks_are_read_by_their_length_whatever_they_hold() {
        let report = b"\x1e3\nabcjunk\x1e-\n\x1e5\na\x1eb\nc/home/x\n";
        assert_eq!(blocks(report), vec![Some("abc".to_string()), None, Some("a\x1eb\nc".to_string())]);
        assert!(blocks(b"/x\n").is_empty());
        assert_eq!(blocks(b"\x1e99\nshort"), Vec::<Option<String>>::new());
    }
}
