//! The read-only shell command classifier, as a table: command, expected verdict.

use toolbelt_command::{Classification, classify, is_read_only};

const READ_ONLY: &[&str] = &[
    // every command that takes any arguments
    "basename /a/b.rs .rs",
    "cat -n src/lib.rs",
    "cd crates/toolbelt-core",
    "cd -",
    "cmp a b",
    "column -t data.tsv",
    "comm -12 a b",
    "cut -d: -f1 /etc/passwd",
    "df -h .",
    "diff -u a b",
    "dirname /a/b/c",
    "du -sh target",
    "echo hello world",
    "expr 1 + 2",
    "false",
    "fmt -w 80 README.md",
    "fold -w 40 notes.txt",
    "grep -rn 'fn main' src",
    "head -n 20 Cargo.toml",
    "id -u",
    "ls -la",
    "ls *.rs",
    "nl -ba file.txt",
    "paste a b",
    "shellcheck -f json1 -x -- scripts/run.sh 'my script.sh'",
    "ruff check --no-cache --no-fix --no-fix-only --output-format=json --force-exclude -- .",
    "ruff check -n --no-fix --no-fix-only src tests",
    "ruff check --no-fix --no-fix-only --exit-zero --no-cache -- --fix",
    "pwd",
    "readlink -f link",
    "realpath ../x",
    "rev file",
    "seq 1 10",
    "stat -c %s Cargo.toml",
    "tail -n 50 log.txt",
    "tr a-z A-Z",
    "true",
    "uname -a",
    "wc -l src/*.rs",
    "which cargo",
    "whoami",
    // checked commands with safe arguments
    "date +%Y-%m-%d",
    "date -Iseconds",
    "env",
    "file Cargo.toml",
    "find . -name '*.rs' -type f",
    "find src -maxdepth 2 ! -name '*.md' -print",
    "printf '%s\\n' a b",
    "rg -n 'todo!' --type rust",
    "rg -i -C 3 pattern src",
    "sed -n 5p file",
    "sed -n 1,20p file",
    "sed -n '$p' file",
    "sort -u -k 2 names.txt",
    "tree -L 2 src",
    "uniq -c sorted.txt",
    // git
    "git status",
    "git status --short",
    "git log --oneline -5",
    "git diff HEAD~1",
    "git diff --stat main...HEAD -- src",
    "git show HEAD:Cargo.toml",
    "git -C crates/toolbelt-core log -1",
    "git --no-pager log -p -1",
    "git branch",
    "git branch -a -v",
    "git branch --list 'feature/*'",
    "git branch --contains HEAD",
    "git rev-parse --show-toplevel",
    "git ls-files -z",
    "git blame -L 10,20 src/lib.rs",
    "git grep -n needle",
    "git remote -v",
    "git diff HEAD@{1}",
    "git log @{u}..",
    "git diff --text",
    // compound commands, quoting, harmless redirections
    "ls && cat a | grep x; wc -l b",
    "ls\npwd\ngit status",
    "ls &&\n  pwd",
    "grep x a || echo none",
    "! grep -q x a",
    "cat a | sort | uniq -c | sort -rn | head -n 20 | cut -c1-80 | tr -s ' ' | nl | tail -n 5",
    "ls 2>&1",
    "grep x a >/dev/null",
    "grep x a 2>/dev/null",
    "ls missing &>/dev/null",
    "cat < input.txt",
    "grep x <<< 'some text'",
    "cat <<'EOF'\nplain $text\nEOF",
    "echo \"plain double quotes\" 'single $x quotes'",
    "ls # a comment",
    "rg pattern \\\n  --type rust",
    "echo a\\ b",
    "ls 2>&-",
    "l\\s -a",
    "cat <<-EOF\n\tindented\n\tEOF",
    "echo \"done!\" a!",
    "expr a != b",
    "cat a b >/dev/null 2>&1 && echo ok",
    "grep x a > \"/dev/null\"",
    "echo hi >&2",
    // read-only substitutions and expansions into programs that take no files
    "echo `id`",
    "echo $HOME",
    "echo ${HOME}",
    "echo \"home is $HOME\"",
    "echo \"$(date)\"",
    // structure around read-only commands
    "x=1",
    "(ls)",
    "(cd sub && ls)",
    "{ ls; }",
    "if true; then ls; fi",
    "for f in a b; do cat $f; done",
    "[[ -f x ]] && cat x",
];

const NOT_READ_ONLY: &[&str] = &[
    // not on the list
    "rm -rf target",
    "mv a b",
    "cp a b",
    "touch x",
    "mkdir d",
    "npm install",
    "bash -c ls",
    "sh -c 'ls'",
    "python -c 'print(1)'",
    "curl https://example.com",
    "awk '{print $1}' f",
    "xargs cat",
    "tee out.txt",
    "/bin/ls",
    "time ls",
    // substitutions and expansions
    "echo $(rm -rf /)",
    "echo `rm x`",
    "cat <(ls)",
    "diff <(ls a) <(ls b)",
    "ls >(wc)",
    "$CMD args",
    "cat $HOME",
    "cat ${HOME}",
    "cat \"home is $HOME\"",
    "echo $((1 + 2))",
    "cat {1..3}",
    "echo $'a\\nb'",
    "cat \"$(date)\"",
    "cat <<EOF\n$HOME\nEOF",
    "echo !!",
    "sed -n 1,$p f",
    "sort a{b,c}",
    "ls !(x)",
    // redirections that write
    "ls > out.txt",
    "cat a >> b",
    "ls &> log",
    "ls >| out",
    "grep x a 2>errors.txt",
    "ls >& out",
    ">out ls",
    "cat <<EOF | grep x\na\nEOF",
    "cat < /dev/tcp/example.com/80",
    // assignments and environment
    "FOO=bar ls",
    "GIT_PAGER=x git log",
    "X=1",
    "PATH=/tmp",
    "export PATH=/tmp",
    "env LD_PRELOAD=x ls",
    "env rm x",
    // structure
    "ls &",
    "(rm x)",
    "(cd sub && rm x)",
    "ls (rm x)",
    "coproc ls",
    "coproc (ls)",
    "{ ls; rm x; }",
    "f() { ls; }",
    "if true; then rm x; fi",
    "for f in a b; do rm $f; done",
    "while true; do ls; done",
    "[[ -f x ]] && rm x",
    "ls ;; pwd",
    // parse errors and empty input
    "ls &&",
    "echo \"unbalanced",
    "cat 'unbalanced",
    "ls; ; pwd",
    "",
    "   \n ",
    "# only a comment",
    "ls\r\nrm x",
    "find . -del\\\nete",
    // unsafe arguments
    "find . -delete",
    "find . -exec rm {} \\;",
    "find . -name x -execdir sh -c x \\;",
    "find . -fprint out",
    "find . '-delete'",
    "find . \\-delete",
    "find *",
    "rg --pre cat x",
    "rg --pre=cat x",
    "ruff check .",
    "ruff check --no-cache .",
    "ruff check --no-fix .",
    "ruff check --no-cache --no-fix .",
    "ruff check --no-cache --no-fix-only .",
    "ruff check --no-cache --no-fix --no-fix-only --fix .",
    "ruff check --no-cache --no-fix --no-fix-only --add-noqa .",
    "ruff check --no-cache --no-fix --no-fix-only -o out.json .",
    "ruff check --no-cache --no-fix --no-fix-only --output-file=out.json .",
    "ruff check --no-cache --no-fix --no-fix-only -w .",
    "ruff check --no-cache --no-fix --no-fix-only --config 'fix = true' .",
    "ruff format --no-cache --no-fix --no-fix-only .",
    "ruff --no-cache --no-fix --no-fix-only .",
    ".venv/bin/ruff check --no-cache --no-fix --no-fix-only .",
    "rg -z x",
    "rg -iz x",
    "rg x *.rs",
    "sed -i s/a/b/ f",
    "sed 's/a/b/' f",
    "sed -n 'w out' f",
    "sed -n 1p -i f",
    "sort -o out in",
    "sort -ro out in",
    "sort --output=out in",
    "sort --out=out in",
    "uniq in out",
    "date -s 2020-01-01",
    "date --set=x",
    "file -C -m magic",
    "tree -o out.txt",
    "tree -R -H . .",
    "printf -v x '%s' y",
    // git
    "git push",
    "git checkout x",
    "git commit -m x",
    "git reset --hard",
    "git diff --output=x",
    "git log --output x",
    "git diff --ext-diff",
    "git -c core.pager=x log",
    "git -c alias.x=y status",
    "git --exec-path=/tmp status",
    "git branch -D x",
    "git branch -m a b",
    "git branch new-branch",
    "git branch --delete x",
    "git remote add origin x",
    "git remote show origin",
    "git grep -O needle",
    "git",
    "git stash",
    "git diff -- *.rs",
];

#[test]
fn read_only_commands_pass() {
    let failures: Vec<String> = READ_ONLY
        .iter()
        .filter_map(|c| match classify(c) {
            Classification::ReadOnly => None,
            Classification::NotReadOnly { reason } => Some(format!("{c:?}: {reason}")),
        })
        .collect();
    assert!(failures.is_empty(), "wrongly rejected:\n{}", failures.join("\n"));
}

#[test]
fn other_commands_are_not_read_only() {
    let failures: Vec<&str> = NOT_READ_ONLY.iter().copied().filter(|c| is_read_only(c)).collect();
    assert!(failures.is_empty(), "wrongly accepted:\n{}", failures.join("\n"));
    for command in NOT_READ_ONLY {
        let verdict = classify(command);
        let reason = verdict.reason().unwrap_or_default();
        assert!(!reason.is_empty(), "{command:?} has no reason");
    }
}

fn reason(command: &str) -> String {
    classify(command).reason().map(str::to_owned).unwrap_or_else(|| panic!("{command:?} was read-only"))
}

#[test]
fn reasons_name_the_offending_part() {
    assert_eq!(reason("ls && rm -rf x"), "`rm` is not a read-only command");
    assert_eq!(reason("ls > out.txt"), "`> out.txt` writes to a file");
    assert_eq!(reason("echo $(rm -rf /)"), "`rm` is not a read-only command");
    assert_eq!(
        reason("cat $HOME"),
        "`$HOME` is not known to be set by the command before this point, and which file or option `cat` gets \
         from it cannot be checked before it runs"
    );
    assert_eq!(reason("cat <(ls)"), "the process substitution `<(ls)` is not classified");
    assert_eq!(reason("ls &"), "`&` runs a command in the background");
    assert_eq!(reason("find . -delete"), "`find -delete` deletes files");
    assert_eq!(reason("find . -exec rm {} \\;"), "`find -exec` runs a program");
    assert_eq!(reason("git push"), "`git push` is not a read-only git command");
    assert_eq!(reason(""), "the command is empty");
    assert!(reason("cat `id`").contains("command's output"), "{}", reason("cat `id`"));
    assert!(reason("FOO=bar ls").contains("`FOO=bar`"), "{}", reason("FOO=bar ls"));
    assert!(reason("ls &&").contains("incomplete"), "{}", reason("ls &&"));
    assert!(reason("echo \"unbalanced").contains("does not parse"), "{}", reason("echo \"unbalanced"));
    assert!(reason("find *").contains("expanded by the shell"), "{}", reason("find *"));
    assert!(reason("while true; do ls; done").contains("`while` loop"), "{}", reason("while true; do ls; done"));
    assert!(reason("git branch -D x").contains("-D"), "{}", reason("git branch -D x"));
    assert!(reason("git -c core.pager=x log").contains("-c"), "{}", reason("git -c core.pager=x log"));
}

#[test]
fn the_first_offence_in_source_order_is_reported() {
    assert_eq!(reason("rm a > out"), "`rm` is not a read-only command");
    assert_eq!(reason("ls > out; rm a"), "`> out` writes to a file");
    assert_eq!(reason("for f in a; do cat \"$f\"; rm \"$f\"; done"), "`rm` is not a read-only command");
}

#[test]
fn huge_and_deeply_chained_commands_do_not_break_the_classifier() {
    let chain = vec!["ls"; 5_000].join(" && ");
    assert!(is_read_only(&chain));
    let pipeline = vec!["cat a"; 5_000].join(" | ");
    assert!(is_read_only(&pipeline));
    let too_long = "a".repeat(70 * 1024);
    assert!(reason(&too_long).contains("not classified"));
    let nested = format!("echo {}x{}", "$(".repeat(2_000), ")".repeat(2_000));
    assert!(!is_read_only(&nested));
}
