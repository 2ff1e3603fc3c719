//! Secrets recognised by their value, whatever the variable is called.
//!
//! Names miss secrets: `DATABASE_URL=postgres://app:pw@db/app` holds a password, and a token
//! pasted into `SETTINGS` or `DEPLOY_ARGS` is still a token. So a variable is also kept from
//! commands when its value *looks* like a secret: a URL with a password in it
//! (`scheme://user:password@`), a token with a provider's prefix (`ghp_…`, `github_pat_…`,
//! `glpat-…`, `xoxb-…`, `sk-…`, `sk-ant-…`, `AKIA…`, `AIza…`, `npm_…`, `pypi-…`, `hf_…`,
//! Stripe's `sk_live_…`), a JSON web token, or a PEM private key. Each prefix needs a body
//! as long as the provider's tokens have, so `sk-short` or `desk-top` stay.
//!
//! The same shapes as the audit log's redaction (`toolbelt-runtime`'s `audit/redact.rs`),
//! which the tools cannot depend on; here only whether a value holds one matters.

use std::sync::LazyLock;

use regex::RegexSet;

/// The shapes: each a regular expression found anywhere in a value.
const SHAPES: &[&str] = &[
    // A URL whose userinfo has a password (`user:password@`); `user@` alone is no secret.
    r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@"']*:[^/\s@"']+@"#,
    r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    r"\bAIza[A-Za-z0-9_-]{35}",
    r"\bnpm_[A-Za-z0-9]{36}\b",
    r"\bpypi-[A-Za-z0-9_-]{50,}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY",
];

/// The shapes in one set, compiled once (ASCII word boundaries: values are mostly ASCII, and
/// the lazy DFA handles those on any text).
static SET: LazyLock<Option<RegexSet>> =
    LazyLock::new(|| RegexSet::new(SHAPES.iter().map(|p| p.replace(r"\b", r"(?-u:\b)"))).ok());

/// A literal every match of some shape holds: a value holding none of them holds no secret
/// of these shapes, so the set is neither compiled nor run for it (most values: `PATH`,
/// `LANG`, `TERM`). Compiling the set costs about a millisecond, which a one-shot call would
/// otherwise pay whatever its environment holds.
const LITERALS: &[&str] = &[
    "://",
    "sk-",
    "sk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "npm_",
    "pypi-",
    "hf_",
    "eyJ",
    "-----BEGIN ",
];

/// Whether `value` holds something shaped like a secret.
pub fn looks_secret(value: &str) -> bool {
    if !LITERALS.iter().any(|literal| value.contains(literal)) {
        return false;
    }
    match &*SET {
        Some(set) => set.is_match(value),
        // The shapes are constants the tests compile; were they not to, every value with a
        // URL or a long word (among those holding a literal) would be kept from commands
        // rather than none.
        None => value.contains("://") || value.split_whitespace().any(|w| w.len() >= 20),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_compile() {
        assert!(SET.is_some());
        for shape in SHAPES {
            assert!(regex::Regex::new(shape).is_ok(), "{shape}");
        }
    }

    #[test]
    fn secrets_by_shape() {
        let secrets = [
            "postgres://app:hunter2@db.internal:5432/app",
            "mysql://root:x@localhost/db",
            "https://oauth2:glpat-abc@gitlab.example.com/x.git",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "--token=github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "glpat-abcdefghijklmnopqrst",
            "xoxb-1234567890-abcdefghij",
            "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "AKIAIOSFODNN7EXAMPLE",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "sk_live_abcdefghijklmnop",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
            // Alternatives within a shape, each behind a literal of its own.
            "ASIAIOSFODNN7EXAMPLE",
            "gho_abcdefghijklmnopqrstuvwxyz0123",
            "xoxp-1234567890-abcdefghij",
            "rk_test_abcdefghijklmnop",
            "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMA",
        ];
        // Every shape has a sample, and each sample passes the literal check before the
        // shapes: a shape whose literal the check missed would fail here.
        let set = SET.as_ref().unwrap();
        let mut shown = vec![false; SHAPES.len()];
        for value in secrets {
            assert!(looks_secret(value), "{value}");
            set.matches(value).iter().for_each(|i| shown[i] = true);
        }
        assert!(shown.iter().all(|s| *s), "a shape without a sample: {shown:?}");
        for value in [
            "https://example.com/docs",
            "https://user@mirror.example.com/repo",
            "/usr/local/bin:/usr/bin",
            "desk-top sk-short",
            "xterm-256color",
            "en_US.UTF-8",
            "ghp_short",
            "AKIA-not-a-key",
            "/home/me/.ssh/known_hosts",
        ] {
            assert!(!looks_secret(value), "{value}");
        }
    }
}
