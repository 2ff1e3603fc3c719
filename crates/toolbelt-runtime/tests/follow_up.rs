//! Access a running call asks for after it started: judged by the same authorizer and
//! approver as the call, and recorded with it in the audit log.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::{
    Access, BoxFuture, CancellationToken, EventSink, Registry, TextOutput, Tool, ToolContext, ToolError, ToolSpec,
    Touch, erase,
};
use toolbelt_policy::{Approval, Approver, Authorizer, CallInfo, Decision, Verdict, VerdictSource};
use toolbelt_runtime::{AuditConfig, AuditLog, Runtime, Session, ToolCall};

/// Contacts its first URL (declared), then asks to contact the others while it runs.
struct Reach;

#[derive(Deserialize, JsonSchema)]
struct ReachInput {
    urls: Vec<String>,
}

impl Tool for Reach {
    type Input = ReachInput;
    type Output = TextOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Reach", "Contacts URLs, learning of all but the first while it runs.")
    }

    fn access(&self, input: &ReachInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().contacts(input.urls[0].clone()))
    }

    async fn call(&self, input: ReachInput, cx: ToolContext) -> Result<TextOutput, ToolError> {
        let mut reached = vec![input.urls[0].clone()];
        for url in &input.urls[1..] {
            cx.authorize(Access::shared().contacts(url.clone())).await?;
            reached.push(url.clone());
        }
        Ok(TextOutput::new(reached.join(" ")))
    }
}

/// Allows `a.example`, asks about `b.example`, denies the rest.
struct ByHost;

impl Authorizer for ByHost {
    fn authorize(&self, call: &CallInfo<'_>) -> Verdict {
        let url = call.access.touches.iter().find_map(|t| match t {
            Touch::Network(url) => Some(url.as_str()),
            _ => None,
        });
        let (decision, reason) = match url {
            Some(u) if u.contains("a.example") => (Decision::Allow, "a is fine"),
            Some(u) if u.contains("b.example") => (Decision::Ask, "b needs a person"),
            _ => (Decision::Deny, "nothing else"),
        };
        Verdict::new(decision, reason, VerdictSource::Mode(toolbelt_policy::PermissionMode::Default))
    }
}

/// Approves once, remembering what it was asked.
#[derive(Default)]
struct Person {
    asked: Mutex<Vec<String>>,
}

impl Approver for Person {
    fn approve<'a>(&'a self, call: &'a CallInfo<'a>, _verdict: &'a Verdict) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(call.wants());
            Approval::AllowOnce
        })
    }
}

#[tokio::test]
async fn follow_ups_are_judged_like_calls_and_recorded_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("audit.jsonl");
    let registry = Registry::new();
    registry.register(erase(Reach)).unwrap();
    let person = Arc::new(Person::default());
    let runtime = Runtime::builder(Arc::new(registry))
        .authorizer(Arc::new(ByHost))
        .approver(person.clone())
        .audit(AuditLog::new(AuditConfig::at(&log_path)))
        .build();
    let session = Session::new("s", dir.path().to_path_buf(), vec![dir.path().to_path_buf()], dir.path().join("data"));
    let (events, cancel) = (EventSink::none(), CancellationToken::new());
    let call = |urls: Value| ToolCall::new("c", "Reach", json!({ "urls": urls }));
    let run = |urls| runtime.call(&session, call(urls), &events, &cancel);

    // Allowed, then asked and approved: both reached.
    let r = run(json!(["https://a.example/1", "https://a.example/2", "https://b.example/3"])).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "https://a.example/1 https://a.example/2 https://b.example/3");
    assert_eq!(person.asked.lock().unwrap().len(), 1, "only the asking follow-up reached the person");
    assert!(person.asked.lock().unwrap()[0].contains("b.example"));

    // A denied follow-up ends the call as a denial, saying why.
    let r = run(json!(["https://a.example/1", "https://c.example/x"])).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, "denied");
    assert!(r.text().contains("nothing else"), "{}", r.text());

    let records: Vec<Value> =
        std::fs::read_to_string(&log_path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2);
    let decisions = |r: &Value| -> Vec<String> {
        r["follow_ups"].as_array().unwrap().iter().map(|v| v["decision"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(decisions(&records[0]), ["allow", "ask"]);
    assert_eq!(decisions(&records[1]), ["deny"]);
    assert_eq!(records[0]["decision"]["decision"], "allow", "the call's own verdict is kept apart");

    // A tool called directly, with no runtime behind its context, cannot extend itself.
    let cx = ToolContext::detached(dir.path().to_path_buf());
    let e = cx.authorize(Access::shared().contacts("https://a.example/")).await.unwrap_err();
    assert!(e.to_string().contains("contacting https://a.example/ was not declared"), "{e}");
}
