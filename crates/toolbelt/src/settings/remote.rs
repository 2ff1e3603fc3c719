//! The settings of the tools that reach the user's own endpoints: `[message.channels.NAME]`,
//! where `Message` may send ([`toolbelt_tools::web::ChannelConfig`]'s format), and
//! `[triggers.NAME]`, what `RemoteTrigger` may call ([`toolbelt_tools::web::TriggerConfig`]'s),
//! and `[cron.triggers.NAME]`, the incoming triggers that start jobs
//! ([`crate::jobs::IncomingTrigger`]'s).
//!
//! # Whose settings these are
//!
//! The user's only. A channel or a trigger pairs an address with secrets from the user's
//! environment; a project's own files (`.toolbelt/config*.toml`) defining one could send the
//! user's messages, and the secrets they name, to its own server. They are ignored with a
//! notice, trusted or not.

use std::collections::BTreeMap;
use std::path::Path;

use toolbelt_tools::web::{ChannelConfig, TriggerConfig};

use super::trust::is_project_layer;
use super::winner::named_winner;
use super::{Entry, Problem};
use crate::settings::schema::Key;

/// The channels the entries define, by name; each mistake a problem at its place.
pub(super) fn channels(entries: &[Entry], problems: &mut Vec<Problem>, home: &Path) -> BTreeMap<String, ChannelConfig> {
    named(entries, problems, Key::MESSAGE_CHANNELS, |value| ChannelConfig::from_table(value, home))
}

/// The triggers the entries define, by name; each mistake a problem at its place.
pub(super) fn triggers(entries: &[Entry], problems: &mut Vec<Problem>) -> BTreeMap<String, TriggerConfig> {
    named(entries, problems, Key::TRIGGERS, TriggerConfig::from_table)
}

/// The incoming triggers the entries define, by name; each mistake a problem at its place.
pub(super) fn incoming_triggers(
    entries: &[Entry],
    problems: &mut Vec<Problem>,
) -> BTreeMap<String, crate::jobs::IncomingTrigger> {
    named(entries, problems, Key::CRON_TRIGGERS, crate::jobs::IncomingTrigger::from_table)
}

/// Each table of the family `key`, read by `read`.
fn named<T>(
    entries: &[Entry],
    problems: &mut Vec<Problem>,
    key: Key,
    read: impl Fn(&serde_json::Value) -> Result<T, String>,
) -> BTreeMap<String, T> {
    let mut names: Vec<&str> = entries.iter().filter_map(|e| key.name_in(&e.key)).collect();
    names.sort_unstable();
    names.dedup();
    let mut read_ones = BTreeMap::new();
    for name in names {
        let Some(entry) = named_winner(entries, key, name) else { continue };
        match read(&entry.value) {
            Ok(one) => {
                read_ones.insert(name.to_string(), one);
            }
            Err(message) => problems.push(Problem { origin: entry.origin.clone(), key: entry.key.clone(), message }),
        }
    }
    read_ones
}

/// Drops the channels and triggers a project's files define, and their `cron.max_age_days`,
/// saying so.
pub(super) fn keep_user_endpoints(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        // How long the durable jobs a project's sessions got approved keep running is the
        // user's call too.
        if Key::CRON_MAX_AGE_DAYS.matches(&e.key) && is_project_layer(e.origin.layer) {
            notices.push(format!(
                "{} in {} is ignored: how long scheduled jobs live is set in your own settings \
                 (~/.config/toolbelt/config.toml), never by a project",
                e.key, e.origin
            ));
            return false;
        }
        let ours = Key::MESSAGE_CHANNELS.matches(&e.key)
            || Key::TRIGGERS.matches(&e.key)
            || Key::CRON_TRIGGERS.matches(&e.key);
        let dropped = ours && is_project_layer(e.origin.layer);
        if dropped {
            notices.push(format!(
                "{} in {} is ignored: message channels and triggers (where requests go, with which of your secrets) \
                 are set in your own settings (~/.config/toolbelt/config.toml), never by a project",
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
    fn channels_and_triggers_are_read_and_a_project_cannot_define_one() {
        let mut entries = vec![
            entry(Layer::User, "message.channels.ops", json!({"kind": "slack", "url_env": "SLACK_URL"})),
            entry(Layer::User, "message.channels.bad", json!({"kind": "pager"})),
            entry(Layer::Project, "message.channels.leak", json!({"kind": "webhook", "url": "https://evil.example/"})),
            entry(Layer::User, "triggers.deploy", json!({"url": "https://ci.example/run/{ref}"})),
            entry(Layer::User, "triggers.anywhere", json!({"url": "https://{host}/x"})),
            entry(Layer::Local, "triggers.steal", json!({"url": "https://evil.example/"})),
        ];
        let mut notices = Vec::new();
        keep_user_endpoints(&mut entries, &mut notices);
        assert_eq!(notices.len(), 2);
        assert!(notices[0].contains("message.channels.leak") && notices[0].contains("never by a project"));
        assert!(notices[1].contains("triggers.steal"));
        let mut problems = Vec::new();
        let channels = channels(&entries, &mut problems, Path::new("/home/u"));
        assert_eq!(channels.keys().collect::<Vec<_>>(), ["ops"]);
        let triggers = triggers(&entries, &mut problems);
        assert_eq!(triggers.keys().collect::<Vec<_>>(), ["deploy"]);
        assert_eq!(problems.len(), 2);
        assert!(problems[0].message.contains("unknown kind `pager`"), "{:?}", problems[0].message);
        assert!(problems[1].message.contains("must be written out"), "{:?}", problems[1].message);
    }

    #[test]
    fn incoming_triggers_and_job_lifetimes_are_the_user_s() {
        let mut entries = vec![
            entry(Layer::User, "cron.triggers.ci", json!({"token_env": "CI_TOKEN", "prompt": "look"})),
            entry(Layer::User, "cron.triggers.both", json!({"token_env": "T", "prompt": "p", "tool": "Glob"})),
            entry(Layer::User, "cron.triggers.open", json!({"tool": "Glob"})),
            entry(Layer::Project, "cron.triggers.pwn", json!({"token_env": "HOME", "tool": "Bash"})),
            entry(Layer::Project, "cron.max_age_days", json!(0)),
            entry(Layer::User, "cron.max_age_days", json!(3)),
        ];
        let mut notices = Vec::new();
        keep_user_endpoints(&mut entries, &mut notices);
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices.iter().any(|n| n.contains("cron.triggers.pwn")), "{notices:?}");
        assert!(notices.iter().any(|n| n.contains("cron.max_age_days") && n.contains("never by a project")));
        assert_eq!(entries.iter().filter(|e| e.key == "cron.max_age_days").count(), 1);
        let mut problems = Vec::new();
        let incoming = incoming_triggers(&entries, &mut problems);
        assert_eq!(incoming.keys().collect::<Vec<_>>(), ["ci"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.message.contains("either a `prompt` or a `tool`")), "{problems:?}");
        assert!(problems.iter().any(|p| p.message.contains("needs token_env")), "{problems:?}");
    }
}
