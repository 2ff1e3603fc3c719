//! Secrets out of the audit log, by key name and by shape.
//!
//! Two nets. A value whose *key* names a secret (`password`, `api_key`, `Authorization`…,
//! any case and separator) is replaced whole. Then every string left, at any depth, is
//! searched for *shapes* of secrets: an `Authorization` header or a `Bearer` token, a
//! provider's key (`sk-…`, `ghp_…`, `AKIA…`, `xoxb-…`…), a URL's `user:password@`, curl's
//! `-u user:password`, the password of `mysql -pPW` (and its kin) and `sshpass -p PW`, a
//! `password=…`/`token: …`/`api_key = "…"` pair (query strings, environment assignments,
//! config text), a shell variable whose name says it holds a secret (`MYPASS=…`, `DB_PWD=…`,
//! `SERVICE_KEY=…`: [`secret_name`]) and PEM private key blocks. Only the secret part
//! becomes `[redacted]`, so the record still reads as what was asked
//! (`curl -u admin:[redacted] https://…`, `Bearer [redacted]`, `ghp_[redacted]`).
//!
//! Every rule is one regular expression whose named groups `s`, `s2`, `s3` mark the secret
//! part (and, where the rule needs a word judged, `n` the name it judges); they are compiled once, and a [`RegexSet`] finds in one pass which rules a string
//! needs at all, so a string with nothing secret in it costs one scan.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Keys whose values are never written (matched without case, `-`, `_` and spaces).
const SECRET_KEYS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "secret",
    "authorization",
    "apikey",
    "cookie",
    "credential",
    "privatekey",
    "accesskey",
];

/// Words that, ending a key, make its value a secret in text (`GITHUB_TOKEN=…`).
const KEY_WORDS: &str =
    r"(?:password|passwd|passphrase|token|secret|api[_-]?key|access[_-]?key|private[_-]?key)(?:[_-]?key)?";

/// The shapes, in the order they are applied: `(name, pattern)`. Key-value pairs come
/// before provider keys, so `GITHUB_TOKEN=ghp_…` loses its whole value.
fn rules() -> Vec<(&'static str, String)> {
    let fixed = |name, pattern: &str| (name, pattern.to_string());
    vec![
        fixed(
            "pem private key",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<s>[\s\S]*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        ),
        fixed(
            "authorization header",
            r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|digest|token|bot)\s+)?(?P<s>[^\s"',;]+)"#,
        ),
        fixed("bearer token", r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})"),
        // Quoted values lose what is inside the quotes, bare values everything up to a space,
        // quote, `&`, `,` or `;`.
        (
            "key-value pair",
            format!(
                r#"(?i)\b[A-Za-z0-9_.-]*?{KEY_WORDS}\b["']?\s*[:=]\s*(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s"'&,;<>]+))"#
            ),
        ),
        fixed("openai or anthropic key", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?(?P<s>[A-Za-z0-9_-]{20,})"),
        fixed("github token", r"\bgh[pousr]_(?P<s>[A-Za-z0-9]{20,})"),
        fixed("github fine-grained token", r"\bgithub_pat_(?P<s>[A-Za-z0-9_]{20,})"),
        fixed("gitlab token", r"\bglpat-(?P<s>[A-Za-z0-9_-]{20,})"),
        fixed("slack token", r"\bxox[abprs]-(?P<s>[A-Za-z0-9-]{10,})"),
        fixed("aws access key id", r"\b(?:AKIA|ASIA)(?P<s>[A-Z0-9]{16})\b"),
        fixed("google api key", r"\bAIza(?P<s>[A-Za-z0-9_-]{35})"),
        fixed("npm token", r"\bnpm_(?P<s>[A-Za-z0-9]{36})\b"),
        fixed("stripe key", r"\b(?:sk|rk)_(?:live|test)_(?P<s>[A-Za-z0-9]{10,})"),
        fixed("json web token", r"\beyJ[A-Za-z0-9_-]{8,}\.(?P<s>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
        fixed("url userinfo", r#"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<s>[^/\s:@"']+:[^/\s@"']*)@"#),
        fixed("curl user", r#"(?:^|\s)(?:-u|-U|--user|--proxy-user)(?:\s+|=)?["']?[^\s:"']+:(?P<s>[^\s"']+)"#),
        fixed(
            "secret flag",
            r#"(?i)--[A-Za-z0-9-]*(?:password|passwd|token|secret|api-?key)\s+["']?(?P<s>[^\s"'-][^\s"']*)"#,
        ),
        // `-pPW` glued to the flag (`-p PW` would be a database name); `-P` is the port.
        fixed(
            "mysql password",
            r#"(?i:\b(?:mysql[a-z]*|mariadb[a-z-]*))\b[^\n;&|]*?\s-p(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s"';&|]+))"#,
        ),
        fixed(
            "sshpass password",
            r#"\bsshpass\b[^\n;&|]*?\s-p\s*(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s"';&|]+))"#,
        ),
        fixed(
            "secret-named variable",
            r#"(?:^|[\s;&|(`])(?P<n>[A-Za-z_][A-Za-z0-9_]*)=(?:"(?P<s>[^"\n]*)"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s"'&;|<>()`]+))"#,
        ),
    ]
}

/// Words that make a variable's name say it holds a secret (`MYPASS`, `DB_PWD`, `GH_TOKEN`,
/// `CLIENT_SECRET`, `AWS_CREDENTIALS`), compared in capitals.
const SECRET_NAME_WORDS: &[&str] = &["PASS", "PWD", "TOKEN", "SECRET", "CREDENTIAL"];

/// Last words of a name that make it about a secret rather than the secret itself
/// (`GITHUB_TOKEN_FILE`, `SSH_KEY_PATH`, `API_KEY_ENV`).
const NOT_THE_SECRET: &[&str] = &["FILE", "FILES", "PATH", "DIR", "ENV", "NAME", "URL", "ID"];

/// Whether a variable named so holds a secret: its name holds `PASS`, `PWD`, `TOKEN`,
/// `SECRET` or `CREDENTIAL`, or a word of it ends in `KEY` (`API_KEY`, `APIKEY`, `SERVICE_KEY`),
/// any case — unless it is the shell's own `PWD`/`OLDPWD` or names where the secret is
/// (`…_FILE`, `…_PATH`…).
pub fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "PWD" | "OLDPWD") {
        return false;
    }
    let words: Vec<&str> = upper.split('_').filter(|w| !w.is_empty()).collect();
    if words.len() > 1 && words.last().is_some_and(|w| NOT_THE_SECRET.contains(w)) {
        return false;
    }
    SECRET_NAME_WORDS.iter().any(|w| upper.contains(w)) || words.iter().any(|w| w.ends_with("KEY"))
}

struct Rules {
    set: Option<RegexSet>,
    regexes: Vec<Regex>,
}

static COMPILED: LazyLock<Rules> = LazyLock::new(|| {
    // ASCII word boundaries: the lazy DFA handles them on any text, Unicode ones it does not.
    let patterns: Vec<String> = rules().into_iter().map(|(_, p)| p.replace(r"\b", r"(?-u:\b)")).collect();
    // The patterns are constants, each compiled by the tests; one that failed would only be
    // skipped.
    let regexes: Vec<Regex> = patterns.iter().filter_map(|p| Regex::new(p).ok()).collect();
    let set = RegexSet::new(regexes.iter().map(Regex::as_str)).ok();
    Rules { set, regexes }
});

/// `text` with every secret-shaped part replaced by `[redacted]`.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let rules = &*COMPILED;
    let hits: Vec<usize> = match &rules.set {
        Some(set) => set.matches(text).into_iter().collect(),
        None => (0..rules.regexes.len()).collect(),
    };
    let mut out = Cow::Borrowed(text);
    for index in hits {
        if let Some(replaced) = rules.regexes.get(index).and_then(|re| replace_secrets(re, &out)) {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// Replaces the secret groups of every match; None when nothing matched.
fn replace_secrets(re: &Regex, text: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_iter(text) {
        if caps.name("n").is_some_and(|n| !secret_name(n.as_str())) {
            continue;
        }
        for name in ["s", "s2", "s3"] {
            if let Some(m) = caps.name(name).filter(|m| !m.is_empty() && !m.as_str().contains(REDACTED)) {
                out.push_str(&text[last..m.start()]);
                out.push_str(REDACTED);
                last = m.end();
            }
        }
    }
    if last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// An input as recorded: every value under a key that names a secret replaced whole, then
/// every string searched for secret shapes ([`redact_text`]).
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) { Value::String(REDACTED.into()) } else { redact(v) };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) => Value::String(redact_text(s).into_owned()),
        other => other.clone(),
    }
}

/// Every string in `value` searched for secret shapes, in place; keys are left alone (for
/// the parts of a record that are not the input: reasons, decisions, hook outcomes).
pub fn redact_strings(value: &mut Value) {
    match value {
        Value::Object(map) => map.values_mut().for_each(redact_strings),
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::String(s) => {
            if let Cow::Owned(redacted) = redact_text(s) {
                *s = redacted;
            }
        }
        _ => {}
    }
}

fn is_secret_key(key: &str) -> bool {
    let folded: String = key.chars().filter(|c| !matches!(c, '-' | '_' | ' ')).flat_map(char::to_lowercase).collect();
    SECRET_KEYS.iter().any(|s| folded.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_rule_compiles() {
        let rules = rules();
        for (name, pattern) in &rules {
            assert!(Regex::new(pattern).is_ok(), "{name}");
        }
        assert_eq!(COMPILED.regexes.len(), rules.len());
        assert!(COMPILED.set.is_some());
    }

    #[test]
    fn secret_shapes_lose_only_the_secret() {
        let cases: &[(&str, &str)] = &[
            ("Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz012345", "Authorization: Bearer [redacted]"),
            (
                "curl -H 'Authorization: Bearer eyJhbGciOi.payload.sig' https://api.example.com",
                "curl -H 'Authorization: Bearer [redacted]' https://api.example.com",
            ),
            (r#"{"authorization": "Basic YWRtaW46aHVudGVyMg=="}"#, r#"{"authorization": "Basic [redacted]"}"#),
            ("token is Bearer abcdefgh12345678 here", "token is Bearer [redacted] here"),
            ("key sk-abcdefghijklmnopqrstuvwxyz", "key sk-[redacted]"),
            ("ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuvwx", "ANTHROPIC=sk-ant-[redacted]"),
            ("sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-proj-[redacted]"),
            ("git clone with ghp_abcdefghijklmnopqrstuvwxyz0123456789", "git clone with ghp_[redacted]"),
            ("gho_abcdefghijklmnopqrstuvwxyz012345 ghs_abcdefghijklmnopqrstuvwxyz", "gho_[redacted] ghs_[redacted]"),
            ("ghu_abcdefghijklmnopqrstuvwxyz0123", "ghu_[redacted]"),
            ("github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz", "github_pat_[redacted]"),
            ("glpat-abcdefghijklmnopqrst", "glpat-[redacted]"),
            ("slack xoxb-1234567890-abcdefghij and xoxp-1234567890-x", "slack xoxb-[redacted] and xoxp-[redacted]"),
            ("AWS key AKIAIOSFODNN7EXAMPLE in use", "AWS key AKIA[redacted] in use"),
            ("ASIAABCDEFGHIJKLMNOP", "ASIA[redacted]"),
            ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [redacted]"),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIza[redacted]"),
            (
                "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
                "//registry.npmjs.org/:_authToken=[redacted]",
            ),
            ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_[redacted]"),
            ("stripe sk_live_abcdefghijklmnop rk_live_abcdefghijkl", "stripe sk_live_[redacted] rk_live_[redacted]"),
            (
                "git clone https://admin:hunter2@example.com/repo.git",
                "git clone https://[redacted]@example.com/repo.git",
            ),
            ("postgres://app:pw@db:5432/main", "postgres://[redacted]@db:5432/main"),
            ("curl -u admin:hunter2 https://example.com", "curl -u admin:[redacted] https://example.com"),
            ("curl --user admin:hunter2 -X POST", "curl --user admin:[redacted] -X POST"),
            ("curl --user=admin:hunter2", "curl --user=admin:[redacted]"),
            (
                "GET https://example.com/v1?api_key=abc123&page=2",
                "GET https://example.com/v1?api_key=[redacted]&page=2",
            ),
            ("/login?user=bob&password=hunter2", "/login?user=bob&password=[redacted]"),
            (
                "/x?passwd=a&token=b&secret=c&apikey=d&access_token=e",
                "/x?passwd=[redacted]&token=[redacted]&secret=[redacted]&apikey=[redacted]&access_token=[redacted]",
            ),
            ("export GITHUB_TOKEN=abc123 && make", "export GITHUB_TOKEN=[redacted] && make"),
            ("DB_PASSWORD=hunter2 ./run", "DB_PASSWORD=[redacted] ./run"),
            ("password: hunter2\nuser: bob", "password: [redacted]\nuser: bob"),
            (r#"api_key = "abc def""#, r#"api_key = "[redacted]""#),
            ("client_secret='xyz'", "client_secret='[redacted]'"),
            (r#"{"password": "hunter2"}"#, r#"{"password": "[redacted]"}"#),
            ("mysql --password hunter2 db", "mysql --password [redacted] db"),
            ("mysql -u root -phunter2 db", "mysql -u root -p[redacted] db"),
            ("mysqldump -uroot -p'hunter 2' db", "mysqldump -uroot -p'[redacted]' db"),
            ("mariadb -h h -p\"pw\" -P 3306 db", "mariadb -h h -p\"[redacted]\" -P 3306 db"),
            ("mysql --password=hunter2", "mysql --password=[redacted]"),
            ("sshpass -p hunter2 ssh h", "sshpass -p [redacted] ssh h"),
            ("sshpass -v -phunter2 ssh h", "sshpass -v -p[redacted] ssh h"),
            ("MYPASS=hunter2 ./run", "MYPASS=[redacted] ./run"),
            ("env MYSQL_PWD=hunter2 mysql", "env MYSQL_PWD=[redacted] mysql"),
            ("export SERVICE_KEY='a b'; x", "export SERVICE_KEY='[redacted]'; x"),
            ("a=1 GH_TOKEN=x CLIENT_SECRET=\"y\" make", "a=1 GH_TOKEN=[redacted] CLIENT_SECRET=\"[redacted]\" make"),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nrest",
                "-----BEGIN RSA PRIVATE KEY-----[redacted]-----END RSA PRIVATE KEY-----\nrest",
            ),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "-----BEGIN OPENSSH PRIVATE KEY-----[redacted]"),
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop", "eyJhbGciOiJIUzI1NiJ9.[redacted]"),
        ];
        for (input, want) in cases {
            assert_eq!(redact_text(input), *want, "{input}");
            assert_eq!(redact_text(want), *want, "redacting twice changes nothing: {want}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "cargo test -p toolbelt-runtime --locked",
            "max_tokens = 1000",
            "GITHUB_TOKEN_FILE=/run/secrets/gh",
            "git push -u origin main",
            "echo $GITHUB_TOKEN",
            "ssh://git@github.com/org/repo.git",
            "the task-runner-with-a-long-name ran",
            "PWD=/home/me",
            "cd x && OLDPWD=/a PWD=/b ls -p",
            "KEYBOARD=us LANG=C make",
            "SSH_KEY_PATH=~/.ssh/id_ed25519 API_KEY_ENV=MY_KEY ./run",
            "mysql -u root -p shop",
            "mysql -P 3306 shop",
            "ls -p; psql -p 5432",
            "sort -u names.txt",
            "password=",
            "--token-env TOOLBELT_TOKEN",
        ] {
            assert_eq!(redact_text(text), text);
        }
    }

    #[test]
    fn keys_and_shapes_at_any_depth() {
        let input = json!({
            "command": "curl -u admin:hunter2 https://example.com",
            "headers": {"Authorization": "Bearer x", "X-Api-Key": "k", "accept": "json"},
            "list": [{"password": "p"}, {"name": "n", "url": "https://u:p@h/"}],
            "GITHUB_TOKEN": "t",
            "client_secret": "s",
            "count": 3,
        });
        assert_eq!(
            redact(&input),
            json!({
                "command": "curl -u admin:[redacted] https://example.com",
                "headers": {"Authorization": "[redacted]", "X-Api-Key": "[redacted]", "accept": "json"},
                "list": [{"password": "[redacted]"}, {"name": "n", "url": "https://[redacted]@h/"}],
                "GITHUB_TOKEN": "[redacted]",
                "client_secret": "[redacted]",
                "count": 3,
            })
        );
        let mut reason = json!({"reason": "denied: `curl -u a:b x`", "token_id": "abc"});
        redact_strings(&mut reason);
        assert_eq!(reason, json!({"reason": "denied: `curl -u a:[redacted] x`", "token_id": "abc"}));
    }
}
