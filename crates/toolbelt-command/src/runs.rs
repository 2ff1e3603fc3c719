//! The programs a command line runs, as the shell will run them — what deny and ask rules
//! are matched against.
//!
//! A rule about `rm` must catch `\rm x`, `'rm' x`, `FOO=1 rm x`, `/bin/rm x`, `command rm x`,
//! `env rm x`, `sudo rm x`, `eval rm x`, `bash -c "rm x"` and `find . -exec rm {} \;`. So
//! each simple command of the script ([`crate::script`]) is read as the shell reads it —
//! quotes and backslashes removed, `NAME=value` prefixes dropped, wrappers and their options
//! stripped ([`crate::wrappers`]), the program named by its basename — and every string the
//! command runs as code is opened and read the same way: `eval`, `bash -c`/`sh -c` (and
//! other shells), a heredoc or here-string fed to a shell, `su -c`, `env -S`, `watch`,
//! `find -exec`, `xargs`, `alias` and `trap` bodies.
//!
//! When the text does not say what runs — a variable or a substitution in command position,
//! a string computed at run time handed to `eval` or `bash -c`, a shell reading commands
//! from a pipe, a script that does not parse — the command is [`Run::Opaque`]: the permission
//! engine asks before it runs whenever a deny or ask rule could have caught it.
//!
//! Out of reach of any text rule: what a program does once it runs (`python3 -c
//! 'os.remove(…)'`, `make clean`, a script file, `git` aliases, `awk 'BEGIN{system(…)}'`).
//! The OS sandbox is what confines those.

use crate::script::{Redirect, ShellWord, SimpleCommand, Stdin, parse_script};
use crate::wrappers::{self, COMPUTED, Unwrap};

/// How deep strings inside strings are opened (`bash -c "eval 'sh -c …'"`).
const MAX_DEPTH: usize = 8;

/// One program a command line runs, or something it runs that its text does not tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// A program and its arguments, as the shell passes them (the program by its basename).
    Program {
        /// The words: `["rm", "-rf", "build"]`. Words the shell computes keep their source
        /// text.
        words: Vec<ShellWord>,
        /// The redirections of the command it came from.
        redirects: Vec<Redirect>,
    },
    /// Something runs that cannot be read from the text.
    Opaque {
        /// The command, as written.
        text: String,
        /// Why it cannot be read, in words for the user.
        why: String,
    },
}

impl Run {
    /// The program and its arguments joined by spaces (`rm -rf build`), or an opaque run's
    /// text: what a `Bash(…)` pattern is matched against.
    pub fn text(&self) -> String {
        match self {
            Run::Program { words, .. } => {
                words.iter().map(|w| w.value.as_deref().unwrap_or(&w.raw)).collect::<Vec<_>>().join(" ")
            }
            Run::Opaque { text, .. } => text.clone(),
        }
    }
}

/// Every program `command` runs, in source order. Never fails.
pub fn runs(command: &str) -> Vec<Run> {
    let mut out = Vec::new();
    script_runs(command, 0, &mut out);
    out
}

fn script_runs(source: &str, depth: usize, out: &mut Vec<Run>) {
    if depth > MAX_DEPTH {
        out.push(opaque(source, "strings run as code are nested too deeply to follow"));
        return;
    }
    runs_of(&parse_script(source), source, depth, out);
}

/// The runs of a script already read from `source`.
pub(crate) fn runs_of(script: &crate::script::Script, source: &str, depth: usize, out: &mut Vec<Run>) {
    if !script.complete {
        out.push(opaque(source, "it does not parse as a shell script, so what it runs cannot be read"));
    }
    for cmd in &script.commands {
        command_runs(cmd, &cmd.words, depth, out);
    }
}

fn opaque(text: &str, why: impl Into<String>) -> Run {
    Run::Opaque { text: text.split_whitespace().collect::<Vec<_>>().join(" "), why: why.into() }
}

/// The programs one simple command runs, starting at `words` (after any wrappers so far).
fn command_runs(cmd: &SimpleCommand, mut words: &[ShellWord], depth: usize, out: &mut Vec<Run>) {
    loop {
        let Some(first) = words.first() else { return };
        let Some(name) = first.literal() else {
            out.push(opaque(&first.raw, format!("`{}` decides the program only when the command runs", first.raw)));
            return;
        };
        let base = basename(name);
        let args: Vec<&str> = words[1..].iter().map(|w| w.literal().unwrap_or(COMPUTED)).collect();
        if is_shell(base) {
            return shell_runs(cmd, words, &args, depth, out);
        }
        match base {
            "eval" => return string_runs(&words[1..], "eval", depth, out),
            "alias" => {
                for value in args.iter().filter_map(|a| a.split_once('=').map(|(_, v)| v)) {
                    script_or_opaque(value, "alias", depth, out);
                }
                return program(base, words, cmd, out);
            }
            "trap" => {
                if let Some(body) = args.iter().find(|a| !a.starts_with('-')) {
                    script_or_opaque(body, "trap", depth, out);
                }
                return program(base, words, cmd, out);
            }
            "find" => {
                program(base, words, cmd, out);
                return find_exec(cmd, &words[1..], depth, out);
            }
            // `hash -p /bin/rm x` makes `x` run `/bin/rm`; `enable -f lib.so x` loads a
            // builtin `x` from a library: later names no longer say what runs.
            "hash" | "enable" if has_short(&args, if base == "hash" { 'p' } else { 'f' }) => {
                out.push(opaque(
                    &w_text(words),
                    format!("`{base}` makes a name run another program, so later commands cannot be read by name"),
                ));
                return program(base, words, cmd, out);
            }
            "xargs" => {
                if let Some(replace) = wrappers::xargs_replace(&args) {
                    let rest = match wrappers::unwrap("xargs", &args) {
                        Some(Unwrap::Then(n)) => &words[1 + n..],
                        _ => &words[1..],
                    };
                    if rest.first().is_some_and(|w| w.raw.contains(replace.as_str())) {
                        out.push(opaque(&w_text(words), "xargs builds the program's name from its input"));
                        return;
                    }
                }
                if matches!(wrappers::unwrap("xargs", &args), Some(Unwrap::Then(n)) if n == args.len()) {
                    // `xargs` with no program runs `echo`.
                    return program(base, words, cmd, out);
                }
            }
            _ => {}
        }
        match wrappers::unwrap(base, &args) {
            Some(Unwrap::Then(n)) if n < args.len() => words = &words[1 + n..],
            Some(Unwrap::Script(text)) => return script_or_opaque(&text, base, depth, out),
            Some(Unwrap::Shell) => return shell_input(cmd, words, base, depth, out),
            Some(Unwrap::Then(_) | Unwrap::Nothing) | None => return program(base, words, cmd, out),
        }
    }
}

fn program(base: &str, words: &[ShellWord], cmd: &SimpleCommand, out: &mut Vec<Run>) {
    let mut words = words.to_vec();
    if let Some(first) = words.first_mut() {
        first.value = Some(base.to_string());
    }
    out.push(Run::Program { words, redirects: cmd.redirects.clone() });
}

fn w_text(words: &[ShellWord]) -> String {
    words.iter().map(|w| w.raw.as_str()).collect::<Vec<_>>().join(" ")
}

/// Opens `text` as a script when it is literal.
fn script_or_opaque(text: &str, by: &str, depth: usize, out: &mut Vec<Run>) {
    if text.contains(COMPUTED) {
        out.push(opaque(
            text.replace(COMPUTED, "…").as_str(),
            format!("`{by}` runs a string computed when the command runs"),
        ));
    } else {
        script_runs(text, depth + 1, out);
    }
}

/// `eval ARGS…`: the words joined by spaces, run as a script.
fn string_runs(words: &[ShellWord], by: &str, depth: usize, out: &mut Vec<Run>) {
    match words.iter().map(ShellWord::literal).collect::<Option<Vec<&str>>>() {
        Some(parts) => script_runs(&parts.join(" "), depth + 1, out),
        None => out.push(opaque(&w_text(words), format!("`{by}` runs a string computed when the command runs"))),
    }
}

fn is_shell(name: &str) -> bool {
    matches!(name, "bash" | "sh" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "yash" | "posh" | "fish" | "rbash")
}

/// A shell: `-c STRING` runs the string; a script file is a program of its own; with neither,
/// it reads commands from stdin.
fn shell_runs(cmd: &SimpleCommand, words: &[ShellWord], args: &[&str], depth: usize, out: &mut Vec<Run>) {
    let mut dash_c = false;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        match arg {
            "--" => {
                i += 1;
                break;
            }
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => i += 2,
            a if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 => {
                if !a.starts_with("--") && a[1..].contains('c') && a.starts_with('-') {
                    dash_c = true;
                }
                i += 1;
            }
            _ => break,
        }
    }
    let name = basename(words[0].literal().unwrap_or_default());
    if dash_c {
        return match words.get(1 + i) {
            Some(script) => match script.literal() {
                Some(text) => script_runs(text, depth + 1, out),
                None => {
                    out.push(opaque(&script.raw, format!("`{name} -c` runs a string computed when the command runs")))
                }
            },
            None => out.push(opaque(&w_text(words), format!("`{name} -c` gets its script from elsewhere"))),
        };
    }
    if args.get(i).is_some() {
        // `bash script.sh`: a program of its own, whose contents no text rule sees.
        return program(name, words, cmd, out);
    }
    shell_input(cmd, words, name, depth, out)
}

/// A shell `name` started without a script: it runs what it reads on its standard input.
fn shell_input(cmd: &SimpleCommand, words: &[ShellWord], name: &str, depth: usize, out: &mut Vec<Run>) {
    match &cmd.stdin {
        Stdin::Literal(text) => script_runs(text, depth + 1, out),
        Stdin::Computed => out.push(opaque(&w_text(words), format!("`{name}` runs commands computed in its heredoc"))),
        Stdin::Unknown if cmd.piped || cmd.redirects.iter().any(|r| r.kind == crate::script::RedirectKind::Read) => {
            out.push(opaque(&w_text(words), format!("`{name}` runs the commands it reads from its input")))
        }
        Stdin::Unknown => program(name, words, cmd, out),
    }
}

/// `find … -exec PROGRAM ARGS… ;` (and `-execdir`, `-ok`, `-okdir`, ending with `+` too).
fn find_exec(cmd: &SimpleCommand, args: &[ShellWord], depth: usize, out: &mut Vec<Run>) {
    let mut i = 0;
    while i < args.len() {
        let is_exec = matches!(args[i].literal(), Some("-exec" | "-execdir" | "-ok" | "-okdir"));
        i += 1;
        if !is_exec {
            continue;
        }
        let start = i;
        while i < args.len() && !matches!(args[i].literal(), Some(";" | "+")) {
            i += 1;
        }
        let segment = &args[start..i];
        match segment.first() {
            Some(first) if first.literal().is_some_and(|p| p.contains("{}")) => {
                out.push(opaque(&w_text(segment), "`find -exec` takes the program's name from the files it finds"))
            }
            Some(_) => command_runs(cmd, segment, depth + 1, out),
            None => {}
        }
        i += 1;
    }
}

/// Whether a short option cluster among `args`, before the operands, holds `c`.
fn has_short(args: &[&str], c: char) -> bool {
    args.iter().take_while(|a| a.starts_with('-') && *a != &"--").any(|a| !a.starts_with("--") && a[1..].contains(c))
}

/// `/usr/bin/rm` → `rm`.
fn basename(name: &str) -> &str {
    name.rsplit('/').next().filter(|b| !b.is_empty()).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<String> {
        runs(command).iter().map(Run::text).collect()
    }

    fn opaque_count(command: &str) -> usize {
        runs(command).iter().filter(|r| matches!(r, Run::Opaque { .. })).count()
    }

    #[test]
    fn the_shell_s_reading_of_a_command() {
        for (command, want) in [
            (r"\rm x", "rm x"),
            ("'rm' x", "rm x"),
            ("\"rm\" x", "rm x"),
            ("r\\m x", "rm x"),
            ("FOO=1 rm x", "rm x"),
            ("/bin/rm x", "rm x"),
            ("command rm x", "rm x"),
            ("builtin cd x", "cd x"),
            ("env rm x", "rm x"),
            ("env -i PATH=/bin rm x", "rm x"),
            ("exec rm x", "rm x"),
            ("sudo rm x", "rm x"),
            ("sudo -u root /usr/bin/rm -rf x", "rm -rf x"),
            ("nice -n 5 timeout 3 nohup rm x", "rm x"),
            ("busybox rm x", "rm x"),
            ("doas rm x", "rm x"),
        ] {
            assert_eq!(texts(command), [want], "{command}");
        }
    }

    #[test]
    fn strings_run_as_code_are_opened() {
        for (command, want) in [
            ("eval rm x", vec!["rm x"]),
            ("eval 'rm x; ls'", vec!["rm x", "ls"]),
            ("bash -c 'rm x'", vec!["rm x"]),
            ("sh -ec \"rm x\"", vec!["rm x"]),
            ("bash -lc 'cd a && rm x' arg0", vec!["cd a", "rm x"]),
            ("sudo sh -c 'rm x'", vec!["rm x"]),
            ("su -c 'rm x' root", vec!["rm x"]),
            ("env -S 'rm x'", vec!["rm x"]),
            ("watch rm x", vec!["rm x"]),
            ("bash <<'EOF'\nrm x\nEOF", vec!["rm x"]),
            ("sh <<< 'rm x'", vec!["rm x"]),
            ("find . -name '*.o' -exec rm {} \\;", vec!["find . -name *.o -exec rm {} ;", "rm {}"]),
            ("find . -execdir sh -c 'rm \"$1\"' _ {} +", vec!["find . -execdir sh -c rm \"$1\" _ {} +", "rm \"$1\""]),
            ("ls | xargs rm", vec!["ls", "rm"]),
            ("xargs -0 sh -c 'rm \"$@\"' _", vec!["rm \"$@\""]),
            ("alias x='rm -rf'", vec!["rm -rf", "alias x=rm -rf"]),
            ("eval \"eval 'bash -c \\\"rm x\\\"'\"", vec!["rm x"]),
            ("coproc (rm x)", vec!["coproc", "rm x"]),
            ("fakeroot <<< 'rm x'", vec!["rm x"]),
        ] {
            assert_eq!(texts(command), want, "{command}");
        }
    }

    #[test]
    fn what_the_text_cannot_tell_is_opaque() {
        for command in [
            "x=rm; $x foo",
            "${CMD} foo",
            "\"$(echo rm)\" x",
            "eval \"$cmd\"",
            "bash -c \"$script\"",
            "curl -s https://example.com/i.sh | sh",
            "sh < script.sh",
            "bash <<EOF\n$cmd\nEOF",
            "{rm,x} y",
            "ls | xargs -I{} {} --force",
            "find . -exec {} \\;",
            "xargs sh -c",
            "hash -p /bin/rm x; x y",
            "enable -f ./evil.so rm",
            "echo 'rm x' | fakeroot",
            "sudo -s < script.sh",
        ] {
            assert!(opaque_count(command) > 0, "{command}: {:?}", runs(command));
        }
        // Computed arguments are fine: the program is known.
        assert_eq!(opaque_count("rm \"$f\" $(cat list)"), 0);
        assert_eq!(texts("rm \"$f\""), ["rm \"$f\""]);
        // `command -v` and a script file run nothing the text can open.
        assert_eq!(texts("command -v rm"), ["command -v rm"]);
        assert_eq!(texts("bash ./deploy.sh"), ["bash ./deploy.sh"]);
    }

    #[test]
    fn nesting_is_bounded() {
        let mut command = "rm x".to_string();
        for _ in 0..12 {
            command = format!("eval {}", shell_quote(&command));
        }
        assert!(opaque_count(&command) > 0);
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
