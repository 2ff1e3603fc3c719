//! A read denial reaches every reader; read-only commands stay inside the workspace like the
//! Read tool; commands never see toolbelt's secrets.

use std::io::{Read as _, Write as _};

use serde_json::{Value, json};

use crate::World;

const SECRET: &str = "hunter2-not-for-the-model";
const DENY: &[&str] = &["--deny", "Read(./secret.txt)", "--deny", "Read(./keys/**)"];

fn with_secrets() -> World {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w.write("secret.txt", &format!("PASSWORD={SECRET}\n"));
    w.write("keys/id.pem", &format!("{SECRET}\n"));
    w.write("notes.txt", "nothing to see\n");
    std::fs::hard_link(w.root.join("secret.txt"), w.root.join("innocent.txt")).unwrap();
    w
}

#[test]
fn a_read_denial_reaches_every_reader() {
    let w = with_secrets();
    let leaked = |out: &str| out.contains(SECRET);
    // The tools: refused, left out of results, or refused under another name.
    let (code, out) = w.call("Read", json!({"file_path": "secret.txt"}), DENY);
    assert!(code == 1 && !leaked(&out), "{out}");
    let (_, out) = w.call("Grep", json!({"pattern": "hunter2", "output_mode": "content"}), DENY);
    assert!(!leaked(&out), "Grep printed the secret: {out}");
    let (_, out) = w.call("Glob", json!({"pattern": "**/*"}), DENY);
    assert!(!out.contains("secret.txt") && !out.contains("id.pem") && out.contains("notes.txt"), "{out}");
    let (_, out) = w.call("ListDir", json!({}), DENY);
    assert!(!out.contains("secret.txt") && !out.contains("id.pem"), "{out}");
    let (code, out) = w.call("Read", json!({"file_path": "innocent.txt"}), DENY);
    assert!(code == 1 && out.contains("hard link to") && !leaked(&out), "{out}");

    // Commands naming it, literally or by a glob: denied.
    for command in [
        "cat secret.txt",
        "cat sec*.txt",
        "head -1 ./secret.txt",
        "cat keys/id.pem",
        "wc < secret.txt",
        "cp secret.txt /dev/stdout",
        // through the script's own variables, which make these read-only
        "f=secret.txt; cat \"$f\"",
        "for f in notes.txt secret.txt; do cat \"$f\"; done",
        "for f in sec*; do head -1 \"$f\"; done",
        "d=keys; cat \"$d/id.pem\"",
    ] {
        let (code, out) = w.bash(command, DENY);
        assert!(code == 1 && out.contains("deny rule") && !leaked(&out), "{command}: {out}");
    }
    // Commands reading the whole tree, or the file under another name: the sandbox masks it.
    for command in [
        "grep -r hunter2 .",
        "cat innocent.txt",
        "tar cf - . | grep -a hunter2",
        "find . -type f -exec cat {} +",
        "python3 -c \"print(open('secret.txt').read())\"",
    ] {
        let (_, out) = w.bash(&format!("{command}; echo ran"), &[DENY, &["--allow", "Bash"]].concat());
        assert!(out.contains("ran") && !leaked(&out), "`{command}` printed the secret: {out}");
    }
}

#[test]
fn over_mcp_too() {
    let w = with_secrets();
    let mut mcp = w.mcp(DENY);
    let (_, grep) = mcp.call("Grep", json!({"pattern": "hunter2", "output_mode": "content"}));
    let (_, glob) = mcp.call("Glob", json!({"pattern": "*.txt"}));
    let (cat_error, cat) = mcp.call("Bash", json!({"command": "cat sec*.txt"}));
    let (_, tree) = mcp.call("Bash", json!({"command": "grep -r hunter2 . ; echo ran"}));
    drop(mcp);
    assert!(!grep.contains(SECRET) && !glob.contains("secret.txt") && glob.contains("notes.txt"), "{grep}\n{glob}");
    assert!(cat_error && cat.contains("deny rule") && !cat.contains(SECRET), "{cat}");
    assert!(tree.contains("ran") && !tree.contains(SECRET), "{tree}");
}

/// A repository whose history holds the secret: added in the second commit, changed since.
fn with_secret_history() -> World {
    let w = World::with_git();
    w.write("secret.txt", &format!("PASSWORD={SECRET}\n"));
    w.git(&["add", "secret.txt"]);
    w.git(&["-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qm", "two"]);
    w.write("secret.txt", &format!("PASSWORD={SECRET}-rotated\n"));
    w
}

#[test]
fn a_read_denial_reaches_git_s_history() {
    let w = with_secret_history();
    let deny = ["--deny", "Read(./secret.txt)"];
    for command in [
        "git show HEAD:secret.txt",
        "git show HEAD",
        "git log -p",
        "git log --patch --all",
        "git log -Shunter2 --oneline",
        "git whatchanged -p",
        "git grep hunter2 HEAD",
        "git grep hunter2",
        "git cat-file -p HEAD:secret.txt",
        "git diff HEAD~1 HEAD",
        "git diff",
        "git diff --cached HEAD~1",
        "git -C . blame HEAD~0 -- a.txt",
        "git status -v",
        "git --no-pager log -p -1",
        "cd . && git show HEAD:./secret.txt | cat",
    ] {
        for mode in ["default", "bypassPermissions"] {
            let (_, explained, _) = w.run(
                &[
                    &["permissions", "explain", "Bash", &json!({"command": command}).to_string(), "--mode", mode][..],
                    &deny,
                ]
                .concat(),
            );
            assert!(
                explained.contains("decision:   ask") && explained.contains("Read(./secret.txt)"),
                "{mode} `{command}`: {explained}"
            );
            let (code, out) = w.bash(command, &[&["--mode", mode][..], &deny].concat());
            assert!(code == 1 && !out.contains(SECRET), "{mode} `{command}` printed the secret: {out}");
            assert!(out.contains("git's history") || out.contains("history"), "{mode} `{command}`: {out}");
        }
    }
    // Commands that show no file's content run as before.
    for command in
        ["git status --short", "git log --oneline", "git log --stat", "git diff --stat", "git ls-files", "git branch"]
    {
        let (code, out) = w.bash(command, &deny);
        assert!(code == 0 && !out.contains(SECRET), "`{command}`: {out}");
    }
    // A read denial about files no repository here holds does not stop anything.
    let (code, out) = w.bash("git log -p", &["--deny", "Read(~/.ssh/**)"]);
    assert!(code == 0 && out.contains(SECRET), "{out}");
    // Nor does a `Bash(…)` rule of the user's allowing the command skip the question.
    let (code, out) = w.bash("git log -p", &[&deny[..], &["--allow", "Bash(git log *)"]].concat());
    assert!(code == 1 && !out.contains(SECRET), "{out}");
}

#[test]
fn read_only_commands_stay_inside_the_workspace() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    std::fs::write(w.outside.join("private.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
    std::fs::write(w.home.join(".ssh/id_rsa"), format!("{SECRET}\n")).unwrap();
    let outside = w.outside.join("private.txt").display().to_string();
    for command in [
        format!("cat {outside}"),
        "cat ../outside/private.txt".to_string(),
        "cat ~/.ssh/id_rsa".to_string(),
        "rg hunter2 /".to_string(),
        format!("grep -r hunter2 {}", w.outside.display()),
        "cd .. && cat outside/private.txt".to_string(),
        // through the script's own variables, which make these read-only
        "f=~/.ssh/id_rsa; cat \"$f\"".to_string(),
        "for f in ~/.ssh/*; do cat \"$f\"; done".to_string(),
        "d=..; cd \"$d\" && cat outside/private.txt".to_string(),
        format!("for d in . {}; do ls \"$d\"; cat \"$d/private.txt\"; done", w.outside.display()),
    ] {
        // Read-only, but outside the roots: asks like the Read tool (nobody here: refused).
        let (code, out) = w.bash(&command, &[]);
        assert_eq!(code, 1, "{command}: {out}");
        assert!(out.contains("outside the workspace roots") && !out.contains(SECRET), "{command}: {out}");
    }
    // The rule it suggests works when followed.
    let (code, out) = w.bash("cat ../outside/private.txt", &["--allow", &format!("Read(/{}/**)", w.outside.display())]);
    assert!(code == 0 && out.contains(SECRET), "{out}");
    // Inside the workspace nothing asks.
    w.write("mine.txt", "mine\n");
    assert_eq!(w.bash("cat mine.txt && ls", &[]).0, 0);
}

#[test]
fn read_only_commands_follow_no_link_out_of_the_workspace() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
    std::fs::write(w.home.join(".ssh/id_rsa"), format!("{SECRET}\n")).unwrap();
    // The repository ships a link to the user's keys, and a directory whose entry is one.
    std::os::unix::fs::symlink(w.home.join(".ssh"), w.root.join("sshlink")).unwrap();
    w.write("a/notes.txt", "mine\n");
    w.write("b/notes.txt", "theirs\n");
    std::os::unix::fs::symlink(w.home.join(".ssh/id_rsa"), w.root.join("a/key")).unwrap();
    w.write("b/key", "x\n");
    std::fs::write(w.root.join("list"), format!("{}\0", w.home.join(".ssh/id_rsa").display())).unwrap();
    for command in [
        "rg -L hunter2",
        "rg --follow hunter2 .",
        "rg -iL hunter2 .",
        "find -L . -type f",
        "find . -follow -type f",
        "du -L -a",
        "du -aL .",
        "ls -lLR",
        "ls --dereference -R .",
        "grep -R hunter2 .",
        "grep -rnR hunter2",
        "grep --dereference-recursive hunter2",
        "diff -r a b",
        "diff a b",
        "cd a && ls -L",
        "sort --files0-from=list",
        "wc --files0-from list",
    ] {
        let (code, out) = w.bash(command, &[]);
        assert_eq!(code, 1, "`{command}` ran: {out}");
        assert!(out.contains("outside the workspace roots") && !out.contains(SECRET), "`{command}`: {out}");
    }
    // The same commands without following links, or in a tree whose links stay inside, run.
    std::os::unix::fs::symlink(w.root.join("b"), w.root.join("b-again")).unwrap();
    for command in ["rg hunter2", "find . -type f", "ls -lR", "grep -r hunter2 .", "du -a", "rg -L mine b-again b"] {
        let (code, out) = w.bash(command, &[]);
        assert!(code == 0 && !out.contains(SECRET), "`{command}`: {out}");
    }
    // A file named like an option, which a glob hands to the program as one (`grep x *` with a
    // file called `-R` is `grep -R x …`): asked about, not run.
    std::fs::remove_file(w.root.join("sshlink")).unwrap();
    w.write("g/-R", "");
    std::fs::create_dir_all(w.root.join("g/sub")).unwrap();
    std::os::unix::fs::symlink(w.home.join(".ssh/id_rsa"), w.root.join("g/sub/key")).unwrap();
    let (code, out) = w.bash("cd g && grep hunter2 *", &[]);
    assert!(code == 1 && out.contains("`-R`") && !out.contains(SECRET), "{out}");
    let (code, out) = w.bash("cd g && grep -s hunter2 ./*", &[]);
    assert!(code == 0 && !out.contains(SECRET), "{out}");
}

#[test]
fn commands_never_see_toolbelt_s_secrets() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    let out = w
        .toolbelt()
        .args(["call", "Bash", r#"{"command":"env"}"#])
        .env("GITHUB_TOKEN", "ghp_leaked1")
        .env("OPENAI_API_KEY", "sk-leaked2")
        .env("AWS_SECRET_ACCESS_KEY", "leaked3")
        // by name: a personal access token, a password, an auth string, the agent's socket
        .env("GH_PAT", "leakedD")
        .env("SMTP_PASS", "leakedE")
        .env("NPM_AUTH", "leakedF")
        .env("SSH_AUTH_SOCK", "/run/leakedG/agent.sock")
        // by value, whatever the name: a URL with a password, known token prefixes
        .env("DATABASE_URL", "postgres://app:leakedH@db.internal:5432/app")
        .env("SETTINGS", "ghp_leakedIaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
        .env("CLAUDE_CONFIG", "sk-ant-api03-leakedJaaaaaaaaaaaaaaaaaaaa")
        .env("DEPLOY", "--token=glpat-leakedKaaaaaaaaaaaaaa")
        .env("CLOUD_ID", "AKIAIOSFODNN7EXAMPLE")
        .env("HARMLESS", "visible")
        .env("HOMEPAGE", "https://example.com/docs")
        .env("MIRROR", "https://user@mirror.example.com/repo")
        .env("TASK", "desk-top sk-short")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for kept in ["HARMLESS=visible", "HOMEPAGE=https://example.com/docs", "MIRROR=https://user@mirror", "TASK=desk-top"]
    {
        assert!(text.contains(kept), "{kept} was removed: {text}");
    }
    let markers = ["1", "2", "3", "D", "E", "F", "G", "H", "I", "J", "K"].map(|m| format!("leaked{m}"));
    for leaked in markers.into_iter().chain(["AKIAIOSFODNN7EXAMPLE".to_string()]) {
        assert!(!text.contains(&leaked), "{leaked} in {text}");
    }
    // Kept when the user says so.
    let out = w
        .toolbelt()
        .args(["call", "Bash", r#"{"command":"env"}"#])
        .env("GITHUB_TOKEN", "ghp_kept")
        .env("DATABASE_URL", "postgres://app:kept-too@db/app")
        .env("TOOLBELT_SHELL__ENV_KEEP", "[\"GITHUB_TOKEN\", \"DATABASE_URL\"]")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ghp_kept") && text.contains("kept-too"), "{text}");
}

#[test]
fn an_http_session_cannot_read_the_server_s_token() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = w
        .toolbelt()
        .args(["mcp", "--http", &format!("127.0.0.1:{port}"), "--token-env", "SERVE_AUTH"])
        .env("SERVE_AUTH", "s3rv3r-b34r3r")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut session = None;
    let mut post = |body: Value| -> Value {
        for _ in 0..100 {
            if let Ok(answer) = http_post(port, "s3rv3r-b34r3r", session.as_deref(), &body) {
                if let Some(id) = answer.0 {
                    session = Some(id);
                }
                return answer.1;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the server did not answer");
    };
    post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let answer = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "Bash", "arguments": {"command": "env; echo done"}}}),
    );
    let _ = server.kill();
    let _ = server.wait();
    let text = answer.to_string();
    assert!(text.contains("done"), "{text}");
    assert!(!text.contains("s3rv3r-b34r3r") && !text.contains("SERVE_AUTH"), "{text}");
}

/// One POST to `/mcp` over plain HTTP/1.1; (the session id it gave, the JSON answer, from a
/// JSON body or the first SSE event carrying one).
fn http_post(port: u16, token: &str, session: Option<&str>, body: &Value) -> std::io::Result<(Option<String>, Value)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        request.push_str(&format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-11-25\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, rest) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let session = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().starts_with("mcp-session-id:").then(|| l[15..].trim().to_string()));
    let value = rest
        .lines()
        .filter_map(|l| l.strip_prefix("data:").map(str::trim).or_else(|| l.starts_with('{').then_some(l)))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("id").is_some() || v.get("result").is_some())
        .unwrap_or(Value::Null);
    Ok((session, value))
}

#[test]
fn code_query_shows_no_denied_linked_or_outside_definition() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w.write("secret.rs", "pub fn hunter2_function() {}\n");
    std::fs::hard_link(w.root.join("secret.rs"), w.root.join("innocent.rs")).unwrap();
    let outside = w.home.join("elsewhere/stolen.rs");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::write(&outside, "pub fn stolen_definition() {}\n").unwrap();
    std::os::unix::fs::symlink(&outside, w.root.join("linked.rs")).unwrap();
    w.write("lib.rs", "pub fn visible_function() {}\n");
    let deny = ["--deny", "Read(./secret.rs)"];
    // A session without the rule indexed the secret first; the denied one must not see it.
    let (code, out) = w.call("code_query", json!({"query": "hunter2_function"}), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("secret.rs:1:8 function hunter2_function"), "{out}");
    for query in ["hunter2_function", "hunter2", "stolen_definition"] {
        let (code, out) = w.call("code_query", json!({"query": query}), &deny);
        assert_eq!(code, 0, "{out}");
        assert!(out.starts_with("No matches."), "{query}: {out}");
    }
    let (_, out) = w.call("code_query", json!({"query": "innocent", "type": "file"}), &deny);
    assert!(!out.contains("innocent.rs:1"), "a hard link to a denied file was listed: {out}");
    let (_, out) = w.call("code_query", json!({"query": "visible_function"}), &deny);
    assert!(out.contains("lib.rs:1:8 function visible_function"), "{out}");
}
