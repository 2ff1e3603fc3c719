//! Each layer alone, in real processes: the Landlock TCP rules without the socket filter,
//! and the socket filter without Landlock.

use std::net::TcpListener;
use std::process::{Command, Stdio};

use super::*;

/// Runs `script` with `bash -c` under `confinement`; returns the exit code and stderr.
fn bash(confinement: Confinement, script: &str) -> (i32, String) {
    let mut command = Command::new("bash");
    command.arg("-c").arg(script).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    confinement.install_std(&mut command, None);
    let out = command.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn landlock_alone_denies_tcp_connect() {
    let report = SandboxReport::probe();
    if report.landlock_abi().unwrap_or(0) < landlock::NET_ABI as u32 {
        assert!(report.lines()[3].contains(": no"), "no TCP rules reported on this kernel");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{}", listener.local_addr().unwrap().port());
    let writable = landlock::writable(&SandboxConfig::default(), &[]);

    let no_tcp = Confinement {
        ruleset: Some(landlock::ruleset(&writable, false).unwrap()),
        filter: None,
        binds: None,
        caps: None,
    };
    let (code, stderr) = bash(no_tcp, &script);
    assert_ne!(code, 0);
    assert!(stderr.contains("Permission denied"), "connect refused by Landlock, not the filter: {stderr}");

    let tcp = Confinement {
        ruleset: Some(landlock::ruleset(&writable, true).unwrap()),
        filter: None,
        binds: None,
        caps: None,
    };
    assert_eq!(bash(tcp, &script), (0, String::new()));
}

#[test]
fn the_filter_alone_denies_udp_and_leaves_files_alone() {
    let filter = Confinement { ruleset: None, filter: Some(seccomp::filters(false).unwrap()), binds: None, caps: None };
    let (code, stderr) = bash(filter, "exec 3<>/dev/udp/127.0.0.1/9");
    assert_ne!(code, 0);
    assert!(stderr.contains("Operation not permitted"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("written");
    let filter = Confinement { ruleset: None, filter: Some(seccomp::filters(false).unwrap()), binds: None, caps: None };
    assert_eq!(bash(filter, &format!("echo x > '{}'", target.display())), (0, String::new()));
    assert!(target.exists());
}
