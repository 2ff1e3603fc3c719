//! `[tools] enabled` and `disabled` (and `--tools`, `--disable-tool`): which tools a session
//! is offered at all. A word names a tool or one of its aliases (any case); a word that is no
//! tool's name names a category (`web`, `shell`) or a tag, so `Read` is the Read tool only,
//! never every tool tagged `read`. A disabled tool is absent from every listing, export and MCP `tools/list`, and a
//! call by its name is answered with the setting that left it out (`toolbelt tools` shows it
//! under "Not available here").
//!
//! Both only take tools away, so a project's files apply them without trust. `disabled`
//! adds up across the settings layers; `enabled`, a list of the only tools to offer, is the
//! most specific layer's (the flag's over a file's). Neither brings back a tool something else
//! left out (a bare deny rule, a missing `pwsh`).

use toolbelt_core::{Registry, ToolSpec};

use super::Entry;

/// How a reason of [`ToolFilter::reason`] starts when `tools.disabled` left the tool out.
const DISABLED: &str = "disabled by tools.disabled";
/// How it starts when `tools.enabled` did.
const NOT_ENABLED: &str = "not among tools.enabled";

/// The tools left out, each word with where it was set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// The only tools offered, when set: the words and where.
    pub enabled: Option<(Vec<String>, String)>,
    /// The tools left out: each word and where.
    pub disabled: Vec<(String, String)>,
}

impl ToolFilter {
    /// The filter of `enabled` and `disabled` entries (in layer order, most specific last).
    pub(super) fn from_entries(enabled: &[&Entry], disabled: &[&Entry]) -> ToolFilter {
        let word = |e: &Entry| e.value.as_str().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let enabled = enabled.last().map(|top| {
            let layer = top.origin.layer;
            let words: Vec<String> =
                enabled.iter().filter(|e| e.origin.layer == layer).filter_map(|e| word(e)).collect();
            (words, top.origin.to_string())
        });
        let disabled = disabled.iter().filter_map(|e| Some((word(e)?, e.origin.to_string()))).collect();
        ToolFilter { enabled, disabled }
    }

    /// Whether a disabled tool's reason is this filter's (not, say, a missing program's).
    pub fn is_its_reason(reason: &str) -> bool {
        reason.starts_with(DISABLED) || reason.starts_with(NOT_ENABLED)
    }

    /// Whether it leaves nothing out.
    pub fn is_empty(&self) -> bool {
        self.enabled.is_none() && self.disabled.is_empty()
    }

    /// Why the tool `spec` describes is left out, if it is; `is_tool` says whether a word is
    /// some tool's name or alias (then it names that tool only).
    pub fn reason(&self, spec: &ToolSpec, is_tool: &dyn Fn(&str) -> bool) -> Option<String> {
        let names = |word: &str| names(spec, word, is_tool(word));
        if let Some((word, origin)) = self.disabled.iter().find(|(word, _)| names(word)) {
            return Some(format!("{DISABLED} `{word}` ({origin})"));
        }
        match &self.enabled {
            Some((words, origin)) if !words.iter().any(|w| names(w)) => {
                Some(format!("{NOT_ENABLED} ({origin}): {}", words.join(", ")))
            }
            _ => None,
        }
    }

    /// Disables every tool of `registry` it leaves out, with why. Without a filter no tool's
    /// spec is looked at (a typed tool's is built at first use).
    pub fn apply(&self, registry: &Registry) {
        if self.is_empty() {
            return;
        }
        let is_tool = self.tool_words(registry);
        let is_tool = |word: &str| is_tool.contains(&word.to_ascii_lowercase());
        for entry in registry.entries() {
            if entry.is_enabled()
                && let Some(why) = self.reason(entry.spec(), &is_tool)
            {
                registry.disable(&entry.spec().name, why);
            }
        }
    }

    /// Its words that are the name or an alias of a tool of `registry`, lowercased.
    pub fn tool_words(&self, registry: &Registry) -> std::collections::HashSet<String> {
        let enabled = self.enabled.iter().flat_map(|(words, _)| words.iter());
        let disabled = self.disabled.iter().map(|(word, _)| word);
        enabled
            .chain(disabled)
            .filter(|w| !matches!(registry.lookup(w), Err(toolbelt_core::ToolError::UnknownTool { .. })))
            .map(|w| w.to_ascii_lowercase())
            .collect()
    }
}

/// Whether `word` names the tool: its name or an alias (any case); or, when the word is no
/// tool's name (`is_tool` false), its category or a tag.
fn names(spec: &ToolSpec, word: &str, is_tool: bool) -> bool {
    if spec.name.eq_ignore_ascii_case(word) || spec.aliases.iter().any(|a| a.eq_ignore_ascii_case(word)) {
        return true;
    }
    !is_tool && (spec.category.as_str().eq_ignore_ascii_case(word) || spec.has_tag(word))
}
