//! An agent loop with toolbelt embedded: the model's tool calls become toolbelt calls (policy,
//! hooks, sandbox and audit included) and the results go back in the API's tool-result shape.
//!
//! ```sh
//! ANTHROPIC_API_KEY=… cargo run --example agent_loop -- --api anthropic "What does README.md say about installing?"
//! OPENAI_API_KEY=… cargo run --example agent_loop -- --api openai --mode acceptEdits "Fix the typo in notes.md"
//! ```
//!
//! `--base-url` points it at another server speaking the same API (a proxy, a local model);
//! `--model` picks the model. It works in the current directory with that directory's
//! toolbelt settings; what the policy would ask about is refused with the rule that would
//! allow it, and the model reads that refusal like any other result.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::error::Error;

use serde_json::{Value, json};
use toolbelt::Toolbelt;
use toolbelt::core::ExportFormat;
use toolbelt::policy::PermissionMode;
use toolbelt::runtime::{Session, ToolCall, ToolResult};

/// The most model turns before the loop gives up.
const MAX_TURNS: usize = 25;

struct Args {
    api: String,
    base_url: String,
    model: String,
    mode: PermissionMode,
    prompt: String,
}

fn args() -> Result<Args, String> {
    let mut api = "anthropic".to_string();
    let (mut base_url, mut model, mut mode, mut prompt) = (None, None, PermissionMode::Default, None);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--api" => api = value()?,
            "--base-url" => base_url = Some(value()?),
            "--model" => model = Some(value()?),
            "--mode" => {
                let name = value()?;
                mode = PermissionMode::parse(&name).ok_or(format!("--mode {name}: not a permission mode"))?;
            }
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => prompt = Some(arg),
        }
    }
    let (default_url, default_model) = match api.as_str() {
        "anthropic" => ("https://api.anthropic.com", "claude-sonnet-4-5"),
        "openai" => ("https://api.openai.com", "gpt-4.1"),
        other => return Err(format!("--api {other}: use anthropic or openai")),
    };
    Ok(Args {
        base_url: base_url.unwrap_or_else(|| default_url.to_string()),
        model: model.unwrap_or_else(|| default_model.to_string()),
        mode,
        prompt: prompt.ok_or("give a prompt")?,
        api,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args = args().map_err(|e| {
        format!("{e}\nusage: agent_loop [--api anthropic|openai] [--base-url URL] [--model M] [--mode MODE] PROMPT")
    })?;
    // reqwest is built without a TLS provider of its own; ring is the process's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let toolbelt = Toolbelt::builder(std::env::current_dir()?).mode(args.mode).build().await?;
    for notice in toolbelt.notices() {
        eprintln!("note: {notice}");
    }
    let session = toolbelt.session(&format!("agent-{}", std::process::id()));
    let http = reqwest::Client::new();
    let answer = match args.api.as_str() {
        "anthropic" => anthropic(&http, &args, &toolbelt, &session).await?,
        _ => openai(&http, &args, &toolbelt, &session).await?,
    };
    println!("{answer}");
    toolbelt.shutdown().await;
    Ok(())
}

/// Sends one request, failing with the server's own words on an error status.
async fn post(
    http: &reqwest::Client,
    url: String,
    headers: &[(&str, String)],
    body: &Value,
) -> Result<Value, Box<dyn Error>> {
    let mut request = http.post(&url).json(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        return Err(format!("{url} answered {status}: {text}").into());
    }
    Ok(serde_json::from_str(&text)?)
}

fn show_calls(calls: &[ToolCall]) {
    for call in calls {
        eprintln!("→ {} {}", call.name, call.input);
    }
}

fn show_results(results: &[ToolResult]) {
    for r in results {
        let first = r.text().lines().next().unwrap_or_default().to_string();
        eprintln!("← {}{}", if r.is_error { "error: " } else { "" }, first);
    }
}

/// The Anthropic Messages API: `tool_use` blocks in, `tool_result` blocks back.
async fn anthropic(
    http: &reqwest::Client,
    args: &Args,
    toolbelt: &Toolbelt,
    session: &Session,
) -> Result<String, Box<dyn Error>> {
    let key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
    let headers = [("x-api-key", key), ("anthropic-version", "2023-06-01".to_string())];
    let tools = toolbelt.tool_schemas(ExportFormat::Anthropic);
    let mut messages = vec![json!({"role": "user", "content": args.prompt})];
    for _ in 0..MAX_TURNS {
        let body = json!({"model": args.model, "max_tokens": 4096, "tools": tools, "messages": messages});
        let reply = post(http, format!("{}/v1/messages", args.base_url), &headers, &body).await?;
        let blocks = reply["content"].as_array().cloned().unwrap_or_default();
        messages.push(json!({"role": "assistant", "content": blocks}));
        let uses: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").collect();
        if uses.is_empty() {
            let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            return Ok(text.join("\n"));
        }
        let mut results = Vec::new();
        let mut calls = Vec::new();
        for block in uses {
            match ToolCall::from_anthropic(block) {
                Ok(call) => calls.push(call),
                Err(e) => results.push(ToolResult::rejected(e.id.clone().unwrap_or_default(), e.message)),
            }
        }
        show_calls(&calls);
        results.extend(toolbelt.batch(session, calls).await);
        show_results(&results);
        let content: Vec<Value> = results.iter().map(ToolResult::to_anthropic).collect();
        messages.push(json!({"role": "user", "content": content}));
    }
    Err(format!("no answer after {MAX_TURNS} turns").into())
}

/// The OpenAI Chat Completions API: `tool_calls` in, `tool` messages back.
async fn openai(
    http: &reqwest::Client,
    args: &Args,
    toolbelt: &Toolbelt,
    session: &Session,
) -> Result<String, Box<dyn Error>> {
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_default();
    let headers = [("authorization", format!("Bearer {key}"))];
    let tools = toolbelt.tool_schemas(ExportFormat::OpenAi);
    let mut messages = vec![json!({"role": "user", "content": args.prompt})];
    for _ in 0..MAX_TURNS {
        let body = json!({"model": args.model, "tools": tools, "messages": messages});
        let reply = post(http, format!("{}/v1/chat/completions", args.base_url), &headers, &body).await?;
        let message = reply["choices"][0]["message"].clone();
        messages.push(message.clone());
        let Some(tool_calls) = message["tool_calls"].as_array().filter(|c| !c.is_empty()) else {
            return Ok(message["content"].as_str().unwrap_or_default().to_string());
        };
        let mut results = Vec::new();
        let mut calls = Vec::new();
        for tool_call in tool_calls {
            match ToolCall::from_openai(tool_call) {
                Ok(call) => calls.push(call),
                Err(e) => results.push(ToolResult::rejected(e.id.clone().unwrap_or_default(), e.message)),
            }
        }
        show_calls(&calls);
        results.extend(toolbelt.batch(session, calls).await);
        show_results(&results);
        messages.extend(results.iter().map(ToolResult::to_openai_chat));
    }
    Err(format!("no answer after {MAX_TURNS} turns").into())
}
