//! Claude Code's settings files (`settings.json`) read into entries: the permissions and the
//! hooks apply as they are; other keys (model, env, statusLine…) are Claude Code's own and
//! are left alone.

use std::path::Path;

use serde_json::Value;
use toolbelt_policy::HookEvent;

use super::{Entry, Layer, Origin, Problem, line_of};
use crate::settings::schema::Key;

/// Claude Code's permission keys and ours.
const PERMISSION_KEYS: &[(&str, Key)] = &[
    ("allow", Key::PERMISSIONS_ALLOW),
    ("ask", Key::PERMISSIONS_ASK),
    ("deny", Key::PERMISSIONS_DENY),
    ("additionalDirectories", Key::PERMISSIONS_ADDITIONAL_DIRECTORIES),
];

pub(super) fn entries(layer: Layer, file: &Path, text: &str, out: &mut Vec<Entry>, problems: &mut Vec<Problem>) {
    let Some(root) = parse(layer, file, text, problems) else { return };
    // JSON parsers keep no positions: a value's line is where its text first appears.
    let line = |needle: &str| text.find(needle).map(|at| line_of(text, at));
    let origin = |line: Option<usize>| Origin::file(layer, file, line);
    let mut push = |key: Key, value: Value, line: Option<usize>| {
        out.push(Entry { key: key.to_string(), value, origin: origin(line) });
    };

    if let Some(permissions) = root.get("permissions").and_then(Value::as_object) {
        for (theirs, ours) in PERMISSION_KEYS {
            match permissions.get(*theirs) {
                Some(Value::Array(items)) => {
                    for item in items {
                        let at = item.as_str().and_then(|s| line(&serde_json::to_string(s).unwrap_or_default()));
                        push(*ours, item.clone(), at);
                    }
                }
                Some(other) => push(*ours, other.clone(), line(&format!("\"{theirs}\""))),
                None => {}
            }
        }
        if let Some(mode) = permissions.get("defaultMode") {
            push(Key::PERMISSIONS_MODE, mode.clone(), line("\"defaultMode\""));
        }
        if let Some(Value::String(setting)) = permissions.get("disableBypassPermissionsMode") {
            push(
                Key::PERMISSIONS_DISABLE_BYPASS,
                Value::Bool(setting == "disable"),
                line("\"disableBypassPermissionsMode\""),
            );
        }
    }
    if let Some(hooks) = root.get("hooks").and_then(Value::as_object) {
        for (event, groups) in hooks {
            let at = line(&format!("\"{event}\""));
            let Some(key) = HookEvent::parse(event).map(Key::hook) else {
                // Claude Code has events toolbelt does not run (UserPromptSubmit, Stop…).
                tracing::debug!(file = %file.display(), "Claude Code hook event {event} has no toolbelt equivalent; skipped");
                continue;
            };
            match groups {
                Value::Array(groups) => groups.iter().for_each(|g| push(key, g.clone(), at)),
                other => push(key, other.clone(), at),
            }
        }
    }
}

/// The fields of an `.mcp.json` server entry toolbelt uses; others (Claude Code's own) are
/// left out rather than refused.
const MCP_FIELDS: &[&str] = &["type", "command", "args", "env", "cwd", "url", "headers"];

/// A project's `.mcp.json` (`{"mcpServers": {"name": {command, args, env} | {type, url,
/// headers}}}`) read into `mcp.servers.<name>` entries.
pub(super) fn mcp_json_entries(
    layer: Layer,
    file: &Path,
    text: &str,
    out: &mut Vec<Entry>,
    problems: &mut Vec<Problem>,
) {
    let Some(root) = parse(layer, file, text, problems) else { return };
    let Some(servers) = root.get("mcpServers").and_then(Value::as_object) else { return };
    for (name, server) in servers {
        let line = text.find(&format!("\"{name}\"")).map(|at| line_of(text, at));
        let value = match server.as_object() {
            Some(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(k, _)| MCP_FIELDS.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            None => server.clone(),
        };
        out.push(Entry { key: Key::MCP_SERVERS.named(name), value, origin: Origin::file(layer, file, line) });
    }
}

/// The file as JSON, or a problem naming the line where it stops being JSON.
fn parse(layer: Layer, file: &Path, text: &str, problems: &mut Vec<Problem>) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(v) => Some(v),
        Err(e) => {
            let origin = Origin::file(layer, file, Some(e.line()));
            problems.push(Problem { origin, key: String::new(), message: format!("not valid JSON: {e}") });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn permissions_and_hooks_import_as_they_are() {
        let text = r#"{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run test *)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)"],
    "defaultMode": "acceptEdits",
    "additionalDirectories": ["../docs/"]
  },
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "x"}]}]
  }
}"#;
        let (mut out, mut problems) = (Vec::new(), Vec::new());
        entries(Layer::ClaudeProject, Path::new("/p/.claude/settings.json"), text, &mut out, &mut problems);
        assert!(problems.is_empty());
        let got: Vec<(String, Value, Option<usize>)> =
            out.into_iter().map(|e| (e.key, e.value, e.origin.line)).collect();
        assert_eq!(
            got,
            vec![
                ("permissions.allow".into(), json!("Bash(npm run test *)"), Some(4)),
                ("permissions.allow".into(), json!("Read(~/.zshrc)"), Some(4)),
                ("permissions.deny".into(), json!("Read(./.env)"), Some(5)),
                ("permissions.additional_directories".into(), json!("../docs/"), Some(7)),
                ("permissions.mode".into(), json!("acceptEdits"), Some(6)),
                (
                    "hooks.PreToolUse".into(),
                    json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}),
                    Some(10)
                ),
            ]
        );
    }
}
