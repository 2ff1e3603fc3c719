//! Agents on toolbelt: a model in a loop calling tools through the runtime.
//!
//! This crate sits above the runtime. Tools never see it: the agent tools (`Agent`,
//! `SendMessage`, the team tools) reach it through [`toolbelt_core::AgentService`], which this
//! crate implements, the same way shell tools reach their task registry.
//!
//! * [`provider`]: the [`Provider`] trait every model provider implements, and its errors.
//! * [`config`]: providers and limits, as settings give them.
//! * [`definitions`]: agent definitions (Markdown files with YAML frontmatter, and the
//!   built-ins), found in the project's and the user's agent directories.
//! * [`message`]: the conversation as the loop keeps it, independent of any wire shape.
//! * [`providers`]: OpenAI-compatible Chat Completions and Anthropic Messages over HTTP,
//!   retried; built from a [`ProviderConfig`].
//! * `testing` (feature `testing`): scripted loopback model servers and an instant provider.

pub mod config;
pub mod definitions;
mod host;
pub mod message;
pub mod provider;
pub mod providers;
pub mod run;
pub mod spec;
#[cfg(feature = "testing")]
pub mod testing;

pub use config::{AgentLimits, AgentSettings, ProviderConfig, ProviderKind};
pub use definitions::{AgentDefinition, Catalog, SearchDirs, discover};
pub use host::{AgentHost, SessionProvider, SubAgent};
pub use message::{Message, Part, Reply, Request, Role, StopReason, StreamEvent, ToolChoice, ToolDef, Usage};
pub use provider::{Provider, ProviderError, StreamSink};
pub use run::{Conversation, Inbox, NoInbox, RunEvent, RunEvents, RunOutcome, RunSpec, run};
pub use spec::{apply_mode, run_spec};
