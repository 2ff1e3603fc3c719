//! Shell tools: `Bash` and the background tasks it starts (`TaskOutput`, `TaskStop`,
//! `BackgroundTasks`) and the interactive sessions `WriteStdin` types into, `PowerShell` on the same machinery, and `Process` over the machine's
//! process table, one file each, and what only they share, in [`support`]:
//!
//! * [`support::deny`] refuses catastrophic commands and the user's deny patterns;
//! * [`support::git_programs`] finds the programs a repository's git configuration would make
//!   a read-only git command run;
//! * [`support::background`] is the session's registry of background tasks, which kills them
//!   all when the session ends;
//! * [`support::result`] is what `Bash` returns and how it reads;
//! * [`support::session`] runs interactive sessions (`Bash` with `tty` or `yield_time_ms`),
//!   which `WriteStdin` types into.
//!
//! Starting, confining, capturing and killing a command is below every family, in
//! [`crate::process`], because the code tools' linters and language servers run commands
//! the same way; the settings and sandbox types the front end configures are re-exported
//! here, where it has always found them.

use std::sync::Arc;

use toolbelt_core::{CallLimits, DynTool, erase};

pub mod background_tasks;
pub mod bash;
pub mod monitor;
pub mod power_shell;
pub mod process;
pub(crate) mod support;
pub mod task_output;
pub mod task_stop;
pub mod write_stdin;

pub use crate::process::cgroup::release_idle;
pub use crate::process::config::{BashConfig, DEFAULT_ENV_REMOVE, InvalidDenyPattern};
pub use crate::process::made::PlacesWatch;
pub use crate::process::sandbox::{
    Confinement, SandboxConfig, SandboxMode, SandboxReport, SandboxUnavailable, WhenUnavailable,
};
pub use crate::process::spawn::seal_inherited;
pub use crate::process::tree::{kill_all, live_count};
pub use bash::{Bash, BashInput};
pub use support::result::BashOutput;

/// Why a shell tool cannot be offered on this machine, by name: PowerShell without `pwsh`.
pub fn unavailable() -> Vec<(&'static str, String)> {
    support::pwsh::unavailable().map(|why| ("PowerShell", why)).into_iter().collect()
}

/// Every shell tool, erased; Bash described with the limits in force.
pub fn tools(limits: &CallLimits) -> Vec<Arc<dyn DynTool>> {
    vec![
        erase(bash::Bash::new(*limits)),
        erase(task_output::TaskOutput),
        erase(task_stop::TaskStop),
        erase(background_tasks::BackgroundTasks),
        erase(monitor::Monitor),
        erase(process::Process),
        erase(power_shell::PowerShell::new(*limits)),
        erase(write_stdin::WriteStdin),
    ]
}
