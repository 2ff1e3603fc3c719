//! Protected places a folder of the project did not have (`.git`, `.vscode`, `.idea`,
//! `.mcp.json`…): the sandbox cannot hold a name before it exists without refusing every new
//! file of the workspace, so a sandboxed process can make one — with hooks git runs, tasks an
//! editor runs. It must not stay there unless a person says so: a command's is asked about in
//! its call and moved aside otherwise; a background command's, a hook's or a server's is moved
//! aside when it ends, with nobody to ask.

use serde_json::json;

use crate::World;

/// A `.git` with a hook the person's next `git commit` would run (written by python, where
/// no rule sees it).
const GIT_WITH_HOOK: &str = "git init -q && python3 -c \"import os; open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ntouch pwned\\n'); os.chmod('.git/hooks/pre-commit', 0o755)\"";

#[test]
fn a_protected_place_a_command_makes_where_there_was_none_is_moved_aside_unless_a_person_keeps_it() {
    let w = World::new();
    let plant = "import os\nos.makedirs('.vscode')\nopen('.vscode/tasks.json', 'w').write('{\"tasks\": []}')\nos.makedirs('app/.idea')\n";
    w.write("plant.py", plant);
    // Nobody can be asked here (no terminal, CI): what it made does not stay.
    let (code, out, err) = w.run(&["call", "Bash", r#"{"command":"python3 plant.py"}"#, "--allow", "Bash"]);
    assert_eq!(code, 0, "{out}{err}");
    for (made, went) in [(".vscode", ".vscode.set-aside"), ("app/.idea", "app/.idea.set-aside")] {
        let (made, went) = (w.root.join(made), w.root.join(went));
        assert!(!made.exists() && went.is_dir(), "{} moved aside: {out}", made.display());
        assert!(out.contains(&format!("moved to `{}`", went.display())), "the result says where: {out}");
        assert!(out.contains(&format!("mv {} {}", went.display(), made.display())), "and how to undo it: {out}");
        assert!(err.contains(&format!("`{}`", made.display())), "the person reads it on stderr: {err}");
    }
    assert!(out.contains("it holds tasks.json") && out.contains("tell the user"), "{out}");
    assert_eq!(std::fs::read_to_string(w.root.join(".vscode.set-aside/tasks.json")).unwrap(), "{\"tasks\": []}");

    // `git init` with a hook, in a folder the command makes: the hook is named, the `.git` goes.
    let command = format!("mkdir lib && cd lib && {GIT_WITH_HOOK}");
    let (code, out) = w.bash(&command, &["--allow", "Bash"]);
    assert_eq!(code, 0, "{out}");
    assert!(!w.root.join("lib/.git").exists() && w.root.join("lib/.git.set-aside/hooks/pre-commit").is_file());
    assert!(out.contains("the pre-commit hook"), "{out}");
    // Moving it back from a command is making it again: moved aside again.
    let (_, out) = w.bash("mv lib/.git.set-aside lib/.git", &["--allow", "Bash"]);
    assert!(!w.root.join("lib/.git").exists(), "{out}");
    assert!(w.root.join("lib/.git.set-aside").is_dir(), "{out}");

    // A command that makes none says nothing of the kind.
    let (code, out) = w.bash("mkdir -p build && touch build/x", &["--allow", "Bash"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("moved to") && !out.contains("protected place"), "{out}");
}

#[test]
fn a_person_s_yes_or_an_allow_rule_naming_it_keeps_it_and_it_is_held_from_then_on() {
    let w = World::new();
    // Asked over MCP, the person approves keeping it: the question says what was made and what
    // it holds.
    let mut mcp = w.mcp_eliciting(&[], Some(json!({"decision": "allow_once"})));
    let (is_error, text) = mcp.call("Bash", json!({"command": GIT_WITH_HOOK}));
    assert!(!is_error, "{text}");
    assert!(w.root.join(".git/hooks/pre-commit").is_file(), "{text}");
    let made = w.root.join(".git");
    let question = mcp.asked.iter().find(|q| q.contains("where there was none")).cloned().unwrap_or_default();
    assert!(
        question.contains(&made.display().to_string()) && question.contains("the pre-commit hook"),
        "{:?}",
        mcp.asked
    );
    assert!(question.contains("answering no moves it aside"), "{question}");
    assert!(text.contains("it is kept, as the user or an allow rule approved"), "{text}");
    // From the next command on it is held read-only like any protected entry.
    let (_, text) = mcp.call("Bash", json!({"command": "echo x > .git/hooks/post-checkout"}));
    assert!(text.contains("Read-only file system"), "{text}");
    mcp.terminate();

    // An allow rule naming the place keeps it without asking.
    let (code, out) =
        w.bash("mkdir web && cd web && git init -q", &["--allow", "Bash", "--allow", "Edit(**/web/.git)"]);
    assert_eq!(code, 0, "{out}");
    assert!(w.root.join("web/.git/HEAD").is_file(), "{out}");
    assert!(out.contains("it is kept, as the user or an allow rule approved"), "{out}");
}

#[test]
fn a_background_command_s_is_moved_aside_when_it_ends_and_its_output_says_so() {
    let w = World::new();
    let mut mcp = w.mcp(&["--allow", "Bash"]);
    let command = "sleep 0.5; python3 -c \"import os; os.mkdir('.idea')\" && echo made";
    let (is_error, started) = mcp.call("Bash", json!({"command": command, "run_in_background": true}));
    assert!(!is_error, "{started}");
    let (_, output) = mcp.call("TaskOutput", json!({"task_id": "bash_1", "timeout": 20000}));
    assert!(!w.root.join(".idea").exists() && w.root.join(".idea.set-aside").is_dir(), "{output}");
    assert!(output.contains("background command `bash_1`") && output.contains("moved to"), "{output}");
}

#[test]
fn a_project_s_hook_and_server_cannot_leave_one_either() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w.write(
        "tools/server.py",
        "import os\nos.makedirs('.vscode', exist_ok=True)\nopen('.vscode/tasks.json', 'w').write('{}')\n",
    );
    w.write(
        ".mcp.json",
        &json!({"mcpServers": {"local": {"command": "python3", "args": ["tools/server.py"]}}}).to_string(),
    );
    w.write(
        ".toolbelt/config.toml",
        "[[hooks.PostToolUse]]\nhooks = [{ type = \"command\", command = \"mkdir -p .idea\" }]\n",
    );
    w.trust();
    let (code, _, err) = w.run(&["call", "TodoWrite", r#"{"todos": []}"#]);
    assert_eq!(code, 0, "{err}");
    assert!(!w.root.join(".idea").exists() && w.root.join(".idea.set-aside").is_dir(), "{err}");
    assert!(err.contains("the hook `mkdir -p .idea`"), "{err}");

    let mut mcp = w.mcp(&[]);
    let _ = mcp.tool_names();
    mcp.terminate();
    assert!(!w.root.join(".vscode").exists() && w.root.join(".vscode.set-aside/tasks.json").is_file());
}

#[test]
fn one_made_in_a_settled_folder_is_caught_even_with_the_folder_s_times_set_back() {
    // Folders unchanged for seconds are trusted by their status-change time to hold nothing
    // new; a command that makes an entry and then sets the folder's times back must still be
    // caught (setting times moves the ctime on).
    let w = World::new();
    w.write("lib/mod.py", "");
    w.write(
        "plant.py",
        "import os\nbefore = {d: os.stat(d) for d in ('lib', '.')}\nos.makedirs('lib/.idea')\n\
         open('.mcp.json', 'w').write('{}')\nfor d, st in before.items():\n    \
         os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))\n",
    );
    std::thread::sleep(std::time::Duration::from_secs(4));
    let (code, out, err) = w.run(&["call", "Bash", r#"{"command":"python3 plant.py"}"#, "--allow", "Bash"]);
    assert_eq!(code, 0, "{out}{err}");
    for made in [w.root.join("lib/.idea"), w.root.join(".mcp.json")] {
        assert!(out.contains(&format!("`{}`", made.display())), "the result names {}: {out}", made.display());
        assert!(!made.exists(), "{out}");
    }
}
