//! Capabilities: a sandboxed command keeps none.
//!
//! Landlock confines paths, not privileges: a command running as root with every capability
//! could `mknod` a block device and write the disk beneath every rule, load a module, or
//! reboot. So before exec the child drops every capability from each set — bounding,
//! ambient, inheritable, effective and permitted — and locks the securebits that would give
//! them back to a root exec (`SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP`, `SECBIT_KEEP_CAPS`
//! off, `SECBIT_NO_CAP_AMBIENT_RAISE`). A process without `CAP_SETPCAP` (an unprivileged
//! user) cannot change its bounding set or securebits, and has nothing to drop there: those
//! steps are skipped for it, the rest still applies.
//!
//! The bounding set is dropped one capability per call, each call replacing the thread's
//! credentials (about 45 µs for all of them). A child started by a thread whose own bounding
//! set is already empty inherits that, and skips the loop ([`Bounding::Empty`]; see
//! `spawn/spawner.rs`).

/// Whether the bounding set of the thread that starts a child is already empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bounding {
    /// It is not: the child drops every capability from it.
    Full,
    /// It is (checked when that thread emptied it): the child inherits an empty set.
    Empty,
}

/// Empties the calling thread's bounding set, and says whether it is empty now. Only
/// affects what that thread's own children may gain at exec (never its current
/// capabilities): for a thread that only starts sandboxed commands.
pub(crate) fn empty_bounding_set() -> bool {
    let last_cap = CapDrop::plan().last_cap;
    if !sys::has_setpcap() {
        return false;
    }
    for cap in 0..=last_cap {
        match sys::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
            Err(_) => return false,
        }
    }
    (0..=last_cap).all(|cap| sys::in_bounding_set(cap) == Some(false))
        && sys::in_bounding_set(last_cap + 1) != Some(true)
}

/// What the child needs to drop everything, read before it starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct CapDrop {
    /// The highest capability number this kernel knows.
    last_cap: i32,
}

/// The securebits set and locked (see `linux/securebits.h`).
const SECUREBITS: libc::c_ulong = {
    const NOROOT: libc::c_ulong = 1 << 0;
    const NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    NOROOT
        | NOROOT_LOCKED
        | NO_SETUID_FIXUP
        | NO_SETUID_FIXUP_LOCKED
        | KEEP_CAPS_LOCKED
        | NO_CAP_AMBIENT_RAISE
        | NO_CAP_AMBIENT_RAISE_LOCKED
};

impl CapDrop {
    /// Reads the kernel's last capability number, once per process (it is fixed when the
    /// kernel is built; 63 when it cannot be read: dropping a number the kernel does not know
    /// fails harmlessly and ends the loop).
    pub(super) fn plan() -> Self {
        static LAST_CAP: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
        let last_cap = *LAST_CAP.get_or_init(|| {
            std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(63)
        });
        Self { last_cap }
    }

    /// Drops every capability of the calling thread, which must be the single thread of a
    /// child about to exec (its bounding set as `bounding` says). Only system calls.
    pub(super) fn apply(self, bounding: Bounding) -> std::io::Result<()> {
        let privileged = sys::has_setpcap();
        if privileged {
            sys::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0)?;
            // Nothing left to drop when the bounding set came empty.
            let last = if bounding == Bounding::Empty { -1 } else { self.last_cap };
            for cap in 0..=last {
                match sys::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
                    Err(e) => return Err(e),
                }
            }
        }
        // Ambient capabilities exist since Linux 4.3; older kernels have none to clear.
        match sys::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0) {
            Err(e) if e.raw_os_error() != Some(libc::EINVAL) => return Err(e),
            _ => {}
        }
        sys::clear_sets()
    }
}

/// The raw system calls, each allocating nothing.
#[allow(unsafe_code)]
mod sys {
    /// `struct __user_cap_header_struct`.
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }

    /// `struct __user_cap_data_struct`.
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }

    const VERSION_3: u32 = 0x2008_0522;
    const CAP_SETPCAP: u32 = 8;

    /// Whether capability `cap` is in the thread's bounding set (None: the kernel knows no
    /// such capability).
    pub(super) fn in_bounding_set(cap: i32) -> Option<bool> {
        // SAFETY: prctl with integer arguments only.
        let ret = unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap as libc::c_ulong, 0, 0, 0) };
        (ret >= 0).then_some(ret == 1)
    }

    pub(super) fn prctl(option: libc::c_int, arg: libc::c_ulong, arg3: libc::c_ulong) -> std::io::Result<()> {
        // SAFETY: prctl with integer arguments only; it reads and writes no memory of ours.
        let ret = unsafe { libc::prctl(option, arg, arg3, 0 as libc::c_ulong, 0 as libc::c_ulong) };
        if ret < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
    }

    /// Whether the thread's effective set holds `CAP_SETPCAP`.
    pub(super) fn has_setpcap() -> bool {
        let mut header = Header { version: VERSION_3, pid: 0 };
        let mut data = [Data::default(); 2];
        // SAFETY: capget fills two data structs for version 3, which `data` holds.
        let ret = unsafe { libc::syscall(libc::SYS_capget, &mut header as *mut Header, data.as_mut_ptr()) };
        ret == 0 && data[0].effective & (1 << CAP_SETPCAP) != 0
    }

    /// Empties the effective, permitted and inheritable sets.
    pub(super) fn clear_sets() -> std::io::Result<()> {
        let mut header = Header { version: VERSION_3, pid: 0 };
        let data = [Data::default(); 2];
        // SAFETY: capset reads the header and two data structs for version 3.
        let ret = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
        if ret < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The capability sets of a child after the drop, as `/proc/self/status` shows them.
    #[test]
    fn a_child_keeps_no_capability() {
        let drop = CapDrop::plan();
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status"]);
        super::super::pre_exec(&mut command, move || drop.apply(Bounding::Full));
        let out = command.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            let value = line.split_whitespace().nth(1).unwrap();
            let is_bounding = line.starts_with("CapBnd");
            if is_bounding && !nix::unistd::geteuid().is_root() {
                continue; // an unprivileged user cannot change its bounding set
            }
            assert_eq!(u64::from_str_radix(value, 16).unwrap(), 0, "{line}");
        }
    }
}
