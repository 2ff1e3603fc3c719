//! Shell tools: `Bash` and the background tasks it starts (`TaskOutput`, `TaskStop`,
//! `TaskList`), and what they share.
//!
//! * [`spawn`] starts `bash -c` in its own process group, stdin empty, pagers and colours
//!   off, tagged for the kill, with a control pipe that reports the final directory;
//! * [`tree`] finds and kills a command's whole process tree (the server is a child
//!   subreaper, so setsid'd and double-forked descendants stay ours to find), and [`cgroup`]
//!   holds each command in a cgroup of its own where the machine allows, so nothing escapes
//!   the kill;
//! * [`capture`] keeps output in bounded memory (head, ring-buffer tail, spill file);
//! * [`deny`] refuses catastrophic commands and the user's deny patterns;
//! * [`env`] keeps toolbelt's secrets out of a command's environment and stops git from
//!   starting programs a repository names;
//! * [`sandbox`] confines what a command may write and whether it may reach the network;
//!   [`confine`] applies it, or says why it cannot;
//! * [`tasks`] is the session's registry of background tasks, which kills them all when the
//!   session ends.

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod bash;
pub mod capture;
pub mod cgroup;
pub mod config;
pub mod confine;
pub mod cwd;
pub mod deny;
pub mod env;
pub mod foreground;
pub mod operands;
pub mod result;
pub mod sandbox;
pub mod spawn;
pub mod spill;
pub mod task_list;
pub mod task_output;
pub mod task_stop;
pub mod tasks;
pub mod tree;

pub use bash::{Bash, BashInput};
pub use config::BashConfig;

/// Every shell tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(bash::Bash), erase(task_output::TaskOutput), erase(task_stop::TaskStop), erase(task_list::TaskList)]
}
