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
//!   `clone`, whose flags it can.
//!
//! With the network off, `socket()` also creates only `AF_UNIX` sockets: Landlock's network
//! rules cover TCP only, and this turns off UDP, raw, packet, netlink and vsock sockets too.
//!
//! On x86-64 the x32 ABI (call numbers from bit 30) is refused whole by a four-instruction
//! filter of its own. The programs depend only on the architecture and the network setting,
//! so each is compiled once and shared.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch, sock_filter,
};

/// A compiled filter.
pub(super) type Program = BpfProgram;

/// The filters a command gets: the main one (`EPERM`), the one that makes `clone3`
/// unavailable (`ENOSYS`), and on x86-64 the one refusing the x32 ABI.
#[derive(Debug, Clone, Copy)]
pub(super) struct Filters {
    main: &'static Program,
    clone3: &'static Program,
    x32: Option<&'static Program>,
}

/// The filters for a command with the network on or off, compiled on first use.
pub(super) fn filters(network: bool) -> Result<Filters, String> {
    static WITH_NETWORK: OnceLock<Result<Program, String>> = OnceLock::new();
    static WITHOUT_NETWORK: OnceLock<Result<Program, String>> = OnceLock::new();
    static CLONE3: OnceLock<Result<Program, String>> = OnceLock::new();
    let main = if network { &WITH_NETWORK } else { &WITHOUT_NETWORK };
    let main = main.get_or_init(|| compile(!network)).as_ref().map_err(Clone::clone)?;
    let clone3 = CLONE3.get_or_init(compile_clone3).as_ref().map_err(Clone::clone)?;
    Ok(Filters { main, clone3, x32: x32_filter() })
}

/// x86-64 only: every call of the x32 ABI (numbered from bit 30, under the x86-64 audit
/// architecture) is refused, so the main filter need only list native numbers — half the
/// program, and the kernel prepares a filter's cache by running it for every call number, so
/// a shorter one starts every command sooner. Nothing toolbelt runs uses x32.
fn x32_filter() -> Option<&'static Program> {
    #[cfg(target_arch = "x86_64")]
    {
        static X32: OnceLock<Program> = OnceLock::new();
        let stmt = |code: u32, k: u32| sock_filter { code: code as u16, jt: 0, jf: 0, k };
        Some(X32.get_or_init(|| {
            vec![
                // The call number.
                stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
                // x32 call: fall through to the refusal; else skip it.
                sock_filter {
                    code: (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16,
                    jt: 0,
                    jf: 1,
                    k: 0x4000_0000,
                },
                stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
                stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
            ]
        }))
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
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

fn arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| format!("the system call filter is not available on {} processors", std::env::consts::ARCH))
}

/// One rule per condition, any of which matches (seccompiler ORs rules, ANDs conditions).
fn any_of(conditions: Vec<SeccompCondition>) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    conditions.into_iter().map(|c| SeccompRule::new(vec![c])).collect()
}

/// The `mode` argument (at `index`) naming a character or block device.
fn device_modes(index: u8) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let ifmt = u64::from(libc::S_IFMT);
    any_of(vec![
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(ifmt), u64::from(libc::S_IFCHR))?,
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(ifmt), u64::from(libc::S_IFBLK))?,
    ])
}

fn compile(no_network: bool) -> Result<Program, String> {
    let arch = arch()?;
    let build = || -> Result<Program, seccompiler::BackendError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for call in DENIED {
            // An empty chain matches every call.
            rules.insert(*call, Vec::new());
        }
        rules.insert(libc::SYS_mknodat, device_modes(2)?);
        #[cfg(target_arch = "x86_64")]
        rules.insert(libc::SYS_mknod, device_modes(1)?);
        let namespaces = NEW_NAMESPACES
            .iter()
            .map(|flag| {
                let flag = u64::from(flag.unsigned_abs());
                SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
            })
            .collect::<Result<Vec<_>, _>>()?;
        rules.insert(libc::SYS_clone, any_of(namespaces)?);
        if no_network {
            let not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
            rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![not_unix])?]);
        }
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?;
        filter.try_into()
    };
    build().map_err(|e| format!("cannot build the system call filter: {e}"))
}

/// `clone3` fails with `ENOSYS`: the C library then uses `clone`, which the main filter reads.
fn compile_clone3() -> Result<Program, String> {
    let arch = arch()?;
    let build = || -> Result<Program, seccompiler::BackendError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        rules.insert(libc::SYS_clone3, Vec::new());
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)?;
        filter.try_into()
    };
    build().map_err(|e| format!("cannot build the clone3 filter: {e}"))
}

/// Installs `filters` on the calling thread, which must be the single thread of a forked
/// child about to exec. Only system calls (prctl, seccomp).
pub(super) fn apply(filters: Filters) -> std::io::Result<()> {
    if let Some(x32) = filters.x32 {
        seccompiler::apply_filter(x32).map_err(|_| super::landlock::last_os_error())?;
    }
    seccompiler::apply_filter(filters.clone3).map_err(|_| super::landlock::last_os_error())?;
    seccompiler::apply_filter(filters.main).map_err(|_| super::landlock::last_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_once() {
        let a = filters(false).unwrap();
        let b = filters(false).unwrap();
        assert!(std::ptr::eq(a.main, b.main) && std::ptr::eq(a.clone3, b.clone3));
        assert!(!std::ptr::eq(a.main, filters(true).unwrap().main), "with and without the network differ");
        assert!(a.main.len() > 20, "an architecture check and the rules");
        #[cfg(target_arch = "x86_64")]
        assert_eq!(a.x32.map(Vec::len), Some(4));
    }
}
