//! The `[lint]` settings: which linters the `Lint` tool runs, and for how long.
//!
//! ```toml
//! [lint]
//! defaults = true        # clippy, ruff, eslint and shellcheck where the project uses them
//! timeout = 600          # seconds one Lint call may take
//!
//! [lint.linters.mypy]
//! command = "mypy --show-column-numbers --cache-dir=/dev/null {path}"   # bash; {path}: the path linted
//! format = "lines"                            # cargo, ruff, eslint, shellcheck, sarif or lines
//! extensions = ["py"]                         # runs when such files are there
//! root_markers = ["pyproject.toml"]           # runs in the nearest folder holding one
//! ```
//!
//! A linter named like a default (`ruff`) replaces it. A project's own `[lint.linters.*]`
//! runs programs, so like every project setting it waits until the project is trusted.

use std::time::Duration;

use toolbelt_tools::code::linters::{LintSettings, spec_from_json};

use super::winner::{named_winner, winner};
use super::{Entry, Problem};
use crate::settings::schema::Key;

/// The lint settings the entries give; each bad linter a problem at its place.
pub(super) fn resolve(entries: &[Entry], problems: &mut Vec<Problem>) -> LintSettings {
    let defaults = LintSettings::default();
    let mut settings = LintSettings {
        use_defaults: winner(entries, Key::LINT_DEFAULTS).and_then(|e| e.value.as_bool()).unwrap_or(true),
        timeout: winner(entries, Key::LINT_TIMEOUT)
            .and_then(|e| e.value.as_u64())
            .map_or(defaults.timeout, Duration::from_secs),
        ..defaults
    };
    let mut names: Vec<&str> = entries.iter().filter_map(|e| Key::LINT_LINTERS.name_in(&e.key)).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let Some(entry) = named_winner(entries, Key::LINT_LINTERS, name) else { continue };
        match spec_from_json(name, &entry.value, &entry.origin.to_string()) {
            Ok(spec) => settings.linters.push(spec),
            Err(why) => problems.push(Problem {
                origin: entry.origin.clone(),
                key: entry.key.clone(),
                message: format!("{why}; a linter takes command, format, extensions, root_markers"),
            }),
        }
    }
    settings
}
