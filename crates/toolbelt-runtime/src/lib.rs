//! The pipeline every tool call goes through, the batch scheduler, and session state.
//!
//! # One call
//!
//! ```text
//! resolve → validate → describe → pre-hooks → authorize → execute → post-hooks → render
//! ```
//!
//! Each stage has its place under `stages/`, so a reader finds "where is the timeout
//! applied" or "where is output cut" in one hop. The first three stages ([`Runtime::plan`],
//! in `stages/plan.rs`) need no I/O and decide whether the call may run beside others; the
//! rest ([`Runtime::run`]), one module each, happen when the scheduler lets the call run,
//! each taking the call's context: what it needs of the runtime (its pipeline: registry,
//! policy, hooks, audit log, knobs), the session, the call's id and tool, its events and its
//! cancellation.
//!
//! # Why it is shaped so
//!
//! * **Nothing a tool does can take its siblings down.** A call's failure, panic, timeout or
//!   cancellation becomes that call's `is_error` result; the batch goes on.
//! * **Concurrency is declared per input and enforced in one place.** A session holds a
//!   read/write lock: shared calls take the read side, exclusive calls the write side. The
//!   batch scheduler groups consecutive shared calls to run them together (bounded), and the
//!   lock keeps exclusive calls alone even when several front ends share a session.
//! * **The model always gets a well-shaped result.** Text over the budget is cut with a
//!   notice that says how much was cut and where the whole output was saved, so the model
//!   can read the rest instead of losing it.
//! * **Every call is recorded.** A tracing span per call carries tool, call id, outcome and
//!   duration; logs go to stderr (stdout is the MCP channel). With an [`AuditLog`], every
//!   call — refused ones too — is also a hash-chained record naming its client ([`audit`]).

pub mod audit;
mod batch;
mod call;
mod client;
mod config;
pub mod metrics;
mod modes;
pub mod observe;
mod pipeline;
mod runtime;
mod session;
mod stages;
pub mod wire;

pub use audit::{AuditConfig, AuditLog, AuditRecord, redact, rfc3339};
pub use call::{Outcome, ToolCall, ToolResult};
pub use client::{ClientInfo, ClientKind, SessionClient, Transport, token_id};
pub use config::RuntimeConfig;
pub use metrics::CallMetrics;
pub use observe::{CallObserver, CallReport};
pub use runtime::{Explanation, Runtime, RuntimeBuilder};
pub use session::{EndReason, Session, SessionError, StartSource};
pub use stages::{Plan, truncate_text};
pub use wire::WireError;
