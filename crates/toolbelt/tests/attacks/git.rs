//! "Read-only" git starts no program a repository names, and neither do the worktree tools,
//! which move the workspace only where toolbelt makes worktrees, inside the workspace, or
//! where a person approved.

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

/// `toolbelt batch ARGS…` with these calls, in one session: the results, in order.
fn batch(w: &World, calls: &[(&str, serde_json::Value)], args: &[&str]) -> Vec<serde_json::Value> {
    let lines: Vec<serde_json::Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| json!({"id": i.to_string(), "name": name, "input": input}))
        .collect();
    w.batch(&lines, args)
}

fn text(result: &serde_json::Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn enter_worktree_path_does_not_move_the_workspace_where_git_s_list_says() {
    let w = World::with_git();
    // What a command can write when it made the repository itself (`git init` where there
    // was none) or with `sandbox.git_writes`: an administrative entry that makes
    // `git worktree list` name the user's home as a worktree of the repository.
    let head = String::from_utf8_lossy(&w.git(&["rev-parse", "HEAD"]).stdout).trim().to_string();
    w.write(".git/worktrees/evil/gitdir", &format!("{}/.git\n", w.home.display()));
    w.write(".git/worktrees/evil/HEAD", &format!("{head}\n"));
    w.write(".git/worktrees/evil/commondir", "../..\n");
    let listed = String::from_utf8_lossy(&w.git(&["worktree", "list", "--porcelain"]).stdout).into_owned();
    assert!(listed.contains(&format!("worktree {}\n", w.home.display())), "git lists it: {listed}");

    let planted = w.home.join("planted.txt");
    for mode in ["acceptEdits", "bypassPermissions"] {
        // EnterWorktree is allowed by rule; the outside path still needs a person, and
        // nobody is there to say yes.
        let results = batch(
            &w,
            &[
                ("EnterWorktree", json!({"path": w.home})),
                ("Bash", json!({"command": "pwd"})),
                ("Write", json!({"file_path": planted, "content": "written as if inside the workspace\n"})),
            ],
            &["--mode", mode, "--allow", "EnterWorktree"],
        );
        let entered = &results[0];
        assert_eq!(entered["outcome"], "denied", "{mode}: {entered}");
        assert!(text(entered).contains("outside"), "{mode}: says why: {entered}");
        assert_eq!(text(&results[1]).trim(), w.root.display().to_string(), "{mode}: the session stayed");
        if mode == "acceptEdits" {
            assert!(!planted.exists(), "the session's roots moved to the home directory: {}", results[2]);
        }
    }
    // Nor through a link inside the workspace that leads there.
    std::os::unix::fs::symlink(&w.home, w.root.join("home-link")).unwrap();
    let results = batch(
        &w,
        &[("EnterWorktree", json!({"path": "home-link"}))],
        &["--mode", "bypassPermissions", "--allow", "EnterWorktree"],
    );
    assert_eq!(results[0]["outcome"], "denied", "{}", results[0]);
    // Over MCP too.
    let mut mcp = w.mcp(&["--mode", "bypassPermissions", "--allow", "EnterWorktree"]);
    let (failed, said) = mcp.call("EnterWorktree", json!({"path": w.home}));
    assert!(failed && said.contains("outside"), "{said}");
    let (_, said) = mcp.call("Bash", json!({"command": "pwd"}));
    assert_eq!(said.trim(), w.root.display().to_string());
}

#[test]
fn a_worktree_inside_the_workspace_is_entered_without_asking() {
    let w = World::with_git();
    let inside = w.root.join("trees/inside");
    let out = w.git(&["worktree", "add", "-q", "-b", "inside", &inside.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = batch(
        &w,
        &[
            ("EnterWorktree", json!({"path": "trees/inside"})),
            ("Write", json!({"file_path": "written.txt", "content": "x\n"})),
            ("ExitWorktree", json!({"action": "keep"})),
        ],
        &["--mode", "acceptEdits", "--allow", "EnterWorktree", "--allow", "ExitWorktree"],
    );
    for result in &results {
        assert_eq!(result["outcome"], "ok", "{result}");
    }
    assert!(inside.join("written.txt").is_file());
}

#[test]
fn worktree_tools_run_no_filter_or_hook_a_repository_defines_for_worktrees_only() {
    let w = World::with_git();
    let touch = |name: &str| format!("touch '{}'", w.marker(name).display());
    // A filter the main checkout's configuration does not show: it is defined only where git
    // runs in a worktree (as a command that made the repository could write).
    let included = w.outside.join("worktrees.cfg");
    let hooks = w.outside.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-checkout", "reference-transaction"] {
        let path = hooks.join(hook);
        std::fs::write(&path, format!("#!/bin/sh\n{}\n", touch(hook))).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        &included,
        format!(
            "[filter \"x\"]\n\tsmudge = \"sh -c '{}; cat'\"\n\tclean = \"sh -c '{}; cat'\"\n\trequired = true\n\
             [core]\n\thooksPath = {}\n",
            touch("smudge"),
            touch("clean"),
            hooks.display()
        ),
    )
    .unwrap();
    assert!(
        w.git(&["config", "includeIf.gitdir:**/worktrees/**.path", &included.display().to_string()]).status.success()
    );
    w.write(".gitattributes", "*.txt filter=x\n");
    w.git(&["add", ".gitattributes"]);
    w.git(&["-c", "user.email=a@b.c", "-c", "user.name=a", "commit", "-qm", "attrs"]);
    assert_eq!(w.markers_left(), Vec::<String>::new(), "the main checkout does not see the filter");

    // The attack is real: git's own checkout of a worktree runs it, and so does `status` there.
    let plain = w.outside.join("plain");
    let out = w.git(&["worktree", "add", "-q", &plain.display().to_string()]);
    assert!(w.marker("smudge").exists(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(w.marker("reference-transaction").exists(), "{:?}", w.markers_left());
    for marker in w.markers_left() {
        std::fs::remove_file(w.marker(&marker)).unwrap();
    }
    // As long as the file was: only its contents, as cleaned, tell whether it changed.
    std::fs::write(plain.join("a.txt"), "two\n").unwrap();
    let _ = w.git(&["-C", &plain.display().to_string(), "status", "--porcelain"]);
    assert!(w.marker("clean").exists(), "status cleans changed files");
    for marker in w.markers_left() {
        std::fs::remove_file(w.marker(&marker)).unwrap();
    }
    assert!(w.git(&["worktree", "remove", "--force", &plain.display().to_string()]).status.success());

    // Through toolbelt: a worktree made, a file read and changed in it, the worktree removed.
    let results = batch(
        &w,
        &[
            ("EnterWorktree", json!({"name": "probe"})),
            ("Read", json!({"file_path": "a.txt"})),
            ("Write", json!({"file_path": "a.txt", "content": "two\n"})),
            ("ExitWorktree", json!({"action": "remove"})),
            ("ExitWorktree", json!({"action": "remove", "discard_changes": true})),
        ],
        &["--mode", "acceptEdits", "--allow", "EnterWorktree", "--allow", "ExitWorktree"],
    );
    assert_eq!(results[0]["outcome"], "ok", "{}", results[0]);
    assert!(text(&results[1]).contains("one"), "checked out as committed: {}", results[1]);
    assert!(text(&results[3]).contains("M a.txt"), "the change is seen: {}", results[3]);
    assert_eq!(results[4]["outcome"], "ok", "{}", results[4]);
    assert_eq!(w.markers_left(), Vec::<String>::new(), "{results:#?}");
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

#[test]
fn a_repository_naming_the_user_s_own_git_program_runs_without_asking() {
    // `git lfs install` wrote the filter into the user's own configuration, and `git lfs
    // install --local` the same lines into the repository's: nothing the user does not run
    // in every repository. A program of the repository's own still asks.
    let w = World::with_git();
    let program = "tr a-z a-z";
    w.git(&["config", "--global", "filter.own.clean", program]);
    w.git(&["config", "filter.own.clean", program]);
    w.write(".gitattributes", "*.txt filter=own\n");
    w.write("new.txt", "one\n");
    let (code, out) = w.bash("git status --short", &[]);
    assert_eq!(code, 0, "the user's own filter: {out}");
    assert!(out.contains("new.txt"), "{out}");
    w.git(&["config", "filter.own.smudge", "evil-smudge"]);
    let (code, out) = w.bash("git status --short", &[]);
    assert_eq!(code, 1, "a program only the repository names asks: {out}");
    assert!(out.contains("filter.own.smudge = evil-smudge") && !out.contains("filter.own.clean"), "{out}");
    // No allow rule would lift the question, so none is suggested.
    assert!(out.contains("no allow rule lifts this question") && !out.contains("add an allow rule"), "{out}");
}
