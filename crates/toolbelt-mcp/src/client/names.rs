//! How an upstream tool is named in the registry: `mcp__<server>__<tool>`.
//!
//! Characters outside `[A-Za-z0-9_-]` become `_`, and a name longer than 64 bytes (the limit
//! several APIs impose on function names) is cut and given a hash suffix. When two upstream
//! tools would get the same name, each is given a suffix hashed from its original server and
//! tool names, so names are deterministic whatever order servers connect in.

/// The longest name APIs accept for a function.
pub const MAX_NAME: usize = 64;

/// The registry name of `tool` on `server`, without collision handling.
pub fn tool_name(server: &str, tool: &str) -> String {
    let raw = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if raw.len() <= MAX_NAME { raw } else { with_suffix(&raw, server, tool) }
}

/// The name with a hash of the original names, still within [`MAX_NAME`].
pub fn with_suffix(name: &str, server: &str, tool: &str) -> String {
    let suffix = format!("_{:08x}", fnv1a(&format!("{server}\u{0}{tool}")) as u32);
    let keep = MAX_NAME - suffix.len();
    let cut = name.char_indices().map(|(i, _)| i).take_while(|&i| i <= keep).last().unwrap_or(0);
    let head = if name.len() <= keep { name } else { &name[..cut] };
    format!("{head}{suffix}")
}

/// The servers among `servers` whose tools' registry names `name` may be one of: those
/// whose `mcp__<server>__` prefix it has, ignoring case as the registry's lookup does. Several
/// when their names sanitize alike (their tools then carry hashed suffixes).
pub fn servers_of<'a>(name: &str, servers: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = name.to_ascii_lowercase();
    servers
        .into_iter()
        .filter(|server| lower.starts_with(&format!("mcp__{}__", sanitize(server).to_ascii_lowercase())))
        .collect()
}

/// The candidate closest to `name`, if one is close: first one equal but for case and `-`
/// versus `_` (servers differ on which they use: `get-env`, `write_file`), else the most
/// similar by Jaro-Winkler, at 0.8 or more.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let loose = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let wanted = loose(name);
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        let score = if loose(candidate) == wanted { 2.0 } else { strsim::jaro_winkler(&loose(candidate), &wanted) };
        if score >= 0.8 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// `[A-Za-z0-9_-]` kept, anything else `_`.
pub fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_capped_and_deterministic() {
        assert_eq!(tool_name("github", "create_issue"), "mcp__github__create_issue");
        assert_eq!(tool_name("my server", "read.file/v2"), "mcp__my_server__read_file_v2");
        let long = tool_name("server", &"x".repeat(100));
        assert_eq!(long.len(), MAX_NAME);
        assert_eq!(long, tool_name("server", &"x".repeat(100)), "deterministic");
        assert_ne!(long, tool_name("server", &"x".repeat(101)), "different tools, different names");
        // A collision (`a.b` and `a_b` sanitize alike) is resolved by a suffix.
        let (one, two) =
            (with_suffix(&tool_name("s", "a.b"), "s", "a.b"), with_suffix(&tool_name("s", "a_b"), "s", "a_b"));
        assert_ne!(one, two);
        assert!(one.starts_with("mcp__s__a_b_") && one.len() <= MAX_NAME);
        assert!(with_suffix(&"é".repeat(40), "s", "t").len() <= MAX_NAME);
    }

    #[test]
    fn the_closest_name_forgives_dashes_first() {
        let tools = ["get-env", "get_envelope", "write_file", "read_file"];
        assert_eq!(closest("get_env", tools), Some("get-env"));
        assert_eq!(closest("write-file", tools), Some("write_file"));
        assert_eq!(closest("WRITE_FILE", tools), Some("write_file"));
        assert_eq!(closest("red_file", tools), Some("read_file"));
        assert_eq!(closest("delete_repository", tools), None);
    }

    #[test]
    fn a_tool_name_tells_its_servers() {
        let servers = ["fs", "my server", "my_server", "fs_two"];
        assert_eq!(servers_of("mcp__fs__read_file", servers), ["fs"]);
        assert_eq!(servers_of("MCP__FS__read", servers), ["fs"]);
        assert_eq!(servers_of("mcp__fs_two__x", servers), ["fs_two"]);
        assert_eq!(servers_of("mcp__my_server__x", servers), ["my server", "my_server"]);
        assert!(servers_of("mcp__nope__x", servers).is_empty());
        assert!(servers_of("Read", servers).is_empty());
    }
}
