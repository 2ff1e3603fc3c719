//! The one-program filter decides every call as the three programs it replaced did (built
//! here with seccompiler, as they were: the x32 refusal, `clone3` unavailable, and the main
//! rule set), checked call by call with a BPF interpreter.

use std::collections::BTreeMap;

use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};

use super::*;
use crate::process::sandbox::bpf::{RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS, run};

#[test]
fn the_filters_are_built_once() {
    let a = filters(false).unwrap();
    let b = filters(false).unwrap();
    assert!(std::ptr::eq(a.program, b.program));
    assert!(!std::ptr::eq(a.program, filters(true).unwrap().program), "with and without the network differ");
    assert!(a.program.len() < 100, "{} instructions", a.program.len());
}

fn any_of(conditions: Vec<SeccompCondition>) -> Vec<SeccompRule> {
    conditions.into_iter().map(|c| SeccompRule::new(vec![c]).unwrap()).collect()
}

fn device_modes(index: u8) -> Vec<SeccompRule> {
    let ifmt = u64::from(libc::S_IFMT);
    let cond = |v: u32| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(ifmt), u64::from(v)).unwrap()
    };
    any_of(vec![cond(libc::S_IFCHR), cond(libc::S_IFBLK)])
}

/// The main program as seccompiler built it.
fn reference_main(no_network: bool) -> Vec<libc::sock_filter> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in DENIED {
        rules.insert(*call, Vec::new());
    }
    rules.insert(libc::SYS_mknodat, device_modes(2));
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_mknod, device_modes(1));
    let namespaces = NEW_NAMESPACES
        .iter()
        .map(|flag| {
            let flag = u64::from(flag.unsigned_abs());
            SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag).unwrap()
        })
        .collect();
    rules.insert(libc::SYS_clone, any_of(namespaces));
    let request = |r: u32| SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, u64::from(r)).unwrap();
    rules.insert(libc::SYS_ioctl, any_of(vec![request(libc::TIOCSTI as u32), request(libc::TIOCLINUX as u32)]));
    if no_network {
        let not_unix =
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64).unwrap();
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![not_unix]).unwrap()]);
    }
    let arch = std::env::consts::ARCH.try_into().unwrap();
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch).unwrap();
    let program: seccompiler::BpfProgram = filter.try_into().unwrap();
    program.into_iter().map(|i| libc::sock_filter { code: i.code, jt: i.jt, jf: i.jf, k: i.k }).collect()
}

fn reference_clone3() -> Vec<libc::sock_filter> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_clone3, Vec::new());
    let arch = std::env::consts::ARCH.try_into().unwrap();
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch).unwrap();
    let program: seccompiler::BpfProgram = filter.try_into().unwrap();
    program.into_iter().map(|i| libc::sock_filter { code: i.code, jt: i.jt, jf: i.jf, k: i.k }).collect()
}

/// The x32 refusal as it was: the call number, bit 30 set refused.
fn reference_x32() -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
    vec![
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        libc::sock_filter { code: (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16, jt: 0, jf: 1, k: 0x4000_0000 },
        stmt(libc::BPF_RET | libc::BPF_K, RET_ERRNO | libc::EPERM as u32),
        stmt(libc::BPF_RET | libc::BPF_K, RET_ALLOW),
    ]
}

/// `TIOCSTI` and `TIOCGWINSZ` as system call arguments (their type differs between C
/// libraries).
fn sti() -> u64 {
    u64::from(TERMINAL_INPUT[0])
}

fn winsz() -> u64 {
    u64::from(libc::TIOCGWINSZ as u32)
}

/// What the kernel answers with a stack of filters: every filter runs, the action of
/// highest precedence wins (the lowest signed action value), the newest filter first among
/// equals.
fn run_stack(stack: &[Vec<libc::sock_filter>], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
    let precedence = |r: u32| (r & 0xffff_0000) as i32;
    let mut verdict = RET_ALLOW;
    for program in stack.iter().rev() {
        let r = run(program, nr, arch, args);
        if precedence(r) < precedence(verdict) {
            verdict = r;
        }
    }
    verdict
}

#[test]
fn one_program_decides_every_call_as_the_three_did() {
    let (native, _) = arch().unwrap();
    let x32 = cfg!(target_arch = "x86_64").then(reference_x32);
    let mut numbers: Vec<u32> = (0..1024).collect();
    numbers.extend((0..1024).map(|n| 0x4000_0000 | n));
    numbers.extend([0x3fff_ffff, 0x7fff_ffff, 0x8000_0000, u32::MAX]);
    let modes = [0, libc::S_IFCHR, libc::S_IFBLK, libc::S_IFREG, libc::S_IFIFO, libc::S_IFSOCK, libc::S_IFCHR | 0o666];
    let mut arg_values: Vec<u64> = modes.iter().map(|&m| u64::from(m)).collect();
    arg_values.extend(modes.iter().map(|&m| u64::from(m) | 0xffff_0000_0000_0000));
    arg_values.extend(NEW_NAMESPACES.iter().map(|f| u64::from(f.unsigned_abs())));
    arg_values.extend([
        libc::SIGCHLD as u64,
        (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as u64,
        1 << 40,
        libc::AF_UNIX as u64,
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
        libc::AF_NETLINK as u64,
        (1 << 32) | libc::AF_UNIX as u64,
        (1 << 32) | libc::AF_INET as u64,
        sti(),
        u64::from(TERMINAL_INPUT[1]),
        0xffff_ffff_0000_0000 | sti(),
        winsz(),
        u64::MAX,
    ]);
    for no_network in [false, true] {
        let ours = build(no_network).unwrap();
        let mut stack: Vec<Vec<libc::sock_filter>> = x32.iter().cloned().collect();
        stack.extend([reference_clone3(), reference_main(no_network)]);
        let mut refused = 0;
        for arch in [native, 0x4000_0003 /* i386 */, 0xC000_00B7, 0xC000_003E, 0] {
            for &nr in &numbers {
                for (i, &value) in arg_values.iter().enumerate() {
                    // The value in each argument position the rules read, the others varied.
                    let args = [value, value, value, arg_values[(i + 3) % arg_values.len()], 0, u64::MAX];
                    let want = run_stack(&stack, nr, arch, args);
                    let got = run(&ours, nr, arch, args);
                    assert_eq!(got, want, "call {nr:#x}, arch {arch:#x}, args {args:x?}, network off: {no_network}");
                    refused += usize::from(got != RET_ALLOW);
                }
            }
        }
        assert!(refused > 0);
    }
    // Spot checks of what the verdicts mean.
    let ours = build(true).unwrap();
    let call = |nr: i64, args: [u64; 6]| run(&ours, nr as u32, native, args);
    assert_eq!(call(libc::SYS_clone3, [0; 6]), RET_ERRNO | libc::ENOSYS as u32);
    assert_eq!(call(libc::SYS_mount, [0; 6]), RET_ERRNO | libc::EPERM as u32);
    assert_eq!(call(libc::SYS_socket, [libc::AF_INET as u64, 0, 0, 0, 0, 0]), RET_ERRNO | libc::EPERM as u32);
    assert_eq!(call(libc::SYS_socket, [libc::AF_UNIX as u64, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(call(libc::SYS_clone, [libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0]), RET_ERRNO | libc::EPERM as u32);
    assert_eq!(call(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(call(libc::SYS_mknodat, [0, 0, u64::from(libc::S_IFBLK), 0, 0, 0]), RET_ERRNO | libc::EPERM as u32);
    assert_eq!(call(libc::SYS_mknodat, [0, 0, u64::from(libc::S_IFIFO), 0, 0, 0]), RET_ALLOW);
    assert_eq!(call(libc::SYS_read, [0; 6]), RET_ALLOW);
    // Typing into a terminal, however the request's upper bits are set (the kernel ignores
    // them); other terminal requests pass.
    let eperm = RET_ERRNO | libc::EPERM as u32;
    for request in [sti(), u64::from(TERMINAL_INPUT[1]), (7 << 32) | sti()] {
        assert_eq!(call(libc::SYS_ioctl, [0, request, 0, 0, 0, 0]), eperm, "{request:#x}");
    }
    assert_eq!(call(libc::SYS_ioctl, [0, winsz(), 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(run(&ours, libc::SYS_read as u32, 0x4000_0003, [0; 6]), RET_KILL_PROCESS);
    #[cfg(target_arch = "x86_64")]
    assert_eq!(run(&ours, 0x4000_0000, native, [0; 6]), RET_ERRNO | libc::EPERM as u32);
}
