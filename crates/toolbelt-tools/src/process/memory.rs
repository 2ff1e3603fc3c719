//! This process's own memory: asking the kernel for huge pages behind a large buffer
//! (`MADV_HUGEPAGE`), for Grep's large output texts (`search/support/pages.rs` says when and
//! why). Here because it is a system call on raw memory, and the unsafe code lives in
//! [`crate::process`] alone.

/// Asks the kernel to back the pages holding `start..start + len` with huge pages. Only a
/// hint: what the pages hold never changes, and a failure leaves everything as it was.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn madvise_huge(start: usize, len: usize) {
    // SAFETY: sysconf reads a constant of the system. madvise is given the pages holding
    // `start..start + len`, a buffer the caller owns (its first and last page may hold other
    // bytes of the allocator's); MADV_HUGEPAGE only changes how the kernel backs pages, never
    // what they hold, and the call reads and writes no memory of this process. A failure
    // (huge pages not supported) leaves everything as it was.
    unsafe {
        let page = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE)).unwrap_or(4096).max(1);
        let first = start / page * page;
        let end = (start + len).next_multiple_of(page);
        let _ = libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

/// Huge pages are a Linux hint; elsewhere nothing is asked.
#[cfg(not(target_os = "linux"))]
pub fn madvise_huge(_start: usize, _len: usize) {}
