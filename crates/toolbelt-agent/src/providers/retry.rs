//! Trying again: rate limits, overloaded or failing servers, connections that broke before the
//! reply began, and timeouts are retried with exponential backoff and jitter, honouring the
//! server's `retry-after`. Only a request whose reply has not begun is retried: once text
//! streamed out, sending the request again would show it twice.
//!
//! A refused connection is tried again once only ([`REFUSED_TRIES`]): nothing listens at the
//! base URL — a local server that is not running, a wrong port — which does not pass in the
//! seconds a backoff waits, so the person hears of it at once rather than after 7 to 15 s of
//! tries. The one retry covers a server caught restarting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use toolbelt_core::BoxFuture;

use crate::message::{Reply, Request, StreamEvent};
use crate::provider::{Provider, ProviderError, StreamSink};

/// Tries in all, the first included, of a request whose connection was refused.
pub(crate) const REFUSED_TRIES: u32 = 2;

/// How often and how patiently to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (1 never retries).
    pub attempts: u32,
    /// The pause before the first retry; it doubles after each.
    pub base_delay: Duration,
    /// The longest pause; a `retry-after` asking for more fails at once, saying how long.
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// Five tries, pausing about 1 s, 2 s, 4 s, 8 s (with jitter), never more than 60 s.
    pub const DEFAULT: RetryPolicy =
        RetryPolicy { attempts: 5, base_delay: Duration::from_secs(1), max_delay: Duration::from_secs(60) };

    /// No retry at all.
    pub const NEVER: RetryPolicy = RetryPolicy { attempts: 1, base_delay: Duration::ZERO, max_delay: Duration::ZERO };

    /// The pause before retry number `retry` (0 for the first): the base doubled `retry`
    /// times, capped, then between half and all of it at random (so clients that failed
    /// together do not come back together).
    pub fn backoff(&self, retry: u32) -> Duration {
        let full = self.base_delay.saturating_mul(1u32 << retry.min(20)).min(self.max_delay);
        let half = full / 2;
        half + half.mul_f64(random_fraction())
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A number in [0, 1) that differs from call to call (no cryptographic quality needed).
fn random_fraction() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// A provider that tries again (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Retrying {
    inner: Arc<dyn Provider>,
    policy: RetryPolicy,
}

impl Retrying {
    /// `inner`, retried by `policy`.
    pub fn new(inner: Arc<dyn Provider>, policy: RetryPolicy) -> Self {
        Self { inner, policy }
    }

    /// The provider it retries.
    pub fn inner(&self) -> &Arc<dyn Provider> {
        &self.inner
    }

    async fn complete_retrying(&self, request: &Request, events: StreamSink<'_>) -> Result<Reply, ProviderError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let began = AtomicBool::new(false);
            let sink = |event: StreamEvent<'_>| {
                began.store(true, Ordering::Relaxed);
                events(event);
            };
            let error = match self.inner.complete(request, &sink).await {
                Ok(reply) => return Ok(reply),
                Err(error) => error,
            };
            if !error.is_retryable() || began.load(Ordering::Relaxed) {
                return Err(error);
            }
            let tries = match error {
                ProviderError::Refused { .. } => self.policy.attempts.min(REFUSED_TRIES),
                _ => self.policy.attempts,
            };
            if attempt >= tries {
                if attempt == 1 {
                    return Err(error);
                }
                return Err(with_note(error, &format!("gave up after {attempt} tries")));
            }
            let pause = match error.retry_after() {
                Some(asked) if asked > self.policy.max_delay => {
                    let note = format!(
                        "it asked to wait {} before trying again (retry-after), longer than the {} toolbelt \
                         waits; try again later",
                        seconds(asked),
                        seconds(self.policy.max_delay)
                    );
                    return Err(with_note(error, &note));
                }
                Some(asked) => asked,
                None => self.policy.backoff(attempt - 1),
            };
            tracing::warn!(
                provider = self.inner.name(),
                attempt,
                of = tries,
                "{error}; trying again in {}",
                seconds(pause)
            );
            tokio::time::sleep(pause).await;
            tracing::info!(provider = self.inner.name(), attempt = attempt + 1, "retrying the model request");
        }
    }
}

impl Provider for Retrying {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn default_model(&self) -> &str {
        self.inner.default_model()
    }

    fn supports_tools(&self) -> bool {
        self.inner.supports_tools()
    }

    fn complete<'a>(
        &'a self,
        request: &'a Request,
        events: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(self.complete_retrying(request, events))
    }
}

/// A duration in words: `1.5 s`, `3600 s`.
fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 { format!("{} s", d.as_secs()) } else { format!("{secs:.1} s") }
}

/// `error` with `note` added to its message, where it has one.
fn with_note(error: ProviderError, note: &str) -> ProviderError {
    match error {
        ProviderError::Status { provider, status, message, retry_after } => {
            ProviderError::Status { provider, status, message: format!("{message} ({note})"), retry_after }
        }
        ProviderError::Connect { provider, url, message } => {
            ProviderError::Connect { provider, url, message: format!("{message} ({note})") }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let policy =
            RetryPolicy { attempts: 9, base_delay: Duration::from_millis(100), max_delay: Duration::from_millis(1000) };
        for (retry, full) in [(0, 100), (1, 200), (2, 400), (3, 800), (4, 1000), (30, 1000)] {
            let pause = policy.backoff(retry).as_millis();
            assert!((full / 2..=full).contains(&pause), "retry {retry}: {pause} ms not within {}..={full}", full / 2);
        }
        let pauses: Vec<Duration> = (0..8).map(|_| policy.backoff(3)).collect();
        assert!(pauses.windows(2).any(|w| w[0] != w[1]), "jitter varies: {pauses:?}");
    }

    /// A provider failing every request with `error`, counting them.
    #[derive(Debug)]
    struct Failing {
        error: ProviderError,
        tries: std::sync::atomic::AtomicU32,
    }

    impl Provider for Failing {
        fn name(&self) -> &str {
            "p"
        }

        fn default_model(&self) -> &str {
            "m"
        }

        fn complete<'a>(&'a self, _: &'a Request, _: StreamSink<'a>) -> BoxFuture<'a, Result<Reply, ProviderError>> {
            self.tries.fetch_add(1, Ordering::Relaxed);
            let error = self.error.clone();
            Box::pin(async move { Err(error) })
        }
    }

    /// How many tries `error` gets under a five-try policy.
    async fn tries(error: ProviderError) -> u32 {
        let inner = Arc::new(Failing { error, tries: Default::default() });
        let policy =
            RetryPolicy { attempts: 5, base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(10) };
        let request = Request {
            model: "m".into(),
            system: String::new(),
            messages: Vec::new(),
            tools: Arc::from([]),
            tool_choice: crate::message::ToolChoice::Auto,
            max_tokens: 10,
        };
        let _ = Retrying::new(Arc::clone(&inner) as Arc<dyn Provider>, policy).complete(&request, &|_| {}).await;
        inner.tries.load(Ordering::Relaxed)
    }

    #[tokio::test]
    async fn a_refused_connection_is_tried_once_more_and_a_broken_one_to_the_end() {
        let url = "http://127.0.0.1:9/v1".to_string();
        let refused = ProviderError::Refused { provider: "p".into(), url: url.clone(), from: "$X".into() };
        assert_eq!(tries(refused).await, REFUSED_TRIES);
        let reset = ProviderError::Connect { provider: "p".into(), url, message: "connection reset".into() };
        assert_eq!(tries(reset).await, 5);
        let config = ProviderError::Config { provider: "p".into(), message: "no key".into() };
        assert_eq!(tries(config).await, 1);
    }

    #[test]
    fn notes_go_into_messages() {
        let e =
            ProviderError::Status { provider: "p".into(), status: 429, message: "slow down".into(), retry_after: None };
        assert_eq!(
            with_note(e, "gave up after 3 tries").to_string(),
            "model provider `p` answered HTTP 429: slow down (gave up after 3 tries)"
        );
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(seconds(Duration::from_secs(3600)), "3600 s");
    }
}
