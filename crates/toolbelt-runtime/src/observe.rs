//! Who is told of every finished call besides the audit log: telemetry (a span and metrics
//! per call, exported over OpenTelemetry by the front end). A report carries what the call
//! was and how it ended, never its input or output.

use std::time::Duration;

use toolbelt_policy::Verdict;

use crate::call::Outcome;
use crate::client::ClientInfo;

/// One finished call, as an observer sees it.
#[derive(Debug)]
pub struct CallReport<'a> {
    /// The tool's canonical name, or the name asked for when it did not resolve.
    pub tool: &'a str,
    /// Whether the name resolved to a tool (an unknown name is not a label to keep).
    pub known_tool: bool,
    /// The call id.
    pub call_id: &'a str,
    /// The session id.
    pub session: &'a str,
    /// Who sent the call.
    pub client: &'a ClientInfo,
    /// How it ended.
    pub outcome: Outcome,
    /// Whether the model got an error.
    pub is_error: bool,
    /// From arrival to result.
    pub duration: Duration,
    /// The permission decision and what made it, when the call got that far.
    pub decision: Option<&'a Verdict>,
    /// How a person answered, when asked (`allow_once`, …, `deny`).
    pub approval: Option<&'static str>,
}

/// Told of every finished call, after its result is made (and its audit record written).
/// Called on the runtime's threads: keep it quick (queue, count), never block.
pub trait CallObserver: Send + Sync {
    /// One call ended.
    fn call_finished(&self, report: &CallReport<'_>);
}
