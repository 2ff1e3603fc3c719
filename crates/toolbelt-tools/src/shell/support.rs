//! What the shell tools share: none of it is a tool. How a command is started, confined,
//! captured and killed is below every family, in [`crate::process`].

pub(crate) mod background;
pub(crate) mod carried;
pub(crate) mod cwd;
pub(crate) mod deny;
pub(crate) mod git_programs;
pub(crate) mod input;
pub(crate) mod judge;
pub(crate) mod links;
pub(crate) mod monitor;
pub(crate) mod operands;
pub(crate) mod process_view;
pub(crate) mod pwsh;
pub(crate) mod result;
pub(crate) mod session;
