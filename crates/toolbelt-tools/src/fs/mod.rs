//! How every tool reaches the workspace's files, below every tool family: the file tools,
//! the search and code tools, skills, and the shell's sandbox all open, walk and report paths
//! through here, and nothing here knows a tool.
//!
//! * [`roots`]: the workspace roots, and confinement to them at open time — a path is opened
//!   beneath a root's directory handle, never checked and then opened; and a path as the
//!   model gave it made absolute ([`roots::absolute`]);
//! * [`opened`]: the roots' directory handles, kept open between calls while their paths
//!   still name them;
//! * [`regular`]: regular files only — a FIFO or a device is refused from the open handle;
//! * [`links`]: a file's other hard-link names, which must not carry what the first is kept
//!   from;
//! * [`walk`]: the tree walk Grep, Glob, ListDir and the code index share (ripgrep's, with its
//!   ignore files), each entry confirmed beneath its root, and how its paths and pages read;
//! * [`shown`]: the path as the model sees it, relative to the working directory inside it;
//! * [`error`]: an I/O error on a workspace path as a message saying what to do.

pub(crate) mod error;
pub(crate) mod links;
pub(crate) mod opened;
pub(crate) mod regular;
pub(crate) mod roots;
pub(crate) mod shown;
pub(crate) mod walk;
