//! Why a rule could not be parsed ([`RuleError`]), each problem saying what to write instead.

use super::command::CommandPatternError;
use super::path::PathPatternError;

/// Why a rule could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rule `{rule}`: {problem}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong and what to write instead.
    pub problem: RuleProblem,
}

/// What is wrong with a rule, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleProblem {
    /// `Tool(…` without its `)`.
    #[error("a specifier must end with `)`: write `Tool(specifier)`")]
    Unclosed,
    /// `(…)` with nothing before it.
    #[error("the tool name is missing: write `Tool` or `Tool(specifier)`")]
    MissingTool,
    /// `mcp__` followed by no server, or a server name with other characters.
    #[error("an MCP rule is `mcp__<server>` or `mcp__<server>__<tool>` (letters, digits, `_`, `-`)")]
    BadMcpServer,
    /// `mcp__server__` followed by no tool, or a tool name with other characters.
    #[error("an MCP tool rule names one tool (`mcp__server__tool`) or all (`mcp__server__*`)")]
    BadMcpTool,
    /// A specifier on an MCP rule.
    #[error("MCP rules take no specifier: write `mcp__server` or `mcp__server__tool`")]
    McpSpecifier,
    /// A tool name with characters tool names never have.
    #[error(
        "`{0}` is not a tool name (letters, digits, `_` and `-` only); wildcards in tool names work only as `mcp__server__*`"
    )]
    BadToolName(String),
    /// A `Bash(…)` specifier that is not a command pattern.
    #[error(transparent)]
    Command(#[from] CommandPatternError),
    /// A `Read(…)`, `Edit(…)` or `Write(…)` specifier that is not a path pattern.
    #[error(transparent)]
    Path(#[from] PathPatternError),
    /// A `WebFetch(…)` specifier without `domain:`.
    #[error("WebFetch rules name a domain: `WebFetch(domain:example.com)` or `WebFetch(domain:*.example.com)`")]
    NotADomainRule,
    /// A `domain:` that is not a host name.
    #[error("`{0}` is not a domain: write `domain:example.com` or `domain:*.example.com`")]
    BadDomain(String),
    /// `Tool()` with nothing inside.
    #[error("empty specifier: write `{0}` for every call")]
    EmptySpecifier(String),
}
