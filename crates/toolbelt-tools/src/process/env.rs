//! The environment a command gets: toolbelt's own, without its secrets, and with git made
//! unable to start programs a repository names.
//!
//! **Secrets.** A command inherits toolbelt's environment, which may hold the MCP server's
//! bearer token, an upstream server's token and the user's provider keys; `env` would print
//! them to the model. So variables are removed when their name matches a pattern of
//! [`BashConfig::env_remove`] (by default [`DEFAULT_ENV_REMOVE`](crate::process::config::DEFAULT_ENV_REMOVE): `*TOKEN*`, `*SECRET*`,
//! `*_KEY`, `*_PAT`, `*_PASS`, `SSH_AUTH_SOCK`…, without case) or their value looks like a
//! secret ([`looks_secret`]: a URL with a password, a provider's token), unless the name
//! matches [`BashConfig::env_keep`]; the variables toolbelt itself reads secrets from
//! ([`BashConfig::secret_vars`]) are removed whatever the patterns say. `SSH_AUTH_SOCK` is
//! among them because the agent's socket signs with the user's keys for whoever reaches it.
//!
//! **Git.** Every command runs with command-line-scope git configuration (through
//! `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, appended after any the user
//! set, so it wins): `core.fsmonitor=false`, so no `git status` starts a monitor a repository
//! names, and `safe.bareRepository=explicit`, so a bare repository committed inside the
//! workspace (`git -C evil log -p`) is not used unless named with `--git-dir` (which the
//! read-only classifier never accepts). The pager is `cat` (`GIT_PAGER`). Programs that a
//! repository's own `.git/config` names for textconv, external diff or filters cannot be
//! switched off this way; that file is a protected path no tool writes without approval, the
//! sandbox keeps it read-only, and a clone never carries it — and until a person trusted
//! the project, a read-only command running git where it names one asks
//! (the shell's `git_programs`).

use std::ffi::OsString;
use std::sync::{Mutex, PoisonError};

use crate::process::config::BashConfig;
use crate::process::secret_values::looks_secret;

/// Git configuration every command runs with.
const GIT_CONFIG: &[(&str, &str)] = &[("core.fsmonitor", "false"), ("safe.bareRepository", "explicit")];

/// The variables that give a git process [`GIT_CONFIG`] and then `extra`, appended after the
/// user's own `GIT_CONFIG_COUNT` entries (so they win): what toolbelt sets for every git it
/// runs, in commands and in the tools that run git themselves.
pub(crate) fn git_config_env(extra: &[(String, String)]) -> Vec<(String, String)> {
    git_config(std::env::var("GIT_CONFIG_COUNT").ok().as_deref(), extra)
}

/// What a command's environment changes from toolbelt's, in order (a variable set, or
/// removed when None); see the module docs.
pub fn changes(config: &BashConfig) -> Vec<(OsString, Option<OsString>)> {
    let mut changes: Vec<(OsString, Option<OsString>)> =
        removed(std::env::vars_os(), config).into_iter().map(|name| (name, None)).collect();
    for (key, value) in git_config_env(&[]) {
        changes.push((key.into(), Some(value.into())));
    }
    changes
}

/// The names among `vars` a command must not get. Matching every variable against every
/// pattern and shape costs more than the rest of a command's set-up in the server, and the
/// answer only changes with the variables and the settings: the last few answers are kept,
/// with what they were for (sessions with different settings take turns).
fn removed(vars: impl Iterator<Item = (OsString, OsString)>, config: &BashConfig) -> Vec<OsString> {
    type Key = (Vec<(OsString, OsString)>, Vec<String>, Vec<String>, Vec<String>);
    static KEPT: Mutex<Vec<(Key, Vec<OsString>)>> = Mutex::new(Vec::new());
    const KEEP: usize = 4;
    let key: Key = (vars.collect(), config.env_remove.clone(), config.env_keep.clone(), config.secret_vars.clone());
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, removed)) = kept.iter().find(|(k, _)| *k == key) {
        return removed.clone();
    }
    let remove: Vec<Pattern> = config.env_remove.iter().map(|p| Pattern::new(p)).collect();
    let keep: Vec<Pattern> = config.env_keep.iter().map(|p| Pattern::new(p)).collect();
    let removed: Vec<OsString> = key
        .0
        .iter()
        .filter(|(name, value)| {
            let Some(text) = name.to_str() else { return false };
            if config.secret_vars.iter().any(|s| s == text) {
                return true;
            }
            let upper = text.to_ascii_uppercase();
            let hit = |patterns: &[Pattern]| patterns.iter().any(|p| p.matches_upper(&upper));
            let secret = hit(&remove) || looks_secret(&value.to_string_lossy());
            secret && !hit(&keep)
        })
        .map(|(name, _)| name.clone())
        .collect();
    if kept.len() >= KEEP {
        kept.remove(0);
    }
    kept.push((key, removed.clone()));
    removed
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

/// A name pattern (`*` matches any run of characters; the rest compares without case), split
/// at its `*`s, in upper case: every command checks every variable
/// against every pattern, so each pattern and each name is put in upper case once.
#[derive(Debug)]
struct Pattern {
    pieces: Vec<String>,
}

impl Pattern {
    fn new(pattern: &str) -> Self {
        Self { pieces: pattern.to_ascii_uppercase().split('*').map(str::to_string).collect() }
    }

    /// Whether `name`, in upper case, matches.
    fn matches_upper(&self, name: &str) -> bool {
        !self.pieces.is_empty() && toolbelt_core::glob_pieces(&self.pieces, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Pattern::new(pattern).matches_upper(&name.to_ascii_uppercase())
    }

    #[test]
    fn secrets_are_removed_unless_kept() {
        let config = BashConfig {
            env_keep: vec!["GITHUB_TOKEN".into()],
            secret_vars: vec!["MY_SERVER_PASS".into()],
            ..BashConfig::default()
        };
        let vars = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/me"),
            ("GITHUB_TOKEN", "x"),
            ("NPM_TOKEN", "x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("AWS_SESSION_TOKEN", "x"),
            ("OPENAI_API_KEY", "x"),
            ("anthropic_api_key", "x"),
            ("DB_PASSWORD", "x"),
            ("MY_SERVER_PASS", "x"),
            ("GH_PAT", "x"),
            ("npm_config__auth", "x"),
            ("SSH_AUTH_SOCK", "/run/agent"),
            ("DATABASE_URL", "postgres://app:pw@db/app"),
            ("GITHUB_TOKEN_URL", "https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com"),
            ("HOMEPAGE", "https://example.com/"),
            ("KEYBOARD", "us"),
            ("BYPASS", "1"),
            ("TERM", "xterm-256color"),
        ];
        let gone: Vec<OsString> = removed(vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))), &config);
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
                "MY_SERVER_PASS",
                "GH_PAT",
                "npm_config__auth",
                "SSH_AUTH_SOCK",
                "DATABASE_URL",
                "GITHUB_TOKEN_URL",
            ]
        );
        // `env_keep` keeps a variable removed for its value too.
        let config = BashConfig { env_keep: vec!["DATABASE_URL".into()], ..BashConfig::default() };
        let vars = [(OsString::from("DATABASE_URL"), OsString::from("postgres://app:pw@db/app"))];
        assert!(removed(vars.into_iter(), &config).is_empty());
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
        assert!(matches("*", "") && matches("**", "x") && matches("A*B*C", "aXbYc") && !matches("A*B*C", "aXcYb"));
        assert!(matches("*AB*AB", "ABAB") && !matches("*AB*AB", "AB") && matches("A*", "a") && !matches("A*", "b"));
        assert!(!matches("ABC*", "AB") && matches("*é*", "xéx") && !matches("", "x") && matches("", ""));
    }
}
