//! Starting `bash` the way `posix_spawn` does, with the sandbox applied on the way:
//! `clone3(CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP)`, the child running on a
//! small stack of its own until it calls `execve`.
//!
//! Why not `fork` (what the standard library does as soon as a `pre_exec` hook is set): a fork
//! copies the server's page tables and makes every page copy-on-write until the child execs,
//! which costs more the larger the server is. With `CLONE_VM` the child borrows the server's
//! memory instead, and `CLONE_VFORK` suspends the calling thread until the child has called
//! `execve` (or exited). `CLONE_INTO_CGROUP` starts the child inside its command's cgroup:
//! moving a process in by writing `cgroup.procs` takes the kernel's cgroup-wide lock for
//! writing, which waits for a read-copy-update grace period, 0.1 to several ms per command.
//!
//! **Why the child is safe.** It shares the server's memory while other threads of the server
//! keep running, so between the clone and `execve` it follows stricter rules than a forked
//! child (see `child.rs`): it runs on its own stack ([`Stack`]); it only reads what the
//! suspended caller built before the clone (the [`Plan`] and the confinement, owned by the
//! caller's frame or immutable statics, which no other thread writes); it writes nothing
//! shared but one atomic error slot in the plan; it makes only system calls (no allocation,
//! no lock, no `errno`-dependent libc state beyond the calling thread's own `errno`, which
//! the suspended caller does not read); and it starts with every signal blocked, resets every
//! handled signal to its default before unblocking, so no handler of the server ever runs
//! on the server's memory from the child.
//!
//! Only on x86-64 and aarch64 (the clone itself is a few instructions of assembly, since no C
//! library wraps `clone3`). Elsewhere, or where `clone3` is refused (a container's seccomp
//! profile, a kernel before 5.7), the caller falls back to the standard library's spawn.

use std::ffi::c_void;
use std::os::fd::{FromRawFd as _, OwnedFd, RawFd};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::plan::Plan;
use crate::process::sandbox::Bounding;

/// Why a clone did not start the program.
#[derive(Debug)]
pub(super) enum Failure {
    /// `clone3` is not available here, or refused this clone (the error number says which).
    Clone(i32),
    /// The child failed before exec with this error number (it has been reaped).
    Child(i32),
}

/// Whether `clone3` may work here; cleared the first time the kernel says it does not exist.
static AVAILABLE: AtomicBool = AtomicBool::new(cfg!(any(target_arch = "x86_64", target_arch = "aarch64")));

/// Whether the fast path is worth trying.
pub(super) fn available() -> bool {
    AVAILABLE.load(Ordering::Relaxed)
}

/// `struct clone_args` (version 2, with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

const CLONE_VM: u64 = 0x100;
const CLONE_VFORK: u64 = 0x4000;
const CLONE_PIDFD: u64 = 0x1000;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// What the child gets: the plan, and what it inherits of the starting thread.
struct ChildArgs<'a> {
    plan: &'a Plan<'a>,
    bounding: Bounding,
}

/// Starts the child described by `plan`, in the cgroup whose directory `cgroup` is open on
/// when given, from the calling thread (whose capability bounding set is as `bounding` says).
/// Returns once the child has called `execve` (or failed): its pid and pidfd.
#[allow(unsafe_code)]
pub(super) fn start(
    plan: &Plan<'_>,
    cgroup: Option<RawFd>,
    bounding: Bounding,
) -> Result<(libc::pid_t, OwnedFd), Failure> {
    if !available() {
        return Err(Failure::Clone(libc::ENOSYS));
    }
    let stack = Stack::take().map_err(|e| Failure::Clone(e.raw_os_error().unwrap_or(libc::ENOMEM)))?;
    let mut pidfd: libc::c_int = -1;
    let mut args = CloneArgs {
        flags: CLONE_VM | CLONE_VFORK | CLONE_PIDFD,
        pidfd: std::ptr::from_mut(&mut pidfd) as u64,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack.bottom as u64,
        stack_size: stack.size as u64,
        ..CloneArgs::default()
    };
    if let Some(fd) = cgroup.and_then(|fd| u64::try_from(fd).ok()) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = fd;
    }
    let child = ChildArgs { plan, bounding };
    let saved = signals::block_all();
    // SAFETY: see the module docs. `args`, `child`, `plan` and the stack outlive the call,
    // which only returns in the parent after the child has left them (exec or exit).
    let ret = unsafe { sys::clone3(&mut args, std::ptr::from_ref(&child).cast_mut().cast()) };
    signals::restore(saved);
    stack.put_back();
    if ret < 0 {
        let errno = i32::try_from(-ret).unwrap_or(libc::EINVAL);
        if errno == libc::ENOSYS {
            AVAILABLE.store(false, Ordering::Relaxed);
        }
        return Err(Failure::Clone(errno));
    }
    let pid = libc::pid_t::try_from(ret).map_err(|_| Failure::Clone(libc::EINVAL))?;
    // SAFETY: CLONE_PIDFD stored a new descriptor that nothing else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    match plan.error.load(Ordering::Acquire) {
        0 => Ok((pid, pidfd)),
        errno => {
            let mut status = 0;
            // SAFETY: the child is ours and exiting; waitpid writes the status to `status`.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            Err(Failure::Child(errno))
        }
    }
}

/// The child's entry point, on its own stack. Never returns: it execs or exits.
#[allow(unsafe_code)]
extern "C" fn child_main(args: *mut c_void) -> ! {
    // SAFETY: the pointer is the `ChildArgs` the suspended caller passed to `clone3`, alive
    // until the child has exec'd or exited.
    let args: &ChildArgs<'_> = unsafe { &*args.cast_const().cast::<ChildArgs<'_>>() };
    let errno = super::child::run(args.plan, args.bounding);
    args.plan.error.store(if errno == 0 { libc::EINVAL } else { errno }, Ordering::Release);
    sys::exit(127)
}

/// A child stack: mapped once, with a guard page below it so an overflow faults instead of
/// writing over the server's memory, and reused (a clone returns only after its child has left
/// the stack, so the next clone may use it).
#[derive(Debug)]
struct Stack {
    /// The whole mapping, guard page first.
    map: *mut c_void,
    len: usize,
    /// The usable part.
    bottom: usize,
    size: usize,
}

// SAFETY: a stack is plain memory owned by whoever holds it; no child runs on it then.
#[allow(unsafe_code)]
unsafe impl Send for Stack {}

/// Stacks not in use.
static STACKS: Mutex<Vec<Stack>> = Mutex::new(Vec::new());
/// Most stacks kept for reuse.
const KEEP_STACKS: usize = 4;
/// The usable size of a child stack: the child's frames are small (no allocation, no
/// formatting), a few KiB at most.
const STACK_SIZE: usize = 64 * 1024;

impl Stack {
    fn take() -> std::io::Result<Self> {
        let reused = STACKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        reused.map_or_else(Self::map, Ok)
    }

    fn put_back(self) {
        let mut stacks = STACKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if stacks.len() < KEEP_STACKS {
            stacks.push(self);
        }
    }

    #[allow(unsafe_code)]
    fn map() -> std::io::Result<Self> {
        // SAFETY: sysconf takes an integer.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(4096);
        let len = STACK_SIZE + page;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK;
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let map = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = Stack { map, len, bottom: map as usize + page, size: STACK_SIZE };
        // SAFETY: the first page of the mapping made above.
        if unsafe { libc::mprotect(map, page, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }
}

impl Drop for Stack {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, used by no child any more.
        unsafe { libc::munmap(self.map, self.len) };
    }
}

/// The calling thread's signal mask, around the clone.
#[allow(unsafe_code)]
mod signals {
    /// Blocks every signal in the calling thread (the internal ones of the C library too,
    /// which its own functions would leave out); returns the mask to restore.
    pub(super) fn block_all() -> u64 {
        let all: u64 = !0;
        let mut old: u64 = 0;
        // SAFETY: rt_sigprocmask reads and writes one 8-byte kernel signal set each.
        unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &all, &mut old, 8usize) };
        old
    }

    /// Restores the mask `block_all` returned.
    pub(super) fn restore(mask: u64) {
        // SAFETY: as above, reading one signal set.
        unsafe {
            libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &mask, std::ptr::null_mut::<u64>(), 8usize)
        };
    }
}

/// The clone itself, and the child's way out.
#[allow(unsafe_code)]
mod sys {
    use std::ffi::c_void;

    use super::{CloneArgs, child_main};

    /// `clone3(args)`. In the parent, returns the child's pid or minus the error number. The
    /// child starts on the stack `args` names and calls `child_main(arg)`, which never
    /// returns.
    ///
    /// # Safety
    ///
    /// `args` must describe a valid stack, and with `CLONE_VM` the caller must keep every
    /// byte the child reads alive and unchanged until the call returns (`CLONE_VFORK`).
    #[cfg(target_arch = "x86_64")]
    pub(super) unsafe fn clone3(args: &mut CloneArgs, arg: *mut c_void) -> i64 {
        let ret: i64;
        let entry: extern "C" fn(*mut c_void) -> ! = child_main;
        // SAFETY: the caller's contract. The syscall preserves every register but rax, rcx and
        // r11; the child finds the entry point and its argument in r12 and r13 and calls it on
        // its new, 16-byte aligned stack.
        unsafe {
            std::arch::asm!(
                "syscall",
                "test rax, rax",
                "jnz 2f",
                "mov rdi, r13",
                "call r12",
                "ud2",
                "2:",
                inlateout("rax") libc::SYS_clone3 => ret,
                in("rdi") std::ptr::from_mut(args),
                in("rsi") size_of::<CloneArgs>(),
                in("r12") entry,
                in("r13") arg,
                lateout("rcx") _,
                lateout("r11") _,
            );
        }
        ret
    }

    /// See the x86-64 version.
    ///
    /// # Safety
    ///
    /// As for the x86-64 version.
    #[cfg(target_arch = "aarch64")]
    pub(super) unsafe fn clone3(args: &mut CloneArgs, arg: *mut c_void) -> i64 {
        let ret: i64;
        let entry: extern "C" fn(*mut c_void) -> ! = child_main;
        // SAFETY: the caller's contract. The syscall preserves every register but x0; the
        // child finds the entry point and its argument in x20 and x21 and calls it on its new,
        // 16-byte aligned stack.
        unsafe {
            std::arch::asm!(
                "svc 0",
                "cbnz x0, 2f",
                "mov x0, x21",
                "blr x20",
                "brk 1",
                "2:",
                inlateout("x0") std::ptr::from_mut(args) => ret,
                in("x1") size_of::<CloneArgs>(),
                in("x8") libc::SYS_clone3,
                in("x20") entry,
                in("x21") arg,
            );
        }
        ret
    }

    /// Elsewhere there is no fast path: [`super::AVAILABLE`] starts false.
    ///
    /// # Safety
    ///
    /// None needed; it does nothing.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) unsafe fn clone3(_args: &mut CloneArgs, _arg: *mut c_void) -> i64 {
        let _ = child_main;
        -i64::from(libc::ENOSYS)
    }

    /// `_exit`: ends the child without running anything of the server's (no atexit handlers,
    /// no buffers flushed).
    pub(super) fn exit(code: i32) -> ! {
        // SAFETY: _exit takes an integer and does not return.
        unsafe { libc::_exit(code) }
    }
}
