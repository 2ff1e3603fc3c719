//! What the task list tools (`TaskCreate`, `TaskGet`, `TaskUpdate`, `TaskList`) share.
//!
//! * [`store`] says where a list is kept ([`store::TaskListStore`], a service the front end
//!   sets up) and opens its SQLite database: created owner-only, in WAL mode, with a busy
//!   timeout, its schema made or checked;
//! * [`ops`] reads and changes tasks, each call in one transaction (`BEGIN IMMEDIATE` for
//!   changes, so two processes updating one list at once serialize and lose nothing), and
//!   refuses a cycle of blockers;
//! * [`tx`] is one transaction's statements, once for an SQLite file and once for a
//!   PostgreSQL database several machines share ([`postgres`]);
//! * [`view`] is what the tools return: a task in full, a task as a list shows it, and the
//!   text the model reads.

pub mod ops;
mod postgres;
pub mod store;
mod tx;
pub mod view;
