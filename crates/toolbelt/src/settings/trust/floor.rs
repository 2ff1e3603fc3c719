//! A project never loosens what the user's own settings set: its mode, sandbox, network and
//! `disable_bypass` looser than the user's are dropped, saying so.

use toolbelt_tools::shell::{SandboxMode, WhenUnavailable};

use super::is_project_layer;
use crate::settings::schema::Key;
use crate::settings::{Entry, Layer};

/// Drops the project entries looser than the user's own value of the same key; says why.
pub fn keep_user_floor(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    // Strictest first.
    const ORDERED: &[(Key, &[&str])] =
        &[(Key::SANDBOX_MODE, &SandboxMode::NAMES), (Key::SANDBOX_IF_UNSANDBOXED, &WhenUnavailable::NAMES)];
    // How loose a value is: the higher, the looser.
    let rank = |key: Key, value: &serde_json::Value| -> Option<usize> {
        match key {
            Key::SANDBOX_NETWORK => return value.as_bool().map(usize::from),
            // `true` is the stricter one.
            Key::PERMISSIONS_DISABLE_BYPASS => return value.as_bool().map(|on| usize::from(!on)),
            // The modes' order is the policy's own (`dontAsk` denies what `plan` still asks).
            Key::PERMISSIONS_MODE => {
                let mode = toolbelt_policy::PermissionMode::parse(value.as_str()?)?;
                return Some(usize::from(u8::MAX - mode.strictness()));
            }
            _ => {}
        }
        let (_, order) = ORDERED.iter().find(|(k, _)| *k == key)?;
        let text = value.as_str()?;
        order.iter().position(|v| *v == text)
    };
    let user_rank = |key: Key| {
        entries
            .iter()
            .filter(|e| e.key == key && matches!(e.origin.layer, Layer::User | Layer::ClaudeUser))
            .filter_map(|e| rank(key, &e.value))
            .next_back()
    };
    let floors: Vec<(Key, usize)> = [
        Key::PERMISSIONS_MODE,
        Key::PERMISSIONS_DISABLE_BYPASS,
        Key::SANDBOX_MODE,
        Key::SANDBOX_NETWORK,
        Key::SANDBOX_IF_UNSANDBOXED,
    ]
    .iter()
    .filter_map(|k| user_rank(*k).map(|r| (*k, r)))
    .collect();
    entries.retain(|e| {
        let Some(&(key, floor)) = floors.iter().find(|(k, _)| e.key == *k) else { return true };
        let looser = is_project_layer(e.origin.layer) && rank(key, &e.value).is_some_and(|r| r > floor);
        if looser {
            notices.push(format!(
                "{} = {} in {} is ignored: a project's settings cannot loosen your own ({})",
                e.key, e.value, e.origin, "user settings"
            ));
        }
        !looser
    });
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::settings::Origin;

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/.toolbelt/config.toml"), Some(1)) }
    }

    #[test]
    fn a_project_cannot_loosen_the_user_s_own_settings() {
        let mut entries = vec![
            entry(Layer::User, "sandbox.mode", json!("workspace-write")),
            entry(Layer::Project, "sandbox.mode", json!("danger-full-access")),
            entry(Layer::Project, "sandbox.network", json!(true)),
            entry(Layer::User, "permissions.mode", json!("default")),
            entry(Layer::Local, "permissions.mode", json!("plan")),
            entry(Layer::User, "permissions.disable_bypass", json!(true)),
            entry(Layer::Project, "permissions.disable_bypass", json!(false)),
        ];
        let mut notices = Vec::new();
        keep_user_floor(&mut entries, &mut notices);
        let kept: Vec<(&str, String)> = entries.iter().map(|e| (e.key.as_str(), e.value.to_string())).collect();
        assert_eq!(
            kept,
            [
                ("sandbox.mode", "\"workspace-write\"".to_string()),
                ("sandbox.network", "true".to_string()),
                ("permissions.mode", "\"default\"".to_string()),
                ("permissions.mode", "\"plan\"".to_string()),
                ("permissions.disable_bypass", "true".to_string()),
            ],
            "stricter project values stay; the user never set the network"
        );
        assert_eq!(notices.len(), 2, "{notices:?}");
    }

    #[test]
    fn modes_rank_as_the_policy_ranks_them() {
        // `dontAsk` denies what `plan` still asks about: plan is the looser of the two.
        let mut entries = vec![
            entry(Layer::User, "permissions.mode", json!("dontAsk")),
            entry(Layer::Project, "permissions.mode", json!("plan")),
        ];
        let mut notices = Vec::new();
        keep_user_floor(&mut entries, &mut notices);
        assert_eq!(entries.len(), 1, "{notices:?}");
        assert_eq!(entries[0].value, json!("dontAsk"));
        let mut entries = vec![
            entry(Layer::User, "permissions.mode", json!("plan")),
            entry(Layer::Project, "permissions.mode", json!("dont-ask")),
        ];
        keep_user_floor(&mut entries, &mut notices);
        assert_eq!(entries.len(), 2, "a stricter project mode stays");
    }
}
