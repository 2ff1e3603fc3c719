//! The allow rules an `Ask` (or a denial nobody could answer) offers: each names what was
//! asked, never more than a person would mean by approving it.
//!
//! A shell command gets a prefix rule when a prefix is what approving it means — `cargo test *`
//! for `cargo test --workspace`, `touch *` for `touch x`, `python3 tools/gen.py *` for a script
//! run with some arguments — and the command itself when a prefix would allow more than was
//! asked: a command that deletes, overwrites or rewrites history
//! ([`toolbelt_command::destructive`]: `rm -rf build` offers `Bash(rm -rf build)`, not
//! `Bash(rm *)`), a shell builtin (`exit 3`, `export X=1`), a wrapper that runs another program
//! (`sudo …`, `env …`), inline code (`python3 -c …`), a path or computed program name. A
//! command that must be named exactly but whose text holds `*` (a wildcard in rules) or a
//! `$`/backtick expansion (`rm "$f"` names a different file each time) gets no rule: it is
//! approved once, or not at all.
//!
//! The rules a call offers are deduplicated and any rule another one already covers is left
//! out (`Bash(touch x *)` beside `Bash(touch *)`).

/// Programs whose second word picks what they do (`cargo test`, `npm run`, `git commit`).
const SUBCOMMANDS: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "gh",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "rustup",
    "apt",
    "apt-get",
    "brew",
    "systemctl",
    "terraform",
    "make",
    "just",
    "dotnet",
    "mvn",
    "gradle",
    "nix",
    "conda",
    "composer",
    "bundle",
    "rake",
    "mix",
    "zig",
    "swift",
    "npx",
    "pnpx",
    "bunx",
    "turbo",
    "nx",
    "flutter",
    "dart",
    "stack",
    "cabal",
    "dune",
    "sbt",
    "ninja",
];

/// Interpreters: their second word is a script (named in the rule) or inline code (the rule
/// is exact).
const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "node", "ruby", "perl", "php", "bash", "sh", "zsh", "dash", "fish", "lua",
    "Rscript",
];

/// Shell builtins that control the shell itself, and programs that run another: a prefix of
/// them means nothing a person approves (`exit 3 *`) or everything (`sudo *`).
const EXACT: &[&str] = &[
    "exit",
    "return",
    "break",
    "continue",
    "shift",
    "cd",
    "pushd",
    "popd",
    "set",
    "shopt",
    "export",
    "unset",
    "declare",
    "local",
    "readonly",
    "typeset",
    "alias",
    "unalias",
    "trap",
    "wait",
    "source",
    ".",
    "eval",
    "exec",
    "umask",
    "ulimit",
    "hash",
    "builtin",
    "command",
    "let",
    "read",
    "getopts",
    "true",
    "false",
    ":",
    "test",
    "[",
    "[[",
    "enable",
    "jobs",
    "fg",
    "bg",
    "disown",
    "history",
    "fc",
    "complete",
    "mapfile",
    "readarray",
    "sudo",
    "doas",
    "su",
    "env",
    "xargs",
    "nohup",
    "watch",
    "ssh",
    "time",
    "timeout",
    "nice",
    "stdbuf",
    "chroot",
    "unshare",
    "setsid",
    "flock",
];

/// The `Bash(…)` specifier to offer for one simple command, or `None` when no rule can name it
/// without allowing more.
pub(super) fn command_rule(command: &str) -> Option<String> {
    let collapsed = command.split_whitespace().collect::<Vec<_>>().join(" ");
    // Exact only when the text is what runs: `*` is a wildcard in rules, and a variable or
    // substitution (`rm "$f"`) could stand for anything the next time.
    let exact = || (!collapsed.contains(['*', '$', '`']) && !collapsed.is_empty()).then(|| collapsed.clone());
    if toolbelt_command::destructive::destructive(command).is_some() {
        return exact();
    }
    let words: Vec<&str> = collapsed.split(' ').collect();
    let (Some(&program), next) = (words.first(), words.get(1).copied()) else { return exact() };
    if !is_plain(program) || EXACT.contains(&program) {
        return exact();
    }
    fn fits(word: Option<&str>, path: bool) -> Option<&str> {
        word.filter(|w| !w.starts_with(['-', '+']) && (is_plain(w) || (path && is_path(w))))
    }
    if SUBCOMMANDS.contains(&program) {
        let sub =
            fits(next, false).filter(|s| program != "git" || !toolbelt_command::destructive::GIT_SOMETIMES.contains(s));
        return match sub {
            Some(sub) => Some(format!("{program} {sub} *")),
            None => exact(),
        };
    }
    if INTERPRETERS.contains(&program) {
        return match fits(next, true) {
            Some(script) => Some(format!("{program} {script} *")),
            None => exact(),
        };
    }
    Some(format!("{program} *"))
}

/// A word that stands for itself in a rule and in the shell: letters, digits and `-_.:@+`.
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@' | '+'))
}

/// A plain word that may hold `/` (a script's path).
fn is_path(word: &str) -> bool {
    word.split('/').all(|part| part.is_empty() || is_plain(part)) && word.chars().any(|c| c != '/')
}

/// `suggestions` without repeats and without any rule another one covers.
pub(super) fn prune(suggestions: Vec<String>) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for s in suggestions {
        if !unique.contains(&s) {
            unique.push(s);
        }
    }
    unique.iter().filter(|narrow| !unique.iter().any(|wide| wide != *narrow && covers(wide, narrow))).cloned().collect()
}

/// Whether the rule `wide` allows everything `narrow` does, for the forms suggestions take:
/// a bare tool name, a command prefix (`touch *` covers `touch x *` and `touch x`), a
/// directory tree (`Read(/a/**)` covers `Read(/a/b/**)`).
fn covers(wide: &str, narrow: &str) -> bool {
    let split = |rule: &str| -> (String, Option<String>) {
        match rule.split_once('(') {
            Some((tool, rest)) => (tool.to_string(), rest.strip_suffix(')').map(str::to_string)),
            None => (rule.to_string(), None),
        }
    };
    let ((wide_tool, wide_spec), (narrow_tool, narrow_spec)) = (split(wide), split(narrow));
    if wide_tool != narrow_tool {
        return false;
    }
    let Some(wide_spec) = wide_spec else { return true };
    let Some(narrow_spec) = narrow_spec else { return false };
    if let Some(prefix) = wide_spec.strip_suffix(" *").filter(|p| !p.contains('*')) {
        let narrow = narrow_spec.strip_suffix(" *").unwrap_or(&narrow_spec);
        return !narrow.contains('*') && (narrow == prefix || narrow.starts_with(&format!("{prefix} ")));
    }
    if let Some(dir) = wide_spec.strip_suffix("/**").filter(|d| !d.contains("**")) {
        let narrow = narrow_spec.strip_suffix("/**").unwrap_or(&narrow_spec);
        return narrow == dir || narrow.starts_with(&format!("{dir}/"));
    }
    false
}

/// Escapes glob metacharacters so a suggested path rule names exactly that path.
pub(super) fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_get_a_prefix_only_when_it_means_what_was_asked() {
        let table: &[(&str, Option<&str>)] = &[
            // a prefix: the program, and its subcommand or script
            ("cargo test --workspace", Some("cargo test *")),
            ("cargo publish", Some("cargo publish *")),
            ("npm run build --prod", Some("npm run *")),
            ("git commit -m 'x y'", Some("git commit *")),
            ("touch x", Some("touch *")),
            ("mkdir -p out/dir", Some("mkdir *")),
            ("python3 tools/gen.py --fast", Some("python3 tools/gen.py *")),
            ("curl https://example.com", Some("curl *")),
            // exactly: destructive commands
            ("rm -rf build", Some("rm -rf build")),
            ("rm   -rf   build", Some("rm -rf build")),
            ("mv a.txt b.txt", Some("mv a.txt b.txt")),
            ("chmod 600 key", Some("chmod 600 key")),
            ("dd if=a of=b", Some("dd if=a of=b")),
            ("git push origin main", Some("git push origin main")),
            ("git reset --hard HEAD~1", Some("git reset --hard HEAD~1")),
            ("git clean -fdx", Some("git clean -fdx")),
            ("git stash drop", Some("git stash drop")),
            ("echo hi > notes.txt", Some("echo hi > notes.txt")),
            ("cargo test > log 2>&1", Some("cargo test > log 2>&1")),
            ("find . -name x -delete", Some("find . -name x -delete")),
            // exactly: builtins, wrappers, inline code, paths, subcommands that are
            // destructive in some forms
            ("exit 3", Some("exit 3")),
            ("cd", Some("cd")),
            ("export FOO=1", Some("export FOO=1")),
            ("FOO=1 make", Some("FOO=1 make")),
            ("sudo apt install x", Some("sudo apt install x")),
            ("env X=1 cargo test", Some("env X=1 cargo test")),
            ("python3 -c 'print(1)'", Some("python3 -c 'print(1)'")),
            ("./run.sh --fast", Some("./run.sh --fast")),
            ("git stash list", Some("git stash list")),
            ("git branch feature", Some("git branch feature")),
            ("git -C sub commit -m x", Some("git -C sub commit -m x")),
            ("cargo --version", Some("cargo --version")),
            // nothing: a `*` in a command that must be named exactly would be a wildcard
            ("rm -f *.o", None),
            ("rm -rf \"$dir\"", None),
            ("eval \"$cmd\"", None),
            ("rm -rf `pwd`/x", None),
            ("python3 -c 'import glob; glob.glob(\"*\")'", None),
        ];
        for (command, want) in table {
            assert_eq!(command_rule(command).as_deref(), *want, "{command}");
        }
    }

    #[test]
    fn repeats_and_covered_rules_are_left_out() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(prune(s(&["Bash(touch x *)", "Bash(touch *)", "Bash(touch *)"])), s(&["Bash(touch *)"]));
        assert_eq!(prune(s(&["Bash(npm run *)", "Bash(npm *)", "Bash(npm)"])), s(&["Bash(npm *)"]));
        assert_eq!(
            prune(s(&["Bash(rm -rf build)", "Bash(rm -rf dist)", "Bash(rmdir *)"])),
            s(&["Bash(rm -rf build)", "Bash(rm -rf dist)", "Bash(rmdir *)"]),
            "exact rules and other programs stay"
        );
        assert_eq!(prune(s(&["Read(/a/b/**)", "Read(/a/**)", "Edit(/a/x)"])), s(&["Read(/a/**)", "Edit(/a/x)"]));
        assert_eq!(prune(s(&["Read(/ab/**)", "Read(/a/**)"])), s(&["Read(/ab/**)", "Read(/a/**)"]));
        assert_eq!(prune(s(&["WebFetch(domain:x.org)", "WebFetch"])), s(&["WebFetch"]));
        assert_eq!(prune(s(&["Bash(cargo test *)", "Bash(cargo testing *)"])).len(), 2, "word boundaries");
    }
}
