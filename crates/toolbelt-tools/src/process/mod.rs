//! Running commands, below every tool family: `Bash` and its background tasks, the code
//! tools' linters and language servers, and the front end's hooks and project servers all
//! start, confine, capture and kill a process through here. The crate's unsafe code lives in
//! this module alone (system calls around `clone3`, `fork`/`exec`, Landlock, seccomp,
//! capabilities, cgroups and `madvise`), each block with a `// SAFETY:` comment saying why it
//! holds.
//!
//! * [`config`]: the settings every command runs under (the `BashConfig` service);
//! * [`env`]: the environment a command gets — toolbelt's own without its secrets
//!   ([`secret_values`]), with git unable to start programs a repository names
//!   ([`git_config`] reads a git configuration file as git does);
//! * [`sandbox`]: what a command may write and whether it may reach the network, enforced by
//!   the kernel; [`confine`] applies it to a call or says why it cannot, and [`made`] deals
//!   with protected places a confined process made;
//! * [`spawn`]: starting `bash -c` or a program in a session of its own, in its cgroup, under
//!   its sandbox;
//! * [`tree`] finds and kills a command's whole process tree, and [`cgroup`] holds each
//!   command in a cgroup of its own where the machine allows, so nothing escapes the kill;
//! * [`foreground`] runs a command inside a call; [`capture`] keeps its output in bounded
//!   memory, and [`spill`] is where what does not fit is kept for the model to read back;
//! * [`memory`]: huge pages behind this process's own large buffers;
//! * [`pty`]: pseudo-terminals for interactive sessions.

pub(crate) mod capture;
pub(crate) mod cgroup;
pub(crate) mod config;
pub(crate) mod confine;
pub(crate) mod env;
pub(crate) mod foreground;
pub(crate) mod git_config;
pub(crate) mod made;
pub(crate) mod memory;
pub(crate) mod procfs;
pub(crate) mod pty;
pub(crate) mod sandbox;
pub(crate) mod secret_values;
pub(crate) mod spawn;
pub(crate) mod spill;
pub(crate) mod tree;
