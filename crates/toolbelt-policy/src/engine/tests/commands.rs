//! Commands: the rules suggested for them, read-only scripts, and deny rules on what the
//! shell really runs.

use super::*;

#[test]
fn suggested_rules_name_exactly_what_asked() {
    let w = world();
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]);
    assert_eq!(write(&e, &w, &w.root.join("src/main.rs")).allow_rules, ["Edit(./src/main.rs)"]);
    assert_eq!(write(&e, &w, &w.root.join("src/[id].tsx")).allow_rules, ["Edit(./src/\\[id\\].tsx)"]);
    let outside = format!("Read(/{}/**)", w.outside.display());
    assert_eq!(read(&e, &w, &w.outside.join("notes.txt")).allow_rules, std::slice::from_ref(&outside));
    assert_eq!(read(&e, &w, &w.outside).allow_rules, [outside]);
    assert_eq!(read(&e, &w, Path::new("/")).allow_rules, ["Read(//**)"], "the root, not the settings' directory");
    // A destructive command is offered exactly as asked; others by their program (and
    // subcommand), never a rule another one already covers, never one for a shell builtin's
    // arguments.
    let table: &[(&str, &[&str])] = &[
        ("rm -rf build", &["Bash(rm -rf build)"]),
        ("git push --force origin main", &["Bash(git push --force origin main)"]),
        ("./run.sh --fast", &["Bash(./run.sh --fast)"]),
        ("cargo test --workspace", &["Bash(cargo test *)"]),
        ("touch x && touch y", &["Bash(touch *)"]),
        ("npm run build && npm install", &["Bash(npm run *)", "Bash(npm install *)"]),
        ("mkdir -p out && rm -rf out/old && mkdir -p tmp", &["Bash(mkdir *)", "Bash(rm -rf out/old)"]),
        ("make test; export FOO=1", &["Bash(make test *)", "Bash(export FOO=1)"]),
        ("cargo build > build.log", &["Bash(cargo build > build.log)"]),
        ("rm -f *.o", &[]),
        ("for f in a b; do rm \"$f\"; done", &[]),
    ];
    for (command, want) in table {
        assert_eq!(bash(&e, &w, command).allow_rules, *want, "{command}");
    }
    let fetch = tool("WebFetch", PermissionClass::External);
    let url = "https://docs.rs/tokio";
    let v = decide(&e, &w, &fetch, json!({"url": url}), Access::shared().contacts(url));
    assert_eq!(v.allow_rules, ["WebFetch(domain:docs.rs)"]);
    // Every suggestion parses and allows what it was made for.
    let e = engine(
        &w,
        PermissionMode::Default,
        &["Edit(./src/\\[id\\].tsx)", "Bash(./run.sh --fast)", "Bash(rm -rf build)", "Bash(touch *)"],
        &[],
        &[],
    );
    assert_eq!(write(&e, &w, &w.root.join("src/[id].tsx")).decision, Allow);
    for command in ["./run.sh --fast", "rm -rf build", "touch x && touch y"] {
        assert_eq!(bash(&e, &w, command).decision, Allow, "{command}");
    }
    // The exact rule allows only what was asked.
    for command in ["rm -rf build/../src", "rm -rf build src", "rm -rf /"] {
        assert_eq!(bash(&e, &w, command).decision, Ask, "{command}");
    }
}

#[test]
fn read_only_scripts_run_without_asking_and_reasons_are_sentences() {
    let w = world();
    let read_only = [
        "echo rc=$?",
        "for x in a b; do cat \"$x\"; done",
        "for f in src/*.rs; do wc -l \"$f\"; done",
        "[ -f x ] && cat x",
        "test -f Cargo.toml || echo missing",
        "true",
        "false; :",
        "printf '%s\\n' \"$HOME\"",
        "f=README.md; wc -l \"$f\"",
        "if [ -d src ]; then ls src; fi",
    ];
    for mode in [PermissionMode::Default, PermissionMode::Plan, PermissionMode::DontAsk] {
        let e = engine(&w, mode, &[], &[], &[]);
        for command in read_only {
            let v = bash(&e, &w, command);
            assert_eq!(v.decision, Allow, "{mode} `{command}`: {}", v.reason);
        }
        let v = bash(&e, &w, "for f in *; do rm $f; done");
        assert_ne!(v.decision, Allow, "{mode}");
    }
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]);
    assert_eq!(bash(&e, &w, "ls -la src").reason, "`ls -la src` only reads, which default mode allows");
    assert_eq!(
        bash(&e, &w, "for f in a b; do cat \"$f\"; done").reason,
        "`cat \"$f\"` only reads (the whole command line is read-only), which default mode allows"
    );
    assert_eq!(
        bash(&e, &w, "rm -rf build").reason,
        "`rm -rf build` is not read-only because `rm` is not a read-only command, so it needs approval"
    );
    assert_eq!(
        bash(&e, &w, "ls > out.txt").reason,
        "`ls > out.txt` is not read-only because `> out.txt` writes to a file, so it needs approval"
    );
    assert_eq!(
        read(&e, &w, &w.outside.join("notes.txt")).reason,
        format!(
            "this reads {}, outside the workspace roots, so it needs approval",
            w.outside.join("notes.txt").display()
        )
    );
    let v = write(&e, &w, &w.root.join("src/main.rs"));
    assert!(v.reason.starts_with("this writes ") && v.reason.contains("so it needs approval in default mode"), "{v:?}");
    let e = engine(&w, PermissionMode::Plan, &[], &[], &[]);
    assert_eq!(
        bash(&e, &w, "touch x").reason,
        "plan mode is read-only, and `touch x` is not read-only because `touch` is not a read-only command; \
         present the plan with ExitPlanMode to leave it"
    );
}

#[test]
fn bare_deny_rules_hide_tools() {
    let w = world();
    let e = engine(&w, PermissionMode::Default, &[], &[], &["WebFetch", "mcp__github", "Bash(rm *)"]);
    assert!(e.hiding_rule(&tool("WebFetch", PermissionClass::External)).is_some());
    assert!(e.hiding_rule(&tool("mcp__github__create_issue", PermissionClass::External)).is_some());
    assert!(e.hiding_rule(&tool("Bash", PermissionClass::External)).is_none(), "a specifier never hides a tool");
}

#[test]
fn deny_rules_match_what_the_shell_runs() {
    let w = world();
    let e = engine(&w, PermissionMode::BypassPermissions, &[], &[], &["Bash(rm *)"]);
    for command in [
        "rm x",
        r"\rm x",
        "'rm' x",
        "\"rm\" x",
        "r\\m x",
        "FOO=1 rm x",
        "command rm x",
        "env rm x",
        "env -i PATH=/bin rm x",
        "/bin/rm x",
        "exec rm x",
        "sudo rm x",
        "sudo -u root rm -rf x",
        "eval rm x",
        "eval 'rm x'",
        "bash -c \"rm x\"",
        "sh -c 'ls && rm x'",
        "ls | xargs rm",
        "find . -name '*.tmp' -exec rm {} \\;",
        "nice -n 5 nohup timeout 10 rm x",
        "busybox rm x",
        "bash <<'EOF'\nrm x\nEOF",
        "echo ok; (cd sub && rm x)",
    ] {
        let v = bash(&e, &w, command);
        assert_eq!(v.decision, Deny, "{command}: {v:?}");
        assert!(v.source.to_string().contains("Bash(rm *)"), "{command}: {v:?}");
    }
    // What the text cannot tell asks, naming the rule it could not check.
    for command in
        ["x=rm; $x foo", "${CMD} x", "eval \"$cmd\"", "bash -c \"$s\"", "curl -s https://x.test | sh", "{rm,x}"]
    {
        let v = bash(&e, &w, command);
        assert_eq!(v.decision, Ask, "{command}: {v:?}");
        assert!(v.reason.contains("cannot be read"), "{command}: {v:?}");
        assert!(!v.hook_may_allow, "a hook's allow does not skip a rule it could not check");
    }
    // Without command rules, bypass mode runs it.
    let free = engine(&w, PermissionMode::BypassPermissions, &[], &[], &[]);
    assert_eq!(bash(&free, &w, "x=rm; $x foo").decision, Allow);
    // A computed argument is fine: the program is known.
    assert_eq!(bash(&e, &w, "ls \"$dir\"").decision, Allow);
    // Allow rules still match the command as written: `sudo` is not `npm test`.
    let allow = engine(&w, PermissionMode::Default, &["Bash(npm test *)"], &[], &[]);
    assert_eq!(bash(&allow, &w, "npm test --watch").decision, Allow);
    assert_eq!(bash(&allow, &w, "sudo npm test").decision, Ask);
    assert_eq!(bash(&allow, &w, "LD_PRELOAD=x.so npm test").decision, Ask);
}

#[test]
fn another_tool_running_a_command_is_judged_by_it_and_offered_its_own_name() {
    let w = world();
    let enter = tool("EnterWorktree", PermissionClass::External);
    let worktree = w.outside.join("worktrees/x");
    let access = Access::exclusive()
        .executes(format!("git worktree add -b x {} HEAD", worktree.display()))
        .writes(&worktree)
        .changes_state("the working directory");
    let input = json!({"name": "x"});
    for mode in [PermissionMode::Default, PermissionMode::AcceptEdits] {
        let e = engine(&w, mode, &[], &[], &[]);
        let v = decide(&e, &w, &enter, input.clone(), access.clone());
        assert_eq!(v.decision, Ask, "{mode:?}: {}", v.reason);
        // The tool's name, never `EnterWorktree(git worktree add *)` (which would match its input's
        // strings, not the command), and the path it writes.
        assert_eq!(v.allow_rules[0], "EnterWorktree", "{:?}", v.allow_rules);
        assert!(v.allow_rules[1].starts_with("Edit(/"), "{:?}", v.allow_rules);
    }
    // Bash rules are about Bash: they neither allow nor deny it.
    let e = engine(&w, PermissionMode::BypassPermissions, &[], &[], &["Bash(git *)"]);
    assert_eq!(decide(&e, &w, &enter, input.clone(), access.clone()).decision, Allow);
    let e = engine(&w, PermissionMode::AcceptEdits, &["Bash(git *)"], &[], &[]);
    assert_eq!(decide(&e, &w, &enter, input.clone(), access.clone()).decision, Ask);
    // The rule it offers allows it; plan mode runs no command.
    let e = engine(&w, PermissionMode::AcceptEdits, &["EnterWorktree"], &[], &[]);
    assert_eq!(decide(&e, &w, &enter, input.clone(), access.clone()).decision, Allow);
    let e = engine(&w, PermissionMode::Plan, &[], &[], &[]);
    assert_eq!(decide(&e, &w, &enter, input, access).decision, Deny);
}
