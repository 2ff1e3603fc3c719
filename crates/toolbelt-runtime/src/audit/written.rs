//! What a call writes into files is recorded by size and digest, not as text.
//!
//! The rule: when a call **may write files**, the string value of every *content field* in
//! its input, at any depth, becomes `{"bytes": N, "sha256": "…"}`. A call may write files
//! when its declared [`Access`] has a [`Touch::Write`], or when its tool declares no touches
//! at all, reaches outside ([`PermissionClass::External`]) and is not annotated read-only —
//! an upstream MCP tool, whose effects are its server's business. A call refused before it
//! declared anything may write when its tool is not annotated read-only.
//!
//! Content fields are named, ignoring case, `_` and `-`: `content`, `contents`,
//! `old_string`, `new_string`, `old_text`, `new_text`, `new_source`, `patch`, `diff`, and
//! `input` (ApplyPatch's patch text). So Write's `content`, Edit's and MultiEdit's
//! `old_string`/`new_string` (inside `edits[]` too), NotebookEdit's `new_source` and
//! ApplyPatch's patch are covered, and so is an upstream tool whose fields are named so
//! (the reference filesystem server's `write_file.content`, `edit_file.edits[].newText`).
//! The path, the flags and every other field stay as they were (redacted like any input).

use serde_json::{Value, json};
use toolbelt_core::{Access, PermissionClass, ToolSpec, Touch};

/// Content field names, folded (lowercase, no `_` or `-`).
const CONTENT_FIELDS: &[&str] =
    &["content", "contents", "oldstring", "newstring", "oldtext", "newtext", "newsource", "patch", "diff", "input"];

/// What a call declared it touches, as far as it got.
#[derive(Debug, Clone, Copy)]
pub enum Declared<'a> {
    /// The access the tool declared for the call.
    Access(&'a Access),
    /// Nothing: the call was refused before its tool described it.
    Nothing,
}

/// Whether a call of `spec` that declared this much may write files, so its content fields
/// are recorded by digest.
pub fn may_write(spec: &ToolSpec, declared: Declared<'_>) -> bool {
    match declared {
        Declared::Access(access) if access.touches.iter().any(|t| matches!(t, Touch::Write(_))) => true,
        Declared::Access(access) => {
            access.touches.is_empty() && spec.permission == PermissionClass::External && !spec.annotations.read_only
        }
        Declared::Nothing => !spec.annotations.read_only,
    }
}

/// Replaces the string value of every content field, at any depth, by its size and SHA-256.
pub fn digest_written(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match field {
                    Value::String(text) if is_content_field(key) => {
                        *field = json!({"bytes": text.len(), "sha256": toolbelt_core::sha256_hex(text.as_bytes())});
                    }
                    other => digest_written(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(digest_written),
        _ => {}
    }
}

fn is_content_field(key: &str) -> bool {
    let folded: String = key.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect();
    CONTENT_FIELDS.contains(&folded.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbelt_core::Annotations;

    #[test]
    fn content_fields_become_size_and_digest() {
        let mut input = json!({
            "file_path": "a.txt",
            "content": "hello",
            "edits": [{"old_string": "a", "new_string": "b", "replace_all": true}],
            "newText": "x",
            "count": 3,
        });
        digest_written(&mut input);
        let digest = |s: &str| json!({"bytes": s.len(), "sha256": toolbelt_core::sha256_hex(s)});
        assert_eq!(
            input,
            json!({
                "file_path": "a.txt",
                "content": digest("hello"),
                "edits": [{"old_string": digest("a"), "new_string": digest("b"), "replace_all": true}],
                "newText": digest("x"),
                "count": 3,
            })
        );
    }

    #[test]
    fn who_may_write() {
        let plain = ToolSpec::new("T", "t");
        let read_only = ToolSpec::new("R", "r").read_only();
        let upstream = ToolSpec::new("mcp__fs__write_file", "w").permission(PermissionClass::External);
        let writes = Access::exclusive().writes("/w/a.txt");
        let reads = Access::shared().reads("/w/a.txt");
        assert!(may_write(&plain, Declared::Access(&writes)));
        assert!(!may_write(&plain, Declared::Access(&reads)));
        assert!(
            !may_write(&plain, Declared::Access(&Access::exclusive())),
            "a built-in that declares nothing writes nothing"
        );
        assert!(may_write(&upstream, Declared::Access(&Access::exclusive())), "an upstream tool's effects are unknown");
        let annotated = upstream.clone().annotations(Annotations { read_only: true, ..Annotations::default() });
        assert!(!may_write(&annotated, Declared::Access(&Access::shared())));
        assert!(may_write(&plain, Declared::Nothing) && !may_write(&read_only, Declared::Nothing));
    }
}
