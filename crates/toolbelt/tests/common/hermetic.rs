//! The `toolbelt` binary set up to run hermetically below a test's temporary directory.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// `toolbelt` run in `root`, with its home, settings and state directories inside `root`
/// and nothing of the user's (log filter, managed settings) leaking in.
pub fn toolbelt(root: &Path) -> Command {
    toolbelt_with_home(root, &root.join(".test-home"))
}

/// [`toolbelt`] with the home directory at `home` (one outside the project, say).
pub fn toolbelt_with_home(root: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
    cmd.current_dir(root)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("CI", "true")
        .env_remove("TOOLBELT_MANAGED_CONFIG")
        .env_remove("TOOLBELT_LOG");
    // No setting of the machine's (`TOOLBELT_SECTION__KEY`) either.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TOOLBELT_") {
            cmd.env_remove(name);
        }
    }
    // No model provider of the machine's: a test that wants one points these at a loopback
    // server.
    for name in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        // Nor its proxy or search keys: web tests reach loopback servers directly.
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "BRAVE_API_KEY",
        "TAVILY_API_KEY",
        "EXA_API_KEY",
    ] {
        cmd.env_remove(name);
    }
    cmd
}
