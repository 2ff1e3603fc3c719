//! Where tools keep what they make outside the project when the front end named no place:
//! the patch journal and worktrees (state), and snippets (data). Below every family.

/// `$XDG_STATE_HOME/toolbelt` (`~/.local/state/toolbelt`; a per-user folder of the temp
/// directory when neither variable is set): where tools keep what they make outside the
/// project when the front end named no place for it.
pub fn default_state_dir() -> std::path::PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let state = var("XDG_STATE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("toolbelt-{}", nix::unistd::geteuid())));
    state.join("toolbelt")
}

/// `$XDG_DATA_HOME/toolbelt` (`~/.local/share/toolbelt`; a per-user folder of the temp
/// directory when neither variable is set): where tools keep what the user makes to keep
/// (snippets) when the front end named no place for it.
pub fn default_data_dir() -> std::path::PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let data = var("XDG_DATA_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("toolbelt-{}", nix::unistd::geteuid())));
    data.join("toolbelt")
}
