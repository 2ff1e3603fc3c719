//! Commands refused before they run: a built-in list of catastrophic ones (`rm -rf /` and
//! `~`, `mkfs`, `dd` or a redirection onto a block device, fork bombs, recursive `chmod`/
//! `chown` of `/`), plus the user's own deny patterns.
//!
//! This is a speed bump against an accident, not the security boundary (the sandbox is): the
//! command is split into simple commands with a small shell lexer (quotes, escapes,
//! separators, substitutions), wrappers such as `sudo`, `env` or `timeout` are looked
//! through, `bash -c '…'` and `eval` are checked recursively, and each simple command is
//! matched against the list. Anything cleverer (a path built at run time) gets through.

use regex::RegexSet;
use toolbelt_core::ToolError;

mod lexer;

use lexer::{Token, lex};

/// Why a command is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// On the built-in list: what it would do.
    Catastrophic(String),
    /// Matches a configured deny pattern.
    Pattern(String),
    /// A configured pattern is not a valid regex (nothing runs until it is fixed).
    BadPattern {
        /// The pattern.
        pattern: String,
        /// The regex error.
        error: String,
    },
}

impl Refusal {
    /// The model-facing error.
    pub fn into_error(self) -> ToolError {
        ToolError::failed(match self {
            Refusal::Catastrophic(what) => format!(
                "Refused: this command {what}. It is on the built-in list of catastrophic commands and is never \
                 run (a safety stop, not a permission question). If you meant a specific directory or file, name \
                 it explicitly (e.g. `rm -rf ./build`); otherwise do something else."
            ),
            Refusal::Pattern(pattern) => format!(
                "Refused: the command matches the deny pattern `{pattern}` configured for Bash (a safety stop set \
                 by the user). Do it another way, or ask the user to run it."
            ),
            Refusal::BadPattern { pattern, error } => format!(
                "Refused: the Bash deny pattern `{pattern}` in the configuration is not a valid regular \
                 expression ({error}), so no command runs until it is fixed. Ask the user to correct it."
            ),
        })
    }
}

/// Checks `command` against the built-in list and `patterns` (regexes, matched anywhere
/// in the command text).
pub fn check(command: &str, patterns: &[String]) -> Result<(), Refusal> {
    if !patterns.is_empty() {
        match RegexSet::new(patterns) {
            Ok(set) => {
                if let Some(i) = set.matches(command).iter().next() {
                    return Err(Refusal::Pattern(patterns[i].clone()));
                }
            }
            Err(e) => {
                let bad = patterns.iter().find(|p| regex::Regex::new(p).is_err()).cloned().unwrap_or_default();
                return Err(Refusal::BadPattern { pattern: bad, error: e.to_string() });
            }
        }
    }
    match catastrophic(command, 0) {
        Some(what) => Err(Refusal::Catastrophic(what)),
        None => Ok(()),
    }
}

/// What makes `command` catastrophic, if it is.
fn catastrophic(command: &str, depth: usize) -> Option<String> {
    if depth > 4 {
        return None;
    }
    if let Some(what) = fork_bomb(command) {
        return Some(what);
    }
    let tokens = lex(command);
    let mut words: Vec<String> = Vec::new();
    let mut redirect = false;
    for token in tokens {
        match token {
            Token::Word { text, substitution } => {
                if substitution && let Some(what) = catastrophic(&text, depth + 1) {
                    return Some(what);
                }
                if redirect {
                    redirect = false;
                    if is_block_device(&text) {
                        return Some(format!("writes straight onto the block device {text}"));
                    }
                } else {
                    words.push(text);
                }
            }
            Token::Redirect => redirect = true,
            Token::Separator => {
                if let Some(what) = simple_command(&words, depth) {
                    return Some(what);
                }
                words.clear();
                redirect = false;
            }
        }
    }
    simple_command(&words, depth)
}

/// Matches one simple command (words after quote removal) against the list.
fn simple_command(words: &[String], depth: usize) -> Option<String> {
    let words = strip_wrappers(words);
    let (program, args) = words.split_first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    match name {
        "rm" => {
            let (flags, targets) = flags_and_operands(args);
            let recursive = flags.iter().any(|f| has_short(f, &['r', 'R']) || *f == "--recursive");
            if flags.contains(&"--no-preserve-root") {
                return Some("deletes from / with --no-preserve-root".to_string());
            }
            let target = targets.iter().find(|t| is_catastrophic_target(t))?;
            recursive.then(|| format!("recursively deletes {}", describe(target)))
        }
        "chmod" | "chown" | "chgrp" => {
            let (flags, targets) = flags_and_operands(args);
            let recursive = flags.iter().any(|f| has_short(f, &['R']) || *f == "--recursive");
            let target = targets.iter().find(|t| is_catastrophic_target(t))?;
            recursive.then(|| format!("recursively changes ownership or permissions of {}", describe(target)))
        }
        "find" => {
            let start = args.iter().take_while(|a| !a.starts_with('-')).find(|a| is_catastrophic_target(a))?;
            let deletes = args.iter().any(|a| a == "-delete")
                || args.windows(2).any(|w| matches!(w[0].as_str(), "-exec" | "-execdir") && w[1].ends_with("rm"));
            deletes.then(|| format!("deletes files everywhere under {}", describe(start)))
        }
        "dd" => {
            let target = args.iter().find_map(|a| a.strip_prefix("of="))?;
            is_block_device(target).then(|| format!("writes straight onto the block device {target}"))
        }
        "shred" | "wipefs" | "blkdiscard" => {
            let target = args.iter().find(|a| is_block_device(a))?;
            Some(format!("destroys the data on the block device {target}"))
        }
        _ if name == "mkfs" || name.starts_with("mkfs.") || name == "mke2fs" => {
            Some("makes a new filesystem (erasing whatever the device held)".to_string())
        }
        "bash" | "sh" | "zsh" | "dash" | "ksh" => {
            let pos = args.iter().position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))?;
            catastrophic(args.get(pos + 1)?, depth + 1)
        }
        "eval" => catastrophic(&args.join(" "), depth + 1),
        _ => None,
    }
}

/// Drops leading variable assignments and wrappers that run the rest as a command (`sudo`,
/// `env`, `nohup`, `timeout 5`, `xargs`, …), with their options.
fn strip_wrappers(mut words: &[String]) -> &[String] {
    loop {
        let Some((first, rest)) = words.split_first() else { return words };
        let name = first.rsplit('/').next().unwrap_or(first);
        // Options of each wrapper that take a value.
        let valued: &[&str] = match name {
            _ if is_assignment(first) || RESERVED.contains(&name) => {
                words = rest;
                continue;
            }
            "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
            "env" => &["-u", "-C", "-S"],
            "nice" => &["-n"],
            "ionice" => &["-c", "-n", "-p"],
            "stdbuf" => &["-i", "-o", "-e"],
            "timeout" => &["-s", "-k"],
            "xargs" => &["-n", "-I", "-d", "-E", "-L", "-P", "-s", "-a"],
            "chrt" | "taskset" | "command" | "builtin" | "exec" | "nohup" | "time" | "unbuffer" | "setsid"
            | "flock" => &["-a"],
            _ => return words,
        };
        let mut i = 1;
        while let Some(w) = rest.get(i - 1) {
            if w == "--" {
                i += 1;
                break;
            }
            if is_assignment(w) && name == "env" {
                i += 1;
            } else if w.starts_with('-') && w.len() > 1 {
                i += if valued.contains(&w.as_str()) { 2 } else { 1 };
            } else {
                break;
            }
        }
        // `timeout` takes a duration and `flock` a lock file before the command.
        if matches!(name, "timeout" | "flock" | "chrt" | "taskset") {
            i += 1;
        }
        words = words.get(i..).unwrap_or(&[]);
    }
}

/// Reserved words that may stand before a command (`if rm …`, `then rm …`, `! rm …`).
const RESERVED: &[&str] = &["!", "{", "}", "if", "then", "else", "elif", "do", "while", "until"];

fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else { return false };
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits arguments into options (before `--`) and operands.
fn flags_and_operands(args: &[String]) -> (Vec<&str>, Vec<&str>) {
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    for a in args {
        let a = a.as_str();
        if !options_done && a == "--" {
            options_done = true;
        } else if !options_done && a.starts_with('-') && a.len() > 1 {
            flags.push(a);
        } else {
            operands.push(a);
        }
    }
    (flags, operands)
}

/// Whether a short-option cluster (`-rf`) holds one of `letters`.
fn has_short(flag: &str, letters: &[char]) -> bool {
    !flag.starts_with("--") && flag.chars().skip(1).any(|c| letters.contains(&c))
}

/// Top-level directories whose loss breaks the machine.
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc", "/root",
    "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var",
];

/// `/`, `/*`, `~`, `$HOME` and their spellings, and the top-level system directories.
fn is_catastrophic_target(target: &str) -> bool {
    let mut t = target.trim();
    loop {
        if let Some(s) = t.strip_suffix("/*").or_else(|| t.strip_suffix("/.")) {
            t = s; // `/*` and `/.` mean the directory itself
        } else if t.len() > 1
            && let Some(s) = t.strip_suffix('/')
        {
            t = s;
        } else {
            break;
        }
    }
    t.is_empty()
        || t == "/"
        || t == "/.."
        || ["~", "$HOME", "${HOME}"].contains(&t)
        || (t.starts_with('~') && !t.contains('/'))
        || SYSTEM_DIRS.contains(&t)
}

fn describe(target: &str) -> String {
    format!("`{target}`")
}

/// Block devices a write onto destroys a filesystem: disks, partitions, device-mapper.
fn is_block_device(path: &str) -> bool {
    let Some(name) = path.strip_prefix("/dev/") else { return false };
    ["sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "disk/", "mapper/", "loop"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// `:(){ :|:& };:` and the same shape with any name: a function that pipes itself into a
/// background copy of itself.
fn fork_bomb(command: &str) -> Option<String> {
    static SHAPE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let shape = SHAPE
        .get_or_init(|| {
            regex::Regex::new(r"([^\s(){}|&;]+)\s*\(\)\s*\{\s*([^\s(){}|&;]+)\s*\|\s*([^\s(){}|&;]+)\s*&").ok()
        })
        .as_ref()?;
    shape
        .captures_iter(command)
        .any(|c| c[1] == c[2] && c[2] == c[3])
        .then(|| "is a fork bomb (it would exhaust the process table)".to_string())
}

#[cfg(test)]
mod tests;
