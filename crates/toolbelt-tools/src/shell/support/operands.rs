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

use std::path::{Component, Path, PathBuf};

use toolbelt_command::operands::{Use, operands};
use toolbelt_core::{Access, ToolContext};

/// Most paths one command declares (a command naming more is still judged on these).
const MAX_PATHS: usize = 1024;
/// Most files one glob expands to.
const MAX_GLOB: usize = 256;

/// Adds to `access` every file `command` names.
pub fn declare(mut access: Access, command: &str, cx: &ToolContext) -> Access {
    let ops = operands(command);
    if ops.files.is_empty() {
        return access;
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let cwd = cx.cwd();
    let mut bases = vec![cwd.clone()];
    let mut here = cwd;
    for dir in &ops.dirs {
        here = resolve(&here, dir, home.as_deref());
        if !bases.contains(&here) {
            bases.push(here.clone());
        }
    }
    let roots = cx.roots();
    let mut declared: Vec<(PathBuf, Use)> = Vec::new();
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
            for path in paths {
                if declared.len() >= MAX_PATHS {
                    break;
                }
                if !declared.iter().any(|(p, u)| p == &path && *u == operand.usage) {
                    declared.push((path, operand.usage));
                }
            }
        }
    }
    for (path, usage) in declared {
        access = match usage {
            Use::Read => access.reads(path),
            Use::Write => access.writes(path),
        };
    }
    access
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
}
