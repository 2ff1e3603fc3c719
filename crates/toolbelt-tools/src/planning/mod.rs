//! Planning tools: the agent's own bookkeeping, kept in the session.

mod todo_write;

pub use todo_write::{Todo, TodoList, TodoStatus, TodoWrite, TodoWriteInput, TodoWriteOutput};
