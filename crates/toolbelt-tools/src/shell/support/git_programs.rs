//! Programs a repository's own git configuration makes read-only git commands run.
//!
//! Every command runs with `core.fsmonitor=false`, `safe.bareRepository=explicit` and the
//! pager `cat` ([`crate::process::env`]), but git also runs what a repository's
//! `.git/config` names by driver: a `diff.<driver>.textconv` or `.command` and `diff.external`
//! (`git diff`, `git log -p`, `git show`, `git blame`), a `filter.<driver>.clean`/`.smudge`/
//! `.process` (`git status`, `git diff`), a `gpg.program` (`git log` with
//! `log.showSignature`), and the `post-index-change` hook (`git status` refreshing the
//! index). Those cannot be switched off by configuration without knowing their names, and
//! attributes (`.git/info/attributes` included) pick them per file. A clone never carries
//! `.git/config`, and no tool writes it without approval; but a folder can arrive with its
//! `.git` (an archive, a shared drive), and then a read-only `git log -p` would run its
//! programs without anyone asking.
//!
//! So until a person trusted the project (`toolbelt trust`: [`crate::shell::BashConfig`]'s
//! `trusted_project`), a read-only command that runs git in a repository whose configuration
//! names such a program asks first, naming the program. The repositories looked at are
//! those of every directory the command may run git in (the session's directory, each `cd`,
//! each `git -C`), with their worktree configuration, the files they include (whatever the
//! `includeIf` condition: sound rather than clever), and their submodules' (which `git
//! status` enters). A configuration git could not read counts as one naming a program.

use std::path::{Path, PathBuf};

use toolbelt_command::runs::{Run, runs};
use toolbelt_core::{Access, ToolContext};

use crate::process::capture::one_line;
use crate::process::config::BashConfig;
use crate::process::git_config::{self, Entry};
use crate::shell::support::operands;

/// How many configuration files (includes and submodules) one repository may bring in.
const MAX_FILES: usize = 64;

/// The programs the repositories `command` runs git in name, each as `key = value (file)`,
/// for the repositories not inside `trusted`. Empty when the command runs no git.
pub fn named(command: &str, bases: &[PathBuf], trusted: Option<&Path>) -> Vec<String> {
    if !command.contains("git") {
        return Vec::new();
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for run in runs(command) {
        let Run::Program { words, .. } = run else { continue };
        if words.first().and_then(|w| w.value.as_deref()) != Some("git") {
            continue;
        }
        // Its `-C` directories, each relative to the one before, among its global options.
        let mut moves: Vec<&str> = Vec::new();
        let mut args = words[1..].iter().map(|w| w.value.as_deref().unwrap_or(""));
        while let Some(arg) = args.next() {
            match arg {
                "-C" => moves.extend(args.next()),
                "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => {
                    args.next();
                }
                a if a.starts_with('-') => {}
                _ => break,
            }
        }
        for base in bases {
            let dir = moves.iter().fold(base.clone(), |dir, to| dir.join(to));
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    let mut found = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let Some((top, git_dir)) = repository(&dir) else { continue };
        if trusted.is_some_and(|t| top.starts_with(t)) || seen.contains(&git_dir) {
            continue;
        }
        seen.push(git_dir.clone());
        for program in programs(&git_dir) {
            if !found.contains(&program) {
                found.push(program);
            }
        }
    }
    found
}

/// The work tree and git directory of the repository `dir` is in, as git finds it.
fn repository(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let dir = std::fs::canonicalize(dir).ok()?;
    for d in dir.ancestors() {
        let dot_git = d.join(".git");
        if dot_git.is_dir() {
            return Some((d.to_path_buf(), dot_git));
        }
        if dot_git.is_file() {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let to = text.strip_prefix("gitdir:")?.trim();
            return Some((d.to_path_buf(), d.join(to)));
        }
        // Inside a `.git` directory itself.
        if d.file_name().is_some_and(|n| n == ".git") && d.join("HEAD").is_file() {
            return Some((d.parent().unwrap_or(d).to_path_buf(), d.to_path_buf()));
        }
    }
    None
}

/// The programs the configuration of `git_dir` names (with its common directory's, its
/// includes and its submodules'), and its `post-index-change` hook.
fn programs(git_dir: &Path) -> Vec<String> {
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(to) => git_dir.join(to.trim()),
        Err(_) => git_dir.to_path_buf(),
    };
    let mut files: Vec<PathBuf> = vec![common.join("config"), git_dir.join("config.worktree")];
    if common != git_dir {
        files.push(common.join("config.worktree"));
    }
    submodule_configs(&common.join("modules"), &mut files);
    let mut found = Vec::new();
    // Read only when the repository names a program.
    let mut users_own: Option<Vec<Entry>> = None;
    let mut hooks = vec![common.join("hooks")];
    let mut i = 0;
    while let Some(file) = files.get(i).cloned() {
        i += 1;
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let entries = match git_config::parse(&text) {
            Ok(entries) => entries,
            Err(invalid) => {
                found.push(format!(
                    "a configuration this check cannot read as git does ({}:{})",
                    file.display(),
                    invalid.line
                ));
                continue;
            }
        };
        for entry in entries {
            let value = entry.value.as_deref().filter(|v| !v.is_empty());
            if is_include(&entry) {
                let Some(path) = value else { continue };
                let included = resolve(path, file.parent().unwrap_or(Path::new("/")));
                if files.contains(&included) {
                    continue;
                }
                if files.len() >= MAX_FILES {
                    found.push(format!("more than {MAX_FILES} configuration files to check ({})", file.display()));
                    return found;
                }
                files.push(included);
            } else if entry.section == "core" && entry.name == "hookspath" {
                // Relative to the work tree, where hooks run.
                if let Some(path) = value {
                    hooks.push(resolve(path, common.parent().unwrap_or(&common)));
                }
            } else if names_program(&entry) && !users_own.get_or_insert_with(users_programs).contains(&entry) {
                found.push(format!("{} = {} ({})", key(&entry), value.unwrap_or(""), file.display()));
            }
        }
    }
    for dir in hooks {
        let hook = dir.join("post-index-change");
        if hook.is_file() {
            found.push(format!("the post-index-change hook ({})", hook.display()));
        }
    }
    found
}

/// The programs the user's own git configuration names (global and system files, as git
/// finds them from toolbelt's environment): a repository naming the same program under the
/// same key (`git lfs install --local` writing what `git lfs install` wrote globally) adds
/// nothing the user does not run in every repository, so it does not ask.
fn users_programs() -> Vec<Entry> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut files: Vec<PathBuf> = Vec::new();
    match env("GIT_CONFIG_GLOBAL") {
        Some(global) => files.push(global),
        None => {
            let home = env("HOME");
            files.extend(
                env("XDG_CONFIG_HOME")
                    .or_else(|| home.as_ref().map(|h| h.join(".config")))
                    .map(|c| c.join("git/config")),
            );
            files.extend(home.map(|h| h.join(".gitconfig")));
        }
    }
    if std::env::var_os("GIT_CONFIG_NOSYSTEM").is_none() {
        files.push(env("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")));
    }
    files
        .iter()
        .filter_map(|file| std::fs::read_to_string(file).ok())
        .filter_map(|text| git_config::parse(&text).ok())
        .flatten()
        .filter(names_program)
        .collect()
}

/// The `config` of every submodule under `modules` (nested ones too), bounded.
fn submodule_configs(modules: &Path, files: &mut Vec<PathBuf>) {
    let mut pending = vec![modules.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if files.len() >= MAX_FILES {
                return;
            }
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if path.join("config").is_file() {
                files.push(path.join("config"));
                pending.push(path.join("modules"));
            } else {
                // A submodule named with a slash (`libs/a`) nests its directory.
                pending.push(path);
            }
        }
    }
}

fn is_include(entry: &Entry) -> bool {
    entry.name == "path" && (entry.section == "include" || entry.section == "includeif")
}

/// Whether `entry` names a program git runs from a read-only command.
fn names_program(entry: &Entry) -> bool {
    let has_value = entry.value.as_deref().is_some_and(|v| !v.is_empty());
    let sub = entry.subsection.is_some();
    has_value
        && match (entry.section.as_str(), entry.name.as_str()) {
            ("diff", "external") => !sub,
            ("diff", "textconv" | "command") => sub,
            ("filter", "clean" | "smudge" | "process") => sub,
            ("gpg", "program") => true,
            _ => false,
        }
}

fn key(entry: &Entry) -> String {
    match &entry.subsection {
        Some(sub) => format!("{}.{sub}.{}", entry.section, entry.name),
        None => format!("{}.{}", entry.section, entry.name),
    }
}

/// An include's (or `core.hooksPath`'s) path as git resolves it: `~/` under the home
/// directory, a relative one under `dir`.
fn resolve(path: &str, dir: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    dir.join(path)
}

/// A read-only command running git where the repository's own, untrusted configuration
/// names programs git would start (`git_programs.rs`) needs approval, naming them.
pub fn untrusted_git(access: Access, command: &str, cx: &ToolContext) -> Access {
    if !command.contains("git") {
        return access;
    }
    let config = BashConfig::in_effect(cx);
    let named = named(command, &operands::bases(command, cx), config.trusted_project.as_deref());
    if named.is_empty() {
        return access;
    }
    let shown: Vec<String> = named.iter().take(3).map(|p| one_line(p, 200)).collect();
    let more = if named.len() > 3 { format!(" and {} more", named.len() - 3) } else { String::new() };
    access.needs_approval(format!(
        "this runs git in a repository whose own git configuration names programs git starts ({}{more}), and no \
         one trusted this project yet; `toolbelt trust` trusts it and its git configuration",
        shown.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn programs_a_repository_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        let none = named("git log -p", std::slice::from_ref(&root), None);
        assert!(none.is_empty(), "{none:?}");
        std::fs::write(root.join("extra.cfg"), "[filter \"lfs\"]\n\tprocess = git-lfs filter-process\n").unwrap();
        let config = root.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[diff \"x\"]\n\ttextconv = evil-conv\n[includeIf \"onbranch:nope\"]\n\tpath = ../extra.cfg\n");
        std::fs::write(&config, text).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let found = named("cd sub && git -C .. status", &[root.join("sub")], None);
        assert!(found.iter().any(|p| p.starts_with("diff.x.textconv = evil-conv")), "{found:?}");
        assert!(found.iter().any(|p| p.starts_with("filter.lfs.process = git-lfs")), "an include: {found:?}");
        assert!(named("ls -la", std::slice::from_ref(&root), None).is_empty(), "no git, nothing looked at");
        assert!(named("git status", std::slice::from_ref(&root), Some(&root)).is_empty(), "trusted");
        // A hook the index refresh runs, and a configuration git would refuse.
        std::fs::write(root.join(".git/hooks/post-index-change"), "#!/bin/sh\n").unwrap();
        std::fs::write(root.join("extra.cfg"), "[filter \"lfs\"\n").unwrap();
        let found = named("git status", std::slice::from_ref(&root), None);
        assert!(found.iter().any(|p| p.starts_with("the post-index-change hook")), "{found:?}");
        assert!(found.iter().any(|p| p.starts_with("a configuration this check cannot read")), "{found:?}");
    }
}
