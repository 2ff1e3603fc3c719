//! What a started child is given: everything it needs, built by the caller before the
//! clone (`clone.rs`, `spawner.rs`) and read by the child (`child.rs`) until it execs.

use std::ffi::CStr;
use std::os::fd::RawFd;
use std::sync::atomic::AtomicI32;

use crate::process::sandbox::Confinement;

/// Everything the child needs, built by the caller before the clone and left untouched
/// until it returns.
#[derive(Debug)]
pub(super) struct Plan<'a> {
    /// The program's path (resolved by the caller: the child does no search).
    pub program: &'a CStr,
    /// `argv`, null-terminated, pointing into strings the caller owns.
    pub argv: &'a [*const libc::c_char],
    /// `envp`, null-terminated, pointing into strings the caller owns.
    pub envp: &'a [*const libc::c_char],
    /// The working directory.
    pub cwd: &'a CStr,
    /// What becomes the child's stdin, stdout and stderr (all above 2, close-on-exec).
    pub stdio: [RawFd; 3],
    /// Whether stdin is a pseudo-terminal that becomes the child's controlling terminal.
    pub terminal: bool,
    /// The confinement applied before exec, if any.
    pub confinement: Option<&'a Confinement>,
    /// Set by the child to the error number when it fails before exec.
    pub error: AtomicI32,
}
