//! What a failed open tells the model: an I/O error on a workspace path as a message that
//! says what went wrong and what to do. Every open beneath the roots ([`super::roots`],
//! [`super::regular`], [`super::links`]) and every tool that reads or writes through them
//! reports its errors so.

use std::path::Path;

use toolbelt_core::ToolError;

/// Whether an error is a confined open refusing a path that leads out of its root.
pub fn escapes(e: &std::io::Error) -> bool {
    e.to_string().contains("outside of the filesystem")
}

/// `path` is a directory where a file was expected.
pub fn is_a_directory(path: &Path) -> ToolError {
    ToolError::failed(format!("{} is a directory, not a file; use ListDir to see what it contains", path.display()))
}

/// An I/O error as a model-facing message that says what to do.
pub fn io_error(path: &Path, e: &std::io::Error) -> ToolError {
    let p = path.display();
    let text = e.to_string();
    if escapes(e) {
        return ToolError::failed(format!(
            "{p} resolves outside the workspace roots (through `..` or a symlink), so it cannot be opened; use a path inside the roots"
        ));
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::failed(format!("{p} does not exist; check the path (Glob finds files by name)"))
        }
        std::io::ErrorKind::PermissionDenied => ToolError::failed(format!("permission denied: {p}")),
        std::io::ErrorKind::IsADirectory => is_a_directory(path),
        std::io::ErrorKind::NotADirectory => {
            ToolError::failed(format!("{p}: a component of the path is a file, not a directory"))
        }
        _ => ToolError::failed(format!("{p}: {text}")),
    }
}
