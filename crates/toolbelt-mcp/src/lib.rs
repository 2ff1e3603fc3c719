//! MCP for toolbelt: every tool served to any MCP host, and upstream MCP servers brought in
//! under the same policy.
//!
//! # Server
//!
//! [`McpServer`] is an rmcp `ServerHandler` over a [`toolbelt_runtime::Runtime`]: one per
//! MCP connection (one for stdio, one per Streamable HTTP session), each with a runtime
//! [`Session`](toolbelt_runtime::Session) of its own — its cwd, read ledger, background tasks
//! and grants. Every `tools/call` goes through the runtime's whole pipeline, so validation,
//! permissions, hooks, timeouts, the output budget and the audit log are exactly the CLI's.
//!
//! * A tool that fails is an `isError` result the model reads, and so is a denial (of a tool
//!   a bare deny rule hides too, naming the rule); a request that is wrong at the protocol
//!   level (an unknown tool) is a JSON-RPC error.
//! * The tool's events become `notifications/progress` when the client sent a
//!   `progressToken` (live `Bash` output, search progress); `notifications/cancelled`
//!   cancels the call, which kills the processes it started.
//! * A verdict of `ask` becomes an elicitation (allow once / for this session / deny) when the
//!   client can elicit ([`approve::SessionApprovers`]); otherwise the call is denied with the
//!   rule that would allow it.
//! * Roots the client offers become the session's workspace roots, and follow
//!   `notifications/roots/list_changed`; a call waits (briefly) for the client's answer to
//!   `roots/list`, so the first one already works in them.
//! * A client that declares `sampling` lends its model to the session's agents
//!   ([`SamplingProvider`]): with `sampling.tools` they get their tools, without it they answer
//!   in text. The agent tools (`Agent`, `SendMessage`, the team tools) are listed and callable
//!   only in sessions where agents can run — the client offers sampling, or the agent host has
//!   a provider; elsewhere a call to one is refused, saying what to configure.
//! * When the tool list changes after `initialize` (an upstream server's tools joining late
//!   or leaving), the client gets `notifications/tools/list_changed`.
//!
//! Protocol: `initialize` for 2025-06-18 and 2025-11-25 (and the older revisions rmcp knows),
//! and 2026-07-28 without it (`server/discover`; who the client is comes with each request).
//! At 2026-07-28 a server sends the client no requests: approvals, questions, an upstream
//! server's questions and the client's roots come back as `input_required` results with a
//! sealed `requestState`, answered by the client's retry (`round`); state lives in the
//! connection (stdio) or with the request's bearer token (HTTP); tool list changes go to
//! `subscriptions/listen`. The design is in `docs/design.md`.
//!
//! # Transports
//!
//! stdio ([`serve_stdio`], or [`serve_lines`] over any reader and writer) keeps stdout for the
//! protocol; logs go to stderr. Streamable HTTP ([`http::serve`]) binds loopback by default,
//! checks `Host` and `Origin` (DNS-rebinding protection) and, when configured, a bearer token.

pub mod approve;
pub mod ask;
pub mod client;
pub mod drain;
pub mod http;
mod round;
mod server;
pub mod team;

pub use server::{InlineSessions, McpServer, SamplingProvider, ServerOptions, serve_lines, serve_stdio};
