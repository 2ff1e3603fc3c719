//! Attacks that once worked against toolbelt, each performed through the real binary (and over
//! MCP), each shown to fail. Every file is one trust boundary:
//!
//! * `trust.rs` — a cloned repository runs its own code (hooks, MCP servers, looser settings), or
//!   another user's settings above a folder become its project's;
//! * `grants.rs` — a repository ships "always allow" rules of its own (and a person's own
//!   "always" did nothing in a project nobody trusted);
//! * `self_widening.rs` — the agent rewrites what configures its next session, loads a
//!   repository's skill that asks for every command, or `cd`s the session out of its roots;
//! * `judged.rs` — a call judged in one working directory ran in another, where an earlier
//!   call's `cd` left the session (a relative write judged as `./hooks/…` landed in
//!   `.git/hooks/…`), or in the root when a command had deleted the working directory (past a
//!   deny rule);
//! * `made_places.rs` — a command, a background command, a hook or a server makes a
//!   protected place (`.git` with a hook, `.vscode`) where there was none, and it stays;
//! * `trusted_code.rs` — a trusted project's hooks and servers run code the model changed
//!   after the trust (a sourced script, a `Makefile`, an imported module), as the user;
//! * `git.rs` — "read-only" git starts programs a repository (or a folder that arrived with
//!   its `.git`) names; the worktree tools run a
//!   filter the repository defines only for worktrees, or move the workspace wherever
//!   `.git/worktrees/*/gitdir` says;
//! * `language_servers.rs` — a language server (running the project's code) writes into the
//!   project or outside it;
//! * `linters.rs` — Lint runs a repository's own linter binaries, or a linter makes toolbelt
//!   read its report through a link to a file the session may not read;
//! * `deny_rules.rs` — deny rules matched text instead of what the shell runs;
//! * `read_rules.rs` — read denials covered only the Read tool (and a shared code index must
//!   not show another session's, or a hard link's, definitions) and not git's history;
//!   read-only commands read anywhere, through links a repository ships too; commands saw
//!   toolbelt's secrets, by name or by value;
//! * `read_only.rs` — a "read-only" test or `printf` that a checkout's file names or the
//!   environment turn into code (`test -v 'a[$(…)]'`);
//! * `sandbox.rs` — a sandboxed command as root kept every capability, made a device node,
//!   stopped processes and reached Unix sockets outside, outlived its kill, and wrote through
//!   a descriptor the server inherited;
//! * `terminal.rs` — a hook, an MCP server, a language server, a linter or a command (in the
//!   background too) typed into the person's terminal: answered toolbelt's own permission
//!   prompt, or left a command for the person's shell; a command opened the terminal by its
//!   name and wrote on the screen;
//! * `sessions.rs` — a line typed into an interactive shell that runs other text (history
//!   expansion, recall with editing keys, a continuation over two writes) carried a denied
//!   command; a session's terminal or processes reached past it;
//! * `patch_crash.rs` — ApplyPatch killed mid-commit left some files new, the rest old;
//! * `special_files.rs` — a device read whole filled memory, a FIFO blocked the file tools,
//!   Write replaced a device with a regular file;
//! * `audit.rs`, `audit_mcp.rs` — the audit log as evidence: out of the workspace, owner-only,
//!   secrets redacted by pattern, refused calls and the client recorded (a sub-agent's calls
//!   under the front end that started it, not an anonymous "embedded"), and `toolbelt audit
//!   verify` catching a truncated, an edited and a deleted record;
//! * `mcp_server.rs` — the MCP server itself: sessions without bound or end, tokens and
//!   origins, and stdio lines that went unanswered;
//! * `oauth.rs` — an upstream server's sign-in sent the browser to whatever address the
//!   server's metadata named (a `file:` path, an `smb:` share, a plain http:// page elsewhere);
//! * `request_state.rs` — a 2026-07-28 client's `requestState`, which carries a person's
//!   answers between rounds: forged, altered, moved to other arguments or another server
//!   process, replayed, or skipped by sending answers alone;
//! * `extensions.rs` — a repository's plugin (hooks, a server) enabled by the repository or by
//!   a name the user enabled, a plugin setting permissions or the sandbox, and a defined
//!   tool's values read as shell code or as a path climb in its URL;
//! * `web.rs` — a fetch sent into the machine's own services or its network (a name that
//!   resolves to loopback, IP literals in every spelling, a redirect), and a repository's
//!   settings that open the private network or send the user's search key to its server.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::new_without_default)]

#[path = "../common/hermetic.rs"]
mod hermetic;
#[path = "../common/pty.rs"]
mod pty;

#[path = "../../../toolbelt-tools/tests/shell_support/beyond_tmp.rs"]
mod beyond_tmp;

mod audit;
mod audit_mcp;
mod deny_rules;
mod endpoints;
mod extensions;
mod git;
mod grants;
mod judged;
mod language_servers;
mod linters;
mod made_places;
mod mcp_server;
mod oauth;
mod patch_crash;
mod read_only;
mod read_rules;
mod request_state;
mod sandbox;
mod self_widening;
mod sessions;
mod special_files;
mod terminal;
mod trust;
mod trusted_code;
mod web;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// A project, its user's home and state, a directory outside the project, and a place for
/// the markers attacks try to leave — all in a temporary directory sandboxed commands may not
/// write (not under `/tmp`, `$TMPDIR` or `/dev/shm`, wherever the checkout lives).
pub struct World {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
    pub markers: PathBuf,
}

impl World {
    pub fn new() -> World {
        World::in_dir(beyond_tmp::beyond_tmp())
    }

    /// A world in memory (`/dev/shm`, else as [`World::new`]), for tests that write
    /// thousands of files and run no sandboxed command.
    pub fn in_memory() -> World {
        match tempfile::tempdir_in("/dev/shm") {
            Ok(dir) => World::in_dir(dir),
            Err(_) => World::new(),
        }
    }

    fn in_dir(dir: tempfile::TempDir) -> World {
        let base = dir.path().canonicalize().unwrap();
        let world = World {
            root: base.join("project"),
            home: base.join("home"),
            outside: base.join("outside"),
            markers: base.join("markers"),
            _dir: dir,
        };
        for d in [&world.root, &world.home, &world.outside, &world.markers] {
            std::fs::create_dir_all(d).unwrap();
        }
        world
    }

    /// A world whose project is a real git repository with one commit.
    pub fn with_git() -> World {
        let w = World::new();
        w.write("a.txt", "one\n");
        w.git(&["init", "-q"]);
        w.git(&["add", "a.txt"]);
        w.git(&["-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qm", "one"]);
        w
    }

    /// Runs git in the project, outside toolbelt (as the user would).
    pub fn git(&self, args: &[&str]) -> std::process::Output {
        Command::new("git").args(args).current_dir(&self.root).env("HOME", &self.home).output().unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A marker path an attack's payload would create.
    pub fn marker(&self, name: &str) -> PathBuf {
        self.markers.join(name)
    }

    /// Whether any payload left a marker.
    pub fn markers_left(&self) -> Vec<String> {
        std::fs::read_dir(&self.markers)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// The toolbelt binary in the project, with this world's home and nobody to ask.
    pub fn toolbelt(&self) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
        self.toolbelt_env(&mut cmd);
        cmd
    }

    /// `cmd` set up as [`World::toolbelt`] sets up the binary (a launcher that runs it).
    pub fn toolbelt_env<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        hermetic::isolate(cmd.current_dir(&self.root), &self.home).env("NO_COLOR", "1").stdin(Stdio::null())
    }

    /// Runs toolbelt; (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.toolbelt().args(args).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    /// `toolbelt batch ARGS…` with these JSON lines, in one session: a result per line, in
    /// order.
    pub fn batch(&self, lines: &[Value], args: &[&str]) -> Vec<Value> {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut child = self
            .toolbelt()
            .arg("batch")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let results: Vec<Value> =
            String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(results.len(), lines.len(), "{}", String::from_utf8_lossy(&out.stderr));
        results
    }

    /// `toolbelt call TOOL INPUT EXTRA…`; (exit code, stdout).
    pub fn call(&self, tool: &str, input: Value, extra: &[&str]) -> (i32, String) {
        let input = input.to_string();
        let mut args = vec!["call", tool, input.as_str()];
        args.extend_from_slice(extra);
        let (code, out, _) = self.run(&args);
        (code, out)
    }

    /// `toolbelt call Bash` with this command.
    pub fn bash(&self, command: &str, extra: &[&str]) -> (i32, String) {
        self.call("Bash", json!({ "command": command }), extra)
    }

    /// `toolbelt trust`, which must succeed.
    pub fn trust(&self) {
        let (code, out, err) = self.run(&["trust"]);
        assert_eq!(code, 0, "{out}{err}");
    }

    /// `toolbelt mcp ARGS…` over stdio, initialized.
    pub fn mcp(&self, args: &[&str]) -> Mcp {
        self.mcp_eliciting(args, None)
    }

    /// [`World::mcp`] for a client that answers every elicitation (a person's approval)
    /// with `answer`'s form content, when given.
    pub fn mcp_eliciting(&self, args: &[&str], answer: Option<Value>) -> Mcp {
        let capabilities = if answer.is_some() { json!({"elicitation": {}}) } else { json!({}) };
        let mut mcp = self.mcp_unopened(args);
        mcp.elicit = answer;
        let init = mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "attacker", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "toolbelt", "{init}");
        mcp.notify("notifications/initialized");
        mcp
    }

    /// `toolbelt mcp` with nothing sent yet: a 2026-07-28 client sends no `initialize`.
    pub fn mcp_unopened(&self, args: &[&str]) -> Mcp {
        let mut child =
            self.toolbelt().arg("mcp").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Mcp { child, stdin, stdout, next: 0, elicit: None, asked: Vec::new() }
    }
}

/// A raw JSON-RPC session with `toolbelt mcp`.
pub struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
    /// The content every elicitation is accepted with, if this client elicits.
    elicit: Option<Value>,
    /// The messages of the elicitations the server sent.
    pub asked: Vec<String>,
}

impl Mcp {
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed the connection");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            if message["method"] == "elicitation/create"
                && let Some(content) = &self.elicit
            {
                self.asked.push(message["params"]["message"].as_str().unwrap_or_default().to_string());
                let result = json!({"action": "accept", "content": content});
                writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": message["id"], "result": result})).unwrap();
                self.stdin.flush().unwrap();
            } else if message.get("method").is_some() && message.get("id").is_some() {
                // A request of the server's (roots): this client has none to offer.
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}});
                writeln!(self.stdin, "{answer}").unwrap();
                self.stdin.flush().unwrap();
            }
        }
    }

    pub fn notify(&mut self, method: &str) {
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "method": method})).unwrap();
        self.stdin.flush().unwrap();
    }

    /// `tools/call`; (is_error, text of the result or error).
    pub fn call(&mut self, name: &str, arguments: Value) -> (bool, String) {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        if let Some(error) = answer.get("error") {
            return (true, error["message"].as_str().unwrap_or_default().to_string());
        }
        let result = &answer["result"];
        let text = result["content"]
            .as_array()
            .map(|c| c.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"));
        (result["isError"] == true, text.unwrap_or_default())
    }

    /// Sends the server SIGTERM and waits for it to end.
    pub fn terminate(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }

    pub fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A shell word quoting `path`.
pub fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}
