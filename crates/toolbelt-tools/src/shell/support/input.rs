//! What a `Bash` call asks for: its input, read by the tool and by the background task it may
//! start ([`super::background`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Bash`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command to run, in bash syntax. Quote paths that contain spaces; chain dependent
    /// commands with `&&`.
    #[schemars(length(min = 1))]
    pub command: String,
    /// Time limit in milliseconds (the tool's description gives the default and the cap). On
    /// timeout the command and every process it started are stopped and the output so far is
    /// returned.
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
    /// What the command does, in 5–10 words ("Run the unit tests"), for the user watching.
    pub description: Option<String>,
    /// Run the command in the background: the call returns a task id at once; read the
    /// output with TaskOutput and stop it with TaskStop. For servers, watchers and jobs longer
    /// than the timeout.
    pub run_in_background: Option<bool>,
}
