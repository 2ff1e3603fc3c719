//! A provider answering in-process, with no I/O: for unit tests of the loop and for measuring
//! the loop's own overhead.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use toolbelt_core::BoxFuture;

use super::{SCRIPTED_MODEL, lock};
use crate::message::{Part, Reply, Request, StopReason, StreamEvent, Usage};
use crate::provider::{Provider, ProviderError, StreamSink};

type ReplyFn = dyn Fn(&Request) -> Result<Reply, ProviderError> + Send + Sync;

enum Script {
    Queue(VecDeque<Result<Reply, ProviderError>>),
    Function(Box<ReplyFn>),
}

/// An in-process provider: it answers each request with the next scripted reply (or error),
/// or with what a function makes of the request, reporting the reply's text and tool calls
/// to the stream sink as a real provider would. A queue that runs out answers a
/// [`ProviderError::Stream`] saying so.
pub struct InstantProvider {
    name: String,
    model: String,
    tools: bool,
    script: Mutex<Script>,
    requests: Mutex<Vec<Request>>,
    calls: AtomicUsize,
}

impl std::fmt::Debug for InstantProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstantProvider")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("calls", &self.calls.load(Ordering::Relaxed))
            .finish()
    }
}

impl InstantProvider {
    fn with(script: Script) -> Self {
        Self {
            name: "instant".into(),
            model: SCRIPTED_MODEL.into(),
            tools: true,
            script: Mutex::new(script),
            requests: Mutex::default(),
            calls: AtomicUsize::new(0),
        }
    }

    /// A provider answering `replies` in order; every request is kept ([`Self::requests`]).
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self::with(Script::Queue(replies.into_iter().map(Ok).collect()))
    }

    /// A provider answering what `reply` makes of each request; requests are not kept (for
    /// benchmarks, where copying the history each turn would be measured too).
    pub fn from_fn(reply: impl Fn(&Request) -> Result<Reply, ProviderError> + Send + Sync + 'static) -> Self {
        Self::with(Script::Function(Box::new(reply)))
    }

    /// Named `name` (`instant` by default).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// With `model` as its default model ([`SCRIPTED_MODEL`] by default).
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Saying it cannot be given tools (as an MCP host's sampling may).
    pub fn without_tools(mut self) -> Self {
        self.tools = false;
        self
    }

    /// Adds a reply at the end of the queue.
    pub fn push(&self, reply: Reply) {
        if let Script::Queue(queue) = &mut *lock(&self.script) {
            queue.push_back(Ok(reply));
        }
    }

    /// Adds an error at the end of the queue.
    pub fn push_error(&self, error: ProviderError) {
        if let Script::Queue(queue) = &mut *lock(&self.script) {
            queue.push_back(Err(error));
        }
    }

    /// The requests received, in order (none for [`Self::from_fn`]).
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }

    /// How many requests it answered.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    fn answer(&self, request: &Request) -> Result<Reply, ProviderError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        match &mut *lock(&self.script) {
            Script::Function(reply) => reply(request),
            Script::Queue(queue) => {
                lock(&self.requests).push(request.clone());
                queue.pop_front().unwrap_or_else(|| {
                    Err(ProviderError::Stream {
                        provider: self.name.clone(),
                        message: format!("the instant provider has no reply left for request {n}; script one more"),
                    })
                })
            }
        }
    }
}

impl Provider for InstantProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn supports_tools(&self) -> bool {
        self.tools
    }

    fn complete<'a>(
        &'a self,
        request: &'a Request,
        events: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        let reply = self.answer(request);
        Box::pin(async move {
            let reply = reply?;
            for part in &reply.parts {
                match part {
                    Part::Text { text } => events(StreamEvent::Text(text)),
                    Part::ToolUse { name, .. } => events(StreamEvent::ToolUse { name }),
                    Part::ToolResult { .. } => {}
                }
            }
            Ok(reply)
        })
    }
}

/// A reply of `text` that ends the turn.
pub fn text_reply(text: impl Into<String>) -> Reply {
    Reply {
        parts: vec![Part::text(text)],
        stop: StopReason::EndTurn,
        usage: Usage { input_tokens: 10, output_tokens: 5 },
    }
}

/// A reply making these tool calls (`(id, name, input)`).
pub fn tool_reply<I, S>(calls: I) -> Reply
where
    I: IntoIterator<Item = (S, S, Value)>,
    S: Into<String>,
{
    let parts =
        calls.into_iter().map(|(id, name, input)| Part::ToolUse { id: id.into(), name: name.into(), input }).collect();
    Reply { parts, stop: StopReason::ToolUse, usage: Usage { input_tokens: 10, output_tokens: 5 } }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{Message, ToolChoice};

    fn request() -> Request {
        Request {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::user("hi")],
            tools: std::sync::Arc::from([]),
            tool_choice: ToolChoice::Auto,
            max_tokens: 10,
        }
    }

    #[tokio::test]
    async fn answers_in_order_then_says_it_ran_out() {
        let provider =
            InstantProvider::new([tool_reply([("c1", "Read", json!({"file_path": "a"}))]), text_reply("done")]);
        let seen = Mutex::new(Vec::new());
        let sink = |e: StreamEvent<'_>| seen.lock().unwrap().push(format!("{e:?}"));
        assert_eq!(provider.complete(&request(), &sink).await.unwrap().stop, StopReason::ToolUse);
        assert_eq!(provider.complete(&request(), &sink).await.unwrap().parts, vec![Part::text("done")]);
        let e = provider.complete(&request(), &sink).await.unwrap_err();
        assert!(e.to_string().contains("no reply left for request 3"), "{e}");
        assert_eq!(seen.into_inner().unwrap(), ["ToolUse { name: \"Read\" }", "Text(\"done\")"]);
        assert_eq!((provider.requests().len(), provider.calls()), (3, 3));
    }

    #[tokio::test]
    async fn a_function_answers_from_the_request() {
        let provider =
            InstantProvider::from_fn(|r| Ok(text_reply(format!("{} messages", r.messages.len())))).named("fast");
        let reply = provider.complete(&request(), &|_| {}).await.unwrap();
        assert_eq!(reply.parts, vec![Part::text("1 messages")]);
        assert_eq!((provider.name(), provider.requests().len()), ("fast", 0));
    }
}
