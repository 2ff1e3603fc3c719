//! The tools a definition gives its agent, from the tools there are.

use std::collections::HashSet;

use super::{AGENT_TOOLS, AgentDefinition, Problem};

/// Whether an agent may have the agent tools (`Agent`, `SendMessage`, the team tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentTools {
    /// Never: the agent is as deep as agents may nest.
    Withheld,
    /// Those its definition's `tools` names (an agent with every tool gets none of them: it
    /// must ask for them by name).
    AsListed,
}

/// Which list of a definition a [`ToolWarning`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKey {
    /// `tools`.
    Tools,
    /// `disallowedTools`.
    DisallowedTools,
}

impl ToolKey {
    /// The key as a definition file spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKey::Tools => "tools",
            ToolKey::DisallowedTools => "disallowedTools",
        }
    }
}

/// A name in a definition's tool lists that does not work as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolWarning {
    /// The list it is in.
    pub key: ToolKey,
    /// The name as written.
    pub name: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// The tools an agent of a definition has, and what in its lists did not apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSet {
    /// The tools' canonical names, in the order they were available.
    pub tools: Vec<String>,
    /// Names in the lists that name no tool, or that say more than a tool name.
    pub warnings: Vec<ToolWarning>,
}

impl ToolSet {
    /// Whether the set holds the tool of canonical name `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t == name)
    }
}

impl AgentDefinition {
    /// The tools an agent of this definition has, out of `available` (canonical names, in
    /// the order to keep): those `tools` names (every one when it names none, or `*`), less
    /// those `disallowedTools` names, less the agent tools unless `tools` names them and
    /// `agent_tools` lets it have them. `resolve` turns a name or alias into its tool's
    /// canonical name (`None` when no tool answers to it). A name no tool answers to, and a
    /// permission rule in place of a name (`Bash(git *)`: only `Bash` counts), is a warning,
    /// not an error; a known tool that is not available is left out without one.
    pub fn tool_set<S: AsRef<str>>(
        &self,
        available: &[S],
        resolve: impl Fn(&str) -> Option<String>,
        agent_tools: AgentTools,
    ) -> ToolSet {
        let mut warnings = Vec::new();
        let mut resolve_all = |key: ToolKey, names: &[String]| -> (HashSet<String>, bool) {
            let mut canonical = HashSet::new();
            let mut star = false;
            for written in names {
                let name = tool_name(written);
                if name == "*" {
                    star = true;
                    continue;
                }
                if name != written.trim() {
                    let message = format!(
                        "`{written}`: a rule here does not narrow the tool; `{key}` takes tool names, so this means all \
                         of `{name}`. Narrow what it may do with permission rules (`permissions.allow`/`deny`)",
                        key = key.as_str()
                    );
                    warnings.push(ToolWarning { key, name: written.clone(), message });
                }
                match resolve(name) {
                    Some(tool) => {
                        canonical.insert(tool);
                    }
                    None => {
                        let message = match key {
                            ToolKey::Tools => format!("`tools` names `{name}`, which is no tool here; it is left out"),
                            ToolKey::DisallowedTools => {
                                format!(
                                    "`disallowedTools` names `{name}`, which is no tool here; nothing is removed for it"
                                )
                            }
                        };
                        warnings.push(ToolWarning { key, name: written.clone(), message });
                    }
                }
            }
            (canonical, star)
        };
        let listed = self.tools.as_deref().map(|names| resolve_all(ToolKey::Tools, names));
        let (barred, bar_all) = resolve_all(ToolKey::DisallowedTools, &self.disallowed_tools);
        let tools = available
            .iter()
            .map(AsRef::as_ref)
            .filter(|tool| {
                let named = listed.as_ref().is_some_and(|(names, _)| names.contains(*tool));
                let allowed = match &listed {
                    None | Some((_, true)) => true,
                    Some((names, false)) => names.contains(*tool),
                };
                let agent_ok = !AGENT_TOOLS.contains(tool) || (agent_tools == AgentTools::AsListed && named);
                allowed && agent_ok && !bar_all && !barred.contains(*tool)
            })
            .map(str::to_string)
            .collect();
        ToolSet { tools, warnings }
    }

    /// `set`'s warnings as problems of this definition's file, on the line of their list
    /// (none for a built-in definition).
    pub fn tool_problems(&self, set: &ToolSet) -> Vec<Problem> {
        let Some(path) = self.source.path() else { return Vec::new() };
        set.warnings
            .iter()
            .map(|w| {
                let line = match w.key {
                    ToolKey::Tools => self.lines.tools,
                    ToolKey::DisallowedTools => self.lines.disallowed_tools,
                };
                Problem::warning(path, line, w.message.clone())
            })
            .collect()
    }
}

/// The tool name of an entry: `Bash` for `Bash(git *)`.
fn tool_name(written: &str) -> &str {
    written.split_once('(').map_or(written, |(name, _)| name).trim()
}
