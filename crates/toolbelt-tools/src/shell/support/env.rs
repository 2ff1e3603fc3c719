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

/// What a command's environment changes from toolbelt's, in order (a variable set, or
/// removed when None); see the module docs.
pub fn changes(config: &BashConfig) -> Vec<(OsString, Option<OsString>)> {
    let mut changes: Vec<(OsString, Option<OsString>)> =
        removed(std::env::vars_os().map(|(k, _)| k), config).into_iter().map(|name| (name, None)).collect();
    for (key, value) in git_config(std::env::var("GIT_CONFIG_COUNT").ok().as_deref()) {
        changes.push((key.into(), Some(value.into())));
    }
    changes
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

/// The variables that append [`GIT_CONFIG`] to the user's own `GIT_CONFIG_COUNT` entries.
fn git_config(user_count: Option<&str>) -> Vec<(String, String)> {
    let first = user_count.and_then(|c| c.trim().parse::<usize>().ok()).unwrap_or(0);
    let mut vars = Vec::new();
    for (i, (key, value)) in GIT_CONFIG.iter().enumerate() {
        vars.push((format!("GIT_CONFIG_KEY_{}", first + i), (*key).to_string()));
        vars.push((format!("GIT_CONFIG_VALUE_{}", first + i), (*value).to_string()));
    }
    vars.push(("GIT_CONFIG_COUNT".to_string(), (first + GIT_CONFIG.len()).to_string()));
    vars
}

/// `*` matches any run of characters; the rest compares without (ASCII) case. Allocates
/// nothing: every command checks every variable against every pattern.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.as_bytes(), name.as_bytes());
    let mut pieces = pattern.split(|&b| b == b'*');
    let Some(first) = pieces.next() else { return false };
    if name.len() < first.len() || !name[..first.len()].eq_ignore_ascii_case(first) {
        return false;
    }
    let mut remaining = &name[first.len()..];
    let Some(mut last) = pieces.next() else { return remaining.is_empty() };
    for piece in pieces {
        // `last` is a middle piece: the first place it appears.
        if !last.is_empty() {
            match remaining.windows(last.len()).position(|w| w.eq_ignore_ascii_case(last)) {
                Some(at) => remaining = &remaining[at + last.len()..],
                None => return false,
            }
        }
        last = piece;
    }
    remaining.len() >= last.len() && remaining[remaining.len() - last.len()..].eq_ignore_ascii_case(last)
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
        let vars = git_config(None);
        assert!(vars.contains(&("GIT_CONFIG_KEY_0".into(), "core.fsmonitor".into())));
        assert!(vars.contains(&("GIT_CONFIG_COUNT".into(), "2".into())));
        let vars = git_config(Some("3"));
        assert!(vars.contains(&("GIT_CONFIG_KEY_3".into(), "core.fsmonitor".into())));
        assert!(vars.contains(&("GIT_CONFIG_VALUE_4".into(), "explicit".into())));
        assert!(vars.contains(&("GIT_CONFIG_COUNT".into(), "5".into())));
    }

    #[test]
    fn patterns() {
        assert!(matches("*TOKEN*", "gh_token_x") && matches("*_KEY", "API_KEY") && !matches("*_KEY", "KEYS"));
        assert!(matches("EXACT", "exact") && !matches("EXACT", "EXACTLY"));
        assert!(matches("*", "") && matches("**", "x") && matches("A*B*C", "aXbYc") && !matches("A*B*C", "aXcYb"));
        assert!(matches("*AB*AB", "ABAB") && !matches("*AB*AB", "AB") && matches("A*", "a") && !matches("A*", "b"));
        assert!(!matches("ABC*", "AB") && matches("*é*", "xéx") && !matches("", "x") && matches("", ""));
    }
}
