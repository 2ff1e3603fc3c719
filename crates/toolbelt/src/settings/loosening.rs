//! Which of a project's settings loosen the policy, and so need a consent of their own.
//!
//! Trusting a project lets its hooks, MCP servers, language servers, linters and model
//! providers run: code the person reviewed. A setting that instead turns the policy's own
//! questions or confinement off — `bypassPermissions`, an allow rule, the sandbox off or the
//! network on, more directories to reach or write — changes what the *model* may do without
//! asking, in every later session. A plain `toolbelt trust` (or "y" at the terminal) does not
//! apply those: they are flagged in the review and apply only with `toolbelt trust
//! --allow-loosening` (or a second "y"), so a repository cannot slip `allow = ["Bash(*)"]`
//! past a person who meant to let its formatter hook run.

use serde_json::Value;

use toolbelt_policy::PermissionMode;
use toolbelt_tools::shell::{SandboxMode, WhenUnavailable};

use super::Entry;
use crate::settings::schema::Key;

/// Why a project's entry loosens the policy (what it lets happen without a question), or
/// `None` when it does not.
pub fn reason(entry: &Entry) -> Option<&'static str> {
    let text = entry.value.as_str();
    let on = entry.value.as_bool() == Some(true);
    match Key::parse(&entry.key)? {
        Key::PERMISSIONS_MODE => match text.and_then(PermissionMode::parse) {
            Some(PermissionMode::BypassPermissions) => Some("every call runs without asking"),
            Some(PermissionMode::AcceptEdits) => Some("edits run without asking"),
            _ => None,
        },
        Key::PERMISSIONS_ALLOW => Some("runs without asking"),
        Key::PERMISSIONS_ADDITIONAL_DIRECTORIES => Some("the tools reach this directory too"),
        Key::PERMISSIONS_DISABLE_BYPASS => (entry.value == Value::Bool(false)).then_some("allows bypassPermissions"),
        Key::SANDBOX_MODE => (text.and_then(SandboxMode::parse) == Some(SandboxMode::DangerFullAccess))
            .then_some("shell commands run unconfined"),
        Key::SANDBOX_NETWORK => on.then_some("sandboxed commands reach the network"),
        Key::SANDBOX_IF_UNSANDBOXED => (text.and_then(WhenUnavailable::parse) == Some(WhenUnavailable::Run))
            .then_some("commands run unconfined where the sandbox cannot be applied"),
        Key::SANDBOX_WRITABLE_ROOTS => Some("sandboxed commands may write there"),
        Key::SANDBOX_GIT_WRITES => on.then_some("sandboxed commands write git's data"),
        Key::SHELL_ENV_KEEP => Some("shell commands see this variable although it looks like a secret"),
        Key::MCP_ALLOWED_ORIGINS => Some("web pages from this origin may call `toolbelt mcp --http`"),
        Key::MCP_ALLOWED_HOSTS => Some("`toolbelt mcp --http` answers requests naming this host"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::settings::{Layer, Origin};

    fn entry(key: &str, value: Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(Layer::Project, Path::new("/p/c.toml"), Some(1)) }
    }

    #[test]
    fn what_loosens_and_what_does_not() {
        let loose = [
            ("permissions.mode", json!("bypassPermissions")),
            ("permissions.mode", json!("accept-edits")),
            ("permissions.allow", json!("Bash(npm test)")),
            ("permissions.additional_directories", json!("../x")),
            ("permissions.disable_bypass", json!(false)),
            ("sandbox.mode", json!("danger-full-access")),
            ("sandbox.network", json!(true)),
            ("sandbox.if_unsandboxed", json!("run")),
            ("sandbox.writable_roots", json!("/srv")),
            ("sandbox.git_writes", json!(true)),
            ("shell.env_keep", json!("GITHUB_TOKEN")),
            ("mcp.allowed_origins", json!("https://evil.example")),
        ];
        for (key, value) in loose {
            assert!(reason(&entry(key, value.clone())).is_some(), "{key} = {value}");
        }
        let not = [
            ("permissions.mode", json!("plan")),
            ("permissions.mode", json!("default")),
            ("sandbox.mode", json!("read-only")),
            ("sandbox.network", json!(false)),
            ("sandbox.if_unsandboxed", json!("refuse")),
            ("hooks.PreToolUse", json!({"hooks": []})),
            ("mcp.servers.x", json!({"command": "x"})),
            ("runtime.output_budget", json!(1000)),
            ("compat.claude", json!(true)),
        ];
        for (key, value) in not {
            assert!(reason(&entry(key, value.clone())).is_none(), "{key} = {value}");
        }
    }
}
