//! Read-only scripts beyond single commands: loops, conditionals, tests, exit statuses and the
//! script's own variables — and the ways a hostile command or checkout could abuse each.
#![allow(clippy::unwrap_used)]

use toolbelt_command::operands::{Use, operands};
use toolbelt_command::runs::runs;
use toolbelt_command::{classify, is_read_only};

const READ_ONLY: &[&str] = &[
    // builtins that only report or decide
    "true",
    "false",
    ":",
    "exit 3",
    "test -f Cargo.toml",
    "[ -f x ] && cat x",
    "[ -d src ] || echo missing",
    "test -n \"$HOME\"",
    "[ \"$x\" = yes ]",
    "[ $? -eq 0 ]",
    "[[ -f x && ! -d y ]]",
    "[[ $? -ne 0 ]] && echo failed",
    "[[ $HOME == /home/* ]]",
    "[[ $x =~ $re ]]",
    "printf '%s\\n' a b",
    "printf '%s=%d\\n' \"$name\" $?",
    "printf -- '-v is fine after --\\n'",
    // exit statuses and other values known only when the command runs, into programs that
    // take no files
    "echo rc=$?",
    "ls missing; echo \"exit status: $?\"",
    "echo $HOME $PATH \"$@\" $#",
    "echo \"branch: $(git rev-parse --abbrev-ref HEAD)\"",
    "basename \"$PWD\"",
    // loops over read-only commands
    "for x in a b; do cat \"$x\"; done",
    "for f in *.rs; do wc -l \"$f\"; done",
    "for f in src/*.rs; do echo \"== $f\"; head -n 3 \"$f\"; done",
    "for f in a b; do for g in c d; do diff \"$f\" \"$g\"; done; done",
    "for f in $(git ls-files); do echo \"$f\"; done",
    "for b in main dev; do git log --oneline -1 \"$b\"; done",
    "for n in 1 2 3\ndo\n  echo $n\ndone",
    // conditionals, groups and subshells
    "if [ -f Cargo.toml ]; then cat Cargo.toml; elif [ -f package.json ]; then cat package.json; else ls; fi",
    "if ! grep -q x a; then echo absent; fi",
    "(cd crates && ls)",
    "{ ls; pwd; } 2>/dev/null",
    // variables the script sets to literal words, expanded into read-only commands
    "f=README.md; wc -l \"$f\"",
    "dir=src; ls \"$dir\" && find \"$dir\" -name '*.rs'",
    "n=$(git rev-parse HEAD); echo \"$n\"",
    "rc=$?; echo $rc",
    "opt=-n; sed $opt 1p file",
];

const NOT_READ_ONLY: &[&str] = &[
    // loops that write or run something else
    "for f in *; do rm $f; done",
    "for f in a b; do cat \"$f\" > out; done",
    "for f in a; do cat \"$f\"; done > out",
    "for f in a b; do cat \"$f\"; done &",
    "for f in $(rm -rf x); do echo \"$f\"; done",
    "for f; do cat \"$f\"; done",
    "for PATH in /tmp; do ls; done",
    "for ((i = 0; i < 3; i++)); do ls; done",
    "select f in a b; do ls; done",
    "while true; do ls; done",
    "until false; do ls; done",
    "case x in a) ls ;; esac",
    // a variable in command position, or one whose value is not known where a file goes
    "$x",
    "x=ls; $x",
    "for c in ls cat; do $c x; done",
    "cat \"$f\"",
    "cat $HOME/.ssh/id_rsa",
    "f=$(ls); cat \"$f\"",
    "f='a b'; cat $f",
    "f=; cat $f",
    "f=a; read f; cat \"$f\"",
    "f=a; eval 'f=b'; cat \"$f\"",
    "f=a; IFS=/; cat $f",
    "f=x; g() { :; }; cat \"$f\"",
    "for f in a; do g=$f; cat \"$g\"; done",
    "cat \"$(git ls-files | head -1)\"",
    "x=-delete; find . $x",
    "for o in -name -delete; do find . \"$o\"; done",
    "for o in --output=x; do git diff \"$o\"; done",
    "opt=-i; sed $opt s/a/b/ file",
    "f=*; find $f",
    "for f in *; do find \"$f\"; done",
    // assignments that could change what a program does
    "GIT_DIR=/tmp/x; git log",
    "x=$(rm -rf /)",
    "x=(a b)",
    "x+=a",
    "a[1]=x",
    // tests that can run commands: `-v`/`-R` evaluate subscripts, and so does arithmetic
    // inside `[[ … ]]`; an unquoted word in `test` or `[` may split or glob into `-v NAME[…]`
    "[ -v x ]",
    "test -R x",
    "[[ -v x ]]",
    "[[ $x -eq 1 ]]",
    "[[ 1 -lt $(echo 2) ]]",
    "[[ \"$x\" -gt 0 ]]",
    "test $x",
    "test $x 'a[1]'",
    "test \"$x\" \"$y\"",
    "test \"$x\" 'a[1]'",
    "test *",
    "[ * ]",
    "[ $x ]",
    "[ -n $(pwd) ]",
    "for f in *; do test \"$f\"; done",
    "o=-v; test \"$o\" x",
    "test $! 'a[1]'",
    "[ a > b ]",
    // printf assigning a variable, or a format that could turn out to be `-v`
    "printf -v x '%s' y",
    "printf \"$fmt\" x",
    "printf * x",
    "printf {-v,x} y",
    "for f in -v; do printf \"$f\" x y; done",
    "printf x > out",
    // expansions that are not followed
    "echo ${x:-$(rm y)}",
    "echo ${!x}",
    "echo ${x[$(rm y)]}",
    "echo $((x))",
    "((x = 1))",
    "cat <<EOF\n$(rm x)\nEOF",
    "echo $(echo $(echo $(echo $(echo $(echo x)))))",
];

#[test]
fn read_only_scripts_pass() {
    let failures: Vec<String> =
        READ_ONLY.iter().filter_map(|c| classify(c).reason().map(|why| format!("{c:?}: {why}"))).collect();
    assert!(failures.is_empty(), "wrongly rejected:\n{}", failures.join("\n"));
}

#[test]
fn scripts_that_may_write_or_run_something_are_not_read_only() {
    let failures: Vec<&str> = NOT_READ_ONLY.iter().copied().filter(|c| is_read_only(c)).collect();
    assert!(failures.is_empty(), "wrongly accepted:\n{}", failures.join("\n"));
}

#[test]
fn reasons_are_sentences_naming_the_part() {
    let reason = |c: &str| classify(c).reason().map(str::to_owned).unwrap();
    assert_eq!(reason("for f in *; do rm $f; done"), "`rm` is not a read-only command");
    assert_eq!(reason("for f in a; do cat \"$f\"; done > out"), "`> out` writes to a file");
    assert_eq!(reason("x=ls; $x"), "`$x` in command position decides the program only when the command runs");
    assert_eq!(reason("printf -v x y"), "`printf -v` assigns a shell variable");
    assert!(reason("test *").contains("quote it"), "{}", reason("test *"));
    assert!(reason("[[ $x -eq 1 ]]").contains("arithmetic"), "{}", reason("[[ $x -eq 1 ]]"));
    assert!(reason("X=1").contains("lowercase"), "{}", reason("X=1"));
}

/// A glob in a hostile checkout can hold any file name: `-v` and `a[$(…)]` turn `test *`
/// into a command that runs. Shown against a real bash.
#[test]
fn a_glob_in_a_test_would_run_a_checkout_s_file_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("-v"), "").unwrap();
    std::fs::write(dir.path().join("a[$(touch pwned)]"), "").unwrap();
    let run = |command: &str| {
        let _ = std::process::Command::new("bash").args(["-c", command]).current_dir(dir.path()).output();
        let hit = dir.path().join("pwned").exists();
        let _ = std::fs::remove_file(dir.path().join("pwned"));
        hit
    };
    if std::process::Command::new("bash").arg("-c").arg("true").output().is_err() {
        return;
    }
    for command in ["test *", "[ * ]", "printf * x"] {
        assert!(run(command), "the attack is real: {command}");
        assert!(!is_read_only(command), "{command}");
    }
    assert!(!run("test -f \"$x\"") && is_read_only("test -f \"$x\""));
}

#[test]
fn rules_see_the_values_the_script_gives_its_variables() {
    // Files read through a variable are the files a Read rule and the roots judge.
    let files = |c: &str| -> Vec<(String, Use, bool)> {
        operands(c).files.into_iter().map(|o| (o.path, o.usage, o.glob)).collect()
    };
    assert_eq!(files("f=.env; cat \"$f\""), [(".env".to_string(), Use::Read, false)]);
    assert_eq!(
        files("for f in ~/.ssh/*; do cat \"$f\"; done"),
        [("~/.ssh/*".to_string(), Use::Read, true)],
        "a loop over a glob reads what the glob matches"
    );
    assert_eq!(
        files("for f in a b; do head \"$f\"; done"),
        [("a".to_string(), Use::Read, false), ("b".to_string(), Use::Read, false)]
    );
    assert_eq!(operands("d=..; cd \"$d\" && cat x").dirs, [".."]);
    // Programs run through a variable are what deny rules judge.
    let texts = |c: &str| runs(c).iter().map(|r| r.text()).collect::<Vec<_>>();
    assert_eq!(texts("for s in status push; do git \"$s\"; done"), ["git status", "git push"]);
    assert_eq!(texts("f=-rf; rm $f build"), ["rm -rf build"]);
    assert_eq!(texts("x='rm -rf ~'; bash -c \"$x\""), ["rm -rf ~"]);
    // A variable in command position stays unknown.
    assert!(matches!(runs("c=rm; $c x").as_slice(), [toolbelt_command::runs::Run::Opaque { .. }]));
}
