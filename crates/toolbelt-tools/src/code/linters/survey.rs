//! What a path to lint holds, as far as choosing linters goes: its files' extensions, its
//! shell scripts, and where the files that mark a project (`Cargo.toml`, an ESLint config)
//! lie below it. Walked as Grep walks (`.gitignore` respected, hidden and denied paths left
//! out), bounded.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toolbelt_core::{ToolContext, ToolError};

use crate::fs::walk::WalkOptions;
use crate::fs::walk::guard::Skipped;

/// ESLint's config files, flat (`eslint.config.*`) and legacy (`.eslintrc*`).
pub const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc",
];

/// Extensions ESLint lints.
pub const SCRIPT_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];

/// Files whose place is remembered.
const MARKERS: &[&str] = &["Cargo.toml", "eslint.config.js", "eslint.config.mjs", "eslint.config.cjs"];

/// Most files looked at; past it the survey says it stopped.
const MAX_FILES: usize = 200_000;

/// Most shell scripts given to ShellCheck in one call.
pub const MAX_SCRIPTS: usize = 500;

/// What a path holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    /// The extensions of its files (lower case).
    extensions: BTreeSet<String>,
    /// Marker files below it.
    markers: Vec<PathBuf>,
    /// Its shell scripts (by extension, or by a `#!` line naming sh, bash, dash or ksh),
    /// sorted, at most [`MAX_SCRIPTS`].
    pub shell_scripts: Vec<PathBuf>,
    /// Shell scripts left out past [`MAX_SCRIPTS`].
    pub scripts_left_out: usize,
    /// Files looked at.
    pub files: usize,
    /// Whether the walk stopped at [`MAX_FILES`].
    pub stopped: bool,
}

impl Survey {
    /// The survey of `path` (a file or a folder).
    pub fn of(path: &Path, cx: &ToolContext) -> Result<Survey, ToolError> {
        let mut survey = Survey::default();
        if !path.is_dir() {
            survey.add(path);
            survey.finish();
            return Ok(survey);
        }
        let options = WalkOptions { hidden: false, no_ignore: false, max_depth: None, overrides: None, types: None };
        let walk = crate::fs::walk::walker(path, cx, options, &Skipped::default())?;
        let found: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
        let cancel = cx.cancellation().clone();
        walk.build_parallel().run(|| {
            let found = &found;
            let cancel = cancel.clone();
            Box::new(move |entry| {
                let Ok(entry) = entry else { return ignore::WalkState::Continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                let mut found = found.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if found.len() >= MAX_FILES || cancel.is_cancelled() {
                    return ignore::WalkState::Quit;
                }
                found.push(entry.into_path());
                ignore::WalkState::Continue
            })
        });
        let mut files = found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        files.sort();
        survey.stopped = files.len() >= MAX_FILES;
        for file in &files {
            survey.add(file);
        }
        survey.finish();
        Ok(survey)
    }

    fn add(&mut self, file: &Path) {
        self.files += 1;
        let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        if MARKERS.contains(&name.as_ref()) {
            self.markers.push(file.to_path_buf());
        }
        match file.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()) {
            Some(ext) => {
                if matches!(ext.as_str(), "sh" | "bash" | "ksh" | "dash") {
                    self.shell_scripts.push(file.to_path_buf());
                }
                self.extensions.insert(ext);
            }
            None if shell_shebang(file) => self.shell_scripts.push(file.to_path_buf()),
            None => {}
        }
    }

    fn finish(&mut self) {
        self.shell_scripts.sort();
        self.scripts_left_out = self.shell_scripts.len().saturating_sub(MAX_SCRIPTS);
        self.shell_scripts.truncate(MAX_SCRIPTS);
        self.markers.sort();
    }

    /// Whether a file with extension `ext` (lower case, no dot) is there.
    pub fn has_extension(&self, ext: &str) -> bool {
        self.extensions.contains(ext)
    }

    /// The folders holding `marker` that are not below another such folder.
    pub fn topmost(&self, marker: &str) -> Vec<PathBuf> {
        self.topmost_of(&[marker])
    }

    /// The folders holding one of `markers` that are not below another such folder.
    pub fn topmost_of(&self, markers: &[&str]) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .markers
            .iter()
            .filter(|m| m.file_name().is_some_and(|n| markers.iter().any(|k| n == *k)))
            .filter_map(|m| m.parent().map(Path::to_path_buf))
            .collect();
        dirs.sort();
        dirs.dedup();
        let mut top: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            if !top.iter().any(|t| dir.starts_with(t)) {
                top.push(dir);
            }
        }
        top
    }
}

/// Whether a file without extension starts with a `#!` line naming a shell ShellCheck reads.
/// Only a regular file is read: opened without blocking and without following a final
/// symlink, so a FIFO named as the path cannot hold the call.
fn shell_shebang(file: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut head = [0u8; 64];
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(file);
    let Ok(mut f) = opened else { return false };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let n = f.read(&mut head).unwrap_or(0);
    let Some(line) = head[..n].strip_prefix(b"#!") else { return false };
    let line = String::from_utf8_lossy(line);
    let line = line.lines().next().unwrap_or("");
    let mut words = line.split_whitespace();
    let program = match words.next() {
        Some(p) if p.ends_with("/env") => words.find(|w| !w.starts_with('-')).unwrap_or(""),
        Some(p) => p,
        None => "",
    };
    matches!(program.rsplit('/').next(), Some("sh" | "bash" | "dash" | "ksh"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_by_extension_or_first_line_and_topmost_markers() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (name, text) in [
            ("run.sh", "echo hi\n"),
            ("bin/tool", "#!/usr/bin/env bash\necho\n"),
            ("bin/py", "#!/usr/bin/env python3\n"),
            ("bin/plain", "no shebang\n"),
            ("a/Cargo.toml", ""),
            ("a/inner/Cargo.toml", ""),
            ("b/Cargo.toml", ""),
            ("web/eslint.config.mjs", ""),
            ("web/src/x.ts", ""),
        ] {
            std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
            std::fs::write(root.join(name), text).unwrap();
        }
        // A FIFO without an extension is not read for a `#!` line (that would block).
        nix::unistd::mkfifo(&root.join("bin/pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let cx = ToolContext::detached(root.clone());
        assert!(Survey::of(&root.join("bin/pipe"), &cx).is_ok_and(|s| s.shell_scripts.is_empty()));
        let survey = Survey::of(&root, &cx).unwrap();
        assert_eq!(survey.shell_scripts, [root.join("bin/tool"), root.join("run.sh")]);
        assert_eq!(survey.topmost("Cargo.toml"), [root.join("a"), root.join("b")]);
        assert_eq!(survey.topmost_of(ESLINT_CONFIGS), [root.join("web")]);
        assert!(survey.has_extension("ts") && !survey.has_extension("py"));
        assert_eq!(Survey::of(&root.join("run.sh"), &cx).unwrap().shell_scripts, [root.join("run.sh")]);
    }
}
