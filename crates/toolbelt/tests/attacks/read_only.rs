//! "Read-only" scripts that a checkout's file names or the environment would turn into code:
//! `test -v NAME` evaluates an array subscript in NAME, and a glob, an unquoted variable or a
//! `printf` format decided when the command runs can spell it.

use serde_json::json;

use crate::World;

/// What each payload creates inside the project, where a sandboxed command may write.
const PWNED: &str = "pwned";

fn hostile_checkout() -> World {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w.write("-v", "");
    w.write(&format!("a[$(touch${{IFS}}{PWNED})]"), "");
    w
}

#[test]
fn file_names_and_the_environment_cannot_make_a_test_run_code() {
    let w = hostile_checkout();
    // No space in it: an unquoted variable holding `-v PAYLOAD` splits into exactly two words.
    let payload = format!("a[$(touch${{IFS}}{PWNED})]");
    let commands = [
        "test *".to_string(),
        "[ * ]".to_string(),
        "printf * x".to_string(),
        "for f in *; do for g in *; do test \"$f\" \"$g\"; done; done".to_string(),
        format!("test \"$x\" '{payload}'"),
        "[ $y ]".to_string(),
    ];
    let run_plainly = |command: &str| {
        std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(&w.root)
            .env("x", "-v")
            .env("y", format!("-v {payload}"))
            .output()
            .unwrap();
        let hit = w.root.join(PWNED).exists();
        let _ = std::fs::remove_file(w.root.join(PWNED));
        hit
    };
    // The attacks are real: bash runs the payload.
    for command in &commands {
        assert!(run_plainly(command), "{command}");
    }
    // Through toolbelt, in every mode that runs read-only commands without asking, none of
    // them counts as read-only, so nothing runs.
    for mode in ["default", "plan", "dontAsk"] {
        for command in &commands {
            let out = w
                .toolbelt()
                .args(["call", "Bash", &json!({ "command": command }).to_string(), "--mode", mode])
                .env("x", "-v")
                .env("y", format!("-v {payload}"))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(1), "{mode} `{command}` ran: {text}");
            assert!(!w.root.join(PWNED).exists(), "{mode} `{command}` ran the payload: {text}");
        }
    }
    // Quoted, the same test only reads.
    let (code, out) = w.bash("test -e \"$x\"; echo rc=$?", &["--mode", "plan"]);
    assert!(code == 0 && out.contains("rc=1"), "{out}");
}
