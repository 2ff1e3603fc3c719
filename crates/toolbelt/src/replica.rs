//! Which replica this process is, when several serve a team: `TOOLBELT_REPLICA`, else the
//! host's name (a Kubernetes pod's name). Audit records in the shared database and the ids
//! of sessions say it, so a request or a record can be traced to the process that served it.

/// The longest name kept (a DNS label's limit).
const MAX_LEN: usize = 63;

/// This process's replica name: letters, digits, `.`, `_` and `-` only (anything else
/// becomes `-`), at most 63 of them; `toolbelt` when nothing usable is known.
pub fn name() -> String {
    let raw = std::env::var("TOOLBELT_REPLICA")
        .ok()
        .filter(|n| !n.trim().is_empty())
        .or_else(|| nix::unistd::gethostname().ok().and_then(|h| h.into_string().ok()))
        .unwrap_or_default();
    clean(&raw)
}

/// This process's name when it is one of a team's replicas: when it keeps its data in shared
/// storage (`shared`), or `TOOLBELT_REPLICA` names it. A lone server's ids stay plain
/// (`bash_3`, a bare session id).
pub fn on_team(shared: bool) -> Option<String> {
    let named = std::env::var("TOOLBELT_REPLICA").is_ok_and(|n| !n.trim().is_empty());
    (shared || named).then(name)
}

fn clean(raw: &str) -> String {
    let name: String = raw
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .collect();
    if name.is_empty() {
        return "toolbelt".to_string();
    }
    if name.len() <= MAX_LEN {
        return name;
    }
    // A long pod name's unique part is at its end: keep a digest of the whole, so two long
    // names that start alike stay two names.
    let digest = toolbelt_core::sha256_hex(name.as_bytes());
    format!("{}-{}", &name[..MAX_LEN - 9], &digest[..8])
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_cleaned() {
        assert_eq!(super::clean(" toolbelt-7d9f-x2 "), "toolbelt-7d9f-x2");
        assert_eq!(super::clean("a b/c\"d"), "a-b-c-d");
        assert_eq!(super::clean(""), "toolbelt");
        assert_eq!(super::clean(&"x".repeat(100)).len(), 63);
        let long = "toolbelt-deployment-with-a-very-long-name-for-the-team-platform";
        let (a, b) =
            (super::clean(&format!("{long}-7d9f8c6b5-x2k4q")), super::clean(&format!("{long}-7d9f8c6b5-zz9pq")));
        assert!(a.len() <= 63 && b.len() <= 63 && a != b, "{a} {b}");
    }
}
