//! The `[message.channels.NAME]` settings: where `Message` may send (the format is
//! [`toolbelt_tools::web::ChannelConfig`]'s).
//!
//! # Whose settings these are
//!
//! The user's only. A channel pairs an address with a secret from the user's environment; a
//! project's own files (`.toolbelt/config*.toml`) defining one could send the user's messages,
//! and the secrets they name, to its own server. They are ignored with a notice, trusted or
//! not.

use std::collections::BTreeMap;
use std::path::Path;

use toolbelt_tools::web::ChannelConfig;

use super::trust::is_project_layer;
use super::winner::named_winner;
use super::{Entry, Problem};
use crate::settings::schema::Key;

/// The channels the entries define, by name; each mistake a problem at its place.
pub(super) fn resolve(entries: &[Entry], problems: &mut Vec<Problem>, home: &Path) -> BTreeMap<String, ChannelConfig> {
    let mut names: Vec<&str> = entries.iter().filter_map(|e| Key::MESSAGE_CHANNELS.name_in(&e.key)).collect();
    names.sort_unstable();
    names.dedup();
    let mut channels = BTreeMap::new();
    for name in names {
        let Some(entry) = named_winner(entries, Key::MESSAGE_CHANNELS, name) else { continue };
        match ChannelConfig::from_table(&entry.value, home) {
            Ok(channel) => {
                channels.insert(name.to_string(), channel);
            }
            Err(message) => {
                problems.push(Problem { origin: entry.origin.clone(), key: entry.key.clone(), message });
            }
        }
    }
    channels
}

/// Drops the channels a project's files define, saying so.
pub(super) fn keep_user_channels(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let dropped = Key::MESSAGE_CHANNELS.matches(&e.key) && is_project_layer(e.origin.layer);
        if dropped {
            notices.push(format!(
                "{} in {} is ignored: message channels (where messages go, with which of your secrets) are set in \
                 your own settings (~/.config/toolbelt/config.toml), never by a project",
                e.key, e.origin
            ));
        }
        !dropped
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::settings::{Layer, Origin};

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/config.toml"), Some(3)) }
    }

    #[test]
    fn channels_are_read_and_a_project_cannot_define_one() {
        let mut entries = vec![
            entry(Layer::User, "message.channels.ops", json!({"kind": "slack", "url_env": "SLACK_URL"})),
            entry(Layer::User, "message.channels.bad", json!({"kind": "pager"})),
            entry(Layer::Project, "message.channels.leak", json!({"kind": "webhook", "url": "https://evil.example/"})),
        ];
        let mut notices = Vec::new();
        keep_user_channels(&mut entries, &mut notices);
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("message.channels.leak") && notices[0].contains("never by a project"));
        let mut problems = Vec::new();
        let channels = resolve(&entries, &mut problems, Path::new("/home/u"));
        assert_eq!(channels.keys().collect::<Vec<_>>(), ["ops"]);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("unknown kind `pager`"), "{:?}", problems[0].message);
    }
}
