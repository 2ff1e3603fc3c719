//! A command tool (`[tools.command.NAME]`): a program the settings name, its arguments
//! filled from the call's validated input, run as Bash runs commands — in the session's
//! working directory, under the sandbox, with Bash's environment (secrets removed), its
//! output budget and spill file, and the kill of its whole process tree at the time limit.
//!
//! ```toml
//! [tools.command.deploy]
//! description = "Deploy a ref to an environment"
//! command = "scripts/deploy.sh"        # the program; no shell reads it or the values
//! args = ["--env", "{env}", "--ref={ref}"]
//! input_schema = { type = "object", properties = { env = { enum = ["staging", "prod"] }, ref = { type = "string" } }, required = ["env"] }
//! stdin = "json"                       # the whole input as JSON on stdin
//! env = { DEPLOY_TOKEN = "${DEPLOY_TOKEN}" }
//! timeout = 600                        # seconds
//! output = "text"                      # or "json": stdout read as JSON
//! writes = ["deploy.log"]              # what it touches, for the permission engine
//! network = ["api.example.com"]        # hosts it reaches (true: any); opens the sandbox's network
//! exec = true                          # judged as a command line too (the default)
//! ```
//!
//! Without `shell = true` the program is started with exactly these arguments: a value is
//! one argument whatever it holds. With `shell = true`, `command` is a bash line whose
//! placeholders become single-quoted words. Either way the call is judged like a Bash command
//! line of the same program (the shell's deny list, the read-only classifier, the files it
//! names) plus what `reads`, `writes` and `network` declare, and it is allowed by a rule
//! naming the tool (`deploy`); `Bash(…)` rules are about Bash, whose command lines the model
//! writes, while a command tool runs only the program its definition names.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use toolbelt_core::{Access, ToolContext, ToolError, ToolOutput, Touch};

use super::definition::{DefinitionError, OutputKind, fields_in, string_table, strings, wrong_type};
use super::fill::{self, Piece, pieces, quote};
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

/// A command tool's own settings.
pub(super) const FIELDS: [&str; 9] = ["command", "args", "shell", "stdin", "env", "reads", "writes", "network", "exec"];

/// The hosts a command tool reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// None: the sandbox's network stays as the settings have it.
    Off,
    /// Any host.
    Any,
    /// These hosts.
    Hosts(Vec<String>),
}

/// What a command tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandAction {
    /// The program, or with `shell` the bash line.
    pub command: String,
    /// The argument templates.
    pub args: Vec<String>,
    /// Whether `command` is a bash line.
    pub shell: bool,
    /// Whether the input goes to stdin as JSON.
    pub stdin_json: bool,
    /// Variables set for it; `${VAR}` in a value is read from toolbelt's environment.
    pub env: BTreeMap<String, String>,
    /// Path templates it reads.
    pub reads: Vec<String>,
    /// Path templates it writes.
    pub writes: Vec<String>,
    /// The hosts it reaches.
    pub network: Network,
    /// Whether it is judged as the command line it runs, too.
    pub exec: bool,
}

impl CommandAction {
    /// Reads a command tool's own fields; `vars` are put for `${VAR}` in its command and
    /// arguments (a plugin's root), the only variables allowed there.
    pub(super) fn read(fields: &Map<String, Value>, vars: &BTreeMap<String, String>) -> Result<Self, DefinitionError> {
        let flag = |field: &str, default: bool| match fields.get(field) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(wrong_type(field, "true or false", v)),
        };
        let shell = flag("shell", false)?;
        let exec = flag("exec", true)?;
        let command = match fields.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => with_vars(c.trim(), vars, "command")?,
            Some(Value::String(_)) | None => {
                return Err(DefinitionError::new("`command` is missing: the program the tool runs"));
            }
            Some(v) => return Err(wrong_type("command", "a string (the program)", v)),
        };
        let args =
            strings(fields, "args")?.iter().map(|a| with_vars(a, vars, "args")).collect::<Result<Vec<_>, _>>()?;
        if !shell {
            if command.contains(char::is_whitespace) {
                return Err(DefinitionError::new(format!(
                    "`command` is the program only (`{command}` has spaces): put its arguments in `args`, or set \
                     shell = true to write a bash line"
                )));
            }
            if pieces(&command).iter().any(|p| matches!(p, Piece::Field(_))) {
                return Err(DefinitionError::new(
                    "`command` may not hold a {placeholder}: the program is the definition's choice; put values in `args`",
                ));
            }
        } else if !args.is_empty() {
            return Err(DefinitionError::new(
                "with shell = true, `command` is the whole bash line: write the arguments there, not in `args`",
            ));
        }
        let stdin_json = match fields.get("stdin") {
            None => false,
            Some(Value::String(s)) if s == "json" => true,
            Some(Value::String(s)) if s == "none" => false,
            Some(v) => return Err(wrong_type("stdin", "\"json\" (the input as JSON) or \"none\"", v)),
        };
        let env = string_table(fields, "env")?;
        let network = match fields.get("network") {
            None | Some(Value::Bool(false)) => Network::Off,
            Some(Value::Bool(true)) => Network::Any,
            Some(Value::Array(_)) => Network::Hosts(strings(fields, "network")?),
            Some(v) => return Err(wrong_type("network", "true, false or a list of hosts", v)),
        };
        Ok(Self {
            command,
            args,
            shell,
            stdin_json,
            env,
            reads: strings(fields, "reads")?,
            writes: strings(fields, "writes")?,
            network,
            exec,
        })
    }

    /// The input fields its templates name.
    pub(super) fn placeholders(&self) -> Vec<String> {
        let mut names = Vec::new();
        for template in std::iter::once(&self.command).chain(&self.args).chain(&self.reads).chain(&self.writes) {
            fields_in(template, &mut names);
        }
        names
    }

    /// The command line a call runs: for people, the policy and the shell that starts it
    /// (the program and each argument as one quoted word).
    fn line(&self, input: &Map<String, Value>) -> String {
        if self.shell {
            return fill::shell_line(&self.command, input);
        }
        let mut words = vec![quote(&self.command)];
        words.extend(self.args.iter().flat_map(|a| fill::arg(a, input)).map(|a| quote(&a)));
        words.join(" ")
    }

    /// The paths of `templates` for this input, absolute (from `cx`'s working directory).
    fn paths(templates: &[String], input: &Map<String, Value>, cx: &ToolContext) -> Vec<PathBuf> {
        templates.iter().flat_map(|t| fill::arg(t, input)).map(|p| cx.resolve(std::path::Path::new(&p))).collect()
    }

    /// What a call touches, and how it will run.
    pub(super) fn judge(&self, input: &Value, cx: &ToolContext) -> Result<(Access, CommandPlan), ToolError> {
        let empty = Map::new();
        let fields = input.as_object().unwrap_or(&empty);
        let line = self.line(fields);
        let writes = Self::paths(&self.writes, fields, cx);
        let reads = Self::paths(&self.reads, fields, cx);
        let (mut access, shell) = if self.exec {
            let (access, shell, _) = judge::bash_command(&line, cx)?;
            (access, shell)
        } else {
            let access =
                if writes.is_empty() && self.network == Network::Off { Access::shared() } else { Access::exclusive() };
            (access, BashConfig::in_effect(cx))
        };
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
        let read_only = writes.is_empty() && (!self.exec || toolbelt_command::is_read_only(&line));
        let network = self.network != Network::Off;
        // The places its definition writes (no placeholder: the input cannot move them) were
        // judged with the call: the sandbox lets it write there too. A path the input chooses
        // stays within what the sandbox lets every command write, whatever a rule allowed.
        let fixed: Vec<PathBuf> = self
            .writes
            .iter()
            .filter(|t| !pieces(t).iter().any(|p| matches!(p, Piece::Field(_))))
            .map(|t| cx.resolve(std::path::Path::new(t)))
            .collect();
        let (access, confining) = confine::declare_with(cx, access, read_only, |sandbox| {
            sandbox.network |= network;
            for path in fixed {
                let place = if path.exists() { path } else { path.parent().map_or(path.clone(), PathBuf::from) };
                sandbox.writable_roots.push(place);
            }
        })?;
        Ok((access, CommandPlan { line, shell, confining }))
    }

    /// Runs a call as judged.
    pub(super) async fn run(
        &self,
        input: Value,
        plan: CommandPlan,
        output: OutputKind,
        limit: Duration,
        cx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let CommandPlan { line, shell, confining } = plan;
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
        let stdin = if self.stdin_json { Some(InputFile::write(&input)?) } else { None };
        let script = match &stdin {
            Some(file) => format!("exec {line} < {}", quote(&file.0.to_string_lossy())),
            None if self.shell => line.clone(),
            None => format!("exec {line}"),
        };
        let setup = Setup { env: changes, confinement };
        let limit = limit.min(cx.limits().timeout);
        let outcome = foreground::run(&cx, &script, &cwd, limit, CommandCgroup::for_command(), setup).await?;
        drop(stdin);
        let interrupted = outcome.interrupted;
        let mut notices: Vec<String> = moved.into_iter().chain(unconfined).collect();
        notices.extend(watch.settle(&cx).await);
        let ran = finish(&cx, outcome, limit, limit, notices, &sealed).await;
        if interrupted {
            return Err(ToolError::Cancelled);
        }
        Ok(result(ran, output))
    }
}

/// What a command tool's call was judged to run.
#[derive(Debug)]
pub(super) struct CommandPlan {
    line: String,
    shell: BashConfig,
    confining: Confining,
}

/// Puts `vars` for `${VAR}` in `template`; any other `${VAR}` is refused (a secret on a
/// command line is visible to every process of the machine: use `env`).
fn with_vars(template: &str, vars: &BTreeMap<String, String>, field: &str) -> Result<String, DefinitionError> {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Field(name) => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
            Piece::Var(name) => match vars.get(name) {
                Some(value) => out.push_str(value),
                None => {
                    return Err(DefinitionError::new(format!(
                        "`{field}` reads ${{{name}}}: a variable on a command line is visible to every process of \
                         the machine; pass it in `env` (env = {{ {name} = \"${{{name}}}\" }}) and read it there"
                    )));
                }
            },
        }
    }
    Ok(out)
}

/// An `env` value with `${VAR}` read from toolbelt's environment; the missing variable's name
/// when one is not set.
fn fill_env(template: &str) -> Result<String, String> {
    let mut out = String::new();
    for piece in pieces(template) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Field(name) => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
            Piece::Var(name) => out.push_str(&std::env::var(name).map_err(|_| name.to_string())?),
        }
    }
    Ok(out)
}

/// The input written for a command's stdin: owner-only, removed when dropped.
struct InputFile(PathBuf);

impl InputFile {
    fn write(input: &Value) -> Result<Self, ToolError> {
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let path = std::env::temp_dir().join(format!("toolbelt-input-{}-{stamp:x}.json", std::process::id()));
        let wrote = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(input.to_string().as_bytes()));
        match wrote {
            Ok(()) => Ok(Self(path)),
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(ToolError::failed(format!("cannot write the input for the command's stdin: {e}")))
            }
        }
    }
}

impl Drop for InputFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The result of a run: as Bash's for text output (an error when it failed), or its stdout
/// read as JSON.
fn result(ran: BashOutput, output: OutputKind) -> ToolOutput {
    let failed = ran.timed_out || ran.interrupted || ran.exit_code != Some(0);
    if output == OutputKind::Json && !failed && !ran.truncated {
        match serde_json::from_str::<Value>(ran.stdout.trim()) {
            Ok(value) => return super::json_output(value),
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
pub(super) fn text_schema() -> Value {
    toolbelt_core::output_schema::<BashOutput>()
}
