//! Agents on toolbelt: a model in a loop calling tools through the runtime.
//!
//! This crate sits above the runtime. Tools never see it: the agent tools (`Agent`,
//! `SendMessage`, the team tools) reach it through [`toolbelt_core::AgentService`], which this
//! crate implements, the same way shell tools reach their task registry.
//!
//! * [`provider`]: the [`Provider`] trait every model provider implements, and its errors.
//! * [`config`]: providers and limits, as settings give them.
//! * [`message`]: the conversation as the loop keeps it, independent of any wire shape.
//! * [`providers`]: OpenAI-compatible Chat Completions and Anthropic Messages over HTTP,
//!   retried; built from a [`ProviderConfig`].
//! * `testing` (feature `testing`): scripted loopback model servers and an instant provider.

pub mod config;
pub mod message;
pub mod provider;
pub mod providers;
#[cfg(feature = "testing")]
pub mod testing;

pub use config::{AgentLimits, AgentSettings, ProviderConfig, ProviderKind};
pub use message::{Message, Part, Reply, Request, Role, StopReason, StreamEvent, ToolChoice, ToolDef, Usage};
pub use provider::{Provider, ProviderError, StreamSink};
