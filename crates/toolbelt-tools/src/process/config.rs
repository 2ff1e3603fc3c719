//! Settings of the shell tools.

/// Variables removed from every command's environment by default (without case; `*` is any
/// run of characters).
pub const DEFAULT_ENV_REMOVE: &[&str] = &[
    "*TOKEN*",
    "*SECRET*",
    "*_KEY",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PASS",
    "*_PWD",
    "*_PAT",
    "*_AUTH",
    "*CREDENTIAL*",
    "*API_KEY*",
    "*PRIVATE_KEY*",
    "SSH_AUTH_SOCK",
];

/// Settings of `Bash` and the background tasks, set up once by whoever builds the runtime
/// and handed to the tools as a service (`cx.service::<BashConfig>()`); absent means the
/// defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashConfig {
    /// Regular expressions (Rust `regex` syntax) matched anywhere in a command's text; a
    /// command matching any of them is refused. The built-in list of catastrophic commands
    /// applies whatever this holds.
    pub deny_patterns: Vec<String>,
    /// How many background tasks may run at once in one session.
    pub max_background_tasks: usize,
    /// Variables removed from every command's environment: names matching any of these
    /// patterns (`*` wildcards, without case). Defaults to [`DEFAULT_ENV_REMOVE`].
    pub env_remove: Vec<String>,
    /// Variables kept even when a pattern of `env_remove` matches them.
    pub env_keep: Vec<String>,
    /// Variables toolbelt reads secrets from (the MCP server's token, an upstream's token):
    /// always removed.
    pub secret_vars: Vec<String>,
    /// The project a person trusted (`toolbelt trust`), when this session's is one: the git
    /// configuration of the repositories inside it is the user's, so read-only git commands
    /// there may run the programs it names without asking. `None`: no repository's is.
    pub trusted_project: Option<std::path::PathBuf>,
    /// Whether what one Bash call leaves in its shell (exported variables, functions,
    /// aliases, options) is where the next call of the session starts (`shell.persistent`).
    pub persistent: bool,
    /// How many interactive sessions may run at once in one session (`shell.max_sessions`).
    pub max_sessions: usize,
    /// How long an interactive session may sit unused before it is ended
    /// (`shell.session_idle_timeout`).
    pub session_idle_timeout: std::time::Duration,
    /// The replica this process is, when several serve a team: background task ids end
    /// `@replica` (`bash_3@toolbelt-1`), so an id that reaches another replica is told where
    /// its task runs. `None`: plain ids (`bash_3`).
    pub replica: Option<String>,
}

impl Default for BashConfig {
    fn default() -> Self {
        Self {
            deny_patterns: Vec::new(),
            max_background_tasks: 32,
            env_remove: DEFAULT_ENV_REMOVE.iter().map(|p| p.to_string()).collect(),
            env_keep: Vec::new(),
            secret_vars: Vec::new(),
            trusted_project: None,
            persistent: false,
            max_sessions: 8,
            session_idle_timeout: std::time::Duration::from_secs(30 * 60),
            replica: None,
        }
    }
}

impl BashConfig {
    /// The settings in effect for a call: the configured service, else the defaults.
    pub fn in_effect(cx: &toolbelt_core::ToolContext) -> BashConfig {
        cx.service::<BashConfig>().map(|c| (*c).clone()).unwrap_or_default()
    }

    /// Checks the deny patterns compile, so a bad one is reported when the configuration is
    /// loaded rather than on the first command. The error names the pattern.
    pub fn validate(&self) -> Result<(), InvalidDenyPattern> {
        for pattern in &self.deny_patterns {
            if let Err(e) = regex::Regex::new(pattern) {
                return Err(InvalidDenyPattern { pattern: pattern.clone(), reason: e.to_string() });
            }
        }
        Ok(())
    }
}

/// A deny pattern that is not a regular expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidDenyPattern {
    /// The pattern as configured.
    pub pattern: String,
    /// What the regex parser said.
    pub reason: String,
}

impl std::fmt::Display for InvalidDenyPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bash deny pattern `{}` is not a valid regular expression: {}", self.pattern, self.reason)
    }
}

impl std::error::Error for InvalidDenyPattern {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_the_bad_pattern() {
        assert_eq!(BashConfig::default().max_background_tasks, 32);
        let config = BashConfig { deny_patterns: vec!["ok".into(), "[".into()], ..BashConfig::default() };
        assert!(config.validate().unwrap_err().to_string().contains("`[`"));
    }
}
