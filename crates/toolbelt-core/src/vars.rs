//! `$VAR` and `${VAR}` in settings values: hook headers, an MCP server's `env` and `headers`.
//!
//! A reference to an unset variable becomes nothing, as in a shell; [`unset_env_vars`] names
//! those references so a caller can warn before passing an empty value on. A `$` not followed
//! by a name (`5$`, an unclosed `${`) stays as it is.

/// `$VAR` and `${VAR}` replaced by the variable's value (empty when unset).
pub fn expand_env(value: &str) -> String {
    expand_with(value, |name| std::env::var(name).ok())
}

/// The variables `value` names (`$VAR`, `${VAR}`) that are not set, in order, each once:
/// what [`expand_env`] would replace by nothing.
pub fn unset_env_vars(value: &str) -> Vec<String> {
    let mut unset: Vec<String> = Vec::new();
    expand_with(value, |name| {
        let found = std::env::var_os(name);
        if found.is_none() && !unset.iter().any(|u| u == name) {
            unset.push(name.to_string());
        }
        None
    });
    unset
}

/// `value` with each variable reference replaced by what `lookup` gives (nothing for `None`).
fn expand_with(value: &str, mut lookup: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(&lookup(name).unwrap_or_default());
            rest = &after[used..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_variables_in_headers() {
        // SAFETY of the test: PATH is always set; the unset name is unlikely to exist.
        let path = std::env::var("PATH").unwrap();
        assert_eq!(expand_env("Bearer $PATH"), format!("Bearer {path}"));
        assert_eq!(expand_env("x${PATH}y"), format!("x{path}y"));
        assert_eq!(expand_env("$TOOLBELT_SURELY_UNSET_VAR!"), "!");
        assert_eq!(expand_env("cost: 5$ or ${"), "cost: 5$ or ${");
        assert_eq!(
            unset_env_vars("${PATH}:${TOOLBELT_SURELY_UNSET_VAR}/$TOOLBELT_SURELY_UNSET_VAR $TOOLBELT_OTHER_UNSET"),
            ["TOOLBELT_SURELY_UNSET_VAR", "TOOLBELT_OTHER_UNSET"]
        );
        assert!(unset_env_vars("cost: 5$ or ${").is_empty());
    }
}
