//! toolbelt never starts itself as its own upstream server.
//!
//! An MCP host's entry for toolbelt (`{"command": "toolbelt", "args": ["mcp"]}` in a
//! project's `.mcp.json`, where Claude Code reads it) is read by toolbelt too, as one of its
//! upstream servers. Started, that toolbelt reads the same file and starts itself again,
//! without end: hundreds of processes a second, which outlive the host. Two guards:
//!
//! * **This program.** A stdio server whose command is this very executable — looked up on
//!   `PATH` as the child would be (the server's own `PATH` when its `env` sets one), or
//!   relative to its working directory, symlinks followed and compared by file identity, so
//!   a hard link counts too — is not started ([`skip_reason`]); it is reported as skipped,
//!   with why.
//! * **Depth.** Every server process the gateway starts gets [`DEPTH_VAR`], one more than
//!   toolbelt's own (a server's `env` cannot set it). A toolbelt at depth [`MAX_DEPTH`] or
//!   more starts no server process at all, so a chain that leads back to toolbelt through
//!   another program — a wrapper script, `npx`, `sh -c`, a second copy of the binary, an agent
//!   that serves over MCP and starts toolbelt as its own tool server — ends there.
//!
//! Why [`MAX_DEPTH`] is 2 and not 1: a toolbelt started by another program that a toolbelt
//! started (an agent served over MCP that uses toolbelt for its tools) is a legitimate
//! set-up whose own upstream servers should work. Only the level after that, which such a
//! chain reaches by going round, is cut; with one looping entry that is three toolbelts, not
//! an unbounded tree.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use toolbelt_core::vars::expand_env;

use super::config::{UpstreamConfig, UpstreamTransport};

/// The environment variable saying how many gateways started this process (absent: none).
pub const DEPTH_VAR: &str = "TOOLBELT_GATEWAY_DEPTH";

/// From this depth on a toolbelt starts no upstream server process.
pub const MAX_DEPTH: u32 = 2;

/// How many gateways started this process, from [`DEPTH_VAR`] (0 when unset or not a number).
pub fn depth() -> u32 {
    std::env::var(DEPTH_VAR).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// The value of [`DEPTH_VAR`] for a server process this toolbelt starts.
pub(super) fn child_depth() -> String {
    depth().saturating_add(1).to_string()
}

/// Why the server `config` must not be started from here, if it must not: its command is
/// this program, or this toolbelt is already [`MAX_DEPTH`] gateways deep.
pub fn skip_reason(config: &UpstreamConfig) -> Option<String> {
    let UpstreamTransport::Stdio { command, env, cwd, .. } = &config.transport else { return None };
    if let Some(path) = this_program(command, env, cwd.as_deref()) {
        return Some(format!(
            "its command `{command}` is this toolbelt itself ({}): started, it would read these settings and \
             start itself again, without end. toolbelt never starts itself as an upstream server; an MCP host's \
             entry for toolbelt (in .mcp.json) is the host's to start",
            path.display()
        ));
    }
    let depth = depth();
    (depth >= MAX_DEPTH).then(|| {
        format!(
            "this toolbelt was started by another toolbelt's gateway, {depth} servers deep ({DEPTH_VAR}={depth}); \
             at that depth it starts no server process, so a chain of servers that leads back to toolbelt ends here"
        )
    })
}

/// The file `program` runs when started with `env` added to this process's environment in
/// `cwd`, when that file is this very executable.
fn this_program(program: &str, env: &BTreeMap<String, String>, cwd: Option<&Path>) -> Option<PathBuf> {
    let me = this_executable()?;
    let found = find_program(program, env, cwd)?;
    let meta = std::fs::metadata(&found).ok()?;
    ((meta.dev(), meta.ino()) == me).then(|| std::fs::canonicalize(&found).unwrap_or(found))
}

/// The device and inode of this process's executable (read through `/proc/self/exe`, which
/// works even when the file was replaced since it started).
fn this_executable() -> Option<(u64, u64)> {
    static ME: OnceLock<Option<(u64, u64)>> = OnceLock::new();
    *ME.get_or_init(|| {
        let meta = std::fs::metadata("/proc/self/exe")
            .or_else(|_| std::env::current_exe().and_then(std::fs::metadata))
            .ok()?;
        Some((meta.dev(), meta.ino()))
    })
}

/// Where the program of a command is found, as starting it would find it: a name with a `/`
/// relative to the working directory, a bare name on `PATH` (the server's own when its `env`
/// sets one).
fn find_program(program: &str, env: &BTreeMap<String, String>, cwd: Option<&Path>) -> Option<PathBuf> {
    let base = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().ok()?,
    };
    if program.contains('/') {
        return Some(base.join(program));
    }
    let path = match env.get("PATH") {
        Some(value) => expand_env(value).into(),
        None => std::env::var_os("PATH")?,
    };
    // Relative entries of `PATH` are found from the server's working directory.
    let dirs = std::env::join_paths(std::env::split_paths(&path).map(|dir| base.join(dir))).ok()?;
    toolbelt_core::process::find_program(program, Some(&dirs))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn stdio(command: &str, env: &[(&str, &str)]) -> UpstreamConfig {
        let env = env.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        UpstreamConfig::new(UpstreamTransport::Stdio { command: command.into(), args: Vec::new(), env, cwd: None })
    }

    #[test]
    fn this_program_is_found_by_path_link_or_name_on_path() {
        let me = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&me, dir.path().join("linked")).unwrap();
        std::fs::hard_link(&me, dir.path().join("hard")).unwrap_or_else(|_| {
            // Another file system: a copy is another program, so test the link only.
            std::os::unix::fs::symlink(&me, dir.path().join("hard")).unwrap();
        });
        std::fs::write(dir.path().join("other"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(dir.path().join("other"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let on_path = [("PATH", dir.path().to_str().unwrap())];
        assert!(skip_reason(&stdio(me.to_str().unwrap(), &[])).is_some());
        assert!(skip_reason(&stdio(dir.path().join("linked").to_str().unwrap(), &[])).is_some());
        assert!(skip_reason(&stdio("linked", &on_path)).unwrap().contains("is this toolbelt itself"));
        assert!(skip_reason(&stdio("hard", &on_path)).is_some());
        assert!(skip_reason(&stdio("other", &on_path)).is_none());
        assert!(skip_reason(&stdio("no-such-program", &on_path)).is_none());
        let http = UpstreamConfig::new(UpstreamTransport::Http {
            url: url::Url::parse("http://127.0.0.1:9/mcp").unwrap(),
            headers: BTreeMap::new(),
            bearer_token_env: None,
            oauth: Default::default(),
        });
        assert!(skip_reason(&http).is_none());
    }
}
