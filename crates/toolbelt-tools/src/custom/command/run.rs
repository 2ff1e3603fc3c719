//! A command tool's call: judged as Bash judges a command line, then run as Bash runs one.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use toolbelt_core::{Access, ToolContext, ToolError, ToolOutput, Touch};

use super::super::fields::OutputKind;
use super::super::fill::{Piece, pieces};
use super::{CommandAction, Network, fill_env};
use crate::process::cgroup::CommandCgroup;
use crate::process::config::BashConfig;
use crate::process::confine::{self, Confining};
use crate::process::env;
use crate::process::foreground;
use crate::process::made::PlacesWatch;
use crate::process::spawn::Setup;
use crate::shell::support::cwd::start_dir;
use crate::shell::support::judge;
use crate::shell::support::result::{BashOutput, finish};

impl CommandAction {
    /// What a call touches, and how it will run.
    pub(in crate::custom) fn judge(&self, input: &Value, cx: &ToolContext) -> Result<(Access, CommandPlan), ToolError> {
        let empty = Map::new();
        let fields = input.as_object().unwrap_or(&empty);
        let (line, run, values) = self.line(fields)?;
        let writes = Self::paths(&self.writes, fields, cx);
        let reads = Self::paths(&self.reads, fields, cx);
        // Judged as Bash judges a command line (its deny list, the read-only classifier, the
        // files it names), with the other lines it declares it starts.
        let (mut access, shell, _) = judge::bash_command(&line, cx)?;
        for other in &self.exec {
            judge::bash_command(other, cx)?;
            access = access.executes(other.clone());
        }
        // What the command line names is declared already (its operands).
        for path in reads {
            if !access.touches.contains(&Touch::Read(path.clone())) {
                access = access.reads(path);
            }
        }
        for path in &writes {
            if !access.touches.contains(&Touch::Write(path.clone())) {
                access = access.writes(path.clone());
            }
        }
        match &self.network {
            Network::Off => {}
            Network::Any => access = access.contacts("any host"),
            Network::Hosts(hosts) => {
                for host in hosts {
                    access =
                        access.contacts(if host.contains("://") { host.clone() } else { format!("https://{host}/") });
                }
            }
        }
        let network = self.network != Network::Off;
        let read_only = writes.is_empty()
            && !network
            && toolbelt_command::is_read_only(&line)
            && self.exec.iter().all(|c| toolbelt_command::is_read_only(c));
        if !read_only {
            access.concurrency = toolbelt_core::Concurrency::Exclusive;
        }
        // The places outside the workspace its definition writes (absolute, without a
        // placeholder: the input cannot move them; existing and no link, so what was judged
        // is what opens) were judged with the call: the sandbox lets it write there too. A
        // path the input chooses stays within what the sandbox lets every command write,
        // whatever rule allowed the call.
        let fixed: Vec<PathBuf> = self
            .writes
            .iter()
            .filter(|t| !pieces(t).iter().any(|p| matches!(p, Piece::Field(_))))
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && std::fs::canonicalize(p).is_ok_and(|real| real == *p))
            .collect();
        let (access, confining) = confine::declare_with(cx, access, read_only, |sandbox| {
            sandbox.network |= network;
            sandbox.writable_roots.extend(fixed);
        })?;
        Ok((access, CommandPlan { run, values, shell, confining }))
    }

    /// Runs a call as judged.
    pub(in crate::custom) async fn run(
        &self,
        input: Value,
        plan: CommandPlan,
        output: OutputKind,
        (limit, setting): (Duration, &str),
        cx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let CommandPlan { run: line, values, shell, confining } = plan;
        let (cwd, moved) = start_dir(&cx)?;
        let (confinement, unconfined) = confining.confinement(&cx)?;
        let sealed = confinement.as_ref().map(|c| c.sealed().to_vec()).unwrap_or_default();
        let watch = PlacesWatch::of(confinement.as_ref());
        let mut changes = env::changes(&shell);
        for (name, value) in &self.env {
            let value = fill_env(value).map_err(|missing| {
                ToolError::failed(format!(
                    "cannot run: its setting env.{name} reads ${missing}, which is not set in toolbelt's environment; \
                     ask the user to set it"
                ))
            })?;
            changes.push((name.into(), Some(value.into())));
        }
        for (name, value) in values {
            changes.push((name.into(), Some(value.into())));
        }
        // The input reaches stdin through a variable taken out of the environment before the
        // program starts: no file another command could read or replace.
        let json = self.stdin_json.then(|| input.to_string());
        if let Some(json) = &json {
            if json.len() > MAX_STDIN {
                return Err(ToolError::failed(format!(
                    "the input is over {} KiB, more than a command's environment carries to its stdin; send less",
                    MAX_STDIN / 1024
                )));
            }
            changes.push((STDIN_VAR.into(), Some(json.into())));
        }
        let take = format!("__tb_in=\"${STDIN_VAR}\"; builtin unset {STDIN_VAR}; ");
        let script = match (json.is_some(), self.shell) {
            (true, false) => format!("{take}exec {line} <<<\"$__tb_in\""),
            // The whole line reads the input, whatever it chains.
            (true, true) => format!("{take}{{ {line}\n}} <<<\"$__tb_in\""),
            (false, true) => line.clone(),
            (false, false) => format!("exec {line}"),
        };
        let setup = Setup { env: changes, confinement, control_room: None };
        let limit = limit.min(cx.limits().timeout);
        let outcome = foreground::run(&cx, &script, &cwd, limit, CommandCgroup::for_command(), setup).await?;
        let interrupted = outcome.interrupted;
        let mut notices: Vec<String> = moved.into_iter().chain(unconfined).collect();
        notices.extend(watch.settle(&cx).await);
        let mut ran = finish(&cx, outcome, limit, limit, notices, &sealed).await;
        if interrupted {
            return Err(ToolError::Cancelled);
        }
        // Bash's advice (a larger `timeout`, run_in_background) is no call's to take here.
        for note in ran.notes.iter_mut().filter(|n| n.starts_with("Timed out after")) {
            let head = note.split(" until then.").next().unwrap_or_default().to_string();
            *note = format!("{head} until then. That is the tool's time limit ({setting}): ask the user to raise it");
        }
        Ok(result(ran, output))
    }
}

/// What a command tool's call was judged to run.
#[derive(Debug)]
pub(crate) struct CommandPlan {
    /// The line the shell runs.
    run: String,
    /// The variables a `shell = true` line reads its values from.
    values: Vec<(String, String)>,
    shell: BashConfig,
    confining: Confining,
}

/// The variable a command's input travels in to its stdin.
const STDIN_VAR: &str = "TOOLBELT_STDIN";
/// The most bytes of input sent on stdin: what one variable of a command's environment can
/// hold (128 KiB, the kernel's limit for one string), less room for its name.
const MAX_STDIN: usize = 120 * 1024;

/// The result of a run: as Bash's for text output (an error when it failed), or its stdout
/// read as JSON.
fn result(ran: BashOutput, output: OutputKind) -> ToolOutput {
    let failed = ran.timed_out || ran.interrupted || ran.exit_code != Some(0);
    if output == OutputKind::Json && !failed && !ran.truncated {
        match serde_json::from_str::<Value>(ran.stdout.trim()) {
            Ok(value) => return super::super::json_output(value),
            Err(e) => {
                let mut out = text_output(ran);
                out.is_error = true;
                out.content.push(toolbelt_core::Content::text(format!(
                    "[Its output was to be JSON but is not ({e}); the definition says output = \"json\"]"
                )));
                return out;
            }
        }
    }
    let mut out = text_output(ran);
    out.is_error |= failed;
    out
}

/// Bash's result: its text and its fields.
fn text_output(ran: BashOutput) -> ToolOutput {
    use toolbelt_core::Render as _;
    let structured = serde_json::to_value(&ran).ok();
    let is_error = ran.is_error();
    ToolOutput { content: ran.into_content(), structured, is_error }
}

/// The output schema of a text command tool: Bash's.
pub(crate) fn text_schema() -> Value {
    toolbelt_core::output_schema::<BashOutput>()
}
