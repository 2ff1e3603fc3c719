//! The gateway with the real MCP peers: the reference servers (`server-everything`,
//! `server-filesystem`) as upstreams of `toolbelt mcp`, under the official Python SDK client —
//! their tools, their questions (elicitation) and their requests for the client's model
//! (sampling) passed through, in a session opened with `initialize` and at 2026-07-28.
//!
//! The peers are installed by `.ci/run` into `.ci/peers/`. Without them these tests say so
//! and pass — except under CI, where a missing peer is a failure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;

use peers::{Peers, everything_settings, project, run, script, toolbelt, trust};

/// server-everything's sampling tool through the gateway: its request for a message goes,
/// unchanged, to the Python SDK client's model, and the model's answer back to the server —
/// in a session opened with `initialize`, and at 2026-07-28 through the call's rounds.
#[test]
fn an_upstream_s_sampling_request_reaches_the_client_s_model() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    everything_settings(&peers, &root, "");
    trust(&root);
    for mode in ["legacy", "auto"] {
        let mut cmd = Command::new(peers.python());
        cmd.arg(script("upstream_sampling_client.py")).arg(mode).arg(toolbelt()).arg(&root);
        let seen = run(cmd, &root, "");
        assert_eq!(seen["era"], if mode == "legacy" { "legacy" } else { "modern" }, "{seen}");
        let sampled: Vec<&str> = seen["sampled"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(sampled.iter().all(|m| m.ends_with("context: what is 2+2")), "{mode}: {sampled:?}");
        assert!(!sampled.is_empty(), "{mode}: {seen}");
        assert_eq!(seen["result"][0], false, "{mode}: {seen}");
        assert!(seen["result"][1].as_str().unwrap().contains("four, from the client's model"), "{mode}: {seen}");
    }
    // A client that lends no model: the server's request is refused, saying why.
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("upstream_sampling_client.py")).arg("none").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, "");
    assert!(seen["sampled"].as_array().unwrap().is_empty(), "{seen}");
    let text = seen["result"][1].as_str().unwrap();
    assert!(text.contains("does not offer sampling"), "{seen}");
}

/// An upstream of the Python SDK that asks for input (roots, a form, the client's model) is
/// answered whichever revision it speaks: in 2026-07-28 (`protocol = auto` finds it speaks
/// it) through its `input_required` rounds, in 2025-11-25 through requests mid-call; and
/// whichever revision our own client speaks. A tool it adds joins (its change heard on the
/// `subscriptions/listen` stream toolbelt opens).
#[test]
fn an_upstream_speaking_2026_07_28_is_answered_through_its_rounds() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let (python, server) = (peers.python().display().to_string(), script("modern_upstream.py").display().to_string());
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!(
            "[permissions]\nallow = [\"mcp__modern\", \"mcp__legacy\"]\n\n\
             [mcp.servers.modern]\ncommand = {python:?}\nargs = [{server:?}]\n\n\
             [mcp.servers.legacy]\ncommand = {python:?}\nargs = [{server:?}]\nprotocol = \"2025-11-25\"\n"
        ),
    )
    .unwrap();
    trust(&root);
    let mut cmd = Command::new(toolbelt());
    cmd.args(["mcp-servers", "--json"]).current_dir(&root);
    let listed = hermetic::isolate(&mut cmd, &root.join("home")).output().unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let protocol =
        |name: &str| listed.as_array().unwrap().iter().find(|s| s["name"] == name).unwrap()["protocol"].clone();
    assert_eq!((protocol("modern"), protocol("legacy")), (json!("2026-07-28"), json!("2025-11-25")), "{listed}");
    for mode in ["legacy", "auto"] {
        let mut cmd = Command::new(peers.python());
        cmd.arg(script("modern_upstream_client.py")).arg(mode).arg(toolbelt()).arg(&root);
        let seen = run(cmd, &root, "");
        for server in ["modern", "legacy"] {
            let result = |tool: &str| seen[format!("{server}.{tool}")].clone();
            assert_eq!(
                result("roots"),
                json!([false, format!("file://{}", root.display())]),
                "{mode} {server}: {seen}"
            );
            assert_eq!(result("confirm"), json!([false, "accepted: proceed=True"]), "{mode} {server}: {seen}");
            assert_eq!(result("summarize"), json!([false, "model said: short"]), "{mode} {server}: {seen}");
        }
        let asked: Vec<&str> = seen["asked"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(asked.iter().all(|m| m.contains("asks: Go ahead?")) && asked.len() >= 2, "{mode}: {seen}");
        assert!(!seen["sampled"].as_array().unwrap().is_empty(), "{mode}: {seen}");
        assert_eq!(seen["fresh"], json!([false, "fresh here"]), "the tool it added joined: {mode}: {seen}");
    }
}

/// The reference server's elicitation tool through the gateway: toolbelt declares elicitation
/// to it (else the tool is not even listed), its form reaches the Python SDK client's user
/// introduced as the server's, and the answer goes back to the server.
#[test]
fn an_upstream_s_question_reaches_the_client_as_the_server_s() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    everything_settings(&peers, &root, "");
    trust(&root);
    let calls = json!([["mcp__everything__trigger-elicitation-request", {}]]);
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("python_client.py")).arg("stdio").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, &calls.to_string());
    let asked: Vec<&str> = seen["asked"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(
        asked.iter().any(|m| m.starts_with("The MCP server `everything` asks: Please provide inputs")),
        "{asked:?}"
    );
    let (failed, text) = (seen["extra"][0][1].as_bool().unwrap(), seen["extra"][0][2].as_str().unwrap());
    assert!(!failed && text.contains("allow_once"), "the answer reached the server: {text}");
}

#[test]
fn reference_servers_as_upstreams_through_the_gateway() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let node = peers.node().display().to_string();
    let everything = peers.module("@modelcontextprotocol/server-everything/dist/index.js").display().to_string();
    let filesystem = peers.module("@modelcontextprotocol/server-filesystem/dist/index.js").display().to_string();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!(
            "[permissions]\nallow = [\"mcp__everything\", \"mcp__files__read_text_file\", \"ListMcpResources\"]\n\
             deny = [\"mcp__files__write_file\"]\n\n\
             [mcp.servers.everything]\ncommand = {node:?}\nargs = [{everything:?}]\n\n\
             [mcp.servers.files]\ncommand = {node:?}\nargs = [{filesystem:?}, {root:?}]\n",
            root = root.display().to_string()
        ),
    )
    .unwrap();
    trust(&root);
    let calls = json!([
        ["mcp__everything__echo", {"message": "through the gateway"}],
        ["mcp__everything__get-sum", {"a": 2, "b": 40}],
        ["mcp__files__read_text_file", {"path": root.join("hello.txt")}],
        ["mcp__files__list_directory", {"path": root}],
        ["mcp__everything__get-tiny-image", {}],
        ["ListMcpResources", {"server": "everything"}],
        ["mcp__files__read_text_file", {"wrong": 1}],
        ["ReadMcpResource", {"server": "everything", "uri": "demo://resource/dynamic/text/1"}],
    ]);
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("python_client.py")).arg("stdio").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, &calls.to_string());
    let extra = seen["extra"].as_array().unwrap();
    let result = |i: usize| (extra[i][1].as_bool().unwrap(), extra[i][2].as_str().unwrap().to_string());
    assert_eq!(result(0), (false, "Echo: through the gateway".into()));
    assert!(result(1).1.contains("42"), "{:?}", result(1));
    assert_eq!(result(2), (false, "hello from the workspace\n".into()));
    // Not allowed by a rule: the client's elicitation was asked (and approved it).
    assert!(!result(3).0, "{:?}", result(3));
    assert!(
        seen["asked"].as_array().unwrap().iter().any(|m| m.as_str().unwrap().starts_with("mcp__files__list_directory"))
    );
    assert!(result(4).1.contains("[image]"), "{:?}", result(4));
    assert!(result(5).1.contains("demo://resource"), "{:?}", result(5));
    // Validated against the upstream's own schema before anything is sent.
    assert!(result(6).0 && result(6).1.contains("invalid input for `mcp__files__read_text_file`"), "{:?}", result(6));
    // A resource read through the gateway's own tool (the SDK client checks its structured
    // result against the listed output schema).
    assert!(!result(7).0 && result(7).1.contains("Resource 1"), "{:?}", result(7));
    // The bare deny hides the upstream tool from the listing.
    let tools: Vec<&str> = seen["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"mcp__files__read_text_file") && !tools.contains(&"mcp__files__write_file"));
}

/// Deferred upstream tools (server-everything through the gateway, `mcp.tool_search =
/// "always"`) found with ToolSearch and called, the client told the list changed; the
/// project's skills served as prompts.
#[test]
fn deferred_tools_are_loaded_with_tool_search_and_skills_are_prompts() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    everything_settings(&peers, &root, "[mcp]\ntool_search = \"always\"\n\n");
    let skill = root.join(".claude/skills/review");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: review\ndescription: Review a change\nargument-hint: \"[files]\"\n---\nReview $ARGUMENTS carefully.\n",
    )
    .unwrap();
    let setup = root.join(".agents/skills/setup");
    std::fs::create_dir_all(&setup).unwrap();
    std::fs::write(
        setup.join("SKILL.md"),
        "---\ndescription: Set up\nallowed-tools: Bash(touch granted.txt)\n---\nSet it up.\n",
    )
    .unwrap();
    trust(&root);
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("discovery_client.py")).arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, "");
    let names = |key: &str| -> Vec<String> {
        seen[key].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    };
    let before = names("before");
    assert!(before.contains(&"ToolSearch".into()) && before.contains(&"Read".into()), "{seen}");
    assert!(!before.iter().any(|n| n.starts_with("mcp__everything__")), "{seen}");
    let description = seen["search_description"].as_str().unwrap();
    assert!(description.contains("mcp__everything__echo") && description.contains("EnterWorktree"), "{description}");
    assert_eq!(seen["early"][0], false, "{seen}");
    assert!(seen["early"][1].as_str().unwrap().contains('3'), "{seen}");
    assert_eq!(seen["search"][0], false, "{seen}");
    assert!(seen["search"][1].as_str().unwrap().starts_with("1 tool loaded"), "{seen}");
    assert_eq!(seen["keyword"][1][0], "mcp__everything__get-sum", "{seen}");
    assert!(seen["list_changed"].as_u64().unwrap() >= 1, "{seen}");
    let after = names("after");
    assert!(after.contains(&"mcp__everything__echo".into()) && after.contains(&"mcp__everything__get-sum".into()));
    assert!(!after.contains(&"mcp__everything__get-tiny-image".into()), "{seen}");
    assert_eq!(seen["echo"], json!([false, "Echo: loaded"]), "{seen}");
    assert_eq!(
        seen["prompts"],
        json!([["review", "Review a change", ["args"]], ["setup", "Set up", ["args"]]]),
        "{seen}"
    );
    let prompt = seen["prompt"][0].as_str().unwrap();
    assert!(prompt.ends_with("Review src/main.rs carefully."), "{prompt}");
    assert!(prompt.starts_with(&format!("Base directory for this skill: {}", skill.display())), "{prompt}");
    // The person approved the project skill's rule: that command runs unasked, others still ask
    // (and this person says no).
    assert_eq!(seen["skill"], json!([false, ["Bash(touch granted.txt)"]]), "{seen}");
    assert_eq!(seen["granted_bash"][0], false, "{seen}");
    assert!(root.join("granted.txt").exists());
    assert_eq!(seen["other_bash"][0], true, "{seen}");
    assert!(!root.join("other.txt").exists());
    let asked: Vec<&str> = seen["asked"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(asked.iter().any(|m| m.contains("The skill `setup`")), "{asked:?}");
    assert!(!asked.iter().any(|m| m.contains("touch granted.txt") && !m.contains("The skill")), "{asked:?}");
}

#[test]
fn an_http_upstream_connects() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    // The reference server over Streamable HTTP, on a free loopback port.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Command::new(peers.node())
        .arg(peers.module("@modelcontextprotocol/server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Killed(server);
    let up = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "server-everything did not listen on {port}");
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!("[mcp.servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    )
    .unwrap();
    let toolbelt_in = |args: &[&str]| {
        let mut cmd = Command::new(toolbelt());
        cmd.args(args).current_dir(&root);
        let out = hermetic::isolate(&mut cmd, &root.join("home")).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    assert_eq!(toolbelt_in(&["trust"]).0, Some(0));
    let (code, out, err) = toolbelt_in(&["mcp-servers"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("web   http       connected, "), "{out}");
    assert!(out.contains("mcp__web__get-sum"), "{out}");
    let (code, out, err) = toolbelt_in(&["call", "mcp__web__get-sum", r#"{"a": 2, "b": 40}"#, "--allow", "mcp__web"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("42"), "{out}");
    let (code, out, err) = toolbelt_in(&["permissions", "explain", "mcp__web__get-sum", r#"{"a": 2, "b": 40}"#]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("decision:   ask") && out.contains("--allow 'mcp__web__get-sum'"), "{out}");
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
