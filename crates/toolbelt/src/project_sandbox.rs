//! The sandbox a project's own hooks and stdio MCP servers start in.
//!
//! Trust covers the settings a project ships and the scripts its commands name, but not
//! everything those programs run: `sh hooks/guard.sh` sources `hooks/lib.sh`, `make -s fmt`
//! reads the `Makefile`, a server imports the project's modules. The model can edit those
//! (in `acceptEdits` mode without a question), and no digest can follow every file a program
//! reads. So the programs of a project's own files start under the sandbox the shell
//! commands run in: writes inside the workspace roots, the temp directory and the configured
//! writable roots only, the protected entries (`.git`, `.toolbelt`, …) read-only, the paths
//! of Read deny rules masked, the network as `sandbox.network` says. Changed code then does
//! no more than a sandboxed command could. The user's own hooks and servers (user and
//! managed settings) are the user's and start unconfined, as before.
//!
//! Where the sandbox cannot be applied, a project's program does not start unless the
//! user's `sandbox.if_unsandboxed` is `run` (nobody is there to ask each time it would): the
//! hook fails, saying why and what to change.

use std::path::PathBuf;
use std::sync::{Arc, Once};

use toolbelt_policy::confine::{Confined, Confiner};
use toolbelt_tools::shell::{Confinement, PlacesWatch, SandboxConfig, WhenUnavailable};

/// Starts programs under the shell commands' sandbox ([`Confinement`]).
#[derive(Debug, Clone)]
pub struct ProjectSandbox {
    config: SandboxConfig,
    roots: Vec<PathBuf>,
    masks: Vec<PathBuf>,
}

impl ProjectSandbox {
    /// The sandbox of `config` (its protected paths set), writing inside `roots`, hiding
    /// `masks`, as a [`Confiner`].
    pub fn confiner(config: SandboxConfig, roots: Vec<PathBuf>, masks: Vec<PathBuf>) -> Arc<dyn Confiner> {
        Arc::new(Self { config, roots, masks })
    }
}

impl Confiner for ProjectSandbox {
    fn confine(&self, command: &mut tokio::process::Command) -> Result<Confined, String> {
        match Confinement::for_command(&self.config, &self.roots, &self.masks) {
            Ok(Some(confinement)) => {
                let watch = PlacesWatch::of(Some(&confinement));
                confinement.install(command, None);
                Ok(Confined::then(move |who| drop(watch.ended(who))))
            }
            // danger-full-access: the user's own choice (or one the user consented to).
            Ok(None) => Ok(Confined::default()),
            Err(why) if self.config.when_unavailable == WhenUnavailable::Run => {
                static SAID: Once = Once::new();
                SAID.call_once(|| tracing::warn!("a project's hooks and MCP servers run without the sandbox: {why}"));
                Ok(Confined::default())
            }
            Err(why) => Err(format!(
                "a project's hooks and MCP servers start only in the sandbox, which cannot be applied here ({why}); \
                 fix it (`toolbelt sandbox check`), set sandbox.if_unsandboxed = \"run\" in your own settings to run \
                 them unconfined, or move the hook or server to your own settings"
            )),
        }
    }
}
