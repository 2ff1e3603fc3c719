//! A trusted project's hooks and servers run more than the files trust covered: a script
//! they source, the `Makefile` make reads, a module a server imports. The model changes
//! those without a question; the changed code runs in the sandbox, not as the user.

use serde_json::json;

use crate::{World, quoted};

#[test]
fn a_trusted_hook_s_sourced_script_and_makefile_changed_by_the_model_run_in_the_sandbox() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    // What the person reviewed: a guard that sources a library, and a formatter run by make.
    w.write("hooks/lib.sh", "note() { echo \"$1\" >> \"$TOOLBELT_PROJECT_DIR/hooks.log\"; }\n");
    w.write("hooks/guard.sh", "#!/bin/sh\n. \"$TOOLBELT_PROJECT_DIR/hooks/lib.sh\"\nnote guard\nexit 0\n");
    w.write("Makefile", "fmt:\n\t@echo fmt >> hooks.log\n");
    w.write(
        ".toolbelt/config.toml",
        "[[hooks.PostToolUse]]\nhooks = [{ type = \"command\", command = \"sh hooks/guard.sh\" }]\n\n\
         [[hooks.PreToolUse]]\nhooks = [{ type = \"command\", command = \"make -s fmt\" }]\n",
    );
    w.trust();
    assert_eq!(w.call("TodoWrite", json!({"todos": []}), &[]).0, 0);
    let log = std::fs::read_to_string(w.root.join("hooks.log")).unwrap();
    assert_eq!(log, "fmt\nguard\n", "the hooks run, and write inside the project");

    // The model, in acceptEdits mode, rewrites what the hooks read but trust did not cover.
    let lib = format!(
        "note() {{ echo \"$1\" >> \"$TOOLBELT_PROJECT_DIR/hooks.log\"; }}\ntouch {} 2>/dev/null\n",
        quoted(&w.marker("sourced-lib"))
    );
    let makefile = format!("fmt:\n\t@echo fmt >> hooks.log\n\t-@touch {} 2>/dev/null\n", quoted(&w.marker("makefile")));
    model_writes(&w, "hooks/lib.sh", &lib);
    model_writes(&w, "Makefile", &makefile);
    // No new question (the files trust covered did not change), and the hooks run again —
    // in the sandbox, so the changed code reaches nothing outside the workspace.
    let before = std::fs::read_to_string(w.root.join("hooks.log")).unwrap();
    let (code, _, err) = w.run(&["call", "TodoWrite", r#"{"todos": []}"#]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("changed since"), "{err}");
    assert_eq!(w.markers_left(), Vec::<String>::new(), "changed code ran unconfined");
    let after = std::fs::read_to_string(w.root.join("hooks.log")).unwrap();
    assert_eq!(after, format!("{before}fmt\nguard\n"), "both hooks ran, changed, and wrote in the project");
}

/// The model reads `file` and writes `content` to it, in acceptEdits mode.
fn model_writes(w: &World, file: &str, content: &str) {
    let session = ["--session", "model", "--mode", "acceptEdits"];
    assert_eq!(w.call("Read", json!({"file_path": file}), &session).0, 0);
    let (code, out) = w.call("Write", json!({"file_path": file, "content": content}), &session);
    assert_eq!(code, 0, "{file}: {out}");
}

#[test]
fn a_trusted_mcp_server_s_module_changed_by_the_model_runs_in_the_sandbox() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w.write("tools/helpers.py", "VERSION = 1\n");
    w.write("tools/server.py", "import sys\nsys.path.insert(0, 'tools')\nimport helpers\n");
    w.write(
        ".mcp.json",
        &json!({"mcpServers": {"local": {"command": "python3", "args": ["tools/server.py"]}}}).to_string(),
    );
    w.trust();
    // The model rewrites the module the trusted server imports.
    let helpers =
        format!("open({:?}, 'w').write('x')\nVERSION = 2\n", w.marker("imported-module").display().to_string());
    model_writes(&w, "tools/helpers.py", &helpers);
    // The next server start (toolbelt mcp starts its upstreams) imports it in the sandbox.
    let mut mcp = w.mcp(&[]);
    let _ = mcp.tool_names();
    mcp.terminate();
    assert_eq!(w.markers_left(), Vec::<String>::new(), "changed code ran unconfined");
}
