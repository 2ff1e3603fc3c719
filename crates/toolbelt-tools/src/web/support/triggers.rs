//! The triggers `RemoteTrigger` calls, as the user's settings define them
//! (`[triggers.NAME]`), their templates, and the call itself.
//!
//! ```toml
//! [triggers.deploy]
//! description = "Deploy a ref to an environment"
//! method = "POST"                                   # the default
//! url = "https://api.github.com/repos/acme/app/actions/workflows/deploy.yml/dispatches"
//! headers = { Authorization = "Bearer ${GITHUB_TOKEN}", Accept = "application/vnd.github+json" }
//! body = '{"ref": "{ref}", "inputs": {"environment": "{environment}"}}'
//! ```
//!
//! `${VAR}` is read from the environment (secrets stay out of the settings file); `{name}` is
//! the call's `payload.name`. A template is read once, left to right, and nothing put into it
//! is read again: a payload value holding `${GITHUB_TOKEN}` stays that text. In the URL, a
//! payload value is percent-encoded and may appear only after the host (a placeholder in the
//! scheme or the host is refused when the settings are read), so the model never chooses
//! where the request goes; in a JSON body it is escaped as a JSON string's content.
//! Without a `body`, the payload itself is sent as JSON (for POST, PUT and PATCH).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerConfig {
    /// What it does, for the model.
    pub description: Option<String>,
    /// The HTTP method.
    pub method: String,
    /// The URL template.
    pub url: String,
    /// Header templates.
    pub headers: BTreeMap<String, String>,
    /// The body template; `None` sends the payload as JSON.
    pub body: Option<String>,
}

/// A trigger's table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    description: Option<String>,
    method: Option<String>,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
}

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

impl TriggerConfig {
    /// A trigger's table, checked.
    pub fn from_table(value: &Value) -> Result<Self, String> {
        let table: Table = serde_json::from_value(value.clone())
            .map_err(|e| format!("{e}; a trigger takes url, method, headers, body, description"))?;
        let method = table.method.as_deref().unwrap_or("POST").trim().to_ascii_uppercase();
        if !METHODS.contains(&method.as_str()) {
            return Err(format!("method `{method}` is not one of {}", METHODS.join(", ")));
        }
        check_url_template(&table.url)?;
        Ok(Self { description: table.description, method, url: table.url, headers: table.headers, body: table.body })
    }

    /// The payload fields its templates name, in order, each once.
    pub fn placeholders(&self) -> Vec<String> {
        let mut names = Vec::new();
        let templates = std::iter::once(&self.url).chain(self.headers.values()).chain(self.body.iter());
        for template in templates {
            for piece in pieces(template) {
                if let Piece::Field(name) = piece
                    && !names.iter().any(|n| n == name)
                {
                    names.push(name.to_string());
                }
            }
        }
        names
    }
}

/// Refuses a URL template whose scheme or host is not written out: the origin is the user's.
pub(crate) fn check_url_template(url: &str) -> Result<(), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("url `{url}` is not an http(s) URL"));
    };
    if !matches!(scheme, "http" | "https") {
        return Err(format!("url `{url}` is not an http(s) URL"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('{') || authority.contains('$') || authority.is_empty() {
        return Err(format!(
            "url `{url}`: the scheme and host must be written out (no {{placeholder}} or ${{VAR}} there), so a call \
             cannot choose where the request goes; placeholders may follow the host"
        ));
    }
    url::Url::parse(&format!("{scheme}://{authority}/"))
        .map(|_| ())
        .map_err(|e| format!("url `{url}`: the host is not valid ({e})"))
}

/// A template's parts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Written as it is.
    Text(&'a str),
    /// `${VAR}`: a variable of the environment.
    Var(&'a str),
    /// `{field}`: a field of the call's input.
    Field(&'a str),
}

fn is_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits a template into text, `${VAR}` and `{field}`; a brace that opens neither is text
/// (a JSON body's own braces).
pub(crate) fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut text_start = 0;
    let mut at = 0;
    while at < template.len() {
        let here = &template[at..];
        let (name, var, len) = if let Some(after) = here.strip_prefix("${") {
            match after.find('}') {
                Some(end) if is_name(&after[..end]) => (&after[..end], true, end + 3),
                _ => ("", false, 0),
            }
        } else if let Some(after) = here.strip_prefix('{') {
            match after.find('}') {
                Some(end) if is_name(&after[..end]) => (&after[..end], false, end + 2),
                _ => ("", false, 0),
            }
        } else {
            ("", false, 0)
        };
        if len > 0 {
            if text_start < at {
                out.push(Piece::Text(&template[text_start..at]));
            }
            out.push(if var { Piece::Var(name) } else { Piece::Field(name) });
            at += len;
            text_start = at;
        } else {
            at += here.chars().next().map_or(1, char::len_utf8);
        }
    }
    if text_start < template.len() {
        out.push(Piece::Text(&template[text_start..]));
    }
    out
}

/// The variables (`${VAR}`) a template reads.
pub fn vars_in(template: &str) -> Vec<String> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Var(name) => Some(name.to_string()),
            _ => None,
        })
        .collect()
}

/// How a payload value is written into a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Percent-encoded (a URL).
    Url,
    /// As a JSON string's content (a JSON body).
    Json,
    /// As it is, on one line (a header).
    Header,
    /// As it is (a body that is not JSON).
    None,
}

/// Every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) percent-encoded: a value stays
/// one path segment or one query value, whatever it holds (`/`, `?`, `#`, `&`, a space).
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Fills `template`: `${VAR}` from `var`, `{field}` from `payload`, escaped as `escape` says.
pub fn fill(
    template: &str,
    payload: &Map<String, Value>,
    var: &dyn Fn(&str) -> Option<String>,
    escape: Escape,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Var(name) => out.push_str(&var(name).ok_or_else(|| format!("${name} is not set"))?),
            Piece::Field(name) => {
                let value = match payload.get(name) {
                    Some(Value::String(s)) => s.clone(),
                    Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
                    Some(_) => return Err(format!("payload.{name} must be a string, a number or a boolean")),
                    None => return Err(format!("payload.{name} is missing")),
                };
                match escape {
                    Escape::Url => {
                        // `.` and `..` would climb the trigger's path once the URL is parsed.
                        if matches!(value.as_str(), "" | "." | "..") {
                            return Err(format!("payload.{name} may not be empty, `.` or `..` (it goes into the URL)"));
                        }
                        out.push_str(&percent_encode(&value));
                    }
                    Escape::Json => {
                        let quoted = serde_json::to_string(&value).map_err(|e| e.to_string())?;
                        out.push_str(&quoted[1..quoted.len() - 1]);
                    }
                    Escape::Header => {
                        if value.contains(['\r', '\n']) {
                            return Err(format!("payload.{name} may not hold a line break (it goes into a header)"));
                        }
                        out.push_str(&value);
                    }
                    Escape::None => out.push_str(&value),
                }
            }
        }
    }
    Ok(out)
}

/// A request whose templates were filled: its URL, headers and body, ready to send.
#[derive(Debug)]
pub(crate) struct Filled {
    url: url::Url,
    method: reqwest::Method,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

impl Filled {
    /// Fills the templates of a request (`RemoteTrigger`'s triggers, the HTTP tools the
    /// settings define) from `payload`, `${VAR}` from `var`: each value escaped for where it
    /// goes — percent-encoded in the URL and in a form body, a JSON string's content in a JSON
    /// body (the default), on one line in a header. Without a body template, POST, PUT and
    /// PATCH send the payload as JSON. A part that cannot be filled is named with why
    /// (`("its URL", "payload.ref is missing")`).
    pub(crate) fn from_templates(
        method: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        body: Option<&str>,
        payload: &Map<String, Value>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, (String, String)> {
        let filled_url = fill(url, payload, var, Escape::Url).map_err(|e| ("its URL".to_string(), e))?;
        let url = url::Url::parse(&filled_url).map_err(|e| ("its URL".to_string(), e.to_string()))?;
        let mut filled = Vec::new();
        for (key, value) in headers {
            filled.push((key.clone(), fill(value, payload, var, Escape::Header).map_err(|e| (key.clone(), e))?));
        }
        let kind =
            filled.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.to_ascii_lowercase());
        let body = match body {
            Some(template) => {
                let escape = match kind.as_deref() {
                    None => Escape::Json,
                    Some(k) if k.contains("json") => Escape::Json,
                    Some(k) if k.contains("x-www-form-urlencoded") => Escape::Url,
                    Some(_) => Escape::None,
                };
                Some(fill(template, payload, var, escape).map_err(|e| ("its body".to_string(), e))?)
            }
            None if matches!(method, "POST" | "PUT" | "PATCH") => Some(Value::Object(payload.clone()).to_string()),
            None => None,
        };
        if body.is_some() && kind.is_none() {
            filled.push(("content-type".into(), "application/json".into()));
        }
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::POST);
        Ok(Self { url, method, headers: filled, body })
    }

    /// The URL it goes to.
    pub(crate) fn url(&self) -> &url::Url {
        &self.url
    }

    /// The request, built with `client`.
    pub(crate) fn request(self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        let mut request = client.request(self.method, self.url);
        for (key, value) in &self.headers {
            request = request.header(key, value);
        }
        match self.body {
            Some(body) => request.body(body),
            None => request,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn payload(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn templates_fill_once_and_escape_for_where_they_go() {
        let var = |n: &str| (n == "TOKEN").then(|| "s3cret".to_string());
        let p = payload(json!({"ref": "main", "note": "say \"hi\" ${TOKEN}", "n": 3, "path": "a b/c"}));
        assert_eq!(
            fill(r#"{"ref": "{ref}", "note": "{note}", "n": {n}}"#, &p, &var, Escape::Json).unwrap(),
            r#"{"ref": "main", "note": "say \"hi\" ${TOKEN}", "n": 3}"#
        );
        assert_eq!(
            fill("https://x.example/{path}?t=${TOKEN}", &p, &var, Escape::Url).unwrap(),
            "https://x.example/a%20b%2Fc?t=s3cret"
        );
        assert_eq!(fill("{missing}", &p, &var, Escape::None).unwrap_err(), "payload.missing is missing");
        assert_eq!(fill("${NOPE}", &p, &var, Escape::None).unwrap_err(), "$NOPE is not set");
        assert!(fill("{x}", &payload(json!({"x": "a\nb"})), &var, Escape::Header).is_err());
        assert_eq!(fill("{x}", &payload(json!({"x": "a\nb"})), &var, Escape::None).unwrap(), "a\nb");
        for climb in ["..", ".", ""] {
            let err = fill("https://x.example/w/{x}/go", &payload(json!({"x": climb})), &var, Escape::Url).unwrap_err();
            assert!(err.contains("may not be empty, `.` or `..`"), "{err}");
        }
    }

    #[test]
    fn a_filled_request_keeps_each_value_one_value_of_its_body() {
        let var = |_: &str| None;
        let p = payload(json!({"q": "x&admin=1", "n": "a\"b"}));
        let form: BTreeMap<String, String> =
            [("Content-Type".to_string(), "Application/X-WWW-Form-Urlencoded".to_string())].into();
        let filled = Filled::from_templates("POST", "https://a.example/x", &form, Some("q={q}"), &p, &var).unwrap();
        assert_eq!(filled.body.as_deref(), Some("q=x%26admin%3D1"));
        let json =
            Filled::from_templates("POST", "https://a.example/x", &BTreeMap::new(), Some(r#"{"n":"{n}"}"#), &p, &var)
                .unwrap();
        assert_eq!(json.body.as_deref(), Some(r#"{"n":"a\"b"}"#));
        assert!(json.headers.iter().any(|(k, v)| k == "content-type" && v == "application/json"));
        let err = Filled::from_templates("GET", "https://a.example/{missing}", &BTreeMap::new(), None, &p, &var);
        assert_eq!(err.unwrap_err().0, "its URL");
    }

    #[test]
    fn the_origin_is_written_out() {
        let ok = TriggerConfig::from_table(
            &json!({"url": "https://api.example.com/r/{repo}/go", "body": "{\"a\": \"{b}\"}"}),
        )
        .unwrap();
        assert_eq!(ok.method, "POST");
        assert_eq!(ok.placeholders(), ["repo", "b"]);
        for url in ["https://{host}/x", "https://${HOST}/x", "ftp://a/x", "https:///x", "{base}/x"] {
            assert!(TriggerConfig::from_table(&json!({"url": url})).is_err(), "{url}");
        }
        assert!(TriggerConfig::from_table(&json!({"url": "https://a/x", "method": "TRACE"})).is_err());
    }
}
