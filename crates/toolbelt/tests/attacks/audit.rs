//! The audit log through the real binary: where it lives and with which modes, what refused
//! calls and written contents leave in it, `toolbelt audit verify` on good and tampered logs,
//! and a sandboxed command trying to touch it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};

/// A project with its own home and state directory, isolated from the machine's. It lives
/// outside `/tmp`, `$TMPDIR` and `/dev/shm`, because sandboxed shell commands may write
/// there.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    state: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = crate::beyond_tmp::beyond_tmp();
        let base = dir.path().canonicalize().unwrap();
        let (root, home, state) = (base.join("project"), base.join("home"), base.join("state"));
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Project { _dir: dir, root, home, state }
    }

    fn toolbelt(&self) -> Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
        crate::hermetic::isolate(cmd.current_dir(&self.root), &self.home)
            .env("NO_COLOR", "1")
            .env("XDG_STATE_HOME", &self.state)
            .env("TOOLBELT_AUDIT__ENABLED", "true");
        Command::from_std(cmd)
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.toolbelt().args(args).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    fn batch(&self, lines: &[Value], args: &[&str]) {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.toolbelt().arg("batch").args(args).write_stdin(input).output().unwrap();
    }

    /// Where `toolbelt audit path` says the log is.
    fn log(&self) -> PathBuf {
        let (code, out, _) = self.run(&["audit", "path"]);
        assert_eq!(code, 0);
        PathBuf::from(out.trim())
    }

    fn records(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.log()).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_log_lives_in_the_state_directory_and_records_refused_calls() {
    let p = Project::new();
    std::fs::write(p.root.join("notes.txt"), "hello\n").unwrap();
    assert_eq!(p.run(&["call", "Read", r#"{"file_path":"notes.txt"}"#]).0, 0);
    let (code, _, _) = p.run(&["call", "Read", r#"{"file_path": 5, "password": "hunter2"}"#]);
    assert_eq!(code, 1);
    let (code, _, err) = p.run(&["call", "Nope", r#"{"command": "curl -u admin:hunter2 https://example.com"}"#]);
    assert_eq!(code, 2, "an unknown tool is still a usage error: {err}");
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz";
    let (code, _, err) =
        p.run(&["call", "Bash", &json!({"command": format!("echo {secret}")}).to_string(), "--deny", "Bash"]);
    assert_eq!(code, 1, "a tool hidden by a deny rule is denied: {err}");

    let log = p.log();
    let dir = p.state.join("toolbelt/projects");
    assert!(log.starts_with(&dir) && log.ends_with("audit.jsonl"), "{}", log.display());
    assert!(log.parent().unwrap().file_name().unwrap().to_string_lossy().starts_with("project-"));
    assert!(!p.root.join(".toolbelt/audit.jsonl").exists(), "nothing in the project");
    assert_eq!((mode(&log), mode(log.parent().unwrap())), (0o600, 0o700));

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("hunter2") && !text.contains(secret), "{text}");
    let records = p.records();
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r["client"] == json!({"kind": "cli"})), "{records:?}");
    assert_eq!((records[0]["outcome"].clone(), records[0]["seq"].clone()), (json!("ok"), json!(1)));
    assert!(records[0].get("reason").is_none());

    let invalid = &records[1];
    assert_eq!(invalid["outcome"], "invalid_input");
    assert_eq!(invalid["input"], json!({"file_path": 5, "password": "[redacted]"}), "the input as it arrived");
    assert!(invalid["reason"].as_str().unwrap().starts_with("invalid input for `Read`"), "{invalid}");

    let unknown = &records[2];
    assert_eq!((unknown["tool"].clone(), unknown["outcome"].clone()), (json!("Nope"), json!("unknown_tool")));
    assert_eq!(unknown["input"], json!({"command": "curl -u admin:[redacted] https://example.com"}));
    assert!(unknown["reason"].as_str().unwrap().starts_with("unknown tool `Nope`"), "{unknown}");

    let hidden = &records[3];
    assert_eq!((hidden["tool"].clone(), hidden["outcome"].clone()), (json!("Bash"), json!("denied")));
    assert_eq!(hidden["input"], json!({"command": "echo sk-ant-[redacted]"}));
    assert!(hidden["reason"].as_str().unwrap().contains("denied by the rule `Bash` (flag --deny)"), "{hidden}");
    assert_eq!(hidden["decision"]["source"], "rule `Bash` (flag --deny)", "{hidden}");

    let (code, out, _) = p.run(&["audit", "verify"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("ok: 4 records, seq 1..4, 20"), "{out}");
}

#[test]
fn written_contents_leave_only_their_size_and_digest() {
    let p = Project::new();
    let content = "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n\
        curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz012345' https://api.example.com\n\
        -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUAkGdnAbQqMS4xGQ0r\n-----END RSA PRIVATE KEY-----\n";
    let write = json!({"file_path": "creds.txt", "content": content});
    let edit = json!({"file_path": "creds.txt", "old_string": "AKIAIOSFODNN7EXAMPLE", "new_string": "none"});
    p.batch(
        &[json!({"name": "Write", "input": write}), json!({"name": "Edit", "input": edit})],
        &["--mode", "acceptEdits"],
    );
    assert!(std::fs::read_to_string(p.root.join("creds.txt")).unwrap().contains("aws_access_key_id = none"));
    let text = std::fs::read_to_string(p.log()).unwrap();
    for secret in ["AKIAIOSFODNN7EXAMPLE", "IOSFODNN7", "sk-abcdefghij", "MIIEowIBAAKCAQEA", "PRIVATE KEY", "Bearer"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let records = p.records();
    assert_eq!((records[0]["outcome"].clone(), records[1]["outcome"].clone()), (json!("ok"), json!("ok")));
    let digest = |s: &str| json!({"bytes": s.len(), "sha256": toolbelt::core::sha256_hex(s)});
    assert_eq!(records[0]["input"], json!({"file_path": "creds.txt", "content": digest(content)}));
    assert_eq!(records[1]["input"]["old_string"], digest("AKIAIOSFODNN7EXAMPLE"));
    assert_eq!(records[1]["input"]["new_string"], digest("none"));
    assert_eq!(records[1]["input"]["file_path"], "creds.txt");
}

/// Twelve calls in one batch, in a log rotated every few records.
fn tampering_fixture() -> (Project, PathBuf) {
    let p = Project::new();
    let calls: Vec<Value> =
        (0..12).map(|i| json!({"id": format!("c{i}"), "name": "TodoWrite", "input": {"todos": []}})).collect();
    let input: String = calls.iter().map(|l| format!("{l}\n")).collect();
    p.toolbelt().arg("batch").env("TOOLBELT_AUDIT__MAX_BYTES", "4096").write_stdin(input).output().unwrap();
    let log = p.log();
    assert!(PathBuf::from(format!("{}.1", log.display())).exists(), "the log was rotated");
    (p, log)
}

fn verify(p: &Project) -> (i32, String) {
    let (code, out, _) = p.run(&["audit", "verify"]);
    (code, out.trim().to_string())
}

/// Rewrites the lines of `file` with `f`.
fn tamper(file: &Path, f: impl FnOnce(&mut Vec<String>)) {
    let mut lines: Vec<String> = std::fs::read_to_string(file).unwrap().lines().map(String::from).collect();
    f(&mut lines);
    std::fs::write(file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

#[test]
fn verify_passes_on_a_good_log_and_names_the_first_broken_record() {
    let (p, log) = tampering_fixture();
    let (code, out) = verify(&p);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("ok: 12 records, seq 1..12, "), "{out}");
    let (code, out, _) = p.run(&["audit", "verify", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (code, v["ok"].clone(), v["records"].clone(), v["last_seq"].clone()),
        (0, json!(true), json!(12), json!(12))
    );
    let pristine: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(log.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|path| (path.clone(), std::fs::read(path).unwrap()))
        .collect();
    let restore = || pristine.iter().for_each(|(path, bytes)| std::fs::write(path, bytes).unwrap());
    let rotated = PathBuf::from(format!("{}.1", log.display()));
    let first_live: u64 = p.records()[0]["seq"].as_u64().unwrap();

    // A record cut in half.
    tamper(&log, |lines| {
        let half = lines[1].len() / 2;
        lines[1].truncate(half);
    });
    assert_eq!(verify(&p), (1, "audit.jsonl line 2 is truncated (not a complete JSON record)".into()));
    restore();

    // A value changed in an earlier record: the next one carries a different digest of it.
    tamper(&rotated, |lines| lines[1] = lines[1].replace(r#""outcome":"ok""#, r#""outcome":"no""#));
    let (code, out) = verify(&p);
    let seq = first_live - lines_of(&rotated) + 1;
    assert_eq!(
        (code, out),
        (
            1,
            format!(
                "record seq {seq} (audit.jsonl.1 line 2) was edited: record {} carries a different digest of it",
                seq + 1
            )
        )
    );
    restore();

    // A record removed from the middle, here the first of the live file.
    tamper(&log, |lines| drop(lines.remove(0)));
    let (code, out) = verify(&p);
    let last_rotated = lines_of(&rotated);
    assert_eq!(
        (code, out),
        (
            1,
            format!(
                "record seq {first_live} is missing between audit.jsonl.1 line {last_rotated} and audit.jsonl line 1"
            )
        )
    );
    restore();

    // The last record removed: only the head anchor shows it.
    tamper(&log, |lines| drop(lines.pop()));
    assert_eq!(verify(&p), (1, "the last record is missing: the head anchor says seq 12".into()));
    let (_, out, _) = p.run(&["audit", "verify", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({"ok": false, "kind": "missing_last", "count": 1, "head": 12,
        "message": "the last record is missing: the head anchor says seq 12"})
    );
    restore();
    assert_eq!(verify(&p).0, 0);
}

fn lines_of(file: &Path) -> u64 {
    std::fs::read_to_string(file).unwrap().lines().count() as u64
}

#[test]
fn a_sandboxed_command_cannot_truncate_or_append_to_the_log() {
    let p = Project::new();
    assert_eq!(p.run(&["call", "TodoWrite", r#"{"todos": []}"#]).0, 0);
    let log = p.log();
    let before = std::fs::read(&log).unwrap();
    let head = PathBuf::from(format!("{}.head", log.display()));
    let command = format!(
        ": > '{log}'; echo '{{\"seq\":99}}' >> '{log}'; : > '{head}'; rm -f '{log}'",
        log = log.display(),
        head = head.display()
    );
    // Redirections name the log: toolbelt's state is a protected path, so even bypass mode asks
    // (and nobody is here to say yes).
    let (_, out, _) = p.run(&["call", "Bash", &json!({"command": command}).to_string(), "--mode", "bypassPermissions"]);
    assert!(out.contains("protected path"), "{out}");
    // A program whose writes no text rule can see: the kernel refuses them (or, where the
    // sandbox cannot be applied, it does not run at all).
    let script = format!(
        "python3 -c \"open('{log}', 'w').write('x')\"; python3 -c \"open('{head}', 'w')\"",
        log = log.display(),
        head = head.display()
    );
    let (_, out, _) = p.run(&["call", "Bash", &json!({"command": script}).to_string(), "--mode", "bypassPermissions"]);
    assert!(out.contains("Permission denied") || out.contains("sandbox"), "{out}");
    let after = std::fs::read(&log).unwrap();
    assert!(after.starts_with(&before), "the log was changed by a sandboxed command: {out}");
    let (code, verified) = verify(&p);
    assert_eq!(code, 0, "{verified}; the command said: {out}");
    assert!(verified.starts_with("ok: 3 records"), "the first call, and the two commands refused: {verified}");
}

#[test]
fn a_sub_agent_s_records_name_the_command_line_and_the_agent() {
    let p = Project::new();
    std::fs::write(p.root.join("notes.txt"), "hello\n").unwrap();
    let (read, reply) = (
        toolbelt_agent::testing::Turn::tool_call("r1", "Read", json!({"file_path": "notes.txt"})),
        toolbelt_agent::testing::Turn::text("It says hello."),
    );
    let model = toolbelt_agent::testing::ScriptedServer::openai([read.clone(), reply.clone(), read, reply]).unwrap();
    let agent = json!({"prompt": "What do the notes say?", "description": "read notes", "subagent_type": "Explore"});
    // Twice in a named session: the second time its saved state is loaded first.
    for _ in 0..2 {
        let args = ["call", "--session", "work", "Agent", &agent.to_string()];
        let out = p.toolbelt().envs(model.env()).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let records = p.records();
    let reads: Vec<&Value> = records.iter().filter(|r| r["tool"] == "Read").collect();
    assert_eq!(reads.len(), 2, "{records:?}");
    for read in reads {
        assert_eq!(read["client"], json!({"kind": "cli", "agent": "agent_1 (Explore)"}), "{read}");
    }
    let started = records.iter().find(|r| r["tool"] == "Agent").unwrap_or_else(|| panic!("{records:?}"));
    assert_eq!(started["client"], json!({"kind": "cli"}), "{started}");
}

#[test]
fn passwords_on_command_lines_and_in_secret_named_variables_are_redacted() {
    let p = Project::new();
    let commands = [
        ("mysql -u root -phunter2 shop", "mysql -u root -p[redacted] shop"),
        ("mysqldump -uroot -p'hunter2' shop > dump.sql", "mysqldump -uroot -p'[redacted]' shop > dump.sql"),
        ("mysql --password=hunter2 shop", "mysql --password=[redacted] shop"),
        ("sshpass -p hunter2 ssh deploy@host uptime", "sshpass -p [redacted] ssh deploy@host uptime"),
        ("sshpass -phunter2 scp a host:", "sshpass -p[redacted] scp a host:"),
        ("MYPASS=hunter2 ./deploy.sh", "MYPASS=[redacted] ./deploy.sh"),
        ("env MYSQL_PWD=hunter2 mysql shop", "env MYSQL_PWD=[redacted] mysql shop"),
        ("export SERVICE_KEY=hunter2; ./run", "export SERVICE_KEY=[redacted]; ./run"),
        ("cd /tmp && PWD=/tmp ls -P", "cd /tmp && PWD=/tmp ls -P"),
    ];
    for (command, _) in commands {
        let (code, _, err) = p.run(&["call", "Bash", &json!({"command": command}).to_string(), "--deny", "Bash"]);
        assert_eq!(code, 1, "{command}: {err}");
    }
    let text = std::fs::read_to_string(p.log()).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    let recorded: Vec<String> =
        p.records().iter().map(|r| r["input"]["command"].as_str().unwrap_or_default().to_string()).collect();
    let wanted: Vec<&str> = commands.iter().map(|(_, redacted)| *redacted).collect();
    assert_eq!(recorded, wanted, "only the secret goes; the rest reads as asked");
}

#[test]
fn an_audit_log_inside_the_workspace_is_protected() {
    let p = Project::new();
    let log = p.root.join("audit/calls.jsonl");
    let audit = ["--audit", "audit/calls.jsonl"];
    let run = |args: &[&str]| {
        let out = p.toolbelt().args(args).args(audit).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["call", "TodoWrite", r#"{"todos": []}"#]);
    assert!(log.is_file(), "the log is where --audit says");
    let before = std::fs::read(&log).unwrap();
    let head = PathBuf::from(format!("{}.head", log.display()));
    // Tools and commands that name it: a protected path, so even bypass mode asks (and nobody
    // is here to say yes).
    let write = json!({"file_path": log, "content": "{}\n"});
    let out = run(&["call", "Write", &write.to_string(), "--mode", "bypassPermissions"]);
    assert!(out.contains("protected path"), "{out}");
    let command = format!(": > '{}'; rm -f '{}'", log.display(), head.display());
    let out = run(&["call", "Bash", &json!({"command": command}).to_string(), "--mode", "bypassPermissions"]);
    assert!(out.contains("protected path"), "{out}");
    // A program whose writes no text rule sees: the sandbox holds the log read-only.
    let script = format!("python3 -c \"open('{}', 'w').write('x')\"", log.display());
    let out = run(&["call", "Bash", &json!({"command": script}).to_string(), "--mode", "bypassPermissions"]);
    assert!(out.contains("Permission denied") || out.contains("Read-only") || out.contains("sandbox"), "{out}");
    let after = std::fs::read(&log).unwrap();
    assert!(after.starts_with(&before), "the log was changed: {out}");
    let out = p.toolbelt().args(["audit", "verify"]).args(audit).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn nothing_but_the_log_and_its_anchor_is_left_beside_it() {
    let p = Project::new();
    for _ in 0..2 {
        assert_eq!(p.run(&["call", "TodoWrite", r#"{"todos": []}"#]).0, 0);
    }
    p.batch(&[json!({"name": "TodoWrite", "input": {"todos": []}})], &[]);
    let log = p.log();
    let mut names: Vec<String> = std::fs::read_dir(log.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("audit"))
        .collect();
    names.sort();
    assert_eq!(names, ["audit.jsonl", "audit.jsonl.head"]);
    assert_eq!(verify(&p).0, 0);
}
