//! "Read-only" git starts no program a repository names.

use std::process::Command;

use serde_json::json;

use crate::World;

/// A bare repository committed inside the workspace, whose config names programs for
/// textconv, external diff, the file-system monitor and the pager.
fn embedded_bare_repository(w: &World) {
    let src = w.outside.join("src");
    let git = |dir: &std::path::Path, args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(dir).env("HOME", &w.home).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("f.txt"), "a\n").unwrap();
    std::fs::write(src.join(".gitattributes"), "* diff=x\n").unwrap();
    git(&src, &["init", "-q"]);
    git(&src, &["add", "."]);
    git(&src, &["-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qm", "1"]);
    std::fs::write(src.join("f.txt"), "a\nb\n").unwrap();
    git(&src, &["-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qam", "2"]);
    git(&w.root, &["clone", "-q", "--bare", &src.display().to_string(), "evil"]);
    let evil = w.root.join("evil");
    std::fs::write(evil.join("info/attributes"), "* diff=x\n").unwrap();
    let touch = |name: &str| format!("touch '{}'", w.marker(name).display());
    for (key, value) in [
        ("diff.x.textconv", format!("sh -c '{}; cat \"$0\"'", touch("textconv").replace('\'', "'\\''"))),
        ("diff.external", touch("external-diff")),
        ("core.fsmonitor", touch("fsmonitor")),
        ("core.pager", format!("{}; cat", touch("pager"))),
    ] {
        git(&evil, &["config", key, &value]);
    }
}

const READ_ONLY_GIT: &[&str] = &[
    "git -C evil log -p",
    "git -C evil show HEAD",
    "git -C evil diff HEAD~1 HEAD",
    "git -C evil blame f.txt",
    "git -C evil log --stat",
    "cd evil && git log -p",
];

#[test]
fn read_only_git_runs_no_program_a_repository_names() {
    let w = World::with_git();
    embedded_bare_repository(&w);
    // The attack is real: git run plainly in the workspace starts the repository's programs.
    for command in READ_ONLY_GIT {
        let _ = Command::new("sh").args(["-c", command]).current_dir(&w.root).env("HOME", &w.home).output().unwrap();
    }
    let plain = w.markers_left();
    assert!(plain.contains(&"textconv".to_string()) && plain.contains(&"external-diff".to_string()), "{plain:?}");
    for marker in plain {
        std::fs::remove_file(w.marker(&marker)).unwrap();
    }

    // Through toolbelt, in every mode that runs read-only commands without asking, nothing
    // starts.
    for mode in ["default", "plan", "dontAsk"] {
        for command in READ_ONLY_GIT {
            let (_, explained, _) =
                w.run(&["permissions", "explain", "Bash", &json!({"command": command}).to_string(), "--mode", mode]);
            assert!(explained.contains("decision:   allow"), "{mode} {command} is read-only: {explained}");
            let (_, out) = w.bash(command, &["--mode", mode]);
            assert_eq!(w.markers_left(), Vec::<String>::new(), "{mode} `{command}` started a program: {out}");
        }
    }
    // Over MCP too.
    let mut mcp = w.mcp(&[]);
    let (_, text) = mcp.call("Bash", json!({"command": "git -C evil log -p"}));
    assert!(text.contains("safe.bareRepository"), "git refuses the embedded repository: {text}");
    drop(mcp);
    assert!(w.markers_left().is_empty());
}

#[test]
fn a_planted_fsmonitor_does_not_start_from_a_command() {
    let w = World::with_git();
    // As if the repository arrived with a hostile .git/config (an archive, not a clone).
    let marker = w.marker("fsmonitor");
    let out = w.git(&["config", "core.fsmonitor", &format!("touch '{}'", marker.display())]);
    assert!(out.status.success());
    w.write("a.txt", "changed\n");
    let (code, out) = w.bash("git status --short", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a.txt"), "{out}");
    assert!(!marker.exists(), "core.fsmonitor is off for every command");
}

#[test]
fn options_that_point_git_elsewhere_are_not_read_only() {
    let w = World::with_git();
    for command in [
        "git --git-dir=evil log -p",
        "git --work-tree=. --git-dir=evil status",
        "git -c core.pager=less log",
        "git --exec-path=/tmp log",
        "GIT_DIR=evil git log",
        "git log --show-signature",
        "git diff --ext-diff",
    ] {
        let (_, explained, _) = w.run(&["permissions", "explain", "Bash", &json!({"command": command}).to_string()]);
        assert!(explained.contains("decision:   ask"), "{command}: {explained}");
    }
}

#[test]
fn an_untrusted_repository_s_own_drivers_do_not_run_from_read_only_git() {
    // A folder that arrived with its `.git` (an archive, a shared drive): its configuration
    // names a textconv driver and an external diff, its attributes pick the driver.
    let w = World::with_git();
    w.write("a.txt", "one\ntwo\n");
    w.git(&["-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qam", "two"]);
    w.write("a.txt", "one\ntwo\nthree\n");
    std::fs::create_dir_all(w.root.join(".git/info")).unwrap();
    std::fs::write(w.root.join(".git/info/attributes"), "* diff=x\n").unwrap();
    let ran = |name: &str| w.root.join(format!("{name}-ran"));
    let touch = |name: &str| format!("touch '{}'", ran(name).display());
    w.git(&["config", "diff.x.textconv", &format!("sh -c '{}; cat \"$0\"'", touch("textconv").replace('\'', "'\\''"))]);
    w.git(&["config", "diff.external", &touch("external-diff")]);
    let ran_any = || ran("textconv").exists() || ran("external-diff").exists();

    for command in ["git log -p", "git diff", "git show HEAD", "git diff HEAD~1 HEAD", "git blame a.txt", "git status"]
    {
        let (_, explained, _) = w.run(&["permissions", "explain", "Bash", &json!({"command": command}).to_string()]);
        assert!(explained.contains("decision:   allow"), "`{command}` is read-only: {explained}");
        let (code, out) = w.bash(command, &[]);
        assert_eq!(code, 1, "`{command}` ran: {out}");
        assert!(out.contains("diff.x.textconv") && out.contains("toolbelt trust"), "`{command}`: {out}");
        assert!(!ran_any(), "`{command}` started the repository's program");
    }
    // Commands that run no git are not looked at; bypass mode asks too (nothing confirmed
    // the repository's programs).
    assert_eq!(w.bash("ls", &[]).0, 0);
    let (code, out) = w.bash("git log -p", &["--mode", "bypassPermissions"]);
    assert!(code == 1 && !ran_any(), "{out}");

    // Once a person trusts the project, its git configuration is theirs: the drivers run.
    w.trust();
    let (code, out) = w.bash("git log -p -1", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(ran_any(), "the trusted repository's driver runs: {out}");
}
