//! The files a shell command names, declared as paths it reads or writes, so the permission
//! engine judges them as it judges the Read and Write tools: a `Read(…)` deny rule refuses
//! `cat secret.txt` and `cat sec*.txt` as it refuses `Read secret.txt`, a read-only command
//! naming a file outside the workspace roots (`cat ~/.ssh/id_rsa`, `rg foo /`) asks like
//! the Read tool, and a redirection into `.git/config` asks like a Write of it.
//!
//! The words come from [`toolbelt_command::operands`] (which says which arguments are files);
//! here they become absolute paths: `~` is the home directory, a relative path is taken from
//! the session's directory *and* from every directory a `cd` in the script may lead to (the
//! text cannot always tell which one applies, so each is declared), and an unquoted glob is
//! expanded as bash would inside the roots (bounded), so `sec*.txt` is judged as
//! `secret.txt`. A glob reaching outside the roots is declared as the directory it starts
//! from, which asks anyway.
//!
//! Some programs read more than they name: one following symbolic links (`rg -L`, `grep
//! -R`, `find -L`…) reads wherever the links below its directories lead, so those leading out
//! of the roots are declared too ([`crate::shell::support::links`]); one reading a list of
//! files (`sort --files0-from=LIST`) reads the files the list names, so they are declared as
//! read. A glob that expands to a file named like an option (`grep x *` in a directory
//! holding `-R`) makes the program something else than it reads as: the call asks.

use std::path::{Component, Path, PathBuf};

use toolbelt_command::operands::{Operands, Use, operands};
use toolbelt_core::{Access, ToolContext};

use crate::shell::support::links;

/// Most paths one command declares (a command naming more is still judged on these).
const MAX_PATHS: usize = 1024;
/// Most files one glob expands to.
const MAX_GLOB: usize = 256;
/// Largest list of file names (`--files0-from`) read to declare the files it names.
const MAX_LIST: u64 = 64 * 1024;

/// Adds to `access` every file `command` names, and what it reads beyond them.
pub fn declare(mut access: Access, command: &str, cx: &ToolContext) -> Access {
    let ops = operands(command);
    if ops.files.is_empty() && ops.follows.is_empty() && ops.lists.is_empty() {
        return access;
    }
    let home = home();
    let bases = bases_of(&ops.dirs, cx, home.as_deref());
    let roots = cx.roots();
    let mut declared: Vec<(PathBuf, Use)> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for operand in &ops.files {
        // A bare word read that names nothing (`cargo build`'s `build`) is no file: it only
        // adds noise to a question. A write may create its file, so it always counts.
        let path_like = operand.glob
            || operand.path.contains('/')
            || operand.path.starts_with(['.', '~'])
            || operand.usage == Use::Write;
        let anchored = operand.path.starts_with('/') || operand.path.starts_with('~');
        let from: &[PathBuf] = if anchored { &bases[..1] } else { &bases };
        for base in from {
            let path = resolve(base, &operand.path, home.as_deref());
            if !path_like && path.symlink_metadata().is_err() {
                continue;
            }
            let paths = if operand.glob { expand(&path, &roots) } else { vec![path] };
            if operand.glob && !operand.path.contains('/') {
                problems.extend(option_names(&operand.path, &paths));
            }
            for path in paths {
                add(&mut declared, path, operand.usage);
            }
        }
    }
    beyond_operands(&ops, &bases, home.as_deref(), &roots, &mut declared, &mut problems);
    for (path, usage) in declared {
        access = match usage {
            Use::Read => access.reads(path),
            Use::Write => access.writes(path),
        };
    }
    if !problems.is_empty() {
        problems.dedup();
        access = access.needs_approval(problems.join("; "));
    }
    access
}

/// Every directory `command` may run a program in: the session's, then each it `cd`s to.
pub fn bases(command: &str, cx: &ToolContext) -> Vec<PathBuf> {
    bases_of(&operands(command).dirs, cx, home().as_deref())
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The session's directory, then each of `dirs` (`cd` targets, each from the one before).
fn bases_of(dirs: &[String], cx: &ToolContext, home: Option<&Path>) -> Vec<PathBuf> {
    let cwd = cx.cwd();
    let mut bases = vec![cwd.clone()];
    let mut here = cwd;
    for dir in dirs {
        here = resolve(&here, dir, home);
        if !bases.contains(&here) {
            bases.push(here.clone());
        }
    }
    bases
}

/// Adds `path` once, up to [`MAX_PATHS`].
fn add(declared: &mut Vec<(PathBuf, Use)>, path: PathBuf, usage: Use) {
    if declared.len() < MAX_PATHS && !declared.iter().any(|(p, u)| p == &path && *u == usage) {
        declared.push((path, usage));
    }
}

/// Why a glob written without a directory (`*`) is a problem: it expands to a name that
/// starts with `-`, which the program takes as an option.
fn option_names(glob: &str, matches: &[PathBuf]) -> Option<String> {
    let name = matches.iter().filter_map(|p| p.file_name()?.to_str()).find(|n| n.starts_with('-') && n.len() > 1)?;
    Some(format!(
        "`{glob}` expands to `{name}`, a file named like an option, which the program would take as one (and do \
         something else than the command reads as); write `./{glob}` so every name starts with `./`"
    ))
}

/// What programs read beyond their operands: where the links below the directories of a
/// program following links lead out of the roots, and the files a list names.
fn beyond_operands(
    ops: &Operands,
    bases: &[PathBuf],
    home: Option<&Path>,
    roots: &[PathBuf],
    declared: &mut Vec<(PathBuf, Use)>,
    problems: &mut Vec<String>,
) {
    // `word` from each directory the program may run in: (that directory, the path).
    let from = |word: &str| -> Vec<(PathBuf, PathBuf)> {
        let anchored = word.starts_with('/') || word.starts_with('~');
        let bases = if anchored { &bases[..1] } else { bases };
        bases.iter().map(|b| (b.clone(), resolve(b, word, home))).collect()
    };
    for follow in &ops.follows {
        let starts: Vec<PathBuf> = if follow.paths.is_empty() {
            bases.to_vec()
        } else {
            follow
                .paths
                .iter()
                .flat_map(|p| {
                    from(&p.path)
                        .into_iter()
                        .flat_map(|(_, path)| if p.glob { expand(&path, roots) } else { vec![path] })
                })
                .collect()
        };
        let found = links::links_out(&starts, roots, follow.recursive);
        for link in found.links {
            add(declared, link, Use::Read);
        }
        if found.unfinished {
            problems.push(format!(
                "`{}` follows symbolic links, and the directories it walks hold more than {} entries, too many to \
                 check that no link leads out of the workspace",
                follow.what,
                links::MAX_ENTRIES
            ));
        }
    }
    for list in &ops.lists {
        for (base, path) in from(&list.list) {
            if path.file_name().is_some_and(|n| n != "-") {
                add(declared, path.clone(), Use::Read);
            }
            match listed(&path) {
                // The program opens each name from where it runs, `~` unexpanded.
                Ok(names) => {
                    for name in names {
                        add(declared, resolve(&base, &name, None), Use::Read);
                    }
                }
                Err(why) => problems.push(format!(
                    "`{}` reads the files {} names, and {why}, so which files it reads is not known before it runs",
                    list.what,
                    path.display()
                )),
            }
        }
    }
}

/// The names in a `--files0-from` list (NUL-separated), or why they cannot be read here.
fn listed(path: &Path) -> Result<Vec<String>, String> {
    if path.file_name().is_some_and(|n| n == "-") {
        return Err("`-` is its standard input".into());
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("it cannot be read here ({e})"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > MAX_LIST {
        return Err(format!("it is larger than {} KiB", MAX_LIST / 1024));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("it cannot be read here ({e})"))?;
    let names: Vec<String> =
        bytes.split(|b| *b == 0).filter(|n| !n.is_empty()).map(|n| String::from_utf8_lossy(n).into_owned()).collect();
    if names.len() > MAX_PATHS {
        return Err(format!("it names more than {MAX_PATHS} files"));
    }
    Ok(names)
}

/// `word` as an absolute path: `~` and `~/x` under the home directory, absolute as is,
/// anything else under `base`; `.` and `..` folded.
fn resolve(base: &Path, word: &str, home: Option<&Path>) -> PathBuf {
    let path = match (word.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => base.join(word),
    };
    fold(&path)
}

fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The files an absolute glob matches, as bash expands it (`*` does not match a leading
/// `.`), component by component; when it starts outside the roots, the directory it starts
/// from; when nothing matches, the pattern itself (bash passes it on as is).
fn expand(pattern: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let components: Vec<String> = pattern.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let first_glob = components.iter().position(|c| c.contains(['*', '?', '[']));
    let Some(first_glob) = first_glob else { return vec![pattern.to_path_buf()] };
    let prefix: PathBuf = components[..first_glob].iter().collect();
    if !roots.iter().any(|r| prefix.starts_with(r)) {
        return vec![prefix];
    }
    let mut current = vec![prefix];
    for component in &components[first_glob..] {
        let mut next = Vec::new();
        let matcher = component
            .contains(['*', '?', '['])
            .then(|| globset::GlobBuilder::new(component).literal_separator(true).build().map(|g| g.compile_matcher()));
        for dir in &current {
            match &matcher {
                None => next.push(dir.join(component)),
                Some(Err(_)) => next.push(dir.join(component)),
                Some(Ok(m)) => {
                    let Ok(entries) = std::fs::read_dir(dir) else { continue };
                    for entry in entries.flatten() {
                        let name = entry.file_name();
                        let text = name.to_string_lossy();
                        if text.starts_with('.') && !component.starts_with('.') {
                            continue;
                        }
                        if m.is_match(text.as_ref()) {
                            next.push(dir.join(&name));
                        }
                        if next.len() >= MAX_GLOB {
                            break;
                        }
                    }
                }
            }
            if next.len() >= MAX_GLOB {
                break;
            }
        }
        current = next;
    }
    current.retain(|p| p.symlink_metadata().is_ok());
    if current.is_empty() { vec![pattern.to_path_buf()] } else { current }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbelt_core::Touch;

    fn touches(command: &str, cwd: &Path) -> Vec<Touch> {
        let cx = ToolContext::detached(cwd.to_path_buf());
        declare(Access::exclusive(), command, &cx).touches
    }

    #[test]
    fn paths_are_absolute_globs_expanded_and_cds_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("secret.txt"), "s").unwrap();
        std::fs::write(root.join("second.txt"), "s").unwrap();
        std::fs::write(root.join(".hidden.txt"), "s").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let read = |p: PathBuf| Touch::Read(p);
        assert_eq!(touches("cat secret.txt", &root), [read(root.join("secret.txt"))]);
        let mut globbed = touches("cat sec*.txt", &root);
        globbed.sort_by_key(|t| format!("{t:?}"));
        assert_eq!(globbed, [read(root.join("second.txt")), read(root.join("secret.txt"))]);
        assert_eq!(touches("cat *.nothing", &root), [read(root.join("*.nothing"))]);
        assert_eq!(touches("cat /etc/*", &root), [read(PathBuf::from("/etc"))], "outside: the directory");
        assert_eq!(touches("cat ../x", &root.join("sub")), [read(root.join("x"))]);
        assert_eq!(
            touches("cd sub && cat ../secret.txt", &root),
            [read(root.join("sub")), read(root.parent().unwrap().join("secret.txt")), read(root.join("secret.txt"))],
            "from every directory the script may be in"
        );
        assert_eq!(touches("echo x > .git/config", &root), [Touch::Write(root.join(".git/config"))]);
        assert_eq!(touches("cargo build --release", &root), [], "a word that names nothing is no file");
        assert!(
            touches("ls -la && cargo test", &root).iter().all(|t| matches!(t, Touch::Read(p) if p.starts_with(&root)))
        );
    }

    #[test]
    fn what_programs_read_beyond_their_operands() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(base.join("keys")).unwrap();
        std::os::unix::fs::symlink(base.join("keys"), root.join("src/keys")).unwrap();
        std::fs::write(root.join("names"), "/etc/passwd\0src/a.rs\0").unwrap();
        let cx = ToolContext::detached(root.clone());
        let declared = |command: &str| declare(Access::shared(), command, &cx);
        let read = |p: PathBuf| Touch::Read(p);
        // The link out, below what `rg -L` walks (its directory when it names none).
        assert_eq!(declared("rg -L x").touches, [read(root.join("src/keys"))]);
        assert_eq!(declared("rg x").touches, []);
        // The files a list names, as the program opens them.
        let listed = declared("sort --files0-from=names").touches;
        assert!(listed.contains(&read(PathBuf::from("/etc/passwd"))) && listed.contains(&read(root.join("src/a.rs"))));
        assert!(listed.contains(&read(root.join("names"))), "the list itself");
        let stdin = declared("wc --files0-from=-");
        assert!(stdin.approval.as_deref().is_some_and(|r| r.contains("standard input")), "{stdin:?}");
        // A glob handing the program an option.
        std::fs::write(root.join("-R"), "").unwrap();
        let globbed = declared("grep x *");
        assert!(globbed.approval.as_deref().is_some_and(|r| r.contains("`-R`")), "{globbed:?}");
        assert_eq!(declared("grep x ./*").approval, None);
    }
}
