//! The seccomp layer: system calls a confined command never needs, and, with the network
//! off, every socket but `AF_UNIX`.
//!
//! Refused in every sandboxed mode, with `EPERM`:
//!
//! * creating device nodes (`mknod`/`mknodat` of a character or block device; FIFOs and
//!   sockets stay allowed): a device node is a way around every path rule;
//! * `reboot`, module loading (`init_module`, `finit_module`, `delete_module`), `kexec_load`,
//!   `kexec_file_load`, `bpf`, `perf_event_open`, the kernel keyring (`keyctl`, `add_key`,
//!   `request_key`), `chroot`, `pivot_root`, every mount call (`mount`, `umount2`, `fsopen`,
//!   `fsconfig`, `fsmount`, `fspick`, `move_mount`, `open_tree`, `mount_setattr`), `swapon`,
//!   `swapoff`, setting the clock (`settimeofday`, `clock_settime`, `clock_adjtime`,
//!   `adjtimex`), `acct`, and `io_uring_setup` (a ring runs calls this filter never sees);
//! * new namespaces (`unshare`, `setns`, and `clone` with a `CLONE_NEW*` flag): a new user
//!   namespace would hand the command a fresh set of capabilities. `clone3`, whose flags
//!   live in memory a filter cannot read, fails with `ENOSYS`, so the C library falls back to
//!   `clone`, whose flags it can;
//! * typing into a terminal: `ioctl` with `TIOCSTI` (push a byte into a terminal's input) or
//!   `TIOCLINUX` (whose selection paste does the same on a virtual console). A command starts
//!   without a controlling terminal (see `toolbelt_core::process`), so the kernel refuses it
//!   `TIOCSTI` on the person's terminal anyway; this also covers a terminal it gets hold of
//!   later. The kernel reads the request number as a 32-bit `unsigned int`, so the filter
//!   compares the low 32 bits of the argument, as it does: `0xffffffff00005412` is `TIOCSTI`
//!   too.
//!
//! With the network off, `socket()` also creates only `AF_UNIX` sockets: Landlock's network
//! rules cover TCP only, and this turns off UDP, raw, packet, netlink and vsock sockets too.
//!
//! On x86-64 the x32 ABI (call numbers from bit 30) is refused whole. A call of another
//! architecture than the native one (32-bit x86 through `int 0x80`, say) kills the process.
//!
//! All of this is one program (`sandbox/bpf.rs`) that finds a call's verdict through a binary
//! tree on its number, so installing it costs the kernel little (see there). The programs
//! depend only on the architecture and the network setting, so each is built once and shared.

use std::sync::OnceLock;

use libc::sock_filter;

use super::bpf::{self, Verdict};

/// A built filter.
pub(super) type Program = Vec<sock_filter>;

/// The filter a command gets, built once per process for each network setting.
#[derive(Debug, Clone, Copy)]
pub(super) struct Filters {
    program: &'static Program,
}

/// The filter for a command with the network on or off, built on first use.
pub(super) fn filters(network: bool) -> Result<Filters, String> {
    static WITH_NETWORK: OnceLock<Result<Program, String>> = OnceLock::new();
    static WITHOUT_NETWORK: OnceLock<Result<Program, String>> = OnceLock::new();
    let cell = if network { &WITH_NETWORK } else { &WITHOUT_NETWORK };
    let program = cell.get_or_init(|| build(!network)).as_ref().map_err(Clone::clone)?;
    Ok(Filters { program })
}

/// Calls refused outright.
const DENIED: &[i64] = &[
    libc::SYS_reboot,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_chroot,
    libc::SYS_pivot_root,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_acct,
    libc::SYS_io_uring_setup,
    libc::SYS_unshare,
    libc::SYS_setns,
];

/// The `clone` flags that make new namespaces.
const NEW_NAMESPACES: &[i32] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

/// The native architecture's audit number (`AUDIT_ARCH_*`), and the call-number bits refused
/// whole (x86-64's x32 ABI).
fn arch() -> Result<(u32, u32), String> {
    match std::env::consts::ARCH {
        "x86_64" => Ok((0xC000_003E, 0x4000_0000)),
        "aarch64" => Ok((0xC000_00B7, 0)),
        "riscv64" => Ok((0xC000_00F3, 0)),
        other => Err(format!("the system call filter is not available on {other} processors")),
    }
}

/// The `ioctl` requests that type into a terminal: `TIOCSTI` and `TIOCLINUX` (the same numbers
/// on every architecture filtered here).
const TERMINAL_INPUT: &[u32] = &[libc::TIOCSTI as u32, libc::TIOCLINUX as u32];

/// The device file types `mknod` must not create.
const DEVICE_TYPES: &[u32] = &[libc::S_IFCHR, libc::S_IFBLK];

/// The listed calls and their verdicts: [`DENIED`] refused; `mknod`/`mknodat` of a device
/// refused; `clone` with a [`NEW_NAMESPACES`] flag refused; `clone3` unavailable (`ENOSYS`);
/// `ioctl` with a [`TERMINAL_INPUT`] request refused; with `no_network`, `socket` of any
/// family but `AF_UNIX` refused.
fn listed(no_network: bool) -> Vec<(u32, Verdict)> {
    let nr = |call: i64| u32::try_from(call).unwrap_or(u32::MAX);
    let mut listed: Vec<(u32, Verdict)> = DENIED.iter().map(|&call| (nr(call), Verdict::Errno(libc::EPERM))).collect();
    let devices = |arg| Verdict::MaskedIn { arg, mask: libc::S_IFMT, values: DEVICE_TYPES };
    listed.push((nr(libc::SYS_mknodat), devices(2)));
    #[cfg(target_arch = "x86_64")]
    listed.push((nr(libc::SYS_mknod), devices(1)));
    let namespaces = NEW_NAMESPACES.iter().fold(0u32, |all, flag| all | flag.unsigned_abs());
    listed.push((nr(libc::SYS_clone), Verdict::AnyBit { arg: 0, mask: namespaces }));
    listed.push((nr(libc::SYS_clone3), Verdict::Errno(libc::ENOSYS)));
    listed.push((nr(libc::SYS_ioctl), Verdict::In { arg: 1, values: TERMINAL_INPUT }));
    if no_network {
        listed.push((nr(libc::SYS_socket), Verdict::Unless { arg: 0, value: libc::AF_UNIX as u32 }));
    }
    listed
}

fn build(no_network: bool) -> Result<Program, String> {
    let (arch, refused_bits) = arch()?;
    bpf::program(arch, refused_bits, &listed(no_network))
        .map_err(|e| format!("cannot build the system call filter: {e}"))
}

/// Installs `filters` on the calling thread, which must be the single thread of a child
/// about to exec. Only system calls (prctl, seccomp) on memory built before the child
/// started; nothing is written but the child's own stack.
#[allow(unsafe_code)]
pub(super) fn apply(filters: Filters) -> std::io::Result<()> {
    let program = libc::sock_fprog {
        len: u16::try_from(filters.program.len()).map_err(|_| std::io::Error::from_raw_os_error(libc::E2BIG))?,
        filter: filters.program.as_ptr().cast_mut(),
    };
    // SAFETY: seccomp reads the program, which lives in a static for the process's life,
    // through a pointer to a struct on this stack.
    unsafe {
        super::landlock::no_new_privs()?;
        if libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0 as libc::c_uint,
            &program as *const libc::sock_fprog,
        ) != 0
        {
            return Err(super::landlock::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
