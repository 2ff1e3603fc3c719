//! The HTTP both providers share: the client, a request sent within the response timeout,
//! the event stream read within the idle timeout, and HTTP errors turned into
//! [`ProviderError`]s that carry the API's own message and say what to set.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::Timeouts;
use super::sse::{SseEvent, SseParser};
use crate::config::{ProviderConfig, ProviderKind};
use crate::provider::ProviderError;

/// What a provider's messages tell the user to set.
#[derive(Debug, Clone)]
pub(crate) struct Hints {
    /// The provider's name.
    pub provider: String,
    /// The variable its key is read from, when it sends one.
    pub key_env: Option<String>,
    /// The variable that names its model, for the provider the environment defines.
    pub model_env: Option<&'static str>,
    /// Where its base URL was set, in words (`$OPENAI_BASE_URL`, a settings file's table).
    pub base_url_from: String,
}

impl Hints {
    /// The hints of the provider `config` describes, which sends its key when `sends_key`;
    /// `model_env` names the variable of its model when the environment defines it.
    pub fn new(config: &ProviderConfig, sends_key: bool, model_env: Option<&'static str>) -> Self {
        let base_url_from = match (&config.base_url_from, &config.base_url) {
            (Some(from), _) => from.clone(),
            (None, Some(_)) => format!("[agent.providers.{}]", config.name),
            (None, None) => format!(
                "the default of kind \"{}\"; set base_url in [agent.providers.{}]",
                match config.kind {
                    ProviderKind::OpenAi => "openai",
                    ProviderKind::Anthropic => "anthropic",
                },
                config.name
            ),
        };
        Self {
            provider: config.name.clone(),
            key_env: config.api_key_env.clone().filter(|_| sends_key),
            model_env,
            base_url_from,
        }
    }

    fn table(&self) -> String {
        format!("[agent.providers.{}]", self.provider)
    }

    fn set_model(&self) -> String {
        match self.model_env {
            Some(var) => format!("set ${var}, or model = \"…\" in {}", self.table()),
            None => format!("set model = \"…\" in {}", self.table()),
        }
    }

    fn check_key(&self) -> String {
        match &self.key_env {
            Some(var) => format!("check the key in ${var}"),
            None => format!(
                "no key is sent: set api_key_env = \"VARIABLE\" in {} and put the key in that variable",
                self.table()
            ),
        }
    }
}

/// One provider's HTTP client.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    timeouts: Timeouts,
    /// What its messages tell the user.
    pub hints: Hints,
}

impl Http {
    /// A client connecting within `timeouts.connect`. reqwest is built without a TLS provider
    /// of its own (no C build): ring becomes the process's when none is installed yet.
    pub fn new(hints: Hints, timeouts: Timeouts) -> Result<Self, ProviderError> {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Another thread may install one first; either is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .user_agent(concat!("toolbelt/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ProviderError::Config {
                provider: hints.provider.clone(),
                message: format!("cannot make an HTTP client: {}", chain(&e)),
            })?;
        Ok(Self { client, timeouts, hints })
    }

    /// POSTs `body` to `url` and, when the answer is a success, returns its event stream;
    /// an HTTP error status becomes [`ProviderError::Status`] with the API's message.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: &Value,
        model: &str,
    ) -> Result<EventStream, ProviderError> {
        let provider = &self.hints.provider;
        let mut request = self.client.post(url).json(body).header("accept", "text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = match tokio::time::timeout(self.timeouts.response, request.send()).await {
            Err(_) => return Err(ProviderError::Timeout { provider: provider.clone(), after: self.timeouts.response }),
            Ok(Err(e)) if e.is_builder() => {
                return Err(ProviderError::Config {
                    provider: provider.clone(),
                    message: format!("cannot make a request to {url}: {}", chain(&e)),
                });
            }
            Ok(Err(e)) if refused(&e) => {
                return Err(ProviderError::Refused {
                    provider: provider.clone(),
                    url: url.to_string(),
                    from: self.hints.base_url_from.clone(),
                });
            }
            Ok(Err(e)) => {
                return Err(ProviderError::Connect {
                    provider: provider.clone(),
                    url: url.to_string(),
                    message: format!(
                        "{}; is the server up, and is its base_url right (from {})?",
                        chain(&e),
                        self.hints.base_url_from
                    ),
                });
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let json = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        if !response.status().is_success() {
            let retry_after = retry_after(response.headers(), SystemTime::now());
            let text = read_text(response, self.timeouts.idle).await;
            return Err(status_error(&self.hints, status, api_message(&text), retry_after, model, url));
        }
        if json {
            let text = read_text(response, self.timeouts.idle).await;
            let said = api_message(&text).unwrap_or_else(|| snippet(&text));
            return Err(ProviderError::Stream {
                provider: provider.clone(),
                message: format!(
                    "it answered JSON instead of an event stream (does this server stream with `stream: true`?): {said}"
                ),
            });
        }
        Ok(EventStream {
            response,
            parser: SseParser::default(),
            idle: self.timeouts.idle,
            provider: provider.clone(),
            url: url.to_string(),
            ended: false,
        })
    }
}

/// A reply's server-sent events, each chunk awaited within the idle timeout.
#[derive(Debug)]
pub(crate) struct EventStream {
    response: reqwest::Response,
    parser: SseParser,
    idle: Duration,
    provider: String,
    url: String,
    ended: bool,
}

impl EventStream {
    /// The next event; `None` when the stream ended. `began` says whether the reply already
    /// began (a connection that breaks before is worth another try, after is not).
    pub async fn next(&mut self, began: bool) -> Result<Option<SseEvent>, ProviderError> {
        loop {
            if let Some(event) = self.parser.next() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            match tokio::time::timeout(self.idle, self.response.chunk()).await {
                Err(_) => return Err(ProviderError::Timeout { provider: self.provider.clone(), after: self.idle }),
                Ok(Ok(Some(bytes))) => self.parser.push(&bytes).map_err(|m| self.error(m))?,
                Ok(Ok(None)) => {
                    self.ended = true;
                    self.parser.finish().map_err(|m| self.error(m))?;
                }
                Ok(Err(e)) if began => return Err(self.error(format!("the connection broke mid-reply: {}", chain(&e)))),
                Ok(Err(e)) => {
                    return Err(ProviderError::Connect {
                        provider: self.provider.clone(),
                        url: self.url.clone(),
                        message: format!("the connection broke before the reply began: {}", chain(&e)),
                    });
                }
            }
        }
    }

    /// A [`ProviderError::Stream`] of this provider.
    pub fn error(&self, message: impl Into<String>) -> ProviderError {
        ProviderError::Stream { provider: self.provider.clone(), message: message.into() }
    }

    /// The error for a stream that ended before its terminator (`terminator` names it).
    pub fn cut_short(&self, terminator: &str) -> ProviderError {
        let mut message = format!("the stream ended before {terminator}: the connection closed early");
        if let Some(stray) = &self.parser.stray {
            message.push_str(&format!(", or the server does not speak this protocol (it sent `{stray}`)"));
        }
        self.error(message)
    }
}

/// The error for HTTP status `status`: the API's message, then what to do about it.
pub(crate) fn status_error(
    hints: &Hints,
    status: u16,
    api: Option<String>,
    retry_after: Option<Duration>,
    model: &str,
    url: &str,
) -> ProviderError {
    let advice = match status {
        401 => format!("the API key was refused: {}", hints.check_key()),
        403 => format!("the API key may not do this: {}, and that it may use model `{model}`", hints.check_key()),
        404 => format!(
            "there is no model `{model}` or no API at {url}: {}, and check base_url (from {})",
            hints.set_model(),
            hints.base_url_from
        ),
        408 | 504 => "the server timed out".to_string(),
        413 => "the conversation is too large for this server".to_string(),
        429 => "rate limited; if it keeps happening, lower [agent] max_concurrent or wait a while".to_string(),
        503 | 529 => "the API is overloaded; try again later".to_string(),
        500..=599 => "the server failed; try again later".to_string(),
        _ => format!("the API refused the request for model `{model}`"),
    };
    let message = match api {
        Some(api) => format!("{api}; {advice}"),
        None => advice,
    };
    ProviderError::Status { provider: hints.provider.clone(), status, message, retry_after }
}

/// The API's own error message in a body: `error.message` (OpenAI, Anthropic), `error` as
/// text (Ollama), `message`, `detail`; else the body's first words.
pub(crate) fn api_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    if let Ok(json) = serde_json::from_str::<Value>(body) {
        let found = [&json["error"]["message"], &json["error"], &json["message"], &json["detail"]]
            .into_iter()
            .find_map(|v| match v {
                Value::String(s) if !s.is_empty() => Some(s.clone()),
                Value::Array(_) => Some(v.to_string()),
                _ => None,
            });
        return Some(found.unwrap_or_else(|| snippet(body)));
    }
    if body.starts_with('<') {
        return Some("an HTML page came back instead of the API's JSON (a proxy, or the wrong base_url?)".into());
    }
    Some(snippet(body))
}

/// The first 300 characters of `text`, on one line.
pub(crate) fn snippet(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 300 {
        format!("{}…", one_line.chars().take(300).collect::<String>())
    } else {
        one_line
    }
}

/// An error and its sources, `: `-separated (reqwest's own text leaves out the cause).
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Whether `error` is a connection the other side refused (nothing listens there).
fn refused(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(cause) = source {
        if cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused) {
            return true;
        }
        source = cause.source();
    }
    false
}

/// An error body, read within the idle timeout and up to 64 KiB.
async fn read_text(mut response: reqwest::Response, idle: Duration) -> String {
    let mut body = Vec::new();
    while body.len() < 64 << 10 {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// How long a response asks to wait: `retry-after-ms` (OpenAI), else `retry-after` in
/// seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
#[cfg(any(test, feature = "testing"))]
const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's IMF-fixdate).
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let (_, rest) = text.split_once(", ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = fields[..] else { return None };
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let [h, m, s] = hms[..] else { return None };
    if !(1..=31).contains(&day) || !(0..24).contains(&h) || !(0..60).contains(&m) || !(0..61).contains(&s) {
        return None;
    }
    let secs = toolbelt_core::time::days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
}

/// `at` as an HTTP date.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn http_date(at: SystemTime) -> String {
    let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = toolbelt_core::time::civil_from_days(days);
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_round_trip() {
        let at = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(http_date(at), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(at));
        let now = SystemTime::now();
        let whole = UNIX_EPOCH + Duration::from_secs(now.duration_since(UNIX_EPOCH).unwrap().as_secs());
        assert_eq!(parse_http_date(&http_date(now)), Some(whole));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 32 Nov 1994 08:49:37 GMT"), None);
    }

    #[test]
    fn retry_after_takes_milliseconds_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777);
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut map = HeaderMap::new();
            for (k, v) in pairs {
                map.insert(*k, v.parse().unwrap());
            }
            map
        };
        assert_eq!(retry_after(&headers(&[("retry-after", "3")]), now), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(&headers(&[("retry-after", "0.5")]), now), Some(Duration::from_millis(500)));
        let both = headers(&[("retry-after", "3"), ("retry-after-ms", "250")]);
        assert_eq!(retry_after(&both, now), Some(Duration::from_millis(250)));
        let date = headers(&[("retry-after", "Sun, 06 Nov 1994 08:50:07 GMT")]);
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(30)));
        let past = headers(&[("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT")]);
        assert_eq!(retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
    }

    #[test]
    fn the_api_s_message_is_found_in_its_shapes() {
        let openai = r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#;
        assert_eq!(api_message(openai).as_deref(), Some("Incorrect API key provided"));
        let anthropic = r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#;
        assert_eq!(api_message(anthropic).as_deref(), Some("model: nope"));
        assert_eq!(api_message(r#"{"error": "model 'x' not found"}"#).as_deref(), Some("model 'x' not found"));
        assert_eq!(api_message(r#"{"detail": "Not Found"}"#).as_deref(), Some("Not Found"));
        assert!(api_message("<html><body>502</body></html>").unwrap().contains("HTML page"));
        assert_eq!(api_message("  \n"), None);
        assert_eq!(api_message("upstream\n  failed").as_deref(), Some("upstream failed"));
    }

    #[test]
    fn status_errors_say_what_to_set() {
        let hints = Hints {
            provider: "openai".into(),
            key_env: Some("OPENAI_API_KEY".into()),
            model_env: Some("OPENAI_MODEL"),
            base_url_from: "$OPENAI_BASE_URL".into(),
        };
        let e = status_error(&hints, 401, Some("bad key".into()), None, "m", "u");
        assert_eq!(
            e.to_string(),
            "model provider `openai` answered HTTP 401: bad key; the API key was refused: check the key in $OPENAI_API_KEY"
        );
        let e = status_error(&hints, 404, None, None, "gpt-x", "http://h/v1/chat/completions");
        assert!(
            e.to_string().contains("no model `gpt-x`")
                && e.to_string().contains("set $OPENAI_MODEL, or model = \"…\" in [agent.providers.openai]")
                && e.to_string().contains("check base_url (from $OPENAI_BASE_URL)"),
            "{e}"
        );
        let local = Hints {
            provider: "local".into(),
            key_env: None,
            model_env: None,
            base_url_from: "[agent.providers.local]".into(),
        };
        let e = status_error(&local, 401, None, None, "m", "u");
        assert!(e.to_string().contains("set api_key_env = \"VARIABLE\" in [agent.providers.local]"), "{e}");
        assert!(status_error(&local, 529, None, None, "m", "u").is_retryable());
        assert!(!status_error(&local, 400, None, None, "m", "u").is_retryable());
    }
}
