//! Putting a program a project configured under the OS sandbox.
//!
//! A trusted project's hooks and stdio MCP servers are programs the person reviewed — but
//! what they run is not all in what was reviewed: `sh hooks/guard.sh` sources
//! `hooks/lib.sh`, `make -s fmt` reads the `Makefile`, a server imports the project's
//! modules, and the model edits those files without a new question. So those programs start
//! confined like the shell commands the model runs (writes inside the workspace and the temp
//! directory only, the protected entries read-only, the network as the sandbox settings
//! say): changed code then does no more than a sandboxed command could.
//!
//! This crate never sees the sandbox itself (it lives with the shell tools): whoever builds
//! the runtime supplies a [`Confiner`].

/// Confines a program before it starts.
pub trait Confiner: Send + Sync {
    /// Prepares `command` (its program, arguments and working directory set) to start
    /// confined, or says why it may not start: the sandbox cannot be applied here and the
    /// settings say not to run unconfined.
    fn confine(&self, command: &mut tokio::process::Command) -> Result<(), String>;
}
