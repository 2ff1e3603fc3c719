//! `mcp.tool_search`: when upstream MCP tools are deferred (listed by name, loaded with
//! ToolSearch). A leaf the settings schema (its names) and the resolver (its meaning) share.

/// A 200,000-token context at about 4 characters a token: what `mcp.tool_search_threshold`
/// is a percentage of.
pub const CONTEXT_CHARS: usize = 200_000 * 4;

/// When upstream MCP tools are deferred (listed by name, loaded with ToolSearch):
/// `mcp.tool_search`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolSearch {
    /// Once their definitions pass `mcp.tool_search_threshold`.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ToolSearch {
    /// Every value, in [`Self::NAMES`]'s order.
    pub const ALL: [ToolSearch; 3] = [ToolSearch::Auto, ToolSearch::Always, ToolSearch::Never];
    /// The names settings use (the settings schema lists these).
    pub const NAMES: [&'static str; 3] = ["auto", "always", "never"];

    /// The value of a settings name.
    pub fn parse(name: &str) -> Option<ToolSearch> {
        Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
    }
}

/// Past how many characters of definitions the upstream MCP tools are deferred
/// (`mcp.tool_search`, `mcp.tool_search_threshold`): `None` never, `Some(0)` always.
pub fn defer_threshold(mode: ToolSearch, percent: Option<usize>) -> Option<usize> {
    match mode {
        ToolSearch::Never => None,
        ToolSearch::Always => Some(0),
        ToolSearch::Auto => Some(CONTEXT_CHARS / 100 * percent.unwrap_or(10).min(100)),
    }
}
