//! What the child does between `clone3` and `execve`, on its own stack, sharing the server's
//! memory (see `clone.rs` for why that is safe).
//!
//! The rules: system calls only, on data the suspended caller built before the clone; nothing
//! allocated, locked, formatted or written outside this stack (errors are plain numbers); no
//! signal handler may run. The order is the standard library's for a spawn with a hook (the
//! signal dispositions reset, the descriptors set up, the working directory, a new session
//! (with its controlling terminal, for a terminal session), then the confinement), and the signals are unblocked just before `execve`.

use super::plan::Plan;
use crate::process::sandbox::Bounding;

/// Runs the child's steps and execs the program (`bounding`: whether the thread that started
/// it had emptied its capability bounding set); returns the error number of the step that
/// failed (it never returns otherwise).
#[allow(unsafe_code)]
pub(super) fn run(plan: &Plan<'_>, bounding: Bounding) -> i32 {
    reset_signal_handlers();
    for (from, to) in plan.stdio.iter().zip([libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO]) {
        // SAFETY: dup2 on two descriptor numbers; `from` is above 2 (the caller made sure), so
        // no earlier step replaced it.
        if unsafe { libc::dup2(*from, to) } < 0 {
            return errno();
        }
    }
    // SAFETY: a NUL-terminated path the caller owns.
    if unsafe { libc::chdir(plan.cwd.as_ptr()) } != 0 {
        return errno();
    }
    // SAFETY: setsid takes no argument: this process leads a new session and a new group
    // (pgid = its pid) and has no controlling terminal, so it cannot reach the person's
    // terminal through `/dev/tty` (see `toolbelt_core::process`).
    if unsafe { libc::setsid() } < 0 {
        return errno();
    }
    // SAFETY: ioctl(TIOCSCTTY) on descriptor 0 with an integer argument: the pseudo-terminal
    // the caller opened for this command becomes the new session's controlling terminal (the
    // session has none yet; the terminal belongs to no other session).
    if plan.terminal && unsafe { libc::ioctl(libc::STDIN_FILENO, libc::TIOCSCTTY, 0) } < 0 {
        return errno();
    }
    if let Some(confinement) = plan.confinement
        && let Err(e) = confinement.apply(Some(plan.cwd), bounding)
    {
        return e.raw_os_error().unwrap_or(libc::EPERM);
    }
    unblock_signals();
    // SAFETY: the path and the two null-terminated arrays of NUL-terminated strings were built
    // by the caller and stay alive until the clone returns in the caller.
    unsafe { libc::execve(plan.program.as_ptr(), plan.argv.as_ptr(), plan.envp.as_ptr()) };
    // Every handler is the default now, so no code of the server's runs before the exit.
    errno()
}

/// The kernel's `struct sigaction` on x86-64 and aarch64 (handler, flags, restorer, mask).
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// Every signal with a handler goes back to its default action, and `SIGPIPE` too (which the
/// Rust runtime ignores and the standard library's spawn restores), so no handler of the
/// server can run in the child; ignored signals stay ignored, as they would across a fork.
#[allow(unsafe_code)]
fn reset_signal_handlers() {
    const DEFAULT: usize = 0; // SIG_DFL
    const IGNORE: usize = 1; // SIG_IGN
    for signal in 1..=64 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        let mut old = KernelSigaction { handler: DEFAULT, flags: 0, restorer: 0, mask: 0 };
        // SAFETY: rt_sigaction writes the current action to `old` (8-byte signal sets).
        let got =
            unsafe { libc::syscall(libc::SYS_rt_sigaction, signal, std::ptr::null::<KernelSigaction>(), &mut old, 8) };
        if got != 0 || old.handler == DEFAULT || (old.handler == IGNORE && signal != libc::SIGPIPE) {
            continue;
        }
        let default = KernelSigaction { handler: DEFAULT, flags: 0, restorer: 0, mask: 0 };
        // SAFETY: rt_sigaction reads the new action from `default`.
        unsafe { libc::syscall(libc::SYS_rt_sigaction, signal, &default, std::ptr::null_mut::<KernelSigaction>(), 8) };
    }
}

/// An empty signal mask, as the standard library gives every child.
#[allow(unsafe_code)]
fn unblock_signals() {
    let none: u64 = 0;
    // SAFETY: rt_sigprocmask reads one 8-byte signal set.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &none, std::ptr::null_mut::<u64>(), 8usize) };
}

/// The calling thread's `errno` (EINVAL if none is set).
fn errno() -> i32 {
    match std::io::Error::last_os_error().raw_os_error() {
        Some(0) | None => libc::EINVAL,
        Some(e) => e,
    }
}
