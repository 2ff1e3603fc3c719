//! A small classic-BPF program builder for the seccomp layer: one program that dispatches on
//! the call number through a balanced binary tree.
//!
//! The kernel installs a filter by running it once for every call number of every
//! architecture it knows (to find the calls it may allow without running it again), after
//! compiling it. A chain of comparisons, one per listed call, makes that cost grow with the
//! list, and so does each extra filter: three filters of 4, 10 and 265 instructions cost about
//! 150 µs per command here, about as much as one filter costs per instruction walked. A tree
//! walks about five comparisons for any call and is installed as one program (about 25 µs).

use libc::sock_filter;

/// `SECCOMP_RET_KILL_PROCESS`: what a call of another architecture gets.
pub(super) const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// `SECCOMP_RET_ERRNO`, the error number in the low 16 bits.
pub(super) const RET_ERRNO: u32 = 0x0005_0000;
/// `SECCOMP_RET_ALLOW`.
pub(super) const RET_ALLOW: u32 = 0x7fff_0000;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `i` (little-endian, as on every architecture filtered here).
const fn arg_low(i: u8) -> u32 {
    16 + 8 * i as u32
}

/// What a listed call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Refused with this error number.
    Errno(i32),
    /// Refused with `EPERM` when the low 32 bits of argument `arg`, masked with `mask`,
    /// equal one of `values`.
    MaskedIn { arg: u8, mask: u32, values: &'static [u32] },
    /// Refused with `EPERM` when the low 32 bits of argument `arg` share a bit with `mask`.
    AnyBit { arg: u8, mask: u32 },
    /// Refused with `EPERM` unless the low 32 bits of argument `arg` equal `value`.
    Unless { arg: u8, value: u32 },
}

fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter { code: code as u16, jt: 0, jf: 0, k }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code: (libc::BPF_JMP | code | libc::BPF_K) as u16, jt, jf, k }
}

fn ret(k: u32) -> sock_filter {
    stmt(libc::BPF_RET | libc::BPF_K, k)
}

fn load(offset: u32) -> sock_filter {
    stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

fn eperm() -> u32 {
    RET_ERRNO | libc::EPERM as u32
}

/// The program: calls of another architecture than `arch` kill the process; call numbers
/// with any bit of `refused_bits` set are refused with `EPERM` (the x32 ABI on x86-64);
/// `listed` calls get their verdict; every other call is allowed.
pub(super) fn program(arch: u32, refused_bits: u32, listed: &[(u32, Verdict)]) -> Result<Vec<sock_filter>, String> {
    let mut entries = listed.to_vec();
    entries.sort_by_key(|(nr, _)| *nr);
    if entries.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("a system call is listed twice in the filter".into());
    }
    let mut code = vec![load(ARCH), jump(libc::BPF_JEQ, arch, 1, 0), ret(RET_KILL_PROCESS), load(NR)];
    if refused_bits != 0 {
        code.extend([jump(libc::BPF_JSET, refused_bits, 0, 1), ret(eperm())]);
    }
    code.extend(tree(&entries)?);
    Ok(code)
}

/// Dispatch on the call number (held in the accumulator) over `entries`, sorted.
fn tree(entries: &[(u32, Verdict)]) -> Result<Vec<sock_filter>, String> {
    if entries.len() <= 3 {
        let mut code = Vec::new();
        for (nr, verdict) in entries {
            let block = action(*verdict);
            code.push(jump(libc::BPF_JEQ, *nr, 0, offset(block.len())?));
            code.extend(block);
        }
        code.push(ret(RET_ALLOW));
        return Ok(code);
    }
    let (low, high) = entries.split_at(entries.len() / 2);
    let left = tree(low)?;
    let right = tree(high)?;
    let mut code = Vec::with_capacity(left.len() + right.len() + 2);
    match u8::try_from(left.len()) {
        Ok(skip) => code.push(jump(libc::BPF_JGE, high[0].0, skip, 0)),
        Err(_) => {
            let skip = u32::try_from(left.len()).map_err(|_| "the filter is too long".to_string())?;
            code.push(jump(libc::BPF_JGE, high[0].0, 0, 1));
            code.push(stmt(libc::BPF_JMP | libc::BPF_JA, skip));
        }
    }
    code.extend(left);
    code.extend(right);
    Ok(code)
}

/// A verdict's instructions; every path ends in a return.
fn action(verdict: Verdict) -> Vec<sock_filter> {
    match verdict {
        Verdict::Errno(errno) => vec![ret(RET_ERRNO | (errno as u32 & 0xffff))],
        Verdict::MaskedIn { arg, mask, values } => {
            let mut code = vec![load(arg_low(arg)), stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, mask)];
            let n = values.len();
            for (i, value) in values.iter().enumerate() {
                // Matched: jump over the remaining comparisons and the allow, to the refusal.
                code.push(jump(libc::BPF_JEQ, *value, (n - i) as u8, 0));
            }
            code.extend([ret(RET_ALLOW), ret(eperm())]);
            code
        }
        Verdict::AnyBit { arg, mask } => {
            vec![load(arg_low(arg)), jump(libc::BPF_JSET, mask, 0, 1), ret(eperm()), ret(RET_ALLOW)]
        }
        Verdict::Unless { arg, value } => {
            vec![load(arg_low(arg)), jump(libc::BPF_JEQ, value, 0, 1), ret(RET_ALLOW), ret(eperm())]
        }
    }
}

fn offset(len: usize) -> Result<u8, String> {
    u8::try_from(len).map_err(|_| "a filter action is too long".to_string())
}

/// Runs `program` on one call as the kernel would (`struct seccomp_data`: call number,
/// architecture, arguments); for tests, which compare programs call by call.
#[cfg(test)]
pub(super) fn run(program: &[sock_filter], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
    let word = |offset: u32| -> u32 {
        match offset {
            NR => nr,
            ARCH => arch,
            o if (16..64).contains(&o) && o % 4 == 0 => {
                let arg = args[((o - 16) / 8) as usize];
                if (o - 16) % 8 == 0 { arg as u32 } else { (arg >> 32) as u32 }
            }
            o => panic!("load from offset {o}"),
        }
    };
    let (mut a, mut pc) = (0u32, 0usize);
    loop {
        let i = program[pc];
        let code = u32::from(i.code);
        pc += 1;
        match code {
            c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => a = word(i.k),
            c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => a &= i.k,
            c if c == libc::BPF_RET | libc::BPF_K => return i.k,
            c if c == libc::BPF_JMP | libc::BPF_JA => pc += i.k as usize,
            c if c & 0x07 == libc::BPF_JMP => {
                let taken = match c & 0xf0 {
                    x if x == libc::BPF_JEQ => a == i.k,
                    x if x == libc::BPF_JGE => a >= i.k,
                    x if x == libc::BPF_JGT => a > i.k,
                    x if x == libc::BPF_JSET => a & i.k != 0,
                    x => panic!("jump {x:#x}"),
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            c => panic!("instruction {c:#x}"),
        }
    }
}
