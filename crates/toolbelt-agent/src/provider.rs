//! What a model provider is to the loop: one streaming request at a time, behind one trait.

use std::time::Duration;

use toolbelt_core::BoxFuture;

use crate::message::{Reply, Request, StreamEvent};

/// Where a provider reports what streams in (text as it arrives, tool calls as they start).
pub type StreamSink<'a> = &'a (dyn Fn(StreamEvent<'_>) + Send + Sync);

/// A model provider: OpenAI-compatible Chat Completions, Anthropic Messages, an MCP host's
/// sampling, or a scripted one in tests.
///
/// Cancellation is by dropping the future: a provider holds nothing that outlives it.
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// The provider's name as configured (`openai`, `local`…): messages name it.
    fn name(&self) -> &str;

    /// The model a request uses when neither the call nor the agent's definition names one.
    fn default_model(&self) -> &str;

    /// Whether the model can be given tools (an MCP host's sampling may not take them).
    fn supports_tools(&self) -> bool {
        true
    }

    /// Sends `request`, reporting the reply to `events` as it streams in, and resolves with
    /// the whole reply.
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        events: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Reply, ProviderError>>;
}

/// What went wrong talking to a provider. Every message names the provider, says what failed
/// and what to set or do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The provider is not usable as configured (no API key, a bad base URL).
    #[error("model provider `{provider}` is not usable: {message}")]
    Config {
        /// The provider's name.
        provider: String,
        /// What is missing or wrong, and what to set.
        message: String,
    },
    /// The provider answered with an HTTP error status.
    #[error("model provider `{provider}` answered HTTP {status}: {message}")]
    Status {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The API's own error message, and what to do.
        message: String,
        /// How long it asked us to wait (`retry-after`), if it said.
        retry_after: Option<Duration>,
    },
    /// The provider could not be reached, or the connection broke before the reply began.
    #[error("model provider `{provider}` could not be reached at {url}: {message}")]
    Connect {
        /// The provider's name.
        provider: String,
        /// The URL tried.
        url: String,
        /// What failed.
        message: String,
    },
    /// Nothing listens at the provider's address: the connection was refused. That seldom
    /// passes in seconds (a server that is not running, a wrong port), so it is tried again
    /// only once ([`crate::providers::Retrying`]).
    #[error(
        "model provider `{provider}` could not connect to {url}: connection refused; is the server running? \
         (base_url from {from})"
    )]
    Refused {
        /// The provider's name.
        provider: String,
        /// The URL tried.
        url: String,
        /// Where its base URL was set (`$OPENAI_BASE_URL`, a settings file's table).
        from: String,
    },
    /// The reply stream broke off or was not the protocol it should be.
    #[error("model provider `{provider}` sent a reply that could not be read: {message}")]
    Stream {
        /// The provider's name.
        provider: String,
        /// What was wrong with it.
        message: String,
    },
    /// No reply within the request timeout.
    #[error("model provider `{provider}` did not answer within {}s; check that the server is up and not overloaded, then try again", after.as_secs())]
    Timeout {
        /// The provider's name.
        provider: String,
        /// How long we waited.
        after: Duration,
    },
}

impl ProviderError {
    /// Whether trying again may help: rate limits, server errors (5xx), connections that
    /// failed before a reply began, timeouts.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Status { status, .. } => *status == 429 || *status == 408 || *status >= 500,
            ProviderError::Connect { .. } | ProviderError::Refused { .. } | ProviderError::Timeout { .. } => true,
            ProviderError::Config { .. } | ProviderError::Stream { .. } => false,
        }
    }

    /// How long the provider asked us to wait before trying again, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
