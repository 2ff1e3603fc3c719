use super::*;

fn u(line: &str) -> Option<Unwrap> {
    let words: Vec<&str> = line.split(' ').collect();
    unwrap(words[0], &words[1..])
}

#[test]
fn options_are_skipped_up_to_the_program() {
    for (line, skip) in [
        ("sudo rm x", 0),
        ("sudo -u root rm x", 2),
        ("sudo -Eu root rm x", 2),
        ("sudo --user=root -H rm x", 2),
        ("sudo FOO=1 rm x", 1),
        ("env -i FOO=1 BAR=2 rm x", 3),
        ("env -u HOME -C /tmp rm", 4),
        ("exec -a name rm x", 2),
        ("command -p rm x", 1),
        ("nice -n 5 rm", 2),
        ("nice -5 rm", 1),
        ("timeout -s KILL 5s rm", 3),
        ("time -p rm", 1),
        ("setsid -f rm", 1),
        ("stdbuf -oL rm", 1),
        ("ionice -c 3 rm", 2),
        ("chrt -f 10 rm", 2),
        ("taskset -c 0 rm", 2),
        ("xargs -0 -n1 rm", 2),
        ("busybox rm x", 0),
        ("flock /tmp/l rm x", 1),
        ("chroot /srv rm x", 1),
        ("runuser -u bob rm x", 2),
        ("strace -f -o log rm", 3),
        ("watch -x -n 2 rm x", 3),
        ("coproc rm x", 0),
        ("coproc X { rm x", 2),
        ("coproc { rm x", 1),
        ("fakeroot -u -- rm x", 2),
        ("fakeroot -s state rm x", 2),
        ("ssh-agent rm x", 0),
        ("ssh-agent -t 60 rm x", 2),
    ] {
        assert_eq!(u(line), Some(Unwrap::Then(skip)), "{line}");
    }
}

#[test]
fn some_run_a_script_and_some_nothing() {
    assert_eq!(u("su -c rm_x root"), Some(Unwrap::Script("rm_x".into())));
    assert_eq!(u("env -S rm_-f x"), Some(Unwrap::Script("rm_-f x".into())));
    assert_eq!(u("watch -n 1 rm x"), Some(Unwrap::Script("rm x".into())));
    assert_eq!(u("sudo -s rm x"), Some(Unwrap::Script("rm x".into())));
    assert_eq!(u("flock -c rm_x /tmp/l"), Some(Unwrap::Script("rm_x".into())));
    for line in
        ["command -v rm", "sudo -l", "sudo -e /etc/hosts", "flock 9", "ionice -p 12", "taskset -p 1 12", "ssh-agent"]
    {
        assert_eq!(u(line), Some(Unwrap::Nothing), "{line}");
    }
    for line in ["su", "sudo -s", "sudo -i", "fakeroot", "fakeroot -u", "script -q /dev/null", "runuser bob"] {
        assert_eq!(u(line), Some(Unwrap::Shell), "{line} reads commands from its input");
    }
    assert_eq!(u("sudo --frobnicate rm"), None, "an unknown option stops the reading");
    assert_eq!(u("rm -rf x"), None, "not a wrapper");
    assert_eq!(xargs_replace(&["-I", "X", "rm", "X"]), Some("X".into()));
    assert_eq!(xargs_replace(&["-i", "rm", "{}"]), Some("{}".into()));
    assert_eq!(xargs_replace(&["-n1", "rm"]), None);
}
