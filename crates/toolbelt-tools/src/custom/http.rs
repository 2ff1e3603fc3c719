//! An HTTP tool (`[tools.http.NAME]`): one request to an address the settings write out,
//! its templates filled from the call's validated input, sent with the web tools' client
//! (its proxy, its private-network guard) and judged by host as `WebFetch(domain:…)` rules
//! judge fetches.
//!
//! ```toml
//! [tools.http.weather]
//! description = "Current weather for a city"
//! method = "GET"                                    # GET, POST (the default with a body), PUT, PATCH, DELETE
//! url = "https://api.example.com/v1/weather?q={city}"
//! headers = { Authorization = "Bearer ${WEATHER_TOKEN}" }
//! body = '{"city": "{city}"}'                       # without one, POST/PUT/PATCH send the input as JSON
//! output = "json"
//! timeout = 20
//! ```
//!
//! The scheme and host are written out (a placeholder there is refused), so a call never
//! chooses where the request goes; a value put in the URL is percent-encoded, one in a JSON
//! body escaped as a string's content, one in a header refused if it holds a line break.
//! `${VAR}` is read from toolbelt's environment, never from the input, and never shown: the
//! address the policy and the audit see has `${VAR}` as written.

use serde_json::{Map, Value};
use toolbelt_core::{Access, ToolContext, ToolError, ToolOutput};

use super::fields::{DefinitionError, OutputKind, fields_in, string_table, wrong_type};
use crate::web::support::client::Web;
use crate::web::support::guard::check_parsed;
use crate::web::support::triggers::{Escape, Filled, check_url_template, fill};

/// An HTTP tool's own settings.
pub(super) const FIELDS: [&str; 4] = ["method", "url", "headers", "body"];

/// The methods an HTTP tool may use.
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// The most of an answer read (more is cut, and said to be).
const MAX_ANSWER: usize = 10 * 1024 * 1024;

/// What an HTTP tool sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAction {
    /// The method.
    pub method: String,
    /// The URL template.
    pub url: String,
    /// Header templates.
    pub headers: std::collections::BTreeMap<String, String>,
    /// The body template; without one, POST, PUT and PATCH send the input as JSON.
    pub body: Option<String>,
}

impl HttpAction {
    /// Reads an HTTP tool's own fields.
    pub(super) fn read(fields: &Map<String, Value>) -> Result<Self, DefinitionError> {
        let url = match fields.get("url") {
            Some(Value::String(u)) => u.trim().to_string(),
            None => return Err(DefinitionError::new("`url` is missing: the address the tool calls")),
            Some(v) => return Err(wrong_type("url", "a string", v)),
        };
        check_url_template(&url).map_err(DefinitionError::new)?;
        let body = match fields.get("body") {
            None => None,
            Some(Value::String(b)) => Some(b.clone()),
            Some(v) => return Err(wrong_type("body", "a string (a template)", v)),
        };
        let method = match fields.get("method") {
            None if body.is_some() => "POST".to_string(),
            None => "GET".to_string(),
            Some(Value::String(m)) if METHODS.contains(&m.trim().to_ascii_uppercase().as_str()) => {
                m.trim().to_ascii_uppercase()
            }
            Some(v) => return Err(wrong_type("method", &format!("one of {}", METHODS.join(", ")), v)),
        };
        if body.is_some() && method == "GET" {
            return Err(DefinitionError::new("a GET request has no body: use method = \"POST\" (or drop `body`)"));
        }
        Ok(Self { method, url, headers: string_table(fields, "headers")?, body })
    }

    /// The input fields its templates name.
    pub(super) fn placeholders(&self) -> Vec<String> {
        let mut names = Vec::new();
        for template in std::iter::once(&self.url).chain(self.headers.values()).chain(self.body.iter()) {
            fields_in(template, &mut names);
        }
        names
    }

    /// What a call touches: the address, its variables left as written.
    pub(super) fn judge(&self, input: &Value) -> Result<Access, ToolError> {
        let fields = as_map(input);
        let shown = |name: &str| Some(format!("${{{name}}}"));
        let url = fill(&self.url, &fields, &shown, Escape::Url).map_err(|e| bad_input("its URL", &e))?;
        let access = if self.method == "GET" { Access::shared() } else { Access::exclusive() };
        Ok(access.contacts(url))
    }

    /// Sends the request of a call.
    pub(super) async fn run(
        &self,
        name: &str,
        input: Value,
        output: OutputKind,
        timeout: Option<std::time::Duration>,
        cx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let web = Web::of(&cx);
        let fields = as_map(&input);
        let var = |v: &str| web.var(v);
        let unset = |what: &str, e: String| {
            if e.starts_with('$') {
                ToolError::failed(format!("cannot call: {what} reads {e}; ask the user to set it"))
            } else {
                bad_input(what, &e)
            }
        };
        let filled =
            Filled::from_templates(&self.method, &self.url, &self.headers, self.body.as_deref(), &fields, &var)
                .map_err(|(what, e)| unset(&what, e))?;
        // The private-network guard, as for a fetch (the resolver checks named hosts too).
        check_parsed(filled.url(), web.config()).map_err(|e| ToolError::failed(format!("`{name}`: {e}")))?;
        let client = web.client_for(filled.url())?;
        let request = filled.request(client);
        let limit = timeout.unwrap_or(web.config().timeout).min(cx.limits().timeout);
        let answer = tokio::time::timeout(limit, async {
            // The URL may hold a secret: never in an error.
            let mut response = request.send().await.map_err(|e| unreachable(name, e.without_url()))?;
            let status = response.status().as_u16();
            let kind = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
            let kind = kind.map(str::to_string);
            let mut bytes = Vec::new();
            let mut cut = false;
            while let Some(chunk) = response.chunk().await.map_err(|e| unreachable(name, e.without_url()))? {
                let room = MAX_ANSWER - bytes.len();
                bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if chunk.len() > room {
                    cut = true;
                    break;
                }
            }
            Ok::<_, ToolError>((status, kind, bytes, cut))
        });
        let (status, kind, bytes, cut) = answer.await.map_err(|_| {
            ToolError::failed(format!(
                "`{name}` got no whole answer within {}; the request may or may not have been acted on",
                toolbelt_core::human_duration(limit)
            ))
        })??;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let ok = (200..300).contains(&status);
        if output == OutputKind::Json && ok && !cut {
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => return Ok(super::json_output(value)),
                Err(e) => {
                    let mut out =
                        ToolOutput::text(format!("HTTP {status}: the answer was to be JSON but is not ({e}):\n{text}"));
                    out.is_error = true;
                    return Ok(out);
                }
            }
        }
        let kind = kind.map(|k| format!(" ({k})")).unwrap_or_default();
        let cut = if cut { format!("\n[answer cut at {} MiB]", MAX_ANSWER / 1024 / 1024) } else { String::new() };
        let body = if text.trim().is_empty() { " (no body)".to_string() } else { format!("\n{text}") };
        let mut out = ToolOutput::text(format!("HTTP {status}{kind}{body}{cut}"));
        out.is_error = !ok;
        Ok(out)
    }
}

fn as_map(input: &Value) -> Map<String, Value> {
    input.as_object().cloned().unwrap_or_default()
}

fn bad_input(what: &str, e: &str) -> ToolError {
    ToolError::failed(format!("cannot fill {what} from the input: {e}"))
}

fn unreachable(name: &str, e: reqwest::Error) -> ToolError {
    ToolError::failed(format!("`{name}` could not reach its address: {e}"))
}
