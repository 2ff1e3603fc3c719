//! Pseudo-terminals for interactive sessions: a new pair whose one end becomes a command's
//! terminal (and, in its new session, its controlling terminal: `spawn`'s [`super::spawn::Typed`])
//! while toolbelt reads and writes the other.
//!
//! Both ends are opened close-on-exec from the start, so no other command started meanwhile
//! (from another thread) inherits either: only the session's command holds its terminal.

use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd};
use std::os::unix::fs::OpenOptionsExt as _;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

/// An open pseudo-terminal: the side toolbelt keeps (non-blocking) and the command's side.
#[derive(Debug)]
pub struct Pty {
    /// What toolbelt reads the command's output from and writes its input to.
    pub master: OwnedFd,
    /// The command's terminal.
    pub slave: OwnedFd,
}

/// Opens a pseudo-terminal of `size`.
pub fn open(size: Size) -> std::io::Result<Pty> {
    let master = nix::pty::posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)?;
    nix::pty::grantpt(&master)?;
    nix::pty::unlockpt(&master)?;
    let name = nix::pty::ptsname_r(&master)?;
    // The standard library opens with O_CLOEXEC.
    let slave: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&name)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot open the terminal {name}: {e}")))?
        .into();
    let master = OwnedFd::from(master);
    let flags = OFlag::from_bits_retain(fcntl(master.as_fd(), FcntlArg::F_GETFL)?);
    fcntl(master.as_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    resize(&master, size)?;
    Ok(Pty { master, slave })
}

/// `fd` (a terminal's side or a pipe's end, non-blocking) watched by tokio's reactor for
/// `interest`.
#[allow(unsafe_code)]
pub fn register(fd: OwnedFd, interest: Interest) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is an open descriptor that stays open, with the same number, until
    // it is dropped — with the `AsyncFd` that owns it.
    unsafe { AsyncFd::register_with_interest(fd, interest) }.map_err(std::io::Error::from)
}

/// Sets the terminal's size (the command gets `SIGWINCH`).
#[allow(unsafe_code)]
pub fn resize(master: &OwnedFd, size: Size) -> std::io::Result<()> {
    let winsize = libc::winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: ioctl(TIOCSWINSZ) reads one `winsize` from the pointer, which lives for the call.
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &winsize) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The process group in the terminal's foreground (the program reading what is typed), if
/// there is one.
#[allow(unsafe_code)]
pub fn foreground(master: &OwnedFd) -> Option<i32> {
    // SAFETY: tcgetpgrp takes a descriptor and returns an integer.
    let group = unsafe { libc::tcgetpgrp(master.as_raw_fd()) };
    (group > 0).then_some(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_opens_with_its_size_and_both_ends_close_on_exec() {
        let pty = open(Size { rows: 40, cols: 120 }).unwrap();
        for fd in [&pty.master, &pty.slave] {
            let flags = fcntl(fd.as_fd(), FcntlArg::F_GETFD).unwrap();
            assert!(flags & libc::FD_CLOEXEC != 0);
        }
        let mut winsize = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
        #[allow(unsafe_code)]
        // SAFETY: TIOCGWINSZ writes one winsize.
        let got = unsafe { libc::ioctl(pty.slave.as_raw_fd(), libc::TIOCGWINSZ, &mut winsize) };
        assert_eq!(got, 0);
        assert_eq!((winsize.ws_row, winsize.ws_col), (40, 120));
        assert_eq!(foreground(&pty.master), None, "no session has it as its terminal yet");
    }
}
