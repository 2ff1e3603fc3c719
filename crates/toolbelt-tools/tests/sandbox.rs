//! The OS sandbox with real processes: `bash -c` confined by `Confinement::install`, checked
//! for what it may write, which sockets it may open, and that the test process itself stays
//! unconfined.
//!
//! The roots and the "outside" directory live under the target directory, away from `/tmp`,
//! which is writable by policy. Socket families are checked by re-running this test binary as
//! a confined helper (the `socket_helper` test, which does nothing unless asked).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod shell_support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use toolbelt_tools::shell::{Confinement, SandboxConfig, SandboxMode, SandboxReport};

/// A directory outside `/tmp` and the other places the sandbox leaves writable.
fn scratch() -> tempfile::TempDir {
    shell_support::beyond_tmp()
}

fn config(mode: SandboxMode, network: bool) -> SandboxConfig {
    SandboxConfig { mode, network, ..SandboxConfig::default() }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `script` with `bash -c` under `config` with these roots.
async fn bash(config: &SandboxConfig, roots: &[PathBuf], script: &str) -> Run {
    bash_env(config, roots, script, &[]).await
}

async fn bash_env(config: &SandboxConfig, roots: &[PathBuf], script: &str, env: &[(&str, &str)]) -> Run {
    let mut command = tokio::process::Command::new("bash");
    command.arg("-c").arg(script).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command.envs(env.iter().copied());
    if let Some(confinement) = Confinement::for_command(config, roots, &[]).unwrap() {
        confinement.install(&mut command, None);
    }
    let out = command.output().await.unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn q(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[test]
fn this_machine_can_confine() {
    let report = SandboxReport::probe();
    let lines = report.lines().join("\n");
    assert!(report.can_confine(SandboxMode::WorkspaceWrite, false).is_ok(), "{lines}");
    assert!(report.can_confine(SandboxMode::ReadOnly, false).is_ok(), "{lines}");
    assert!(lines.contains("filesystem write confinement (Landlock): yes"), "{lines}");
    assert!(lines.contains("socket-family filter (seccomp): yes"), "{lines}");
}

#[tokio::test]
async fn workspace_write_allows_the_roots_and_temp_only() {
    let (root, outside) = (scratch(), scratch());
    let roots = vec![root.path().to_path_buf()];
    std::fs::write(outside.path().join("keep"), "kept").unwrap();
    let ww = config(SandboxMode::WorkspaceWrite, false);

    let inside = root.path().join("made");
    let run =
        bash(&ww, &roots, &format!("echo in > {} && mkdir {}.d && echo x > /dev/null", q(&inside), q(&inside))).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "in\n");

    let target = outside.path().join("new");
    let run = bash(&ww, &roots, &format!("echo out > {}", q(&target))).await;
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("Permission denied"), "{}", run.stderr);
    assert!(!target.exists(), "nothing written outside the roots");

    // Other ways of changing things outside fail too; a nested shell is confined as well.
    let keep = outside.path().join("keep");
    for script in [
        format!("rm {}", q(&keep)),
        format!(": > {}", q(&keep)),
        format!("truncate -s 0 {}", q(&keep)),
        format!("mkdir {}", q(&outside.path().join("dir"))),
        format!("mv {} {}", q(&inside), q(&outside.path().join("moved"))),
        format!("ln -s /etc/passwd {}", q(&outside.path().join("link"))),
        format!("bash -c \"echo nested > {}\"", q(&target)),
    ] {
        let run = bash(&ww, &roots, &script).await;
        assert_ne!(run.code, 0, "{script} should fail");
    }
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "kept");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1, "only `keep` outside");
    assert!(inside.exists(), "the move out of the roots failed");

    // The temp directory and extra writable roots are writable; reads work everywhere.
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let extra = SandboxConfig { writable_roots: vec![outside.path().to_path_buf()], ..ww.clone() };
    let script = format!(
        "echo t > {}/t && cat {} /etc/hostname >/dev/null && ls / >/dev/null && echo e > {}",
        q(tmp.path()),
        q(&keep),
        q(&target)
    );
    let run = bash(&extra, &roots, &script).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(tmp.path().join("t").exists() && target.exists());

    // The test process itself was never confined.
    std::fs::write(outside.path().join("after"), "still writable").unwrap();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    assert!(status.lines().any(|l| l.split_whitespace().eq(["Seccomp:", "0"])), "{status}");
    assert!(status.lines().any(|l| l.split_whitespace().eq(["NoNewPrivs:", "0"])), "{status}");
}

#[tokio::test]
async fn read_only_blocks_every_write_but_reads_work() {
    let root = scratch();
    let roots = vec![root.path().to_path_buf()];
    std::fs::write(root.path().join("a.txt"), "alpha\n").unwrap();
    let ro = config(SandboxMode::ReadOnly, false);
    let tmp = tempfile::tempdir_in("/tmp").unwrap();

    for target in [root.path().join("b.txt"), tmp.path().join("t")] {
        let run = bash(&ro, &roots, &format!("echo x > {}", q(&target))).await;
        assert_ne!(run.code, 0, "writing {} should fail", target.display());
        assert!(run.stderr.contains("Permission denied"), "{}", run.stderr);
        assert!(!target.exists());
    }
    let run = bash(&ro, &roots, &format!("rm {}", q(&root.path().join("a.txt")))).await;
    assert_ne!(run.code, 0);

    let run =
        bash(&ro, &roots, &format!("cat {} && ls / >/dev/null && echo x > /dev/null", q(&root.path().join("a.txt"))))
            .await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "alpha\n"), "{}", run.stderr);
}

#[tokio::test]
async fn danger_full_access_applies_nothing() {
    let outside = scratch();
    let full = config(SandboxMode::DangerFullAccess, false);
    assert!(Confinement::for_command(&full, &[], &[]).unwrap().is_none());
    let target = outside.path().join("free");
    let run = bash(&full, &[], &format!("echo free > {}", q(&target))).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(target.exists());
}

#[tokio::test]
async fn tcp_connect_follows_the_network_switch() {
    let root = scratch();
    let roots = vec![root.path().to_path_buf()];
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        let run = bash(&config(mode, false), &roots, &script).await;
        assert_ne!(run.code, 0, "{mode}: {}", run.stdout);
        assert!(!run.stdout.contains("connected"));
        assert!(run.stderr.contains("not permitted") || run.stderr.contains("denied"), "{}", run.stderr);

        let run = bash(&config(mode, true), &roots, &script).await;
        assert_eq!((run.code, run.stdout.as_str()), (0, "connected\n"), "{mode}: {}", run.stderr);
    }
    // UDP sockets too, with the network off.
    let udp = "exec 3<>/dev/udp/127.0.0.1/9 && echo opened";
    let run = bash(&config(SandboxMode::WorkspaceWrite, false), &roots, udp).await;
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("not permitted"), "{}", run.stderr);
    let run = bash(&config(SandboxMode::WorkspaceWrite, true), &roots, udp).await;
    assert_eq!(run.code, 0, "{}", run.stderr);

    // The test process can still connect.
    std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
}

/// Runs this test binary's `socket_helper` confined, which reports one `family=result` word
/// per socket it tried.
async fn socket_report(network: bool, root: &Path) -> String {
    let exe = std::env::current_exe().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let unix = root.join(format!("network-{network}.sock")).display().to_string();
    let run = bash_env(
        &config(SandboxMode::WorkspaceWrite, network),
        &[root.to_path_buf()],
        "exec \"$HELPER_EXE\" socket_helper --exact --nocapture --test-threads=1",
        &[("HELPER_EXE", exe.to_str().unwrap()), ("SANDBOX_HELPER_PORT", &port), ("SANDBOX_HELPER_UNIX", &unix)],
    )
    .await;
    // The harness prints the test's name first, on the same line.
    let line = run.stdout.lines().find_map(|l| l.find("sockets:").map(|at| &l[at..]));
    line.unwrap_or_else(|| panic!("no report: {}\n{}", run.stdout, run.stderr)).to_string()
}

#[tokio::test]
async fn only_unix_sockets_with_the_network_off() {
    let root = scratch();
    let off = socket_report(false, root.path()).await;
    assert_eq!(off, "sockets: unix=ok tcp=denied udp4=denied udp6=denied", "{off}");
    let on = socket_report(true, root.path()).await;
    assert!(on.starts_with("sockets: unix=ok tcp=ok udp4=ok"), "{on}");
    assert!(!on.contains("denied"), "{on}");
}

/// Not a check of its own: the confined helper `socket_helper` runs as. It does nothing
/// unless `SANDBOX_HELPER_PORT` is set.
#[test]
fn socket_helper() {
    use std::io::ErrorKind;
    let (Ok(port), Ok(unix)) = (std::env::var("SANDBOX_HELPER_PORT"), std::env::var("SANDBOX_HELPER_UNIX")) else {
        return;
    };
    let word = |r: std::io::Result<()>| match r {
        Ok(()) => "ok".to_string(),
        Err(e) if e.kind() == ErrorKind::PermissionDenied => "denied".to_string(),
        Err(e) => format!("error({e})"),
    };
    let unix = word((|| {
        let listener = std::os::unix::net::UnixListener::bind(&unix)?;
        let _client = std::os::unix::net::UnixStream::connect(&unix)?;
        listener.accept().map(|_| ())
    })());
    let tcp = word(std::net::TcpStream::connect(format!("127.0.0.1:{port}")).map(|_| ()));
    let udp4 = word(std::net::UdpSocket::bind("127.0.0.1:0").map(|_| ()));
    let udp6 = word(std::net::UdpSocket::bind("[::1]:0").map(|_| ()));
    println!("sockets: unix={unix} tcp={tcp} udp4={udp4} udp6={udp6}");
}
