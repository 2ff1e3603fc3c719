//! `toolbelt sandbox check`: the facts it prints and its exit status, on this machine and on
//! one where a seccomp profile hides Landlock (as some container runtimes do) — where a
//! project's hooks, which start only in the sandbox, do not start.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};

#[path = "common/hermetic.rs"]
mod hermetic;

fn toolbelt() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
    cmd.env("NO_COLOR", "1").env_remove("TOOLBELT_LOG").stdin(Stdio::null());
    cmd
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn check_prints_what_is_enforced_and_exits_0() {
    let out = toolbelt().args(["sandbox", "check"]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("kernel: Linux "), "{text}");
    assert!(lines[1].starts_with("Landlock: ABI "), "{text}");
    assert_eq!(
        &lines[2..8],
        [
            "filesystem write confinement (Landlock): yes",
            "TCP bind/connect confinement (Landlock): yes",
            "socket-family filter (seccomp): yes",
            "protected paths read-only in writable roots (.git, .toolbelt, .claude, .mcp.json, .vscode, .idea): yes (mount namespace)",
            "capabilities of commands: all dropped (bounding, ambient, inheritable, effective, permitted; root gains none at exec)",
            "device nodes, mounts, modules, reboot, kexec, bpf, keyrings, new namespaces (seccomp): refused",
        ]
    );
    // What the kernel's own setting says follows; it differs from machine to machine.
    assert!(
        lines[8].starts_with(
            "typing into a terminal (TIOCSTI, TIOCLINUX): refused: commands start without a controlling terminal \
             (a session of their own); the filter refuses both (seccomp)"
        ),
        "{text}"
    );
    assert_eq!(lines[9], "signals to processes outside the sandbox (Landlock ABI 6): refused");
    assert!(
        lines[10].starts_with("Unix sockets outside the workspace, network off: abstract names refused; paths "),
        "{text}"
    );
    assert!(lines[11].starts_with("a kill reaches every process a command starts (cgroup v2): yes"), "{text}");
    assert_eq!(&lines[12..], ["mode: workspace-write (network off)", "enforced: yes"]);

    for (flags, mode) in [
        (&["--sandbox", "read-only"][..], "mode: read-only (network off)"),
        (&["--network"], "mode: workspace-write (network on)"),
        (&["--sandbox", "danger-full-access"], "mode: danger-full-access (network not confined)"),
    ] {
        let out = toolbelt().args(["sandbox", "check"]).args(flags).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains(mode), "{}", stdout(&out));
    }
    let out = toolbelt().args(["sandbox", "check", "--sandbox", "sideways"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an unknown mode is a usage error");
}

/// A seccomp program making the Landlock system calls fail with ENOSYS.
fn hide_landlock() -> seccompiler::BpfProgram {
    use seccompiler::{SeccompAction, SeccompFilter};
    let rules = [libc::SYS_landlock_create_ruleset, libc::SYS_landlock_add_rule, libc::SYS_landlock_restrict_self]
        .into_iter()
        .map(|nr| (nr, Vec::new()))
        .collect();
    let arch = std::env::consts::ARCH.try_into().unwrap();
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch).unwrap();
    filter.try_into().unwrap()
}

/// Runs `toolbelt` with Landlock hidden by a seccomp filter installed before exec.
fn without_landlock(args: &[&str]) -> Output {
    let mut cmd = toolbelt();
    cmd.args(args);
    without_landlock_in(&mut cmd, hide_landlock())
}

/// Runs `cmd` with `program` (from [`hide_landlock`]) installed before exec.
#[allow(unsafe_code)]
fn without_landlock_in(cmd: &mut Command, program: seccompiler::BpfProgram) -> Output {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the hook only makes the prctl and seccomp system calls on a program built
    // before the fork; it does not allocate.
    unsafe {
        cmd.pre_exec(move || seccompiler::apply_filter(&program).map_err(|_| std::io::Error::last_os_error()));
    }
    cmd.output().unwrap()
}

#[test]
fn check_exits_1_with_the_reason_when_landlock_is_hidden() {
    let out = without_landlock(&["sandbox", "check"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Landlock: unavailable: this kernel has no Landlock"), "{text}");
    assert!(text.contains("filesystem write confinement (Landlock): no: "), "{text}");
    assert!(text.contains("socket-family filter (seccomp): yes"), "{text}");
    let verdict = text.lines().find(|l| l.starts_with("enforced: ")).unwrap();
    assert!(verdict.starts_with("enforced: no: the workspace-write sandbox cannot be applied on this machine: "));
    assert!(verdict.contains("danger-full-access"), "says what to do: {verdict}");

    let out = without_landlock(&["sandbox", "check", "--sandbox", "danger-full-access"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn a_project_s_hook_does_not_start_unconfined_where_the_sandbox_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, home) = (base.join("project"), base.join("home"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        "[[hooks.SessionStart]]\nhooks = [{ type = \"command\", command = \"touch \\\"$TOOLBELT_PROJECT_DIR\\\"/ran\" }]\n",
    )
    .unwrap();
    let hermetic = || {
        let mut cmd = hermetic::toolbelt_with_home(&root, &home);
        cmd.env("NO_COLOR", "1").stdin(Stdio::null());
        cmd
    };
    assert!(hermetic().arg("trust").output().unwrap().status.success());
    let call = ["call", "TodoWrite", r#"{"todos": []}"#];
    let run = |env: Option<(&str, &str)>| {
        let program = hide_landlock();
        let mut cmd = hermetic();
        cmd.args(call);
        if let Some((key, value)) = env {
            cmd.env(key, value);
        }
        without_landlock_in(&mut cmd, program)
    };
    // By default nobody is there to ask each time: the hook is not started, saying why.
    let out = run(None);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("start only in the sandbox, which cannot be applied here"), "{err}");
    assert!(!root.join("ran").exists(), "the hook ran unconfined");
    // The user's own `if_unsandboxed = "run"` lets it run, unconfined, saying so.
    let out = run(Some(("TOOLBELT_SANDBOX__IF_UNSANDBOXED", "run")));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("run without the sandbox"), "{err}");
    assert!(root.join("ran").exists(), "{err}");
}
