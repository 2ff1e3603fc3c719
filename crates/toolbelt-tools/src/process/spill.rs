//! Where the shell tools keep files for the model to read back: the full output of a long
//! command, the logs of background tasks.
//!
//! They live in the session's data directory (`<session>/spill/` and `…/tasks/`), the place
//! the runtime spills to: in the user's state directory, outside the project, and a
//! read-only root of the session, so `Read` and `Grep` reach them and no tool writes them. A
//! session without a data directory (a tool called directly) uses
//! `.toolbelt/sessions/<session>/` under its first workspace root instead, created through a
//! handle on the root (cap-std), so a symlink planted by a command cannot send it elsewhere.

use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{
    Dir, DirBuilder, DirBuilderExt as _, OpenOptions, OpenOptionsExt as _, Permissions, PermissionsExt as _,
};
use toolbelt_core::ToolContext;

/// A file to create on demand in the session's data directory.
#[derive(Debug, Clone)]
pub struct SpillTarget {
    /// The directory `dir` is relative to.
    root: PathBuf,
    /// The directory the file goes in, relative to `root`; the levels below `root`'s first
    /// are made owner-only.
    dir: PathBuf,
    stem: String,
    /// The file's extension (`log` unless set).
    ext: String,
}

impl SpillTarget {
    /// A file named after `stem` in the session's `kind` directory (`spill`, `tasks`).
    pub fn new(cx: &ToolContext, kind: &str, stem: &str) -> Self {
        match cx.session().data_dir() {
            Some(data) => {
                let root = data.parent().map(Path::to_path_buf).unwrap_or_else(|| data.clone());
                let name = data.file_name().map(PathBuf::from).unwrap_or_default();
                Self { root, dir: Path::new(".").join(name).join(kind), stem: safe_name(stem), ext: "log".into() }
            }
            None => {
                let root = cx.roots().into_iter().next().unwrap_or_else(|| cx.cwd());
                let dir = Path::new(".toolbelt").join("sessions").join(safe_name(cx.session().id())).join(kind);
                Self { root, dir, stem: safe_name(stem), ext: "log".into() }
            }
        }
    }

    /// The same target with the extension `ext` (made safe) instead of `log`.
    pub fn with_extension(mut self, ext: &str) -> Self {
        self.ext = safe_name(ext);
        self
    }

    /// Creates the directory and a new file in it (never an existing one: a name already
    /// taken gets a numbered suffix). Returns the file and its absolute path, or why not.
    /// The file is owner-only (`0600`), and so are the directories below the first level
    /// (`0700`): what a command printed is nobody else's to read.
    pub fn create(&self) -> Result<(std::fs::File, PathBuf), String> {
        let fail = |e: std::io::Error| format!("cannot write under {}: {e}", self.root.join(&self.dir).display());
        std::fs::create_dir_all(&self.root).map_err(fail)?;
        let root = Dir::open_ambient_dir(&self.root, ambient_authority()).map_err(fail)?;
        private_dirs(&root, &self.dir).map_err(fail)?;
        let dir = root.open_dir(&self.dir).map_err(fail)?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true).mode(0o600);
        let shown = self.root.join(self.dir.strip_prefix(".").unwrap_or(&self.dir));
        for n in 0..1000u32 {
            let name =
                if n == 0 { format!("{}.{}", self.stem, self.ext) } else { format!("{}-{n}.{}", self.stem, self.ext) };
            match dir.open_with(&name, &options) {
                Ok(file) => return Ok((file.into_std(), shown.join(name))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail(e)),
            }
        }
        Err(format!("too many files named {}-*.{} in {}", self.stem, self.ext, shown.display()))
    }
}

/// Creates `rel` (`.toolbelt/sessions/<session>/<kind>`, or `./<session>/<kind>`) beneath
/// `root`: its first level as any directory, the levels below it owner-only (`0700`), made so
/// or narrowed to it when they already exist.
fn private_dirs(root: &Dir, rel: &Path) -> std::io::Result<()> {
    let mut at = PathBuf::new();
    for (i, part) in rel.iter().enumerate() {
        at.push(part);
        let mut builder = DirBuilder::new();
        if i > 0 {
            builder.mode(0o700);
        }
        match root.create_dir_with(&at, &builder) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if i > 0 && root.metadata(&at)?.permissions().mode() & 0o077 != 0 {
                    root.set_permissions(&at, Permissions::from_mode(0o700))?;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A name safe as one path component: letters, digits, `-`, `_` and `.` kept, the rest `_`.
pub(crate) fn safe_name(raw: &str) -> String {
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
    fn files_are_owner_only_in_owner_only_directories() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        // A sessions directory left open to others by an older version is narrowed.
        std::fs::create_dir_all(root.join(".toolbelt/sessions")).unwrap();
        std::fs::set_permissions(root.join(".toolbelt/sessions"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let cx = toolbelt_core::ToolContext::detached(root.clone());
        let (_, path) = SpillTarget::new(&cx, "spill", "out").create().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        for dir in [".toolbelt/sessions", ".toolbelt/sessions/detached", ".toolbelt/sessions/detached/spill"] {
            assert_eq!(mode(&root.join(dir)), 0o700, "{dir}");
        }
    }

    #[test]
    fn names_are_single_components() {
        assert_eq!(safe_name("a/b c"), "a_b_c");
        assert_eq!(safe_name(".."), "_");
        assert_eq!(safe_name(""), "_");
    }
}
