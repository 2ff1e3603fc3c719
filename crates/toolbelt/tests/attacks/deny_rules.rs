//! Deny rules mean what they say: `Bash(rm *)` holds against every spelling of `rm` the
//! shell accepts, even in bypassPermissions mode.

use serde_json::json;

use crate::World;

/// Ways to run `rm x` that a rule matching text would miss.
const SPELLINGS: &[&str] = &[
    r"\rm x",
    "'rm' x",
    "\"rm\" x",
    "r\\m x",
    "FOO=1 rm x",
    "command rm x",
    "env rm x",
    "env -i PATH=/usr/bin:/bin rm x",
    "/bin/rm x",
    "/usr/bin/env rm x",
    "exec rm x",
    "sudo rm x",
    "nice -n 1 nohup timeout 5 rm x",
    "eval rm x",
    "eval 'rm x'",
    "bash -c \"rm x\"",
    "sh -c 'true && rm x'",
    "echo x | xargs rm",
    "find . -name x -exec rm {} \\;",
    "busybox rm x",
    "bash <<'EOF'\nrm x\nEOF",
    "(cd . && rm x)",
    "true; rm x",
    "coproc rm x",
    "coproc X { rm x; }",
    "coproc { rm x; }",
    "coproc (rm x)",
    "fakeroot rm x",
    "fakeroot -u -- rm x",
    "ssh-agent rm x",
    "ssh-agent -t 60 rm x",
    "fakeroot <<'EOF'\nrm x\nEOF",
];

/// Ways whose program the text cannot tell: asked about (nobody here: refused).
const OPAQUE: &[&str] = &[
    "x=rm; $x x",
    "CMD=rm; ${CMD} x",
    "c=x; eval \"rm $c\"",
    "bash -c \"$(printf 'rm x')\"",
    "echo 'rm x' | sh",
    "hash -p /bin/rm y; y x",
    "echo 'rm x' | fakeroot",
];

const FLAGS: &[&str] = &["--mode", "bypassPermissions", "--deny", "Bash(rm *)"];

#[test]
fn every_spelling_of_a_denied_command_is_refused() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    for command in SPELLINGS {
        w.write("x", "keep me\n");
        let (_, explained, _) =
            w.run(&[&["permissions", "explain", "Bash", &json!({"command": command}).to_string()][..], FLAGS].concat());
        assert!(explained.contains("decision:   deny") && explained.contains("Bash(rm *)"), "{command}: {explained}");
        let (code, out) = w.bash(command, FLAGS);
        assert_eq!(code, 1, "{command}: {out}");
        assert!(out.contains("a deny rule forbids"), "{command}: {out}");
        assert!(w.root.join("x").exists(), "`{command}` deleted the file");
    }
    for command in OPAQUE {
        w.write("x", "keep me\n");
        let (code, out) = w.bash(command, FLAGS);
        assert_eq!(code, 1, "{command}: {out}");
        assert!(out.contains("cannot be read from the command's text"), "{command}: {out}");
        assert!(w.root.join("x").exists(), "`{command}` deleted the file");
    }
    // Other commands still run in bypass mode.
    let (code, out) = w.bash("ls x && echo fine", FLAGS);
    assert_eq!((code, out.contains("fine")), (0, true), "{out}");
}

#[test]
fn over_mcp_too() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    w.write("x", "keep me\n");
    let mut mcp = w.mcp(FLAGS);
    for command in ["sudo rm x", "bash -c 'rm x'", "\\rm x", "x=rm; $x x"] {
        let (is_error, text) = mcp.call("Bash", json!({"command": command}));
        assert!(is_error && text.contains("permission denied"), "{command}: {text}");
    }
    drop(mcp);
    assert!(w.root.join("x").exists());
}

/// With the persistent shell, an alias (or a function, or `BASH_ENV`) one call leaves runs in
/// the next: an alias built from a variable named no denied program when it was made, and the
/// next call's text (`t`) names none either. Such a call asks where a rule about commands
/// exists, so nothing runs unasked.
#[test]
fn a_carried_alias_does_not_run_a_denied_program() {
    let w = World::new();
    let lines = [
        json!({"name": "Bash", "input": {"command": "shopt -s expand_aliases; P=tou; alias t=\"${P}ch carried\""}}),
        json!({"name": "Bash", "input": {"command": "t"}}),
    ];
    // The attack is real: without the rule, the alias runs `touch`.
    let proof = w.batch(&lines, &["--persistent-shell", "--allow", "Bash"]);
    assert_eq!(proof[1]["is_error"], false, "{}", proof[1]);
    assert!(w.root.join("carried").exists());
    std::fs::remove_file(w.root.join("carried")).unwrap();
    let results = w.batch(&lines, &["--persistent-shell", "--allow", "Bash", "--deny", "Bash(touch:*)"]);
    assert_eq!(results[1]["is_error"], true, "{}", results[1]);
    assert!(!w.root.join("carried").exists());
}
