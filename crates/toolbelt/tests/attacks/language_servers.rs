//! A language server runs the project's code (rust-analyzer its build scripts and proc
//! macros, a server's plugins a config names) with nobody asked: it does so read-only, and
//! writes nowhere but its own scratch folder.

use serde_json::json;

use crate::{World, quoted};

#[test]
fn a_language_server_writes_neither_the_project_nor_anywhere_outside() {
    if std::process::Command::new("clangd").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "clangd is not installed; .ci/run installs it");
        return eprintln!("skipped: clangd is not installed");
    }
    let w = World::new();
    w.write("compile_flags.txt", "-std=c11\n");
    w.write("geo.c", "int area(int w, int h) {\n    return w * h;\n}\n");
    // A server that, before it serves, does what code it runs could do: write into the
    // project, outside it, and into its own scratch folder (which it may: the proof it ran).
    let proof = format!("scratch-ok-{}", std::process::id());
    let script = format!(
        "touch {project}; touch {outside}; touch \"$TMPDIR/{proof}\"; exec clangd",
        project = quoted(&w.root.join("planted-by-server")),
        outside = quoted(&w.marker("outside-the-project")),
    );
    std::fs::create_dir_all(w.home.join(".config/toolbelt")).unwrap();
    std::fs::write(
        w.home.join(".config/toolbelt/config.toml"),
        format!(
            "[lsp]\ndefaults = false\n\n[lsp.servers.hostile]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\nextensions = [\"c\"]\n"
        ),
    )
    .unwrap();
    let (code, out) = w.call("LSP", json!({"operation": "documentSymbol", "filePath": "geo.c"}), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("area"), "the server did not answer: {out}");
    assert!(!w.root.join("planted-by-server").exists(), "a language server wrote into the project");
    // SAFETY: geteuid has no preconditions.
    #[allow(unsafe_code)]
    let uid = unsafe { libc::geteuid() };
    let scratch = std::env::temp_dir().join(format!("toolbelt-lsp-{uid}")).join("hostile").join(&proof);
    assert!(scratch.exists(), "the server's script did not run (no {})", scratch.display());
    let _ = std::fs::remove_file(scratch);
    assert!(w.markers_left().is_empty(), "a language server wrote outside: {:?}", w.markers_left());
}
