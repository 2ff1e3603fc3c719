//! Where the shell tools keep files for the model to read back: the full output of a long
//! command, the logs of background tasks.
//!
//! They live in the session's directory under the first workspace root
//! (`.toolbelt/sessions/<session>/spill/` and `…/tasks/`), the same place the runtime
//! spills to, so `Read` and `Grep` reach them. Directories and files are created through a
//! handle on the root (cap-std), so a symlink planted by a command cannot send them
//! elsewhere.

use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use toolbelt_core::ToolContext;

/// A file to create on demand inside a workspace root.
#[derive(Debug, Clone)]
pub struct SpillTarget {
    root: PathBuf,
    dir: PathBuf,
    stem: String,
}

impl SpillTarget {
    /// A file named after `stem` in the session's `kind` directory (`spill`, `tasks`) under
    /// the first workspace root.
    pub fn new(cx: &ToolContext, kind: &str, stem: &str) -> Self {
        let root = cx.roots().into_iter().next().unwrap_or_else(|| cx.cwd());
        let dir = Path::new(".toolbelt").join("sessions").join(safe_name(cx.session().id())).join(kind);
        Self { root, dir, stem: safe_name(stem) }
    }

    /// Creates the directory and a new file in it (never an existing one: a name already
    /// taken gets a numbered suffix). Returns the file and its absolute path, or why not.
    pub fn create(&self) -> Result<(std::fs::File, PathBuf), String> {
        let fail = |e: std::io::Error| format!("cannot write under {}: {e}", self.root.join(&self.dir).display());
        let root = Dir::open_ambient_dir(&self.root, ambient_authority()).map_err(fail)?;
        root.create_dir_all(&self.dir).map_err(fail)?;
        let dir = root.open_dir(&self.dir).map_err(fail)?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        for n in 0..1000u32 {
            let name = if n == 0 { format!("{}.log", self.stem) } else { format!("{}-{n}.log", self.stem) };
            match dir.open_with(&name, &options) {
                Ok(file) => return Ok((file.into_std(), self.root.join(&self.dir).join(name))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail(e)),
            }
        }
        Err(format!("too many files named {}-*.log in {}", self.stem, self.root.join(&self.dir).display()))
    }
}

/// A name safe as one path component: letters, digits, `-`, `_` and `.` kept, the rest `_`.
fn safe_name(raw: &str) -> String {
    let name: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .take(100)
        .collect();
    match name.as_str() {
        "" | "." | ".." => "_".to_string(),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_components() {
        assert_eq!(safe_name("a/b c"), "a_b_c");
        assert_eq!(safe_name(".."), "_");
        assert_eq!(safe_name(""), "_");
    }
}
