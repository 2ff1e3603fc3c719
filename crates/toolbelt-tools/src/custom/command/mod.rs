//! A command tool (`[tools.command.NAME]`): a program the settings name, its arguments
//! filled from the call's validated input, run as Bash runs commands — in the session's
//! working directory, under the sandbox, with Bash's environment (secrets removed), its
//! output budget and spill file, and the kill of its whole process tree at the time limit.
//!
//! ```toml
//! [tools.command.deploy]
//! description = "Deploy a ref to an environment"
//! command = "scripts/deploy.sh"        # the program (relative: to this settings file's folder)
//! args = ["--env", "{env}", "--ref={ref}"]
//! input_schema = { type = "object", properties = { env = { enum = ["staging", "prod"] }, ref = { type = "string" } }, required = ["env"] }
//! stdin = "json"                       # the whole input as JSON on stdin
//! env = { DEPLOY_TOKEN = "${DEPLOY_TOKEN}" }
//! timeout = 600                        # seconds
//! output = "text"                      # or "json": stdout read as JSON
//! writes = ["deploy.log"]              # what it touches, for the permission engine
//! network = ["api.example.com"]        # hosts it reaches (true: any); opens the sandbox's network
//! exec = ["git push"]                  # other command lines it starts, judged with its own
//! ```
//!
//! Without `shell = true` the program is started with exactly these arguments: a value is
//! one argument whatever it holds (one starting with `-` is refused unless `--` comes before
//! it: it would be read as an option). A relative program path is the defining file's
//! folder's, never the working directory's (a repository's file of that name). With
//! `shell = true`, `command` is a bash line whose placeholders (never inside quotes) become
//! variables the shell expands as one word each: a value is never read as code, in a heredoc
//! or a `$(…)` either. Either way the call is judged like a Bash command line of the same
//! program (the shell's deny list, the read-only classifier, the files it names) plus what
//! `reads`, `writes`, `network` and `exec` declare, and it is allowed by a rule naming the
//! tool (`deploy`); `Bash(…)` rules are about Bash, whose command lines the model writes,
//! while a command tool runs only the program its definition names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use toolbelt_core::{ToolContext, ToolError};

use super::fields::{DefinitionError, fields_in, string_table, strings, wrong_type};
use super::fill::{self, Piece, pieces, quote};

mod run;

pub(super) use run::{CommandPlan, text_schema};

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
    /// The other command lines the program starts (judged as Bash's are, with its own).
    pub exec: Vec<String>,
}

impl CommandAction {
    /// Reads a command tool's own fields; `vars` are put for `${VAR}` in its command and
    /// arguments (a plugin's root), the only variables allowed there. `dir` is the folder of
    /// the file defining it: a relative program path (`scripts/x.sh`) is that folder's.
    pub(super) fn read(
        fields: &Map<String, Value>,
        vars: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Self, DefinitionError> {
        let shell = match fields.get("shell") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => return Err(wrong_type("shell", "true or false", v)),
        };
        let raw = match fields.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => c.trim(),
            Some(Value::String(_)) | None => {
                return Err(DefinitionError::new("`command` is missing: the program the tool runs"));
            }
            Some(v) => return Err(wrong_type("command", "a string (the program)", v)),
        };
        let args =
            strings(fields, "args")?.iter().map(|a| with_vars(a, vars, "args")).collect::<Result<Vec<_>, _>>()?;
        let command = if shell { shell_command(raw, &args, vars)? } else { program(raw, vars, dir)? };
        let exec = match fields.get("exec") {
            None | Some(Value::Array(_)) => strings(fields, "exec")?,
            Some(v) => {
                return Err(wrong_type(
                    "exec",
                    "a list of the other command lines the program starts (`exec = [\"git push\"]`); the command \
                     line it runs is always judged",
                    v,
                ));
            }
        };
        let stdin_json = match fields.get("stdin") {
            None => false,
            Some(Value::String(s)) if s == "json" => true,
            Some(Value::String(s)) if s == "none" => false,
            Some(v) => return Err(wrong_type("stdin", "\"json\" (the input as JSON) or \"none\"", v)),
        };
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
            env: string_table(fields, "env")?,
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

    /// The command line a call runs as people and the policy see it (the program and each
    /// argument as one quoted word), the line the shell is given (for `shell = true`, with
    /// the values in variables), and those variables.
    fn line(&self, input: &Map<String, Value>) -> Result<Line, ToolError> {
        if self.shell {
            let shown = fill::shell_line(&self.command, input);
            let (run, values) = fill::shell_env_line(&self.command, input).map_err(ToolError::failed)?;
            return Ok((shown, run, values));
        }
        let mut words = vec![quote(&self.command)];
        let mut options_end = false;
        for template in &self.args {
            let whole = matches!(pieces(template).as_slice(), [Piece::Field(_)]);
            for value in fill::arg(template, input) {
                if whole && !options_end && fill::reads_as_option(&value) {
                    return Err(ToolError::failed(format!(
                        "the value `{value}` would be read by `{}` as an option, not a value; give one that does not \
                         start with `-` (the tool's definition can put \"--\" before it to take such values)",
                        self.command
                    )));
                }
                words.push(quote(&value));
            }
            options_end |= template == "--";
        }
        let line = words.join(" ");
        Ok((line.clone(), line, Vec::new()))
    }

    /// The paths of `templates` for this input, absolute (from `cx`'s working directory).
    fn paths(templates: &[String], input: &Map<String, Value>, cx: &ToolContext) -> Vec<PathBuf> {
        templates.iter().flat_map(|t| fill::arg(t, input)).map(|p| cx.resolve(Path::new(&p))).collect()
    }
}

/// A call's command line: as judged and shown, as run, and the variables the run reads.
type Line = (String, String, Vec<(String, String)>);

/// A `shell = true` line, checked: no arguments beside it, no placeholder inside quotes.
fn shell_command(raw: &str, args: &[String], vars: &BTreeMap<String, String>) -> Result<String, DefinitionError> {
    if !args.is_empty() {
        return Err(DefinitionError::new(
            "with shell = true, `command` is the whole bash line: write the arguments there, not in `args`",
        ));
    }
    if let Some(name) = fill::quoted_placeholder(raw) {
        return Err(DefinitionError::new(format!(
            "{{{name}}} is inside quotes in `command`: write it bare (`grep {{{name}}} .`); toolbelt passes every \
             value as one word, whatever it holds"
        )));
    }
    with_vars(raw, vars, "command")
}

/// The program of a command tool, checked; a relative path made the defining file's folder's.
fn program(raw: &str, vars: &BTreeMap<String, String>, dir: &Path) -> Result<String, DefinitionError> {
    if raw.contains(char::is_whitespace) {
        return Err(DefinitionError::new(format!(
            "`command` is the program only (`{raw}` has spaces): put its arguments in `args`, or set shell = true \
             to write a bash line"
        )));
    }
    if pieces(raw).iter().any(|p| matches!(p, Piece::Field(_))) {
        return Err(DefinitionError::new(
            "`command` may not hold a {placeholder}: the program is the definition's choice; put values in `args`",
        ));
    }
    let program = with_vars(raw, vars, "command")?;
    let path = Path::new(&program);
    Ok(if program.contains('/') && path.is_relative() && !dir.as_os_str().is_empty() {
        dir.join(path).to_string_lossy().into_owned()
    } else {
        program
    })
}

/// Puts `vars` for `${VAR}` in `template`; any other `${VAR}` is refused (a secret on a
/// command line is visible to every process of the machine: use `env`).
fn with_vars(template: &str, vars: &BTreeMap<String, String>, field: &str) -> Result<String, DefinitionError> {
    fill::with_vars(template, |name| {
        vars.get(name).cloned().ok_or_else(|| {
            DefinitionError::new(format!(
                "`{field}` reads ${{{name}}}: a variable on a command line is visible to every process of the \
                 machine; pass it in `env` (env = {{ {name} = \"${{{name}}}\" }}) and read it there"
            ))
        })
    })
}

/// An `env` value with `${VAR}` read from toolbelt's environment; the missing variable's name
/// when one is not set.
fn fill_env(template: &str) -> Result<String, String> {
    fill::with_vars(template, |name| std::env::var(name).map_err(|_| name.to_string()))
}
