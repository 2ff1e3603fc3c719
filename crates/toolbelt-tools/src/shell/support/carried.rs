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

use crate::process::spawn::{CONTROL_FD, Setup, plain_bash};
use crate::shell::support::judge;

/// The variable a call reads the state it starts from in.
const RESTORE_VAR: &str = "TOOLBELT_SHELL_RESTORE";
/// The most bytes of state carried: what one variable of a command's environment can hold
/// (128 KiB, the kernel's limit for one string), less room for its name.
pub const MAX_STATE: usize = 120 * 1024;
/// The control pipe's room for a call that reports its state.
pub const PIPE_ROOM: usize = 256 * 1024;
/// What marks the state's start and end on the control pipe.
const MARK: u8 = 0x1e;

/// The shell state a session carries between Bash calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CarriedShell {
    /// The script that restores it (`declare -p` lines, functions, aliases, options); empty
    /// when the shell is as a fresh one.
    pub state: String,
    /// A fresh shell's state (found by the session's first call in this process; not saved,
    /// since it holds toolbelt's own environment).
    #[serde(skip)]
    pub fresh: String,
    /// Bumped whenever `state` changes: a call judged before a change is judged again.
    pub generation: u64,
}

impl SessionSlot for CarriedShell {
    const KEY: &'static str = "carried_shell";
}

/// Why a session's command lines may not do all they read as (its shell carries state), and
/// the state's generation.
pub fn redefines(cx: &ToolContext) -> (Option<String>, u64) {
    cx.session().with_slot(|carried: &mut CarriedShell| {
        let why = (!carried.state.is_empty()).then(|| differences(&carried.fresh, &carried.state));
        (why, carried.generation)
    })
}

/// Whether the session already knows what a fresh shell is.
pub fn knows_fresh(cx: &ToolContext) -> bool {
    cx.session().with_slot(|carried: &mut CarriedShell| !carried.fresh.is_empty())
}

/// The commands that write a shell's state between two marks: its exported variables
/// (toolbelt's own and those every shell sets for itself left out), functions, aliases and
/// options, with the default field splitting whatever the command set.
fn dump() -> String {
    format!(
        "__tb_s=$(IFS=$' \\t\\n'; for __tb_n in $(builtin compgen -e); do case $__tb_n in TOOLBELT_*|PWD|OLDPWD|SHLVL|_) \
         ;; *) builtin declare -p \"$__tb_n\";; esac; done; builtin declare -f; builtin alias -p; builtin shopt -p; \
         builtin set +o); if (( ${{#__tb_s}} <= {MAX_STATE} )); then builtin printf '\\x1e%s\\x1e\\n' \"$__tb_s\"; else \
         builtin printf '\\x1e\\x1e\\n'; fi"
    )
}

/// The script that reports a fresh shell's state on its stdout.
pub fn fresh_script() -> String {
    dump()
}

/// `command` wrapped for a call of a session carrying `state`: the state evaluated first (on a
/// line of its own, so its aliases apply to the command), then an exit trap that reports the
/// shell's state and then the working directory (last, as Bash's own trap does) on the control
/// pipe.
pub fn wrap(command: &str, carrying: bool) -> String {
    let restore = if carrying {
        format!("builtin eval \"${RESTORE_VAR}\" 2>/dev/null; builtin unset {RESTORE_VAR}\n")
    } else {
        String::new()
    };
    let at_exit =
        format!("{{ {}; }} >&{CONTROL_FD} 2>/dev/null; builtin pwd -P >&{CONTROL_FD} 2>&{CONTROL_FD}", dump());
    format!("{restore}builtin trap '{}' EXIT\n{command}", at_exit.replace('\'', r"'\''"))
}

/// The variable a call starts from, when the session carries a state.
pub fn restore_env(cx: &ToolContext) -> Option<(String, String)> {
    let state = cx.session().with_slot(|carried: &mut CarriedShell| carried.state.clone());
    (!state.is_empty()).then(|| (RESTORE_VAR.to_string(), state))
}

/// Before a call of a session whose shell carries over: judges it again when the state it will
/// start from is not the one it was judged with (`judged`, that state's generation; or when
/// it moved to another directory and was judged again without it), learns what a fresh shell
/// holds the first time, and gives the command line to run, its environment added to `setup`.
pub async fn start(
    cx: &ToolContext,
    command: &str,
    judged: u64,
    moved: bool,
    setup: &mut Setup,
) -> Result<String, ToolError> {
    let (why, generation) = redefines(cx);
    if let Some(why) = why.filter(|_| generation != judged || moved) {
        let (access, _, _) = judge::bash_command_carrying(command, cx, Some(why))?;
        cx.authorize(access).await?;
    }
    if !knows_fresh(cx) {
        // A shell of toolbelt's own, with the command's environment: what "as found" means.
        let out = plain_bash(&fresh_script(), &setup.env).stdout(std::process::Stdio::piped()).output().await;
        if let Some(fresh) = out.ok().and_then(|o| state_in(&o.stdout)).filter(|f| !f.is_empty()) {
            set_fresh(cx, fresh);
        }
    }
    let restore = restore_env(cx);
    if let Some((var, state)) = &restore {
        setup.env.push((var.into(), Some(state.into())));
    }
    setup.control_room = Some(PIPE_ROOM);
    Ok(wrap(command, restore.is_some()))
}

/// The state between the first two marks of `report` (what the control pipe or a fresh
/// shell's stdout carried); `Some("")` when the state was too large to report; `None` when
/// there is none.
pub fn state_in(report: &[u8]) -> Option<String> {
    let start = report.iter().position(|&b| b == MARK)? + 1;
    let len = report[start..].iter().position(|&b| b == MARK)?;
    Some(String::from_utf8_lossy(&report[start..start + len]).into_owned())
}

/// Records a fresh shell's state for the session.
pub fn set_fresh(cx: &ToolContext, fresh: String) {
    cx.session().with_slot(|carried: &mut CarriedShell| carried.fresh = fresh);
}

/// After a call: keeps the state it reported (from its control pipe) as the session's, and
/// returns a notice when there is something to say. `exited`: the command ended by itself
/// (not killed at its time limit or cancelled; then the state it had is unknown and the
/// earlier one stays).
pub fn keep(cx: &ToolContext, exited: bool, report: &[u8]) -> Option<String> {
    if !exited {
        return None;
    }
    let reported = state_in(report);
    cx.session().with_slot(|carried: &mut CarriedShell| {
        let (state, notice) = match reported {
            Some(state) if state.is_empty() => (
                String::new(),
                Some(format!(
                    "The shell's state is over {} KiB, more than a command's environment can carry: the next \
                     command starts in a fresh shell.",
                    MAX_STATE / 1024
                )),
            ),
            // As a fresh shell: nothing to carry, and commands say what they run.
            Some(state) if state == carried.fresh => (String::new(), None),
            Some(state) => (state, None),
            None => (
                String::new(),
                Some(
                    "The shell's state was not reported (the command replaced the shell with `exec`, or its own \
                     EXIT trap replaced toolbelt's): the next command starts in a fresh shell."
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
    fn the_state_lies_between_its_marks() {
        assert_eq!(state_in(b"junk\x1edeclare -x A=\"1\"\x1e\n/home/x\n").as_deref(), Some("declare -x A=\"1\""));
        assert_eq!(state_in(b"\x1e\x1e\n/x\n").as_deref(), Some(""));
        assert_eq!(state_in(b"/x\n"), None);
    }
}
