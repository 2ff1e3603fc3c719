//! Which upstream servers a CLI call needs started.
//!
//! Starting a server costs its start-up — seconds for some, its whole startup timeout for one
//! that never answers — so `toolbelt call` and `batch` start only what their calls use:
//!
//! * `mcp__srv__tool` needs `srv` (every server whose name prefix it has; all of them when
//!   none has, so an unknown name still gets the closest names);
//! * `ListMcpResources` and `ReadMcpResource` need the server their `server` names, or all;
//! * `ToolSearch` needs all (it searches their tools, as `toolbelt tools` lists them);
//! * built-in tools need none.

use serde_json::Value;
use toolbelt_core::Registry;
use toolbelt_mcp::client::names::servers_of;

/// The servers among `all` that `calls` (tool name and input) need, in `all`'s order;
/// `registry` holds the built-in tools (the upstream ones have not joined yet).
pub(super) fn needed(all: &[&str], registry: &Registry, calls: &[(&str, &Value)]) -> Vec<String> {
    let mut needed: Vec<&str> = Vec::new();
    for (name, input) in calls {
        let canonical = registry.lookup(name).map(|e| e.spec().name.clone()).unwrap_or_default();
        let lower = name.to_ascii_lowercase();
        let wanted: Vec<&str> = if lower.starts_with("mcp__") && canonical.is_empty() {
            match servers_of(name, all.iter().copied()) {
                found if found.is_empty() => all.to_vec(),
                found => found,
            }
        } else if canonical == "ToolSearch" {
            all.to_vec()
        } else if canonical.is_empty() && (lower.contains("mcpresource") || lower.contains("mcp_resource")) {
            match input.get("server").and_then(Value::as_str) {
                Some(server) if all.contains(&server) => vec![server],
                _ => all.to_vec(),
            }
        } else {
            Vec::new()
        };
        needed.extend(wanted);
    }
    all.iter().filter(|s| needed.contains(s)).map(|s| (*s).to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_needs_the_servers_it_names() {
        let registry = crate::builtin_registry();
        let all = ["github", "fs", "docs"];
        let need = |calls: &[(&str, Value)]| {
            let calls: Vec<(&str, &Value)> = calls.iter().map(|(n, v)| (*n, v)).collect();
            needed(&all, &registry, &calls)
        };
        assert_eq!(need(&[("mcp__fs__read_file", json!({}))]), ["fs"]);
        assert_eq!(need(&[("mcp__fs__x", json!({})), ("mcp__github__y", json!({}))]), ["github", "fs"]);
        assert_eq!(need(&[("mcp__nope__x", json!({}))]), all, "an unknown server: all, for suggestions");
        assert_eq!(need(&[("tool_search", json!({"query": "x"}))]), all);
        assert_eq!(need(&[("ListMcpResources", json!({"server": "docs"}))]), ["docs"]);
        assert_eq!(need(&[("read_mcp_resource", json!({"server": "nope", "uri": "x"}))]), all);
        assert!(need(&[("Read", json!({})), ("Bash", json!({}))]).is_empty());
    }
}
