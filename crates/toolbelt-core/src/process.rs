//! The one rule every process toolbelt starts follows: it runs in a session of its own, with
//! no controlling terminal.
//!
//! A process that shares toolbelt's controlling terminal can open `/dev/tty` and push
//! keystrokes into the terminal's input with the `TIOCSTI` ioctl (kernels with
//! `dev.tty.legacy_tiocsti = 1`, and any kernel for a process with `CAP_SYS_ADMIN`): it could
//! answer toolbelt's own permission prompt, or leave a command for the person's shell to run
//! once toolbelt exits. The kernel allows `TIOCSTI` only on the caller's controlling terminal
//! (without `CAP_SYS_ADMIN`), and a new session has none, so `setsid` in the child, before
//! exec, closes that door for shell commands, hooks, language servers, linters, MCP servers
//! and git alike (as bubblewrap's `--new-session` does). The session leader also leads a
//! process group whose id is its pid, so killing "the group of the child" still works.
//!
//! This lives in core because every layer that starts processes (policy's hooks, the tools,
//! MCP's upstream servers) depends on it and on nothing else in common.

/// Makes the child of `command` start a new session (`setsid`) before exec: it leads a new
/// session and a new process group (pgid = its pid) and has no controlling terminal.
///
/// Do not also ask for a process group (`process_group(0)`): the standard library sets it
/// before the hook runs, and `setsid` then fails because the child already leads a group.
/// A hook makes the standard library start the child with `fork` rather than `posix_spawn`.
pub fn new_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the hook runs in the child between fork and exec and makes one system call,
    // which is async-signal-safe; it allocates nothing and takes no lock.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Kills, with `SIGKILL`, the process group `leader` leads (a child started with
/// [`new_session`]) and every process still in it. Nothing happens for a pid that does not
/// fit (0 would be our own group) or a group that is gone.
pub fn kill_group(leader: u32) {
    let Ok(pid) = libc::pid_t::try_from(leader) else { return };
    if pid <= 1 {
        return;
    }
    // SAFETY: one system call on plain integers; a wrong group is refused by the kernel.
    #[allow(unsafe_code)]
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
}

/// `command` as a program to run: itself when it names a path (and exists), else the first
/// executable of that name on `path_var`.
pub fn find_program(command: &str, path_var: Option<&std::ffi::OsStr>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable =
        |p: &std::path::Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if command.contains('/') {
        let p = std::path::PathBuf::from(command);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?).map(|dir| dir.join(command)).find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_leads_a_session_without_a_terminal() {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "exec cat /proc/self/stat"]);
        new_session(&mut command);
        let out = command.output().unwrap();
        assert!(out.status.success());
        let stat = String::from_utf8(out.stdout).unwrap();
        // After the command name: state, ppid, pgrp, session, tty_nr.
        let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
        let pid = stat.split_whitespace().next().unwrap();
        assert_eq!(fields[2], pid, "leads its group: {stat}");
        assert_eq!(fields[3], pid, "leads its session: {stat}");
        assert_eq!(fields[4], "0", "no controlling terminal: {stat}");
    }
}
