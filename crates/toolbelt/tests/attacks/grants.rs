//! "Always allow" is a person's grant: it holds in the next session whether the project is
//! trusted or not, and a repository cannot ship one.

use serde_json::json;

use crate::{World, quoted};

/// A repository nobody trusted: a hook that leaves a marker, and "always allow" rules of its
/// own in the file a person's grants once went to.
fn untrusted_repository(w: &World) {
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    let hook = format!("touch {}", quoted(&w.marker("repository-hook")));
    w.write(
        ".toolbelt/config.toml",
        &format!("[[hooks.SessionStart]]\nhooks = [{{ type = \"command\", command = {hook:?} }}]\n"),
    );
    w.write(".toolbelt/config.local.toml", "[permissions]\nallow = [\"Bash\", \"Write\"]\n");
}

/// Where the person's grants for the project are kept.
fn grants_file(w: &World) -> std::path::PathBuf {
    let projects = w.home.join(".local/state/toolbelt/projects");
    let dir = std::fs::read_dir(&projects).unwrap().next().unwrap().unwrap().path();
    dir.join("grants.toml")
}

#[test]
fn a_repository_s_own_allow_rules_grant_nothing() {
    let w = World::new();
    untrusted_repository(&w);
    let (code, out) = w.bash("touch planted", &[]);
    assert_eq!(code, 1, "the planted `Bash` rule does not apply: {out}");
    assert!(out.contains("needs approval"), "{out}");
    let (code, out) = w.call("Write", json!({"file_path": "x.txt", "content": "x"}), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(!w.root.join("planted").exists() && !w.root.join("x.txt").exists());
    // Nor over MCP.
    let mut mcp = w.mcp(&[]);
    let (is_error, text) = mcp.call("Bash", json!({"command": "touch planted"}));
    assert!(is_error && text.contains("needs approval"), "{text}");
    drop(mcp);
    assert!(w.markers_left().is_empty(), "{:?}", w.markers_left());
}

#[test]
fn a_person_s_always_at_the_terminal_holds_next_session_in_an_untrusted_project() {
    let w = World::new();
    untrusted_repository(&w);
    // At the terminal: no to trusting the project, then "always" for the command.
    let (config, state) = (w.home.join(".config"), w.home.join(".local/state"));
    let env = [("HOME", w.home.as_path()), ("XDG_CONFIG_HOME", &config), ("XDG_STATE_HOME", &state)];
    let args = ["call", "Bash", r#"{"command":"mkdir -p build/a"}"#];
    let (out, code) = crate::pty::toolbelt_in_pty(&args, &w.root, &env, "[y/N]", "n\na\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a  Always allow Bash(mkdir *)"), "{out}");
    // The next session, without a terminal, in the project still nobody trusted.
    let (code, out, err) = w.run(&["call", "Bash", r#"{"command":"mkdir -p build/b"}"#]);
    assert_eq!(code, 0, "the person's grant holds: {out}{err}");
    assert!(err.contains("not trusted"), "the project's own settings still wait: {err}");
    assert!(w.root.join("build/b").is_dir());
    // …and grants nothing more, nor lets the repository's settings in.
    assert_eq!(w.bash("touch x", &[]).0, 1);
    assert!(w.markers_left().is_empty(), "{:?}", w.markers_left());
    // The grant is the user's: outside the project, owner-only; the repository's file is as
    // it shipped.
    let grants = grants_file(&w);
    let text = std::fs::read_to_string(&grants).unwrap();
    assert!(text.contains("\"Bash(mkdir *)\""), "{text}");
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&grants).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(grants.parent().unwrap()).unwrap().permissions().mode() & 0o077, 0);
    let local = std::fs::read_to_string(w.root.join(".toolbelt/config.local.toml")).unwrap();
    assert_eq!(local, "[permissions]\nallow = [\"Bash\", \"Write\"]\n");
}

#[test]
fn a_person_s_always_over_mcp_holds_next_session_in_an_untrusted_project() {
    let w = World::new();
    untrusted_repository(&w);
    let mut mcp = w.mcp_eliciting(&[], Some(json!({"decision": "allow_always"})));
    let (is_error, text) = mcp.call("Bash", json!({"command": "mkdir -p build/a"}));
    assert!(!is_error, "{text}");
    assert_eq!(mcp.asked.len(), 1, "{:?}", mcp.asked);
    assert!(mcp.asked[0].contains("\"Always allow\" adds Bash(mkdir *)"), "{:?}", mcp.asked);
    drop(mcp);
    // A new process: the grant holds for the CLI and for another MCP session.
    let (code, out) = w.bash("mkdir -p build/b", &[]);
    assert_eq!(code, 0, "{out}");
    let mut mcp = w.mcp(&[]);
    let (is_error, text) = mcp.call("Bash", json!({"command": "mkdir -p build/c"}));
    assert!(!is_error, "{text}");
    drop(mcp);
    assert!(w.root.join("build/b").is_dir() && w.root.join("build/c").is_dir());
    assert!(w.markers_left().is_empty(), "{:?}", w.markers_left());
    assert!(std::fs::read_to_string(grants_file(&w)).unwrap().contains("\"Bash(mkdir *)\""));
}
