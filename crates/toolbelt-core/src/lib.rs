//! The contracts of toolbelt: what a tool is, what a call touches, what it returns.
//!
//! Everything that implements or drives a tool meets here, and nothing here does I/O (the one
//! process rule every layer that starts programs shares, [`process::new_session`], is set up
//! here and runs in the child).
//!
//! # Why it is shaped so
//!
//! * **One source of truth per tool.** A tool's input is a Rust type deriving `serde` and
//!   `schemars`; its doc comments become the model-facing parameter docs and the JSON Schema
//!   that validates calls. Nothing is written twice ([`Tool`]).
//! * **Tools declare, the runtime decides.** [`Tool::access`] says what a call will touch
//!   (paths read or written, a command, URLs) and whether it may run beside other calls. A tool
//!   never checks permissions itself; the runtime authorizes from the declaration ([`Access`]).
//! * **Typed at home, erased at the border.** Built-in tools are typed ([`Tool`]); tools from
//!   elsewhere (MCP upstreams, config) and the registry speak the erased form ([`DynTool`]),
//!   so both kinds share one registry, one validator and one pipeline.
//! * **One error enum on the call path.** [`ToolError`] separates what the model should read
//!   (invalid input, a failure, a denial, a timeout) from internal faults, and every message
//!   says what to do next.
//! * **A narrow context.** [`ToolContext`] carries the call id, the session's cwd and roots,
//!   cancellation, an event sink and typed session state — not the whole session.

mod access;
pub mod additions;
mod agents;
mod ask;
mod context;
mod deferred;
mod erased;
mod error;
mod event;
mod export;
mod follow_up;
mod format;
pub mod frontmatter;
mod jobs;
mod json_schema;
mod modes;
mod output;
pub mod paths;
mod planned;
pub mod process;
mod prompts;
mod registry;
mod schema;
mod session;
mod settings;
mod spec;
pub mod time;
mod tool;
mod validate;
pub mod vars;

pub use access::{Access, Concurrency, PROTECTED_NAMES, Touch};
pub use agents::{
    AGENT_TOOLS, AgentReport, AgentRequest, AgentService, AgentStatus, Agents, TeamMember, TeamReport, is_agent_id,
};
pub use ask::{Answer, AskError, AskRequest, Asker, Choice, Nobody, People, Question, Tone, keys};
pub use context::{CallLimits, Extensions, HiddenPaths, Limits, ToolContext};
pub use deferred::{DescribeContext, LoadedTools, MAX_NAMED as MAX_NAMED_DEFERRED, deferred_note};
pub use erased::erase;
pub use error::{FieldError, ToolError};
pub use event::{EventSink, OutputStream, TaskEventKind, TaskEvents, ToolEvent};
pub use export::ExportFormat;
pub use follow_up::FollowUp;
pub use format::{glob_pieces, human_duration, human_size, json_kind, sha256_hex, thousands};
pub use jobs::{
    JobAction, JobOwner, JobReport, JobRequest, JobRun, JobService, Jobs, RunReport, RunStatus, Schedule, is_job_id,
};
pub use modes::{ModeSwitch, Modes, PermissionMode};
pub use output::{Content, Render, TextOutput, ToolOutput};
pub use planned::PlannedTool;
pub use prompts::{PromptInfo, PromptSource, PromptText, Prompts};
pub use registry::{Registry, RegistryError, ToolCatalog, ToolEntry};
pub use schema::{input_schema, output_schema};
pub use session::{SessionSlot, SessionState};
pub use settings::{SetOutcome, SettingValue, SettingsAccess, SettingsError, SettingsService};
pub use spec::{Annotations, Category, Defer, PermissionClass, SideEffects, ToolSpec};
pub use tool::{BoxFuture, DynTool, OWN_LIMIT_MARGIN, Prepared, TimeLimit, Tool, ToolNames};
pub use validate::{InputValidator, SchemaError};

/// Re-exported so tool crates and tests use the same cancellation type as the runtime.
pub use tokio_util::sync::CancellationToken;
