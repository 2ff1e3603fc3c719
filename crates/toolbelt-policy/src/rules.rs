//! Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`.
//!
//! | rule | matches |
//! |---|---|
//! | `Bash`, `WebFetch`, `Read` … (bare) | every call of that tool (by name or alias) |
//! | `Bash(npm run test *)` | a command of the `Bash` tool ([`command`]) |
//! | `Read(./.env)`, `Edit(/src/**)`, `Write(~/x)` | a path read (`Read`) or written (`Edit`, `Write`) by *any* tool, in gitignore syntax with anchors ([`path`]) |
//! | `WebFetch(domain:*.example.com)` | a URL the tool contacts, by host (a deny or ask also catches the HTTP tools the settings define) |
//! | `weather(domain:api.example.com)` | a URL that tool contacts, by host |
//! | `mcp__github`, `mcp__github__*` | every tool of that MCP server |
//! | `mcp__github__search` | that tool |
//! | `Agent(Explore)`, any other `Tool(x)` | a call of that tool with a top-level string input equal to `x` (`*` wildcards allowed) |
//!
//! Rules are matched against the *parts* of a call ([`Part`]): each simple command of a
//! shell command line (wrappers like `timeout` stripped), each path read or written (as
//! declared and as it really is, symlinks followed), each URL. The permission engine decides
//! with them: a deny or ask rule *catches* a call when it matches any part; an allow rule
//! *covers* one part, and a call is allowed by rules only when every part is covered.

pub mod command;
mod domain;
mod error;
pub mod path;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::ToolSpec;

pub use command::{CommandPattern, CommandPatternError};
use domain::DomainPattern;
pub use domain::host_of;
pub use error::{RuleError, RuleProblem};
pub use path::{Anchors, PathPattern, PathPatternError};

/// Where a rule came from: named in verdicts and errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleOrigin {
    /// Where, for people: `project .toolbelt/config.toml:12`, `--allow`, `session grant`.
    pub label: String,
    /// The directory a `/path` anchor is relative to (the directory the settings file
    /// governs: the project for project files, the home directory for user files).
    pub settings_dir: PathBuf,
}

impl RuleOrigin {
    /// An origin labelled `label` whose `/path` anchors are relative to `settings_dir`.
    pub fn new(label: impl Into<String>, settings_dir: impl Into<PathBuf>) -> Self {
        Self { label: label.into(), settings_dir: settings_dir.into() }
    }
}

/// The directories `~/` and `./` anchors resolve against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEnv {
    /// The home directory.
    pub home: PathBuf,
    /// The directory toolbelt started in (the first workspace root), for `./` and bare paths.
    pub cwd: PathBuf,
}

/// The tool names a rule applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ToolName {
    /// One tool, by name or alias.
    Exact(String),
    /// Every tool of an MCP server: names starting with `mcp__<server>__`.
    McpServer(String),
}

/// What a rule's specifier says.
#[derive(Debug, Clone)]
enum Specifier {
    Command(CommandPattern),
    /// A path read (`Read`) or written (`Edit`, `Write`) by any tool.
    Path {
        pattern: PathPattern,
        writes: bool,
    },
    Domain(DomainPattern),
    /// A top-level string value of the input.
    Value(String),
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: ToolName,
    spec: Option<Specifier>,
    origin: Arc<RuleOrigin>,
}

/// One thing a call does, as rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// One simple command of a command line, wrappers stripped.
    Command(String),
    /// A path read: as declared, and as it really is.
    Read {
        /// As the tool declared it (absolute, `.`/`..` folded).
        given: PathBuf,
        /// With symlinks followed.
        real: PathBuf,
    },
    /// A path written: as declared, and as it really is.
    Write {
        /// As the tool declared it (absolute, `.`/`..` folded).
        given: PathBuf,
        /// With symlinks followed.
        real: PathBuf,
    },
    /// A URL contacted.
    Url(String),
    /// The call as a whole (a tool that declares nothing finer).
    Call,
}

impl Rule {
    /// Parses `text` (`Bash(npm test *)`), resolving path anchors with `env` and `origin`.
    pub fn parse(text: &str, origin: Arc<RuleOrigin>, env: &RuleEnv) -> Result<Rule, RuleError> {
        let err = |problem: RuleProblem| RuleError { rule: text.to_string(), problem };
        let trimmed = text.trim();
        let (name, spec) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(err(RuleProblem::Unclosed));
                };
                (trimmed[..open].trim_end(), Some(inner))
            }
        };
        let tool = parse_tool_name(name).map_err(err)?;
        let spec = match (spec, &tool) {
            (None, _) => None,
            (Some(_), ToolName::McpServer(_)) => {
                return Err(err(RuleProblem::McpSpecifier));
            }
            (Some(inner), ToolName::Exact(name)) => Some(parse_specifier(name, inner, &origin, env).map_err(err)?),
        };
        Ok(Rule { text: trimmed.to_string(), tool, spec, origin })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where it came from.
    pub fn origin(&self) -> &RuleOrigin {
        &self.origin
    }

    /// The rule as a verdict's source: `` rule `X` (origin) ``.
    pub fn source(&self) -> crate::RuleRef {
        crate::RuleRef::Rule { rule: self.text.clone(), origin: self.origin.label.clone() }
    }

    /// The tool name the rule is written for (`Bash`, `Read`, `mcp__github__search`); `None`
    /// for a rule naming a whole MCP server.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.tool {
            ToolName::Exact(name) => Some(name),
            ToolName::McpServer(_) => None,
        }
    }

    /// Whether the rule has no specifier (it names whole tools).
    pub fn is_bare(&self) -> bool {
        self.spec.is_none()
    }

    /// Whether the rule is about this tool's name (a bare rule, an MCP rule, or a
    /// tool-specific specifier such as `Bash(…)`); path rules apply to any tool. A rule for
    /// `Bash` is about every tool whose command lines are bash too ([`ToolSpec::bash_rules`]:
    /// `Monitor`), so no such tool steps around it.
    pub fn names_tool(&self, tool: &ToolSpec) -> bool {
        match &self.tool {
            ToolName::Exact(name) => {
                tool.name == *name
                    || tool.aliases.iter().any(|a| a == name)
                    || (tool.bash_rules && BASH_NAMES.contains(&name.as_str()))
            }
            ToolName::McpServer(prefix) => tool.name.starts_with(prefix.as_str()),
        }
    }

    /// Whether this deny or ask rule judges the hosts `tool` contacts: a rule naming the
    /// tool, or a `WebFetch` rule when the tool's hosts are judged as fetches are
    /// ([`ToolSpec::fetch_rules`]: an HTTP tool from the settings). Allow rules never reach
    /// across so.
    fn judges_hosts_of(&self, tool: &ToolSpec) -> bool {
        self.names_tool(tool) || (tool.fetch_rules && matches!(&self.tool, ToolName::Exact(name) if name == "WebFetch"))
    }

    /// Whether this deny or ask rule catches a call: it matches any part of it. A command
    /// rule is matched against each simple command as written, against each program the
    /// command lines run as the shell will run them ([`CallParts::programs`]), and against
    /// each command line whole.
    pub fn catches(&self, tool: &ToolSpec, input: &Value, call: &CallParts) -> bool {
        match &self.spec {
            // A bare `WebFetch` deny or ask is about reaching the web: it catches the HTTP
            // tools too.
            None => self.judges_hosts_of(tool),
            Some(Specifier::Path { .. }) => call.parts.iter().any(|p| self.path_matches(p, false)),
            Some(Specifier::Command(pattern)) => {
                self.names_tool(tool)
                    && (call.commands.iter().any(|c| pattern.matches(&collapse(c)))
                        || call.programs.iter().any(|c| pattern.matches(c))
                        || call.parts.iter().any(|p| matches!(p, Part::Command(c) if pattern.matches(c))))
            }
            Some(Specifier::Domain(domain)) => {
                self.judges_hosts_of(tool)
                    && call.parts.iter().any(|p| matches!(p, Part::Url(u) if domain.matches_url(u)))
            }
            Some(Specifier::Value(glob)) => {
                self.names_tool(tool) && rule_strings(tool, input).any(|s| glob_match(glob, s))
            }
        }
    }

    /// Whether this is a command rule (`Bash(…)`) about this tool: one that a command whose
    /// program cannot be read from its text might have matched.
    pub fn is_command_rule_for(&self, tool: &ToolSpec) -> bool {
        matches!(self.spec, Some(Specifier::Command(_))) && self.names_tool(tool)
    }

    /// Whether this is a path rule whose pattern spells out `entry` (`.git`, `.mcp.json`):
    /// the explicit allow that lets a protected path be written without asking.
    pub fn names_entry(&self, entry: &str) -> bool {
        match &self.spec {
            Some(Specifier::Path { pattern, .. }) => {
                pattern.as_str().to_ascii_lowercase().contains(&entry.to_ascii_lowercase())
            }
            _ => false,
        }
    }

    /// The file or directory this `Read(…)` rule names without wildcards, if it does.
    pub fn literal_read_path(&self) -> Option<PathBuf> {
        match &self.spec {
            Some(Specifier::Path { pattern, writes: false }) => pattern.literal_path(),
            _ => None,
        }
    }

    /// The directory holding every path this `Read(…)` rule can hide, if it is one.
    pub fn read_base(&self) -> Option<PathBuf> {
        match &self.spec {
            Some(Specifier::Path { pattern, writes: false }) => Some(pattern.base()),
            _ => None,
        }
    }

    /// Whether this is a `Read(…)` rule matching `path` (as given or as it really is).
    pub fn hides_from_reading(&self, given: &Path, real: &Path) -> bool {
        self.path_matches(&Part::Read { given: given.to_path_buf(), real: real.to_path_buf() }, false)
    }

    /// Whether this allow rule covers one part of a call.
    pub fn covers(&self, tool: &ToolSpec, input: &Value, part: &Part) -> bool {
        match &self.spec {
            None => self.names_tool(tool),
            Some(Specifier::Path { .. }) => self.path_matches(part, true),
            Some(Specifier::Command(pattern)) => {
                self.names_tool(tool) && matches!(part, Part::Command(c) if pattern.matches(c))
            }
            // A `WebFetch(domain:…)` allow is about fetching pages: it never allows an HTTP
            // tool's request (which may carry a secret, or change something) to that host.
            Some(Specifier::Domain(domain)) => {
                self.names_tool(tool) && matches!(part, Part::Url(u) if domain.matches_url(u))
            }
            Some(Specifier::Value(glob)) => {
                self.names_tool(tool) && rule_strings(tool, input).any(|s| glob_match(glob, s))
            }
        }
    }

    /// A path rule against a read or write part: an allow must match the path as declared
    /// *and* as it really is (so a symlink cannot smuggle an allow elsewhere); a deny or ask
    /// matches either.
    fn path_matches(&self, part: &Part, allow: bool) -> bool {
        let Some(Specifier::Path { pattern, writes }) = &self.spec else { return false };
        let (given, real) = match (part, writes) {
            (Part::Read { given, real }, false) | (Part::Write { given, real }, true) => (given, real),
            _ => return false,
        };
        if allow {
            pattern.matches(given) && pattern.matches(real)
        } else {
            pattern.matches(given) || pattern.matches(real)
        }
    }
}

fn parse_tool_name(name: &str) -> Result<ToolName, RuleProblem> {
    if name.is_empty() {
        return Err(RuleProblem::MissingTool);
    }
    if let Some(rest) = name.strip_prefix("mcp__") {
        let (server, tool) = match rest.split_once("__") {
            Some((server, tool)) => (server, Some(tool)),
            None => (rest, None),
        };
        if server.is_empty() || !server.chars().all(is_name_char) {
            return Err(RuleProblem::BadMcpServer);
        }
        return Ok(match tool {
            None | Some("*") => ToolName::McpServer(format!("mcp__{server}__")),
            Some(t) if !t.is_empty() && t.chars().all(is_name_char) => ToolName::Exact(name.to_string()),
            Some(_) => return Err(RuleProblem::BadMcpTool),
        });
    }
    if !name.chars().all(is_name_char) {
        return Err(RuleProblem::BadToolName(name.to_string()));
    }
    Ok(ToolName::Exact(name.to_string()))
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The names `Bash` answers to (its name and aliases): a rule or a hook matcher written for
/// any of them is about every tool whose command lines are bash too ([`ToolSpec::bash_rules`]).
/// The tools crate tests that these are Bash's names.
pub const BASH_NAMES: [&str; 4] = ["Bash", "exec", "shell_exec", "bash"];

/// Whether rules for this tool take a command pattern (`Bash(npm test *)`,
/// `Monitor(tail -f *)`); a rule for any other tool that runs commands names the tool.
pub fn takes_command_rules(tool: &str) -> bool {
    tool == "Bash" || tool == "Monitor"
}

fn parse_specifier(tool: &str, inner: &str, origin: &RuleOrigin, env: &RuleEnv) -> Result<Specifier, RuleProblem> {
    match tool {
        _ if takes_command_rules(tool) => Ok(Specifier::Command(CommandPattern::parse(inner)?)),
        "Read" | "Edit" | "Write" => {
            let anchors = Anchors { home: &env.home, cwd: &env.cwd, settings_dir: &origin.settings_dir };
            let pattern = PathPattern::parse(inner, &anchors)?;
            Ok(Specifier::Path { pattern, writes: tool != "Read" })
        }
        "WebFetch" => match inner.strip_prefix("domain:") {
            Some(domain) => DomainPattern::parse(domain).map(Specifier::Domain),
            None => Err(RuleProblem::NotADomainRule),
        },
        _ if inner.trim().is_empty() => Err(RuleProblem::EmptySpecifier(tool.to_string())),
        // Any tool that contacts hosts (an HTTP tool from the settings) is judged by them.
        _ if inner.trim_start().starts_with("domain:") => {
            DomainPattern::parse(inner.trim_start().trim_start_matches("domain:")).map(Specifier::Domain)
        }
        _ => Ok(Specifier::Value(inner.trim().to_string())),
    }
}

/// The strings a value rule (`Agent(Explore)`, `Message(ops)`) is matched against: the
/// tool's rule field when it names one ([`ToolSpec::rule_field`]: only `Message`'s `channel`,
/// never the text sent), else every top-level string of the input.
fn rule_strings<'a>(tool: &ToolSpec, input: &'a Value) -> Box<dyn Iterator<Item = &'a str> + 'a> {
    match tool.rule_field {
        Some(field) => Box::new(input.get(field).and_then(Value::as_str).into_iter()),
        None => Box::new(input.as_object().into_iter().flat_map(|m| m.values()).filter_map(Value::as_str)),
    }
}

/// `*` matches any run of characters; everything else is literal.
fn glob_match(glob: &str, text: &str) -> bool {
    let mut pieces = glob.split('*');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else { return rest.is_empty() };
    for piece in middle {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn collapse(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A call cut into what rules judge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallParts {
    /// Each part, judged one by one by allow rules, grants and the mode.
    pub parts: Vec<Part>,
    /// Each program the call's command lines run, as the shell will run it: quotes removed,
    /// assignments and wrappers stripped, the program by its basename, strings run as code
    /// opened (`rm x` for `sudo env FOO=1 /bin/rm x` or `bash -c 'rm x'`). Deny and ask rules
    /// are matched against these too.
    pub programs: Vec<String>,
    /// What the command lines run that their text cannot tell (`$x foo`, `eval "$cmd"`,
    /// `curl … | sh`): each as written, with why.
    pub opaque: Vec<(String, String)>,
    /// The git commands the command lines run that may print a file's content from git's
    /// object store or index (`git show HEAD:x`, `git log -p`), which no path rule sees.
    pub history: Vec<String>,
    /// The command lines, whole.
    pub commands: Vec<String>,
}

impl CallParts {
    /// The parts of a call, from what its tool declared it touches.
    pub fn of(access: &toolbelt_core::Access) -> CallParts {
        use toolbelt_command::runs::Run;
        use toolbelt_core::Touch;
        let mut call = CallParts::default();
        for touch in &access.touches {
            match touch {
                Touch::Execute(command) => {
                    let analysis = toolbelt_command::analyze(command);
                    call.parts.extend(analysis.split.commands.into_iter().map(Part::Command));
                    for run in analysis.runs {
                        match run {
                            Run::Program { ref words, .. } => {
                                if toolbelt_command::history::shows_stored_content(words) {
                                    call.history.push(collapse(&run.text()));
                                }
                                call.programs.push(collapse(&run.text()));
                            }
                            Run::Opaque { text, why } => call.opaque.push((text, why)),
                        }
                    }
                    call.commands.push(command.clone());
                }
                Touch::Read(p) => {
                    call.parts.push(Part::Read { given: crate::paths::normalize(p), real: crate::paths::real_path(p) })
                }
                Touch::Write(p) => {
                    call.parts
                        .push(Part::Write { given: crate::paths::normalize(p), real: crate::paths::real_path(p) });
                }
                Touch::Network(url) => call.parts.push(Part::Url(url.clone())),
                Touch::State(_) => {}
            }
        }
        if access.touches.is_empty() {
            call.parts.push(Part::Call);
        }
        if let Some(why) = &access.opaque {
            let text = call.commands.first().cloned().unwrap_or_default();
            call.opaque.push((text, why.clone()));
        }
        call
    }
}

/// The parts of a call, from what its tool declared it touches ([`CallParts::of`]'s parts).
pub fn parts_of(access: &toolbelt_core::Access) -> Vec<Part> {
    CallParts::of(access).parts
}

/// A path as a rule would name it: `./rel` under `cwd`, `~/rel` under `home`, else `//abs`.
pub fn rule_path(path: &Path, env: &RuleEnv) -> String {
    if let Ok(rel) = path.strip_prefix(&env.cwd) {
        if rel.as_os_str().is_empty() {
            return ".".to_string();
        }
        return format!("./{}", rel.display());
    }
    if let Ok(rel) = path.strip_prefix(&env.home)
        && !rel.as_os_str().is_empty()
    {
        return format!("~/{}", rel.display());
    }
    format!("/{}", path.display())
}

#[cfg(test)]
mod tests;
