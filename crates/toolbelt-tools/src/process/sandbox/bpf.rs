//! A small classic-BPF program builder for the seccomp layer: one program that finds a call's
//! verdict through a binary tree on its number.
//!
//! Installing a filter costs the kernel a fixed part (about 20 µs here) and a part that grows
//! with its length (compiling it, about 0.2 µs an instruction) and with the comparisons it walks
//! (it runs the filter once for every call number of every architecture it knows, to find the
//! calls it may allow without running it again). The three filters this replaced (4, 10 and 265
//! instructions, the main one a chain of comparisons) cost about 150 µs per command. Here:
//! one program; consecutive call numbers with the same verdict checked as one range; every
//! leaf jumping to a few shared returns; about 70 instructions, six comparisons walked.

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
    /// Refused with `EPERM` when the low 32 bits of argument `arg` equal one of `values`.
    In { arg: u8, values: &'static [u32] },
    /// Refused with `EPERM` when the low 32 bits of argument `arg` share a bit with `mask`.
    AnyBit { arg: u8, mask: u32 },
    /// Refused with `EPERM` unless the low 32 bits of argument `arg` equal `value`.
    Unless { arg: u8, value: u32 },
}

/// Where a jump goes: the next instruction, or a label placed later in the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    Label(usize),
}

/// An instruction whose jumps are not resolved yet, or a label's place.
#[derive(Debug, Clone, Copy)]
enum Item {
    Insn { code: u32, k: u32, jt: To, jf: To },
    Label(usize),
}

/// A program under construction: forward jumps to labels, resolved by [`Asm::finish`].
#[derive(Debug, Default)]
struct Asm {
    items: Vec<Item>,
    labels: usize,
}

impl Asm {
    fn label(&mut self) -> usize {
        self.labels += 1;
        self.labels - 1
    }

    fn place(&mut self, label: usize) {
        self.items.push(Item::Label(label));
    }

    fn stmt(&mut self, code: u32, k: u32) {
        self.items.push(Item::Insn { code, k, jt: To::Next, jf: To::Next });
    }

    fn load(&mut self, offset: u32) {
        self.stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset);
    }

    fn ret(&mut self, k: u32) {
        self.stmt(libc::BPF_RET | libc::BPF_K, k);
    }

    fn jump(&mut self, op: u32, k: u32, jt: To, jf: To) {
        if jt == jf {
            if jt != To::Next {
                self.stmt(libc::BPF_JMP | libc::BPF_JA, 0);
                if let Some(Item::Insn { jt: target, .. }) = self.items.last_mut() {
                    *target = jt;
                }
            }
            return;
        }
        self.items.push(Item::Insn { code: libc::BPF_JMP | op | libc::BPF_K, k, jt, jf });
    }

    /// The instructions, every label resolved to a forward offset.
    fn finish(self) -> Result<Vec<sock_filter>, String> {
        let mut at = vec![usize::MAX; self.labels];
        let mut pc = 0;
        for item in &self.items {
            match item {
                Item::Label(l) => at[*l] = pc,
                Item::Insn { .. } => pc += 1,
            }
        }
        let mut out = Vec::with_capacity(pc);
        for item in self.items {
            let Item::Insn { code, k, jt, jf } = item else { continue };
            let here = out.len() + 1;
            let offset = |to: To| -> Result<u32, String> {
                match to {
                    To::Next => Ok(0),
                    To::Label(l) => at[l]
                        .checked_sub(here)
                        .and_then(|o| u32::try_from(o).ok())
                        .ok_or_else(|| "a filter jump goes backwards or to no label".to_string()),
                }
            };
            let insn = if code == libc::BPF_JMP | libc::BPF_JA {
                sock_filter { code: code as u16, jt: 0, jf: 0, k: offset(jt)? }
            } else {
                let short = |o: u32| u8::try_from(o).map_err(|_| "the filter is too long for its jumps".to_string());
                sock_filter { code: code as u16, jt: short(offset(jt)?)?, jf: short(offset(jf)?)?, k }
            };
            out.push(insn);
        }
        Ok(out)
    }
}

/// Where each verdict's code starts, and the shared returns.
#[derive(Debug)]
struct Targets {
    allow: usize,
    eperm: usize,
    /// One return per other error number.
    errnos: Vec<(i32, usize)>,
    /// One block per argument check, in the order of the listed calls that have one.
    checks: Vec<(Verdict, usize)>,
}

impl Targets {
    fn of(&self, verdict: Verdict) -> To {
        match verdict {
            Verdict::Errno(libc::EPERM) => To::Label(self.eperm),
            Verdict::Errno(e) => To::Label(self.errnos.iter().find(|(n, _)| *n == e).map_or(self.eperm, |(_, l)| *l)),
            check => To::Label(self.checks.iter().find(|(v, _)| *v == check).map_or(self.eperm, |(_, l)| *l)),
        }
    }
}

/// The program: calls of another architecture than `arch` kill the process; call numbers
/// with any bit of `refused_bits` set are refused with `EPERM` (the x32 ABI on x86-64);
/// `listed` calls get their verdict; every other call is allowed.
pub(super) fn program(arch: u32, refused_bits: u32, listed: &[(u32, Verdict)]) -> Result<Vec<sock_filter>, String> {
    let mut calls = listed.to_vec();
    calls.sort_by_key(|(nr, _)| *nr);
    if calls.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("a system call is listed twice in the filter".into());
    }
    // Consecutive numbers with the same verdict: one range.
    let mut ranges: Vec<(u32, u32, Verdict)> = Vec::new();
    for (nr, verdict) in calls {
        match ranges.last_mut() {
            Some((_, hi, v)) if *v == verdict && hi.checked_add(1) == Some(nr) => *hi = nr,
            _ => ranges.push((nr, nr, verdict)),
        }
    }
    let mut asm = Asm::default();
    let kill = asm.label();
    let mut targets = Targets { allow: asm.label(), eperm: asm.label(), errnos: Vec::new(), checks: Vec::new() };
    for (_, _, verdict) in &ranges {
        match *verdict {
            Verdict::Errno(libc::EPERM) => {}
            Verdict::Errno(e) if !targets.errnos.iter().any(|(n, _)| *n == e) => {
                let label = asm.label();
                targets.errnos.push((e, label));
            }
            Verdict::Errno(_) => {}
            check => {
                let label = asm.label();
                targets.checks.push((check, label));
            }
        }
    }
    asm.load(ARCH);
    asm.jump(libc::BPF_JEQ, arch, To::Next, To::Label(kill));
    asm.load(NR);
    if refused_bits != 0 {
        asm.jump(libc::BPF_JSET, refused_bits, To::Label(targets.eperm), To::Next);
    }
    tree(&mut asm, &targets, &ranges, 0, u64::from(u32::MAX) + 1);
    for (check, label) in targets.checks.clone() {
        asm.place(label);
        check_block(&mut asm, &targets, check);
    }
    asm.place(targets.allow);
    asm.ret(RET_ALLOW);
    asm.place(targets.eperm);
    asm.ret(RET_ERRNO | libc::EPERM as u32);
    for (errno, label) in targets.errnos.clone() {
        asm.place(label);
        asm.ret(RET_ERRNO | (errno as u32 & 0xffff));
    }
    asm.place(kill);
    asm.ret(RET_KILL_PROCESS);
    asm.finish()
}

/// Dispatch on the call number (in the accumulator), known to lie in `[low, high)`, over
/// `ranges`, sorted and disjoint; every path ends in a jump to a verdict or to allow.
fn tree(asm: &mut Asm, targets: &Targets, ranges: &[(u32, u32, Verdict)], low: u64, high: u64) {
    let allow = To::Label(targets.allow);
    match ranges {
        [] => asm.jump(libc::BPF_JA, 0, allow, allow),
        [(lo, hi, verdict)] => {
            let target = targets.of(*verdict);
            let (lo, hi) = (u64::from(*lo), u64::from(*hi));
            match (lo > low, hi + 1 < high) {
                (false, false) => asm.jump(libc::BPF_JA, 0, target, target),
                (true, false) => asm.jump(libc::BPF_JGE, lo as u32, target, allow),
                (false, true) => asm.jump(libc::BPF_JGT, hi as u32, allow, target),
                (true, true) if lo == hi => asm.jump(libc::BPF_JEQ, lo as u32, target, allow),
                (true, true) => {
                    asm.jump(libc::BPF_JGE, lo as u32, To::Next, allow);
                    asm.jump(libc::BPF_JGT, hi as u32, allow, target);
                }
            }
        }
        _ => {
            let (left, right) = ranges.split_at(ranges.len() / 2);
            let split = right[0].0;
            let right_label = asm.label();
            asm.jump(libc::BPF_JGE, split, To::Label(right_label), To::Next);
            tree(asm, targets, left, low, u64::from(split));
            asm.place(right_label);
            tree(asm, targets, right, u64::from(split), high);
        }
    }
}

/// An argument check: refuse with `EPERM` or allow.
fn check_block(asm: &mut Asm, targets: &Targets, check: Verdict) {
    let (allow, eperm) = (To::Label(targets.allow), To::Label(targets.eperm));
    match check {
        Verdict::Errno(_) => asm.jump(libc::BPF_JA, 0, eperm, eperm),
        Verdict::MaskedIn { arg, mask, values } => {
            asm.load(arg_low(arg));
            asm.stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, mask);
            any_of(asm, targets, values);
        }
        Verdict::In { arg, values } => {
            asm.load(arg_low(arg));
            any_of(asm, targets, values);
        }
        Verdict::AnyBit { arg, mask } => {
            asm.load(arg_low(arg));
            asm.jump(libc::BPF_JSET, mask, eperm, allow);
        }
        Verdict::Unless { arg, value } => {
            asm.load(arg_low(arg));
            asm.jump(libc::BPF_JEQ, value, allow, eperm);
        }
    }
}

/// Refuse with `EPERM` when the accumulator equals one of `values`, else allow.
fn any_of(asm: &mut Asm, targets: &Targets, values: &[u32]) {
    let (allow, eperm) = (To::Label(targets.allow), To::Label(targets.eperm));
    for (i, value) in values.iter().enumerate() {
        let otherwise = if i + 1 == values.len() { allow } else { To::Next };
        asm.jump(libc::BPF_JEQ, *value, eperm, otherwise);
    }
    if values.is_empty() {
        asm.jump(libc::BPF_JA, 0, allow, allow);
    }
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
