//! The seccomp layer: with the network off, `socket()` creates only `AF_UNIX` sockets.
//!
//! Landlock's network rules cover TCP only; this filter turns off every other family too
//! (UDP and raw sockets through `AF_INET`/`AF_INET6`, `AF_PACKET`, `AF_NETLINK`, `AF_VSOCK`…)
//! while Unix sockets, which many local tools depend on, keep working. `io_uring_setup` is
//! refused as well: a ring can open and connect sockets without the `socket()` system call.
//! Refused calls fail with `EPERM`, so programs report a plain "operation not permitted".
//!
//! The program depends only on the architecture, so it is compiled once and shared.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// A compiled filter.
pub(super) type Program = BpfProgram;

/// The network filter for this architecture, compiled on first use.
pub(super) fn network_filter() -> Result<&'static Program, String> {
    static FILTER: OnceLock<Result<Program, String>> = OnceLock::new();
    FILTER.get_or_init(compile).as_ref().map_err(Clone::clone)
}

/// Builds the filter: `socket(domain != AF_UNIX, …)` and `io_uring_setup` fail with EPERM;
/// everything else is allowed.
fn compile() -> Result<Program, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| format!("the socket filter is not available on {} processors", std::env::consts::ARCH))?;
    let not_unix = || -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        let condition = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
        Ok(vec![SeccompRule::new(vec![condition])?])
    };
    let build = || -> Result<Program, seccompiler::BackendError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        rules.insert(libc::SYS_socket, not_unix()?);
        // An empty chain matches every call.
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
        // The x32 ABI shares the x86-64 audit architecture but numbers its calls from bit 30;
        // on kernels that enable it, the same calls must be caught under those numbers too.
        #[cfg(target_arch = "x86_64")]
        {
            const X32: i64 = 0x4000_0000;
            rules.insert(X32 | libc::SYS_socket, not_unix()?);
            rules.insert(X32 | libc::SYS_io_uring_setup, Vec::new());
        }
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?;
        filter.try_into()
    };
    build().map_err(|e| format!("cannot build the socket filter: {e}"))
}

/// Installs `program` on the calling thread, which must be the single thread of a forked
/// child about to exec. Only system calls (prctl, seccomp).
pub(super) fn apply(program: &Program) -> std::io::Result<()> {
    seccompiler::apply_filter(program).map_err(|_| super::landlock::last_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_once() {
        let a = network_filter().unwrap();
        let b = network_filter().unwrap();
        assert!(std::ptr::eq(a, b));
        assert!(a.len() > 4, "an architecture check and the rules");
    }
}
