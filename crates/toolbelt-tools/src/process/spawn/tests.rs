use super::*;

#[test]
fn the_prologue_shares_the_first_line() {
    assert_eq!(script("ls", false, None, false), "exec 98>&0 </dev/null; ls");
    assert_eq!(
        script("ls", true, None, false),
        "exec 98>&0 </dev/null; ls",
        "no trap without a way to change directory"
    );
    let joined = script("ls", false, Some(Path::new("/cg/cmd-1/cgroup.procs")), false);
    assert_eq!(joined, "exec 98>&0 </dev/null; builtin echo 0 2>/dev/null >'/cg/cmd-1/cgroup.procs'; ls");
    let s = script("cd x\nexit 3", true, None, false);
    assert!(s.starts_with("exec 98>&0 </dev/null; trap '") && s.ends_with("EXIT; cd x\nexit 3"), "{s}");
    for command in ["pushd /tmp", ". ./env.sh", "x; . env", "source env", "eval \"$X\""] {
        assert!(may_change_dir(command), "{command}");
    }
    for command in ["ls -la", "cargo test", "echo a.b", "./run.sh"] {
        assert!(!may_change_dir(command), "{command}");
    }
}

/// What a command can see of how it was started: its signal state, capabilities, no-new-privs
/// and seccomp status, process group, session and controlling terminal, cgroup, descriptors, environment, working directory,
/// stdin, and whether it may write where it runs.
/// (bash reads its own status and descriptors first, with builtins: once it has started a
/// child, its signal mask and descriptors depend on timing.)
const PROBE: &str = r#"while IFS= read -r l; do case $l in SigBlk*|SigIgn*|Cap*|NoNewPrivs*|Seccomp*) echo "$l";; esac; done < /proc/$$/status
fds=(/proc/$$/fd/*); echo "descriptors: ${fds[*]##*/} "
awk '{print "group leader:", ($5 == $1), "session leader:", ($6 == $1), "terminal:", $7}' /proc/$$/stat
echo "in its own cgroup: $(grep -c '/toolbelt-[0-9]*-[0-9]*$' /proc/$$/cgroup)"
env | grep -v '^TOOLBELT_CALL_ID=' | sort
echo "tag: ${TOOLBELT_CALL_ID:+set}"
echo "cwd: $(pwd -P)"
read -r line; echo "stdin: $?"
touch here 2>/dev/null; echo "write here: $?"; rm -f here
echo "exe: $(readlink /proc/$$/exe)""#;

/// Runs [`PROBE`] in `cwd`, started with `clone3` or by tokio, sandboxed or not; its output.
async fn observe(clone: bool, confinement: Option<Confinement>, cwd: &Path) -> String {
    let env = vec![("TB_SPAWN_TEST_SET".into(), Some("yes".into())), ("HOME".into(), None)];
    let setup = Setup { env, confinement, control_room: None };
    let cgroup = crate::process::cgroup::CommandCgroup::for_command();
    let launch = Launch { command: PROBE, cwd, sink: Sink::Pipes, report_cwd: true, cgroup, setup };
    let mut spawned = spawn_with(launch, clone).unwrap();
    assert_eq!(matches!(spawned.child, Leader::Cloned(_)), clone, "started the way asked");
    let mut out = String::new();
    if let Some(mut stdout) = spawned.stdout.take() {
        use tokio::io::AsyncReadExt as _;
        stdout.read_to_string(&mut out).await.unwrap();
    }
    let status = spawned.child.wait().await.unwrap();
    assert!(status.success(), "{status:?}: {out}");
    spawned.tree.retire();
    out
}

fn sandbox(roots: &[PathBuf]) -> Option<Confinement> {
    use crate::process::sandbox::SandboxConfig;
    Confinement::for_command(&SandboxConfig::default(), roots, &[]).unwrap()
}

#[tokio::test]
async fn a_cloned_command_starts_as_a_forked_one_does() {
    if !clone::available() {
        eprintln!("skipped: no clone3 here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let plain = (observe(true, None, &root).await, observe(false, None, &root).await);
    // glibc's posix_spawn (tokio's spawn without a hook) would leave the C library's two
    // internal signals (32 and 33) ignored in the child; a forked child, and a cloned one, get
    // the server's dispositions, a handler becoming the default.
    let internal = |text: &str| text.lines().filter(|l| !l.starts_with("SigIgn:")).collect::<Vec<_>>().join("\n");
    assert_eq!(internal(&plain.0), internal(&plain.1));
    assert!(plain.0.contains("write here: 0") && plain.0.contains("Seccomp:\t0"), "{}", plain.0);
    assert!(plain.0.contains("group leader: 1") && plain.0.contains("descriptors: 0 1 "), "{}", plain.0);
    // A session of its own: no controlling terminal, whatever toolbelt has.
    assert!(plain.0.contains("session leader: 1 terminal: 0"), "{}", plain.0);
    assert!(plain.0.contains(" 98 ") && plain.0.contains("stdin: 1"), "{}", plain.0);
    assert!(plain.0.contains("TB_SPAWN_TEST_SET=yes") && !plain.0.contains("\nHOME="), "{}", plain.0);
    assert!(plain.0.contains("tag: set") && plain.0.contains("PAGER=cat"), "{}", plain.0);
    if crate::process::cgroup::base().is_ok() {
        assert!(plain.0.contains("in its own cgroup: 1"), "{}", plain.0);
    }
    let roots = [root.clone()];
    let confined = (observe(true, sandbox(&roots), &root).await, observe(false, sandbox(&roots), &root).await);
    assert_eq!(confined.0, confined.1);
    let text = &confined.0;
    assert!(
        text.contains("NoNewPrivs:\t1") && text.contains("Seccomp:\t2") && text.contains("CapEff:\t0000000000000000")
    );
    assert!(text.contains("write here: 0"), "{text}");
    if nix::unistd::geteuid().is_root() {
        // Started from the thread whose bounding set is empty, or having emptied its own.
        assert!(text.contains("CapBnd:\t0000000000000000"), "{text}");
        assert!(!plain.0.contains("CapBnd:\t0000000000000000"), "an unsandboxed command keeps them");
    }
}

#[tokio::test]
async fn a_working_directory_inside_a_protected_path_is_read_only_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let git = root.join(".git");
    std::fs::create_dir_all(git.join("hooks")).unwrap();
    let roots = [root.clone()];
    let Some(confinement) = sandbox(&roots) else { return };
    if confinement.read_only_binds().is_empty() {
        eprintln!("skipped: protected paths cannot be held here");
        return;
    }
    for clone in [true, false].into_iter().filter(|&c| !c || clone::available()) {
        let out = observe(clone, sandbox(&roots), &git).await;
        assert!(out.contains("write here: 1"), "started with clone3: {clone}\n{out}");
        assert!(out.contains(&format!("cwd: {}", git.display())), "{out}");
    }
    // The same through the public hook on a command of one's own.
    let mut command = tokio::process::Command::new("bash");
    command.args(["-c", "touch x hooks/y"]).current_dir(&git).stderr(Stdio::null());
    sandbox(&roots).unwrap().install(&mut command, None);
    assert!(!command.status().await.unwrap().success());
    assert!(!git.join("x").exists() && !git.join("hooks/y").exists());
}

#[tokio::test]
async fn a_session_s_command_has_its_terminal_both_ways_sandboxed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let roots = [root.clone()];
    let probe = "tty; stty size; awk '{print \"session leader:\", ($6 == $1), \"terminal:\", ($7 != 0)}' /proc/$$/stat; \
                 echo \"98: $(readlink /proc/$$/fd/98 | cut -c1-5)\"; read -r typed; echo \"typed: $typed\"";
    for clone in [true, false].into_iter().filter(|&c| !c || clone::available()) {
        for confinement in [None, sandbox(&roots)] {
            let pty = crate::process::pty::open(crate::process::pty::Size { rows: 40, cols: 120 }).unwrap();
            let typed = Typed { input: pty.slave.try_clone().unwrap(), output: pty.slave, terminal: true };
            let setup = Setup { env: Vec::new(), confinement, control_room: None };
            let launch =
                Launch { command: probe, cwd: &root, sink: Sink::Typed(typed), report_cwd: false, cgroup: None, setup };
            let mut spawned = spawn_with(launch, clone).unwrap();
            nix::unistd::write(&pty.master, b"hello\n").unwrap();
            let mut out = Vec::new();
            let mut chunk = [0u8; 4096];
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            // Non-blocking: read until the command is gone and its terminal reads as closed.
            loop {
                match nix::unistd::read(&pty.master, &mut chunk) {
                    Ok(0) | Err(Errno::EIO) => break,
                    Ok(n) => out.extend_from_slice(&chunk[..n]),
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                }
                assert!(std::time::Instant::now() < deadline, "{}", String::from_utf8_lossy(&out));
            }
            let status = spawned.child.wait().await.unwrap();
            spawned.tree.retire();
            let out = String::from_utf8_lossy(&out);
            assert!(status.success(), "{status:?}: {out}");
            assert!(out.contains("/dev/pts/") && out.contains("40 120"), "clone {clone}: {out}");
            assert!(out.contains("session leader: 1 terminal: 1"), "its controlling terminal: {out}");
            assert!(out.contains("98: pipe:") && out.contains("typed: hello"), "{out}");
        }
    }
}
