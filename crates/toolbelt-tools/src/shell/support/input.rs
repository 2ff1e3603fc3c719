//! What a `Bash` call asks for: its input, read by the tool and by the background task it may
//! start ([`super::background`]).

use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Bash`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
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
    /// Run the command in a pseudo-terminal (for REPLs, editors, prompts, `git rebase -i`,
    /// full-screen programs). The output reads as the screen does. If it is still running
    /// after `yield_time_ms`, the result gives a `session_id` to type into with WriteStdin.
    pub tty: Option<bool>,
    /// Return after this many milliseconds with what the command printed so far (default
    /// 10000 with `tty`), the command still running as a session: the result gives a
    /// `session_id` for WriteStdin (type, read) and TaskStop (end). Without `tty`, its stdin
    /// is a pipe WriteStdin writes to.
    #[schemars(range(min = 0))]
    pub yield_time_ms: Option<u64>,
    /// The terminal's width in columns, with `tty` (default 120).
    #[schemars(range(min = 20, max = 400))]
    pub cols: Option<u16>,
    /// The terminal's height in rows, with `tty` (default 40).
    #[schemars(range(min = 5, max = 200))]
    pub rows: Option<u16>,
}
