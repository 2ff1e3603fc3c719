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
    cmd.current_dir(root);
    isolate(&mut cmd, home);
    cmd
}

/// Sets `cmd` (toolbelt, or a program that starts it: an MCP client, an example) to run with
/// its home, settings, state, data and cache directories beneath `home`, as in CI (nobody at a
/// terminal to ask), with nothing of the machine's leaking in: no `TOOLBELT_*` variable (log
/// filter, managed settings, `TOOLBELT_SECTION__KEY` settings) or `OTEL_*`, no model provider,
/// proxy or search key. The one place the binary tests say what "hermetic" means.
pub fn isolate<'c>(cmd: &'c mut Command, home: &Path) -> &'c mut Command {
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("CI", "true");
    for (name, _) in std::env::vars_os() {
        // Nor the machine's OpenTelemetry export: a test that wants one sets OTEL_* itself.
        if name.to_string_lossy().starts_with("TOOLBELT_") || name.to_string_lossy().starts_with("OTEL_") {
            cmd.env_remove(name);
        }
    }
    // Named as well, in case the test itself set them for this command before.
    cmd.env_remove("TOOLBELT_MANAGED_CONFIG").env_remove("TOOLBELT_LOG");
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
    // Nor its PowerShell: the tool is offered only where `pwsh` is on PATH, and a test that
    // wants it puts a stand-in first on PATH.
    if let Some(path) = std::env::var_os("PATH") {
        let kept: Vec<std::path::PathBuf> =
            std::env::split_paths(&path).filter(|dir| !dir.join("pwsh").exists()).collect();
        if let Ok(joined) = std::env::join_paths(kept) {
            cmd.env("PATH", joined);
        }
    }
    cmd
}

/// Every file below `dir` (none when it does not exist).
pub fn files_below(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_below(&path));
        } else {
            out.push(path);
        }
    }
    out
}
