//! The path as the model sees it, written once: relative to the session's working directory
//! when inside it, absolute otherwise. Every result that names a file the model may name
//! back (a file tool's, Bash's spill file and task log) shows it so.

use std::path::Path;

use toolbelt_core::ToolContext;

/// `path` as the model should see it: relative to the cwd when inside it.
pub fn shown(cx: &ToolContext, path: &Path) -> String {
    let cwd = cx.cwd();
    match path.strip_prefix(&cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn relative_inside_the_cwd_absolute_elsewhere() {
        let cx = ToolContext::detached(PathBuf::from("/w/app"));
        assert_eq!(shown(&cx, Path::new("/w/app/src/a.rs")), "src/a.rs");
        assert_eq!(shown(&cx, Path::new("/w/app")), "/w/app");
        assert_eq!(shown(&cx, Path::new("/w/app2/a.rs")), "/w/app2/a.rs");
    }
}
