//! The environment a command gets: toolbelt's own, without its secrets, and with git made
//! unable to start programs a repository names.
//!
//! **Secrets.** A command inherits toolbelt's environment, which may hold the MCP server's
//! bearer token, an upstream server's token and the user's provider keys; `env` would print
//! them to the model. So variables are removed when their name matches a pattern of
//! [`BashConfig::env_remove`] (by default [`DEFAULT_ENV_REMOVE`]: `*TOKEN*`, `*SECRET*`,
//! `*_KEY`, …, without case) unless it matches [`BashConfig::env_keep`], and the variables
//! toolbelt itself reads secrets from ([`BashConfig::secret_vars`]) are removed whatever
//! the patterns say.
//!
//! **Git.** Every command runs with command-line-scope git configuration (through
//! `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, appended after any the user
//! set, so it wins): `core.fsmonitor=false`, so no `git status` starts a monitor a repository
//! names, and `safe.bareRepository=explicit`, so a bare repository committed inside the
//! workspace (`git -C evil log -p`) is not used unless named with `--git-dir` (which the
//! read-only classifier never accepts). The pager is `cat` (`GIT_PAGER`). Programs that a
//! repository's own `.git/config` names for textconv, external diff or filters cannot be
//! switched off this way; that file is a protected path no tool writes without approval, the
//! sandbox keeps it read-only, and a clone never carries it.

use std::ffi::OsString;

use crate::shell::support::config::BashConfig;

/// Variables removed from every command's environment by default (without case; `*` is any
/// run of characters).
pub const DEFAULT_ENV_REMOVE: &[&str] =
    &["*TOKEN*", "*SECRET*", "*_KEY", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*API_KEY*", "*PRIVATE_KEY*"];

/// Git configuration every command runs with.
const GIT_CONFIG: &[(&str, &str)] = &[("core.fsmonitor", "false"), ("safe.bareRepository", "explicit")];

/// The variables that give a git process [`GIT_CONFIG`] and then `extra`, appended after the
/// user's own `GIT_CONFIG_COUNT` entries (so they win): what toolbelt sets for every git it
/// runs, in commands and in the tools that run git themselves.
pub(crate) fn git_config_env(extra: &[(String, String)]) -> Vec<(String, String)> {
    git_config(std::env::var("GIT_CONFIG_COUNT").ok().as_deref(), extra)
}

/// Sets up a command's environment; see the module docs.
pub fn apply(command: &mut tokio::process::Command, config: &BashConfig) {
    for name in removed(std::env::vars_os().map(|(k, _)| k), config) {
        command.env_remove(name);
    }
    for (key, value) in git_config_env(&[]) {
        command.env(key, value);
    }
}

/// The names among `names` a command must not get.
fn removed(names: impl Iterator<Item = OsString>, config: &BashConfig) -> Vec<OsString> {
    names
        .filter(|name| {
            let Some(text) = name.to_str() else { return false };
            if config.secret_vars.iter().any(|s| s == text) {
                return true;
            }
            let hit = |patterns: &[String]| patterns.iter().any(|p| matches(p, text));
            hit(&config.env_remove) && !hit(&config.env_keep)
        })
        .collect()
}

/// The variables that append [`GIT_CONFIG`] and `extra` to the user's own `GIT_CONFIG_COUNT`
/// entries.
fn git_config(user_count: Option<&str>, extra: &[(String, String)]) -> Vec<(String, String)> {
    let first = user_count.and_then(|c| c.trim().parse::<usize>().ok()).unwrap_or(0);
    let pairs = GIT_CONFIG.iter().map(|(k, v)| (*k, *v)).chain(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut vars = Vec::new();
    let mut count = first;
    for (key, value) in pairs {
        vars.push((format!("GIT_CONFIG_KEY_{count}"), key.to_string()));
        vars.push((format!("GIT_CONFIG_VALUE_{count}"), value.to_string()));
        count += 1;
    }
    vars.push(("GIT_CONFIG_COUNT".to_string(), count.to_string()));
    vars
}

/// `*` matches any run of characters; the rest compares without case.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.to_ascii_uppercase(), name.to_ascii_uppercase());
    let pieces: Vec<&str> = pattern.split('*').collect();
    let Some((first, rest)) = pieces.split_first() else { return false };
    let Some(mut remaining) = name.strip_prefix(first) else { return false };
    let Some((last, middle)) = rest.split_last() else { return remaining.is_empty() };
    for piece in middle {
        match remaining.find(piece) {
            Some(at) => remaining = &remaining[at + piece.len()..],
            None => return false,
        }
    }
    remaining.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_removed_unless_kept() {
        let config = BashConfig {
            env_keep: vec!["GITHUB_TOKEN".into()],
            secret_vars: vec!["MY_SERVER_PASS".into()],
            ..BashConfig::default()
        };
        let names = [
            "PATH",
            "HOME",
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "OPENAI_API_KEY",
            "anthropic_api_key",
            "DB_PASSWORD",
            "MY_SERVER_PASS",
            "KEYBOARD",
            "TERM",
        ];
        let gone: Vec<OsString> = removed(names.iter().map(OsString::from), &config);
        let gone: Vec<&str> = gone.iter().filter_map(|n| n.to_str()).collect();
        assert_eq!(
            gone,
            [
                "NPM_TOKEN",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN",
                "OPENAI_API_KEY",
                "anthropic_api_key",
                "DB_PASSWORD",
                "MY_SERVER_PASS"
            ]
        );
    }

    #[test]
    fn git_configuration_is_appended_to_the_user_s() {
        let vars = git_config(None, &[]);
        assert!(vars.contains(&("GIT_CONFIG_KEY_0".into(), "core.fsmonitor".into())));
        assert!(vars.contains(&("GIT_CONFIG_COUNT".into(), "2".into())));
        let vars = git_config(Some("3"), &[]);
        assert!(vars.contains(&("GIT_CONFIG_KEY_3".into(), "core.fsmonitor".into())));
        assert!(vars.contains(&("GIT_CONFIG_VALUE_4".into(), "explicit".into())));
        assert!(vars.contains(&("GIT_CONFIG_COUNT".into(), "5".into())));
        // A tool's own entries come after those.
        let vars = git_config(Some("1"), &[("core.hooksPath".into(), "/dev/null".into())]);
        assert!(vars.contains(&("GIT_CONFIG_KEY_3".into(), "core.hooksPath".into())));
        assert!(vars.contains(&("GIT_CONFIG_VALUE_3".into(), "/dev/null".into())));
        assert!(vars.contains(&("GIT_CONFIG_COUNT".into(), "4".into())));
    }

    #[test]
    fn patterns() {
        assert!(matches("*TOKEN*", "gh_token_x") && matches("*_KEY", "API_KEY") && !matches("*_KEY", "KEYS"));
        assert!(matches("EXACT", "exact") && !matches("EXACT", "EXACTLY"));
    }
}
