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

/// A confinement of only these layers: no binds, no capabilities dropped, nothing sealed.
fn layers(ruleset: Option<landlock::Rules>, filter: Option<seccomp::Filters>) -> Confinement {
    Confinement { ruleset, filter, binds: None, caps: None, sealed: Vec::new(), missing: protect::Missing::default() }
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

    let no_tcp = layers(Some(landlock::ruleset(&writable, false).unwrap()), None);
    let (code, stderr) = bash(no_tcp, &script);
    assert_ne!(code, 0);
    assert!(stderr.contains("Permission denied"), "connect refused by Landlock, not the filter: {stderr}");

    let tcp = layers(Some(landlock::ruleset(&writable, true).unwrap()), None);
    assert_eq!(bash(tcp, &script), (0, String::new()));
}

#[test]
fn the_filter_alone_denies_udp_and_leaves_files_alone() {
    let filter = layers(None, Some(seccomp::filters(false).unwrap()));
    let (code, stderr) = bash(filter, "exec 3<>/dev/udp/127.0.0.1/9");
    assert_ne!(code, 0);
    assert!(stderr.contains("Operation not permitted"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("written");
    let filter = layers(None, Some(seccomp::filters(false).unwrap()));
    assert_eq!(bash(filter, &format!("echo x > '{}'", target.display())), (0, String::new()));
    assert!(target.exists());
}

/// A sealed directory takes no new entry, nor does the writable root above it; their files
/// and every other folder stay writable. (In `/var/tmp`: beneath `/tmp` nothing is sealed.)
#[test]
fn a_sealed_directory_takes_no_new_entry_but_its_folders_and_files_stay_writable() {
    let Ok(dir) = tempfile::tempdir_in("/var/tmp") else {
        eprintln!("skipped: no /var/tmp to work in outside the temp directory");
        return;
    };
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    for d in ["home/sub", "other"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(home.join("existing"), "").unwrap();
    let config = SandboxConfig::default();
    let writable = landlock::writable(&config, std::slice::from_ref(&root)).sealing(std::slice::from_ref(&home));
    let sealed =
        Confinement { sealed: vec![home.clone()], ..layers(Some(landlock::ruleset(&writable, false).unwrap()), None) };
    let script = format!(
        "cd '{}'; for step in 'touch home/new' 'mkdir home/newdir' 'ln -s x home/link' 'touch new' \
         'touch home/sub/new' 'echo x >> home/existing' 'touch other/new' 'mkdir other/d'; do \
         if eval \"$step\" 2>/dev/null; then echo \"ok: $step\" >&2; else echo \"refused: $step\" >&2; fi; done",
        root.display()
    );
    let (_, said) = bash(sealed, &script);
    for refused in ["touch home/new", "mkdir home/newdir", "ln -s x home/link", "touch new"] {
        assert!(said.contains(&format!("refused: {refused}")), "{refused}: {said}");
    }
    for allowed in ["touch home/sub/new", "echo x >> home/existing", "touch other/new", "mkdir other/d"] {
        assert!(said.contains(&format!("ok: {allowed}")), "{allowed}: {said}");
    }
    assert!(!home.join("new").exists() && home.join("sub/new").exists());
}
