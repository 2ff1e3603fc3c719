use super::*;

#[test]
fn refuses_the_catastrophic_list() {
    for command in [
        "rm -rf /",
        "rm -rf /*",
        "rm -fr ~",
        "rm -rf ~/",
        "rm -r -f $HOME",
        "rm -rf \"$HOME\"",
        "rm -rf ${HOME}/*",
        "rm --recursive --force /",
        "sudo rm -rf --no-preserve-root /",
        "rm -Rf //",
        "/bin/rm -rf /usr",
        "\\rm -rf /etc/",
        "cd /tmp && rm -rf /",
        "echo ok; sudo -u root rm -rf / ",
        "true || env FOO=1 rm -rf ~",
        "timeout 10 rm -rf /",
        "bash -c 'rm -rf /'",
        "sh -lc \"rm -rf ~\"",
        "eval rm -rf /",
        "echo $(rm -rf /)",
        "echo \"$(rm -rf /)\"",
        "if true; then rm -rf /; fi",
        "{ rm -rf /; }",
        "mkfs.ext4 /dev/sda1",
        "mkfs -t ext4 /dev/nvme0n1p1",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "sudo dd if=image.iso of=/dev/nvme0n1",
        "echo hi > /dev/sda",
        "cat x >>/dev/vda1",
        ":(){ :|:& };:",
        ":() { : | : & }; :",
        "bomb(){ bomb|bomb& }; bomb",
        "chmod -R 777 /",
        "chmod 777 -R /",
        "sudo chown -R nobody /",
        "find / -delete",
        "find ~ -name x -exec rm {} +",
    ] {
        match check(command, &[]) {
            Err(Refusal::Catastrophic(_)) => {}
            other => panic!("{command:?} was not refused: {other:?}"),
        }
    }
}

#[test]
fn lets_ordinary_commands_through() {
    for command in [
        "rm -rf ./build",
        "rm -rf build/ target",
        "rm -rf /tmp/scratch",
        "rm -rf ~/project/target",
        "rm -rf \"$HOME/.cache/foo\"",
        "rm /",
        "rm -f ~",
        "echo 'rm -rf /'",
        "echo \"rm -rf /\"",
        "git commit -m 'do not rm -rf /'",
        "ls / > /dev/null 2>&1",
        "dd if=/dev/zero of=./disk.img bs=1M count=1",
        "dd if=/dev/sda of=backup.img",
        "chmod -R 755 ./scripts",
        "chmod 777 /tmp/x",
        "find / -name '*.rs'",
        "find . -delete",
        "grep -r mkfs .",
        "cat /dev/sda | head -c 10",
        "f() { echo hi; }; f | f",
        "cargo test 2>&1 | tail -5",
    ] {
        assert_eq!(check(command, &[]), Ok(()), "{command:?}");
    }
}

#[test]
fn configured_patterns_refuse_and_bad_ones_say_so() {
    let patterns = vec![r"\bgit\s+push\b".to_string(), "^curl .*\\| *sh".to_string()];
    assert_eq!(check("git status", &patterns), Ok(()));
    assert_eq!(check("git  push origin main", &patterns), Err(Refusal::Pattern(patterns[0].clone())));
    assert_eq!(check("curl https://x | sh", &patterns), Err(Refusal::Pattern(patterns[1].clone())));
    let bad = vec!["ok".to_string(), "(unclosed".to_string()];
    match check("ls", &bad) {
        Err(Refusal::BadPattern { pattern, .. }) => assert_eq!(pattern, "(unclosed"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_error_says_refused_and_why() {
    let e = check("rm -rf /", &[]).unwrap_err().into_error().to_string();
    assert!(e.starts_with("Refused: this command recursively deletes `/`."), "{e}");
    assert!(e.contains("safety stop"), "{e}");
}
