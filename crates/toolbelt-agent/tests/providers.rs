//! The providers against scripted loopback servers speaking the real streaming protocols.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_agent::providers::{self, ProviderOptions, RetryPolicy, Timeouts};
use toolbelt_agent::testing::{Protocol, ScriptedServer, Turn, http_date};
use toolbelt_agent::{
    Message, Part, Provider, ProviderError, Reply, Request, Role, StopReason, StreamEvent, ToolChoice, ToolDef, Usage,
};
use toolbelt_core::Content;

const BOTH: [Protocol; 2] = [Protocol::OpenAi, Protocol::Anthropic];

fn env(name: &str) -> Option<String> {
    (name == "TEST_KEY").then(|| "sk-test".to_string())
}

fn options(attempts: u32) -> ProviderOptions {
    ProviderOptions {
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            response: Duration::from_secs(10),
            idle: Duration::from_secs(10),
        },
        retry: RetryPolicy { attempts, base_delay: Duration::from_millis(10), max_delay: Duration::from_secs(5) },
    }
}

fn provider(server: &ScriptedServer, options: ProviderOptions) -> Arc<dyn Provider> {
    providers::build_with(&server.config("test", Some("TEST_KEY")), &env, &options).unwrap()
}

fn request(messages: Vec<Message>) -> Request {
    Request {
        model: "scripted-model".into(),
        system: "You are terse.".into(),
        messages,
        tools: Arc::from([ToolDef {
            name: "Read".into(),
            description: "Reads a file.".into(),
            input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
        }]),
        tool_choice: ToolChoice::Auto,
        max_tokens: 1000,
    }
}

/// Sends one request, returning the outcome and what streamed out.
async fn complete(provider: &dyn Provider, request: &Request) -> (Result<Reply, ProviderError>, Vec<String>) {
    let events = Mutex::new(Vec::new());
    let sink = |e: StreamEvent<'_>| {
        events.lock().unwrap().push(match e {
            StreamEvent::Text(t) => format!("text:{t}"),
            StreamEvent::ToolUse { name } => format!("tool:{name}"),
        })
    };
    let result = provider.complete(request, &sink).await;
    (result, events.into_inner().unwrap())
}

fn start(protocol: Protocol, turns: impl IntoIterator<Item = Turn>) -> ScriptedServer {
    ScriptedServer::start(protocol, turns).unwrap()
}

#[tokio::test]
async fn text_streams_in_pieces_and_the_request_is_the_protocol_s() {
    for protocol in BOTH {
        let server = start(protocol, [Turn::text("Hello there, this is a streamed answer.").usage(120, 9)]);
        let p = provider(&server, options(1));
        let (reply, events) = complete(&*p, &request(vec![Message::user("hi")])).await;
        let reply = reply.unwrap();
        assert_eq!(reply.parts, vec![Part::text("Hello there, this is a streamed answer.")], "{protocol:?}");
        assert_eq!(reply.stop, StopReason::EndTurn);
        assert_eq!(reply.usage, Usage { input_tokens: 120, output_tokens: 9 });
        assert!(events.len() >= 3 && events.iter().all(|e| e.starts_with("text:")), "{protocol:?} streamed {events:?}");
        let sent = &server.requests()[0];
        assert_eq!(sent.body["stream"], true);
        assert_eq!(sent.body["model"], "scripted-model");
        assert_eq!(sent.body["max_tokens"], 1000);
        match protocol {
            Protocol::OpenAi => {
                assert_eq!(sent.path, "/v1/chat/completions");
                assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
                assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
                assert_eq!(sent.messages()[0], json!({"role": "system", "content": "You are terse."}));
                assert_eq!(sent.messages()[1], json!({"role": "user", "content": "hi"}));
                assert_eq!(sent.body["tool_choice"], "auto");
                assert_eq!(sent.body["tools"][0]["function"]["name"], "Read");
                assert_eq!(sent.body["tools"][0]["function"]["parameters"]["required"], json!(["file_path"]));
            }
            Protocol::Anthropic => {
                assert_eq!(sent.path, "/v1/messages");
                assert_eq!(sent.header("x-api-key"), Some("sk-test"));
                assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(sent.body["system"], "You are terse.");
                assert_eq!(sent.messages()[0], json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}));
                assert_eq!(sent.body["tool_choice"], json!({"type": "auto"}));
                assert_eq!(sent.body["tools"][0]["input_schema"]["required"], json!(["file_path"]));
            }
        }
    }
}

#[tokio::test]
async fn a_tool_call_and_parallel_calls_come_whole() {
    for protocol in BOTH {
        let server = start(
            protocol,
            [
                Turn::tool_call("call_1", "Read", json!({"file_path": "src/main.rs"})),
                Turn::tool_calls([
                    ("call_a".into(), "Read".into(), json!({"file_path": "a.txt"})),
                    ("call_b".into(), "Grep".into(), json!({"pattern": "fn main", "path": "src"})),
                    ("call_c".into(), "Glob".into(), json!({"pattern": "**/*.rs"})),
                ])
                .with_text("Looking at three things."),
                Turn::tool_call_raw("call_x", "Bash", "{\"command\": \"ls"),
            ],
        );
        let p = provider(&server, options(1));
        let (reply, events) = complete(&*p, &request(vec![Message::user("read it")])).await;
        let reply = reply.unwrap();
        let call =
            Part::ToolUse { id: "call_1".into(), name: "Read".into(), input: json!({"file_path": "src/main.rs"}) };
        assert_eq!((reply.parts, reply.stop), (vec![call], StopReason::ToolUse), "{protocol:?}");
        assert_eq!(events, ["tool:Read"]);

        let (reply, events) = complete(&*p, &request(vec![Message::user("look")])).await;
        let reply = reply.unwrap();
        assert_eq!(
            reply.parts,
            vec![
                Part::text("Looking at three things."),
                Part::ToolUse { id: "call_a".into(), name: "Read".into(), input: json!({"file_path": "a.txt"}) },
                Part::ToolUse {
                    id: "call_b".into(),
                    name: "Grep".into(),
                    input: json!({"pattern": "fn main", "path": "src"})
                },
                Part::ToolUse { id: "call_c".into(), name: "Glob".into(), input: json!({"pattern": "**/*.rs"}) },
            ],
            "{protocol:?}"
        );
        assert_eq!(reply.stop, StopReason::ToolUse);
        let tools: Vec<&String> = events.iter().filter(|e| e.starts_with("tool:")).collect();
        assert_eq!(tools, ["tool:Read", "tool:Grep", "tool:Glob"]);

        // Arguments that are not JSON: the call is kept with the raw text.
        let (reply, _) = complete(&*p, &request(vec![Message::user("run")])).await;
        let reply = reply.unwrap();
        let (_, name, input) =
            reply.into_message().tool_uses().map(|(i, n, v)| (i.to_string(), n.to_string(), v.clone())).next().unwrap();
        assert_eq!(name, "Bash");
        assert_eq!(providers::unparsed_arguments(&input), Some("{\"command\": \"ls"), "{protocol:?}");
    }
}

#[tokio::test]
async fn tool_results_go_back_in_the_protocol_s_shape() {
    for protocol in BOTH {
        let server = start(
            protocol,
            [
                Turn::tool_calls([
                    ("call_a".into(), "Read".into(), json!({"file_path": "a.png"})),
                    ("call_b".into(), "Read".into(), json!({"file_path": "missing"})),
                ]),
                Turn::text("Done."),
            ],
        );
        let p = provider(&server, options(1));
        let mut history = vec![Message::user("look at both")];
        let (reply, _) = complete(&*p, &request(history.clone())).await;
        history.push(reply.unwrap().into_message());
        history.push(Message {
            role: Role::User,
            parts: vec![
                Part::ToolResult {
                    id: "call_a".into(),
                    content: vec![
                        Content::text("a picture"),
                        Content::Image { data: "iVBORw0KGgo=".into(), mime_type: "image/png".into() },
                    ],
                    is_error: false,
                },
                Part::ToolResult {
                    id: "call_b".into(),
                    content: vec![Content::text("File does not exist.")],
                    is_error: true,
                },
            ],
        });
        let (reply, _) = complete(&*p, &request(history)).await;
        assert_eq!(reply.unwrap().parts, vec![Part::text("Done.")]);
        let second = &server.requests()[1];
        match protocol {
            Protocol::OpenAi => assert_eq!(
                second.messages()[2..],
                [
                    json!({"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a.png\"}"}},
                        {"id": "call_b", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"missing\"}"}},
                    ]}),
                    json!({"role": "tool", "tool_call_id": "call_a", "content":
                        "a picture\n[an image (image/png, 9 bytes) is not shown: this provider takes text results only]"}),
                    json!({"role": "tool", "tool_call_id": "call_b", "content": "Error: File does not exist."}),
                ]
            ),
            Protocol::Anthropic => assert_eq!(
                second.messages()[1..],
                [
                    json!({"role": "assistant", "content": [
                        {"type": "tool_use", "id": "call_a", "name": "Read", "input": {"file_path": "a.png"}},
                        {"type": "tool_use", "id": "call_b", "name": "Read", "input": {"file_path": "missing"}},
                    ]}),
                    json!({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "call_a", "is_error": false, "content": [
                            {"type": "text", "text": "a picture"},
                            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                        ]},
                        {"type": "tool_result", "tool_use_id": "call_b", "is_error": true, "content": [
                            {"type": "text", "text": "File does not exist."},
                        ]},
                    ]}),
                ]
            ),
        }
    }
}

#[tokio::test]
async fn a_rate_limit_s_retry_after_is_honoured() {
    for protocol in BOTH {
        let server = start(
            protocol,
            [Turn::http_error(429, "Rate limit reached for requests").retry_after("1"), Turn::text("ok")],
        );
        let p = provider(&server, options(3));
        let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
        assert_eq!(reply.unwrap().parts, vec![Part::text("ok")]);
        let sent = server.requests();
        assert_eq!(sent.len(), 2);
        let waited = sent[1].received - sent[0].received;
        // The backoff alone would have waited about 10 ms.
        assert!(waited >= Duration::from_millis(990), "{protocol:?} waited only {waited:?}");
    }
}

#[tokio::test]
async fn a_retry_after_may_name_a_time() {
    let at = std::time::SystemTime::now() + Duration::from_secs(2);
    let server =
        start(Protocol::Anthropic, [Turn::http_error(529, "Overloaded").retry_after(http_date(at)), Turn::text("ok")]);
    let p = provider(&server, options(2));
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    assert_eq!(reply.unwrap().parts, vec![Part::text("ok")]);
    let sent = server.requests();
    // HTTP dates count whole seconds: two seconds from now is at least one away.
    let waited = sent[1].received - sent[0].received;
    assert!(waited >= Duration::from_millis(900), "waited only {waited:?}");
}

#[tokio::test]
async fn a_server_that_ignores_streaming_is_told_apart() {
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"message": {"content": "hi"}}]});
    let server = start(Protocol::OpenAi, [Turn::http_error_body(200, body)]);
    let p = provider(&server, options(1));
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    let e = reply.unwrap_err();
    assert!(matches!(e, ProviderError::Stream { .. }), "{e:?}");
    assert!(e.to_string().contains("it answered JSON instead of an event stream"), "{e}");
}

#[tokio::test]
async fn a_retry_after_longer_than_the_cap_fails_at_once_saying_how_long() {
    let server = start(Protocol::OpenAi, [Turn::http_error(429, "Slow down").retry_after("120"), Turn::text("never")]);
    let p = provider(&server, options(3));
    let started = Instant::now();
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    let e = reply.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(e.retry_after(), Some(Duration::from_secs(120)));
    let text = e.to_string();
    assert!(text.starts_with("model provider `test` answered HTTP 429: Slow down;"), "{text}");
    assert!(text.contains("it asked to wait 120 s before trying again (retry-after), longer than the 5 s"), "{text}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_server_error_is_retried_and_errors_in_the_stream_too() {
    for protocol in BOTH {
        let server = start(
            protocol,
            [
                Turn::http_error(500, "The server had an error processing your request."),
                Turn::stream_error(
                    if protocol == Protocol::OpenAi { "server_error" } else { "api_error" },
                    "Internal error",
                ),
                Turn::text("recovered"),
            ],
        );
        let p = provider(&server, options(3));
        let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
        assert_eq!(reply.unwrap().parts, vec![Part::text("recovered")], "{protocol:?}");
        assert_eq!(server.requests().len(), 3);
    }
}

#[tokio::test]
async fn an_overloaded_event_is_retried_then_reported() {
    let server =
        start(Protocol::Anthropic, [Turn::stream_error("overloaded_error", "Overloaded"), Turn::text("fine now")]);
    let p = provider(&server, options(2));
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    assert_eq!(reply.unwrap().parts, vec![Part::text("fine now")]);

    let server = start(
        Protocol::Anthropic,
        [Turn::stream_error("overloaded_error", "Overloaded"), Turn::stream_error("overloaded_error", "Overloaded")],
    );
    let p = provider(&server, options(2));
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    let e = reply.unwrap_err();
    assert!(matches!(e, ProviderError::Status { status: 529, .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "model provider `test` answered HTTP 529: Overloaded; the API is overloaded; try again later (gave up after 2 tries)"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_refused_key_is_a_clear_error_that_is_not_retried() {
    for protocol in BOTH {
        let server =
            start(protocol, [Turn::http_error(401, "Incorrect API key provided: sk-test."), Turn::text("never")]);
        let p = provider(&server, options(3));
        let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
        let e = reply.unwrap_err();
        assert_eq!(
            e.to_string(),
            "model provider `test` answered HTTP 401: Incorrect API key provided: sk-test.; the API key was refused: check the key in $TEST_KEY"
        );
        assert_eq!(server.requests().len(), 1, "{protocol:?}");
    }
}

#[tokio::test]
async fn a_wrong_base_url_or_model_says_what_to_set() {
    let server = start(Protocol::OpenAi, []);
    let mut config = server.config("local", None);
    config.base_url = Some(server.base_url().trim_end_matches("/v1").to_string());
    let p = providers::build_with(&config, &env, &options(1)).unwrap();
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    let text = reply.unwrap_err().to_string();
    assert!(text.contains("HTTP 404: Unknown request URL: POST /chat/completions"), "{text}");
    assert!(
        text.contains(
            "set model = \"…\" in [agent.providers.local], and check base_url (from [agent.providers.local])"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn broken_streams_are_stream_errors() {
    for protocol in BOTH {
        let server = start(protocol, [Turn::malformed(), Turn::truncated("The answer is"), Turn::text("never")]);
        let p = provider(&server, options(3));
        let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
        let e = reply.unwrap_err();
        assert!(matches!(e, ProviderError::Stream { .. }), "{protocol:?}: {e:?}");
        assert!(e.to_string().contains("is not JSON"), "{e}");
        let (reply, events) = complete(&*p, &request(vec![Message::user("hi")])).await;
        let e = reply.unwrap_err();
        assert!(matches!(e, ProviderError::Stream { .. }), "{protocol:?}: {e:?}");
        let terminator = if protocol == Protocol::OpenAi { "`data: [DONE]`" } else { "`message_stop`" };
        assert!(e.to_string().contains(&format!("the stream ended before its {terminator}")), "{e}");
        assert!(!events.is_empty(), "the text before the cut streamed out");
        assert_eq!(server.requests().len(), 2, "neither is retried");
    }
}

#[tokio::test]
async fn stop_reasons_come_through() {
    for protocol in BOTH {
        let server = start(
            protocol,
            [Turn::text("cut sho").stop(StopReason::MaxTokens), Turn::text("no").stop(StopReason::Refusal)],
        );
        let p = provider(&server, options(1));
        let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
        assert_eq!(reply.unwrap().stop, StopReason::MaxTokens);
        let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
        assert_eq!(reply.unwrap().stop, StopReason::Refusal, "{protocol:?}");
    }
}

#[tokio::test]
async fn timeouts_before_the_reply_are_retried_and_mid_reply_are_not() {
    let quick = |attempts| ProviderOptions {
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            response: Duration::from_millis(500),
            idle: Duration::from_millis(500),
        },
        ..options(attempts)
    };
    let server = start(Protocol::OpenAi, [Turn::text("late").delay(Duration::from_secs(3)), Turn::text("on time")]);
    let p = provider(&server, quick(2));
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    assert_eq!(reply.unwrap().parts, vec![Part::text("on time")]);

    let server = start(
        Protocol::Anthropic,
        [Turn::text("a pause in the middle").stall(Duration::from_secs(3)), Turn::text("never")],
    );
    let p = provider(&server, quick(3));
    let (reply, events) = complete(&*p, &request(vec![Message::user("hi")])).await;
    let e = reply.unwrap_err();
    assert_eq!(e, ProviderError::Timeout { provider: "test".into(), after: Duration::from_millis(500) });
    assert!(!events.is_empty());
    assert_eq!(server.requests().len(), 1, "a reply that began is not sent again");
}

#[tokio::test]
async fn an_unreachable_server_and_a_missing_key_say_what_to_do() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = toolbelt_agent::ProviderConfig {
        name: "local".into(),
        kind: toolbelt_agent::ProviderKind::OpenAi,
        base_url: Some(format!("http://127.0.0.1:{port}/v1")),
        base_url_from: None,
        api_key_env: None,
        model: Some("llama3".into()),
    };
    let p = providers::build_with(&config, &env, &options(5)).unwrap();
    let (reply, _) = complete(&*p, &request(vec![Message::user("hi")])).await;
    let e = reply.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "model provider `local` could not connect to http://127.0.0.1:{port}/v1/chat/completions: connection \
             refused; is the server running? (base_url from [agent.providers.local])"
        )
    );

    let server = start(Protocol::Anthropic, []);
    let e = providers::build(&server.config("anthropic", Some("ANTHROPIC_API_KEY")), &|_| None).unwrap_err();
    assert!(matches!(e, ProviderError::Config { .. }));
    assert_eq!(
        e.to_string(),
        "model provider `anthropic` is not usable: its API key is read from $ANTHROPIC_API_KEY, which is not set in \
         toolbelt's environment: set ANTHROPIC_API_KEY where toolbelt is started (`export ANTHROPIC_API_KEY=…` in a \
         shell; for `toolbelt mcp`, the `env` of toolbelt's entry in the MCP host's configuration), or point \
         api_key_env in [agent.providers.anthropic] at the variable that holds the key"
    );
}

#[tokio::test]
async fn a_server_out_of_script_says_so() {
    let server = start(Protocol::OpenAi, [Turn::text("only one")]);
    let p = provider(&server, options(1));
    assert!(complete(&*p, &request(vec![Message::user("1")])).await.0.is_ok());
    let (reply, _) = complete(&*p, &request(vec![Message::user("2")])).await;
    let text = reply.unwrap_err().to_string();
    assert!(text.contains("HTTP 500: the scripted server has no turn left: it was given 1"), "{text}");
    server.push(Turn::text("another"));
    assert_eq!(server.turns_left(), 1);
    assert_eq!(complete(&*p, &request(vec![Message::user("3")])).await.0.unwrap().parts, vec![Part::text("another")]);
}

#[tokio::test]
async fn tools_are_left_out_when_there_are_none_and_refused_on_a_last_turn() {
    for protocol in BOTH {
        let server = start(protocol, [Turn::text("a"), Turn::text("b")]);
        let p = provider(&server, options(1));
        let mut bare = request(vec![Message::user("hi")]);
        bare.tools = Arc::from([]);
        complete(&*p, &bare).await.0.unwrap();
        let mut last = request(vec![Message::user("hi")]);
        last.tool_choice = ToolChoice::None;
        complete(&*p, &last).await.0.unwrap();
        let sent = server.requests();
        assert!(sent[0].body.get("tools").is_none() && sent[0].body.get("tool_choice").is_none(), "{}", sent[0].body);
        let none = if protocol == Protocol::OpenAi { json!("none") } else { json!({"type": "none"}) };
        assert_eq!(sent[1].body["tool_choice"], none);
        assert!(sent[1].body["tools"].is_array());
    }
}

#[test]
fn a_scripted_server_serves_a_blocking_client_too() {
    // The binary's tests wait on a spawned process synchronously: the server has its own thread.
    let server = ScriptedServer::openai([Turn::text("hello")]).unwrap();
    let env: Vec<(String, String)> = server.env();
    assert_eq!(env[0], ("OPENAI_BASE_URL".to_string(), server.base_url()));
    let mut stream =
        std::net::TcpStream::connect(server.base_url().trim_start_matches("http://").trim_end_matches("/v1")).unwrap();
    use std::io::{Read, Write};
    let body = json!({"model": "m", "messages": []}).to_string();
    write!(stream, "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("text/event-stream") && answer.contains("data: [DONE]"),
        "{answer}"
    );
    let recorded: Value = server.requests()[0].body.clone();
    assert_eq!(recorded["model"], "m");
}
