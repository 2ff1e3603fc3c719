//! Programs that run another program: `sudo rm x` runs `rm x`, `env -i FOO=1 rm x` too, and
//! `su -c 'rm x'` runs a script.
//!
//! Each wrapper's options are read by a table ([`Spec`]) so that `sudo -u root rm` is seen as
//! running `rm`, not `root`. An option a wrapper does not have stops the reading: the words
//! are then kept as they are (the wrapper is the program), which errs towards matching less
//! in deny rules — so unknown options are listed in the docs as out of reach. These tables
//! serve deny and ask rules, which should see through every wrapper; allow rules strip only
//! the few harmless ones ([`crate::split::strip_wrappers`]).

/// What a wrapper does with the words after its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unwrap {
    /// Its options take this many words; the program it runs comes next.
    Then(usize),
    /// It runs this text as a shell script (`su -c`, `env -S`, `watch`, `sudo -s`).
    Script(String),
    /// It runs no program from these words (`command -v rm`, `sudo -l`, `flock 9`).
    Nothing,
    /// It starts a shell that reads its commands from standard input (`fakeroot`, `su` or
    /// `sudo -s` without a command, `script` without `-c`).
    Shell,
}

/// A word whose value the shell computes at run time, as wrappers see it: it never equals an
/// option, and a script holding it is not literal.
pub(crate) const COMPUTED: &str = "\u{0}";

/// The options of one program.
struct Spec {
    /// Short options without a value (`-E`).
    flags: &'static str,
    /// Short options with a value, attached (`-uroot`) or the next word (`-u root`).
    values: &'static str,
    /// Short options whose value is optional and can only be attached (`xargs -i{}`).
    attached: &'static str,
    /// Long options without a value (`--login`; `--x=v` is accepted too).
    long_flags: &'static [&'static str],
    /// Long options with a value (`--user=root` or `--user root`).
    long_values: &'static [&'static str],
}

/// The options read, and where the operands start.
struct Scanned {
    /// Each option (`-u`, `--user`) with its value.
    options: Vec<(String, Option<String>)>,
    /// The index of the first operand.
    operands: usize,
}

impl Scanned {
    fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|(o, _)| names.contains(&o.as_str()))
    }

    fn value(&self, names: &[&str]) -> Option<&str> {
        self.options.iter().rev().find(|(o, _)| names.contains(&o.as_str())).and_then(|(_, v)| v.as_deref())
    }
}

impl Spec {
    const NONE: Spec = Spec { flags: "", values: "", attached: "", long_flags: &[], long_values: &[] };

    /// Reads options up to the first operand (or `--`); `None` at an option it does not have.
    fn scan(&self, args: &[&str]) -> Option<Scanned> {
        let mut options = Vec::new();
        let mut i = 0;
        while let Some(&arg) = args.get(i) {
            if arg == "--" {
                return Some(Scanned { options, operands: i + 1 });
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                    None => (arg.to_string(), None),
                };
                if self.long_values.contains(&name.as_str()) {
                    let value = match attached {
                        Some(v) => Some(v),
                        None => {
                            i += 1;
                            Some(args.get(i)?.to_string())
                        }
                    };
                    options.push((name, value));
                } else if self.long_flags.contains(&name.as_str()) {
                    options.push((name, attached));
                } else {
                    return None;
                }
                i += 1;
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
                return Some(Scanned { options, operands: i });
            };
            for (at, c) in cluster.char_indices() {
                if self.flags.contains(c) {
                    options.push((format!("-{c}"), None));
                } else if self.attached.contains(c) {
                    let rest = &cluster[at + c.len_utf8()..];
                    options.push((format!("-{c}"), Some(rest.to_string()).filter(|r| !r.is_empty())));
                    break;
                } else if self.values.contains(c) {
                    let rest = &cluster[at + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i)?.to_string()
                    } else {
                        rest.to_string()
                    };
                    options.push((format!("-{c}"), Some(value)));
                    break;
                } else {
                    return None;
                }
            }
            i += 1;
        }
        Some(Scanned { options, operands: i })
    }
}

/// Whether `name` (a basename) wraps another program, and how; `None` when it does not, or
/// when its words cannot be read.
pub(crate) fn unwrap(name: &str, args: &[&str]) -> Option<Unwrap> {
    let then = |spec: &Spec| spec.scan(args).map(|s| Unwrap::Then(s.operands));
    match name {
        "builtin" => Some(Unwrap::Then(0)),
        "nohup" | "unbuffer" => then(&Spec { flags: "p", ..Spec::NONE }),
        "command" => {
            let s = Spec { flags: "pvV", ..Spec::NONE }.scan(args)?;
            Some(if s.has(&["-v", "-V"]) { Unwrap::Nothing } else { Unwrap::Then(s.operands) })
        }
        "exec" => then(&Spec { flags: "cl", values: "a", ..Spec::NONE }),
        "time" => then(&Spec {
            attached: "",
            flags: "pvaq",
            values: "fo",
            long_flags: &["--portability", "--verbose", "--append", "--quiet"],
            long_values: &["--format", "--output"],
        }),
        "nice" => nice(args),
        "setsid" => then(&Spec { flags: "cfw", long_flags: &["--ctty", "--fork", "--wait"], ..Spec::NONE }),
        "stdbuf" => then(&Spec { values: "ioe", long_values: &["--input", "--output", "--error"], ..Spec::NONE }),
        "timeout" => {
            let s = Spec {
                attached: "",
                flags: "v",
                values: "sk",
                long_flags: &["--preserve-status", "--foreground", "--verbose"],
                long_values: &["--signal", "--kill-after"],
            }
            .scan(args)?;
            // Then the duration (without one, `timeout` runs nothing).
            args.get(s.operands).filter(|d| is_duration(d)).map(|_| Unwrap::Then(s.operands + 1))
        }
        "ionice" => {
            let s = Spec {
                attached: "",
                flags: "tpPu",
                values: "cn",
                long_flags: &["--ignore"],
                long_values: &["--class", "--classdata"],
            }
            .scan(args)?;
            Some(if s.has(&["-p", "-P", "-u"]) { Unwrap::Nothing } else { Unwrap::Then(s.operands) })
        }
        "chrt" | "taskset" => {
            let s = Spec { flags: "abdefiormRvcp", values: "TPD", ..Spec::NONE }.scan(args)?;
            // A priority (chrt) or a CPU mask (taskset) comes before the program; with `-p`
            // they act on a running process instead.
            Some(if s.has(&["-p"]) { Unwrap::Nothing } else { Unwrap::Then(s.operands + 1) })
        }
        "xargs" => xargs_spec().scan(args).map(|s| Unwrap::Then(s.operands)),
        "sudo" => sudo(args),
        "doas" => {
            let s = Spec { flags: "ns", values: "uC", ..Spec::NONE }.scan(args)?;
            Some(if s.has(&["-C"]) { Unwrap::Nothing } else { Unwrap::Then(s.operands) })
        }
        "env" => env(args),
        "flock" => {
            let s = Spec {
                attached: "",
                flags: "sxenuoFh",
                values: "wEc",
                long_flags: &["--shared", "--exclusive", "--nonblock", "--unlock", "--close", "--no-fork", "--verbose"],
                long_values: &["--timeout", "--conflict-exit-code", "--command"],
            }
            .scan(args)?;
            if let Some(script) = s.value(&["-c", "--command"]) {
                return Some(Unwrap::Script(script.to_string()));
            }
            // `flock FILE program…`; `flock FD` runs nothing.
            Some(if args.len() > s.operands + 1 { Unwrap::Then(s.operands + 1) } else { Unwrap::Nothing })
        }
        "watch" => {
            let s = Spec {
                attached: "",
                flags: "bcCdefgpqrtwx",
                values: "nq",
                long_flags: &[
                    "--beep",
                    "--color",
                    "--differences",
                    "--errexit",
                    "--chgexit",
                    "--exec",
                    "--precise",
                    "--no-title",
                ],
                long_values: &["--interval"],
            }
            .scan(args)?;
            Some(if s.has(&["-x", "--exec"]) {
                Unwrap::Then(s.operands)
            } else {
                Unwrap::Script(args.get(s.operands..).unwrap_or_default().join(" "))
            })
        }
        "strace" | "ltrace" => {
            let s = Spec { flags: "fFcCdDhiqrtTvVxyzZkwnA", values: "eoOpsSuEaPbIXL", ..Spec::NONE }.scan(args)?;
            Some(if args.len() > s.operands { Unwrap::Then(s.operands) } else { Unwrap::Nothing })
        }
        "coproc" => Some(coproc(args)),
        "fakeroot" => {
            let s = Spec {
                attached: "",
                flags: "uhv",
                values: "lisb",
                long_flags: &["--unknown-is-real", "--help", "--version"],
                long_values: &["--lib", "--faked"],
            }
            .scan(args)?;
            if s.has(&["-h", "--help", "-v", "--version"]) {
                return Some(Unwrap::Nothing);
            }
            // Without a command it starts `$SHELL`.
            Some(if args.len() > s.operands { Unwrap::Then(s.operands) } else { Unwrap::Shell })
        }
        "ssh-agent" => {
            let s = Spec { flags: "cDdskT", values: "aEOPt", ..Spec::NONE }.scan(args)?;
            // Without a command it prints its variables (or, with `-k`, stops an agent).
            Some(if args.len() > s.operands && !s.has(&["-k"]) { Unwrap::Then(s.operands) } else { Unwrap::Nothing })
        }
        "busybox" | "toybox" => Some(match args.first() {
            Some(applet) if !applet.starts_with('-') => Unwrap::Then(0),
            _ => Unwrap::Nothing,
        }),
        "chroot" => {
            let s = Spec { long_flags: &["--skip-chdir"], long_values: &["--userspec", "--groups"], ..Spec::NONE }
                .scan(args)?;
            Some(if args.len() > s.operands + 1 { Unwrap::Then(s.operands + 1) } else { Unwrap::Nothing })
        }
        "su" | "runuser" => {
            let s = Spec {
                attached: "",
                flags: "lmpfP",
                values: "cgGswu",
                long_flags: &["--login", "--preserve-environment", "--pty", "--fast"],
                long_values: &["--command", "--shell", "--group", "--supp-group", "--session-command", "--user"],
            }
            .scan(args)?;
            if let Some(script) = s.value(&["-c", "--command", "--session-command"]) {
                return Some(Unwrap::Script(script.to_string()));
            }
            // `runuser -u USER program…`; otherwise a shell reading its input.
            Some(if s.has(&["-u", "--user"]) && args.len() > s.operands {
                Unwrap::Then(s.operands)
            } else {
                Unwrap::Shell
            })
        }
        "script" => {
            let s = Spec {
                attached: "",
                flags: "aeEfqkT",
                values: "cOBIlmt",
                long_flags: &["--append", "--return", "--flush", "--force", "--quiet"],
                long_values: &[
                    "--command",
                    "--log-out",
                    "--log-in",
                    "--log-io",
                    "--timing",
                    "--echo",
                    "--logging-format",
                ],
            }
            .scan(args)?;
            Some(match s.value(&["-c", "--command"]) {
                Some(script) => Unwrap::Script(script.to_string()),
                // It records a shell, which reads its commands from its input.
                None => Unwrap::Shell,
            })
        }
        _ => None,
    }
}

/// bash's `coproc [NAME] COMMAND`: a NAME only comes before a compound command (`coproc X
/// { rm x; }`), which the parser reads as words up to the first `;` (its body's commands are
/// read as commands of their own); before a simple command the first word is the program.
fn coproc(args: &[&str]) -> Unwrap {
    let is_name = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match args {
        [] => Unwrap::Nothing,
        [name, "{" | "(", ..] if is_name(name) => Unwrap::Then(2),
        ["{" | "(", ..] => Unwrap::Then(1),
        _ => Unwrap::Then(0),
    }
}

/// `30`, `1.5m`, `2h`: a duration `timeout` accepts.
fn is_duration(s: &str) -> bool {
    let digits = s.trim_end_matches(['s', 'm', 'h', 'd']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.') && s.len() - digits.len() <= 1
}

/// `nice [-n N | -N | --adjustment=N] program…`.
fn nice(args: &[&str]) -> Option<Unwrap> {
    let number = |s: &str| !s.is_empty() && s.trim_start_matches(['-', '+']).chars().all(|c| c.is_ascii_digit());
    let mut i = 0;
    while let Some(&w) = args.get(i) {
        match w {
            "--" => return Some(Unwrap::Then(i + 1)),
            "-n" | "--adjustment" => i += 2,
            w if w.starts_with("--adjustment=") || w.strip_prefix("-n").is_some_and(number) => i += 1,
            w if w.starts_with('-') && number(&w[1..]) => i += 1,
            w if w.starts_with('-') => return None,
            _ => return Some(Unwrap::Then(i)),
        }
    }
    Some(Unwrap::Then(i))
}

fn xargs_spec() -> Spec {
    Spec {
        flags: "0rtpxo",
        values: "InPLsdEa",
        attached: "iel",
        long_flags: &[
            "--null",
            "--no-run-if-empty",
            "--verbose",
            "--interactive",
            "--exit",
            "--open-tty",
            "--show-limits",
        ],
        long_values: &[
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--delimiter",
            "--eof",
            "--arg-file",
            "--replace",
            "--process-slot-var",
        ],
    }
}

/// The string `xargs -I R` (or `-i`, `--replace`) replaces with its input.
pub(crate) fn xargs_replace(args: &[&str]) -> Option<String> {
    let s = xargs_spec().scan(args)?;
    match s.options.iter().rev().find(|(o, _)| matches!(o.as_str(), "-I" | "-i" | "--replace")) {
        Some((o, v)) if o == "-I" => v.clone(),
        Some((_, v)) => Some(v.clone().filter(|v| !v.is_empty()).unwrap_or_else(|| "{}".to_string())),
        None => None,
    }
}

fn sudo(args: &[&str]) -> Option<Unwrap> {
    let s = Spec {
        attached: "",
        flags: "AbBEHhkKlnNPSsiVve",
        values: "ugCDprtTUR",
        long_flags: &[
            "--askpass",
            "--background",
            "--bell",
            "--preserve-env",
            "--set-home",
            "--help",
            "--login",
            "--reset-timestamp",
            "--remove-timestamp",
            "--list",
            "--non-interactive",
            "--preserve-groups",
            "--stdin",
            "--shell",
            "--validate",
            "--version",
            "--edit",
        ],
        long_values: &[
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--chroot",
            "--host",
        ],
    }
    .scan(args)?;
    if s.has(&["-e", "--edit", "-l", "--list", "-v", "--validate", "-V", "--version", "-k", "-K", "--help", "-h"]) {
        return Some(Unwrap::Nothing);
    }
    let start = s.operands + assignments(&args[s.operands.min(args.len())..]);
    if s.has(&["-s", "--shell", "-i", "--login"]) {
        return Some(if args.len() > start { Unwrap::Script(args[start..].join(" ")) } else { Unwrap::Shell });
    }
    Some(Unwrap::Then(start))
}

fn env(args: &[&str]) -> Option<Unwrap> {
    let s = Spec {
        attached: "",
        flags: "i0v",
        values: "uCSP",
        long_flags: &[
            "--ignore-environment",
            "--null",
            "--debug",
            "--default-signal",
            "--ignore-signal",
            "--block-signal",
            "--list-signal-handling",
        ],
        long_values: &["--unset", "--chdir", "--split-string"],
    }
    .scan(args)?;
    let start = s.operands + assignments(&args[s.operands.min(args.len())..]);
    if let Some(split) = s.value(&["-S", "--split-string"]) {
        let mut script = split.to_string();
        for arg in &args[start.min(args.len())..] {
            script.push(' ');
            script.push_str(arg);
        }
        return Some(Unwrap::Script(script));
    }
    Some(Unwrap::Then(start))
}

/// How many `NAME=value` words lead `words`.
fn assignments(words: &[&str]) -> usize {
    words
        .iter()
        .take_while(|w| {
            w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .count()
}

#[cfg(test)]
mod tests;
