//! Reading a command's options: short-option clusters (`-abc`) and long options (`--out`,
//! abbreviated or with `=value`), as the read-only checks of every command need them.

/// The letters of a short-option cluster (`-abc` → `abc`); `None` for `-`, `--x` and words.
pub(super) fn short_cluster(arg: &str) -> Option<&str> {
    arg.strip_prefix('-').filter(|rest| !rest.is_empty() && !rest.starts_with('-'))
}

/// The first letter of `cluster` in `forbidden`, scanning up to a letter that takes a value.
pub(super) fn cluster_has(cluster: &str, forbidden: &[char], takes_value: &[char]) -> Option<char> {
    for c in cluster.chars() {
        if forbidden.contains(&c) {
            return Some(c);
        }
        if takes_value.contains(&c) {
            return None;
        }
    }
    None
}

/// Whether `arg` is the long option `long` (`--output`), possibly abbreviated or with
/// `=value`.
pub(super) fn is_long(arg: &str, long: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name.len() > 2 && name.starts_with("--") && long.starts_with(name)
}
