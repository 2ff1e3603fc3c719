//! The person's terminal, out of a sandboxed command's reach.
//!
//! A command starts without a controlling terminal (`toolbelt_core::process`), so it cannot
//! push keystrokes into the terminal toolbelt runs in. But that terminal is also a device file
//! of the user's (`/dev/pts/3`), which a command could open by its name: to read what the
//! person types (an answer meant for toolbelt's permission prompt) or to write over the screen
//! (a question redrawn to look harmless, or an escape sequence some terminals answer by typing
//! into their own input). So in the command's mount namespace, each terminal device toolbelt
//! holds — its controlling terminal, and its standard streams when they are terminals — is
//! covered by `/dev/null`. Pseudo-terminals a command opens for itself (`script`, `expect`,
//! Python's `pty`) are new devices and unaffected.

use std::io::IsTerminal as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The terminal devices toolbelt holds, found once per process (they do not change).
pub(super) fn devices() -> &'static [PathBuf] {
    static DEVICES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    DEVICES.get_or_init(find)
}

fn find() -> Vec<PathBuf> {
    let mut rdevs: Vec<u64> = Vec::new();
    let terminals = [std::io::stdin().is_terminal(), std::io::stdout().is_terminal(), std::io::stderr().is_terminal()];
    for (fd, _) in terminals.iter().enumerate().filter(|(_, t)| **t) {
        if let Ok(meta) = std::fs::metadata(format!("/proc/self/fd/{fd}"))
            && meta.file_type().is_char_device()
        {
            rdevs.push(meta.rdev());
        }
    }
    rdevs.extend(controlling_terminal());
    rdevs.sort_unstable();
    rdevs.dedup();
    if rdevs.is_empty() {
        return Vec::new();
    }
    // The device files with those numbers: pseudo-terminals in /dev/pts, consoles in /dev.
    let mut found = Vec::new();
    for dir in ["/dev/pts", "/dev"] {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path == Path::new("/dev/tty") || path == Path::new("/dev/ptmx") {
                continue;
            }
            if let Ok(meta) = path.symlink_metadata()
                && meta.file_type().is_char_device()
                && rdevs.contains(&meta.rdev())
            {
                found.push(path);
            }
        }
    }
    found
}

/// The device number of toolbelt's controlling terminal (`tty_nr` in `/proc/self/stat`), if
/// it has one.
fn controlling_terminal() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let tty_nr: u64 = stat.rsplit_once(')')?.1.split_whitespace().nth(4)?.parse().ok()?;
    if tty_nr == 0 {
        return None;
    }
    // The kernel's encoding: minor in bits 0–7 and 20–31, major in bits 8–19.
    let (major, minor) = ((tty_nr >> 8) & 0xfff, (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00));
    Some(libc::makedev(u32::try_from(major).ok()?, u32::try_from(minor).ok()?))
}
