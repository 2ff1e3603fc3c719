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
    /// settings say not to run unconfined. What it returns is to be told when the program has
    /// ended ([`Confined::ended`]).
    fn confine(&self, command: &mut tokio::process::Command) -> Result<Confined, String>;
}

/// What is left to do once a confined program has ended: a protected place (`.git`,
/// `.vscode`…) it made in a project folder that had none is moved aside, since nobody can
/// be asked about it then (the sandbox cannot hold a name before it exists).
#[derive(Default)]
pub struct Confined(Option<AfterExit>);

/// What [`Confined`] runs, given the program's description.
type AfterExit = Box<dyn FnOnce(&str) + Send + Sync>;

impl Confined {
    /// Runs `after` with the program's description once it has ended.
    pub fn then(after: impl FnOnce(&str) + Send + Sync + 'static) -> Self {
        Self(Some(Box::new(after)))
    }

    /// The program `who` ("the hook `sh guard.sh`") and every process it started have ended.
    pub fn ended(self, who: &str) {
        if let Some(after) = self.0 {
            after(who);
        }
    }
}

impl std::fmt::Debug for Confined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Confined(watching)" } else { "Confined" })
    }
}
