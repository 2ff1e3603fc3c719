//! Shell tools: `Bash` and the background tasks it starts (`TaskOutput`, `TaskStop`,
//! `BackgroundTasks`), one file each, and what they share, in [`support`]:
//!
//! * [`support::spawn`] starts `bash -c` in its own process group, stdin empty, pagers and colours
//!   off, tagged for the kill, with a control pipe that reports the final directory;
//! * [`support::tree`] finds and kills a command's whole process tree (the server is a child
//!   subreaper, so setsid'd and double-forked descendants stay ours to find), and [`support::cgroup`]
//!   holds each command in a cgroup of its own where the machine allows, so nothing escapes
//!   the kill;
//! * [`support::capture`] keeps output in bounded memory (head, ring-buffer tail, spill file);
//! * [`support::deny`] refuses catastrophic commands and the user's deny patterns;
//! * [`support::env`] keeps toolbelt's secrets out of a command's environment and stops git from
//!   starting programs a repository names;
//! * [`support::sandbox`] confines what a command may write and whether it may reach the network;
//!   [`support::confine`] applies it, or says why it cannot;
//! * [`support::background`] is the session's registry of background tasks, which kills them all when the
//!   session ends.

use std::sync::Arc;

use toolbelt_core::{CallLimits, DynTool, erase};

pub mod background_tasks;
pub mod bash;
pub(crate) mod support;
pub mod task_output;
pub mod task_stop;

pub use bash::{Bash, BashInput};
pub use support::cgroup::release_idle;
pub use support::config::{BashConfig, InvalidDenyPattern};
pub use support::env::DEFAULT_ENV_REMOVE;
pub use support::made::PlacesWatch;
pub use support::result::BashOutput;
pub use support::sandbox::{
    Confinement, SandboxConfig, SandboxMode, SandboxReport, SandboxUnavailable, WhenUnavailable,
};
pub use support::spawn::seal_inherited;
pub use support::tree::kill_all;

/// Every shell tool, erased; Bash described with the limits in force.
pub fn tools(limits: &CallLimits) -> Vec<Arc<dyn DynTool>> {
    vec![
        erase(bash::Bash::new(*limits)),
        erase(task_output::TaskOutput),
        erase(task_stop::TaskStop),
        erase(background_tasks::BackgroundTasks),
    ]
}
