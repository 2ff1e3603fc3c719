//! One call through every stage, driven with test doubles.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolbelt_core::{BoxFuture, CancellationToken, EventSink, ToolEvent, ToolOutput};
use toolbelt_policy::{
    Approval, Approver, Authorizer, CallInfo, Decision, Finished, Hooks, PostToolOutcome, PostToolReport,
    PreToolOutcome, Verdict, VerdictSource,
};
use toolbelt_runtime::{Outcome, RuntimeConfig, ToolCall};

use common::*;

fn call(name: &str, input: Value) -> ToolCall {
    ToolCall::new("c1", name, input)
}

async fn run(h: &Harness, name: &str, input: Value) -> toolbelt_runtime::ToolResult {
    h.runtime.call(&h.session, call(name, input), &EventSink::none(), &CancellationToken::new()).await
}

#[tokio::test]
async fn a_call_runs_through_every_stage_and_reports_events() {
    let h = harness();
    let (sink, log) = EventSink::recording();
    let r = h
        .runtime
        .call(&h.session, call("Probe", json!({"text": "hi", "chatty": true})), &sink, &CancellationToken::new())
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.text(), "hi");
    assert_eq!(r.outcome, "ok");
    assert_eq!(r.tool.as_deref(), Some("Probe"));
    let events = log.lock().unwrap().clone();
    assert!(matches!(&events[0], ToolEvent::Started { id, tool } if id == "c1" && tool == "Probe"));
    assert!(
        matches!(&events[1], ToolEvent::Progress { message, fraction: Some(f), .. } if message == "halfway" && *f == 0.5)
    );
    assert!(matches!(&events[2], ToolEvent::Output { chunk, .. } if chunk == "chunk"));
    assert!(matches!(&events[3], ToolEvent::Finished { is_error: false, .. }));
    assert_eq!(events.len(), 4);
}

#[tokio::test]
async fn aliases_and_parameter_aliases_resolve() {
    let h = harness();
    let r = run(&h, "probe_alias", json!({"message": "via alias"})).await;
    assert_eq!(r.text(), "via alias");
    assert_eq!(r.tool.as_deref(), Some("Probe"));
    // Case-insensitive when unambiguous.
    assert_eq!(run(&h, "probe", json!({"text": "lower"})).await.text(), "lower");
}

#[tokio::test]
async fn unknown_tool_names_the_closest() {
    let h = harness();
    let (sink, log) = EventSink::recording();
    let r = h.runtime.call(&h.session, call("Prbe", json!({})), &sink, &CancellationToken::new()).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, "unknown_tool");
    assert_eq!(r.text(), "unknown tool `Prbe`; did you mean `Probe`?");
    // Even a call that never ran reports that it finished.
    assert!(matches!(log.lock().unwrap().as_slice(), [ToolEvent::Finished { is_error: true, .. }]));
}

#[tokio::test]
async fn a_plan_names_its_tool_before_it_runs() {
    let h = harness();
    let (sink, log) = EventSink::recording();
    let plan = h.runtime.plan(&h.session, call("probe_alias", json!({"text": "planned"})));
    assert_eq!(plan.spec().map(|s| s.name.as_str()), Some("Probe"));
    let r = h.runtime.run(&h.session, plan, &sink, &CancellationToken::new()).await;
    assert_eq!((r.outcome, r.text(), r.tool.as_deref()), (Outcome::Ok, "planned".to_string(), Some("Probe")));
    assert_eq!(log.lock().unwrap().len(), 2, "started and finished");
    // A call refused while planned names no tool to run, and still finishes when run.
    let plan = h.runtime.plan(&h.session, call("Prbe", json!({})));
    assert!(plan.spec().is_none());
    let r = h.runtime.run(&h.session, plan, &EventSink::none(), &CancellationToken::new()).await;
    assert_eq!(r.outcome, Outcome::UnknownTool);
}

#[tokio::test]
async fn invalid_input_lists_every_field() {
    let h = harness();
    let r = run(&h, "Probe", json!({"sleep_ms": "10", "exclusive": 1, "txet": "a"})).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, "invalid_input");
    assert_eq!(
        r.text(),
        "invalid input for `Probe` (3 problems); fix these fields and call again:\n  \
         /: unknown field `txet`; did you mean `text`?\n  \
         /exclusive: expected boolean, got integer\n  \
         /sleep_ms: expected integer, got string"
    );
    assert_eq!(h.observed.finished.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn tool_failures_and_panics_become_error_results() {
    let h = harness();
    let r = run(&h, "Probe", json!({"fail": "file not found: a.txt; check the path"})).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, "failed");
    assert_eq!(r.text(), "file not found: a.txt; check the path");

    let r = run(&h, "Probe", json!({"panic": true})).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, "internal");
    assert_eq!(r.text(), "internal error: the tool panicked: probe panicked on purpose");
}

#[tokio::test]
async fn timeout_ends_the_call_and_its_process() {
    let h = harness();
    // The spec's default timeout (300 ms) applies.
    let r = run(&h, "Spawner", json!({})).await;
    assert!(r.is_error);
    assert_eq!(r.outcome, "timed_out");
    assert!(r.text().starts_with("timed out after 300 ms"), "{}", r.text());
    let pid = h.pid.lock().unwrap().expect("the tool spawned a process");
    assert_process_gone(pid).await;

    // The input's timeout wins over the default…
    let r = run(&h, "Probe", json!({"sleep_ms": 10_000, "timeout_ms": 50})).await;
    assert_eq!(r.outcome, "timed_out");
    assert!(r.text().starts_with("timed out after 50 ms"));
}

#[tokio::test]
async fn the_runtime_cap_bounds_defaults_and_asks_and_a_tool_s_own_setting_is_honoured() {
    let config = RuntimeConfig {
        default_timeout: Duration::from_secs(60),
        max_timeout: Duration::from_millis(40),
        ..RuntimeConfig::default()
    };
    let h = harness_with(3, config, |b| b);
    // No limit of its own: the runtime's default, cut to the cap, which the advice names.
    let r = run(&h, "Probe", json!({"sleep_ms": 10_000})).await;
    assert_eq!(r.outcome, "timed_out");
    assert!(r.text().starts_with("timed out after 40 ms"), "{}", r.text());
    assert!(r.text().contains("the limit is `runtime.max_timeout` in the settings"), "{}", r.text());
    // What the input asks is capped the same way.
    let r = run(&h, "Probe", json!({"sleep_ms": 10_000, "timeout_ms": 60_000})).await;
    assert!(r.text().starts_with("timed out after 40 ms"), "{}", r.text());
    // A setting of the tool's own is the person's choice: honoured past the cap.
    let r = run(&h, "Probe", json!({"sleep_ms": 150, "set_limit_ms": 5_000})).await;
    assert_eq!(r.outcome, "ok", "{}", r.text());
}

#[tokio::test]
async fn cancellation_ends_the_call_and_its_process() {
    let h = harness();
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        let pid = h.pid.clone();
        tokio::spawn(async move {
            while pid.lock().unwrap().is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            cancel.cancel();
        })
    };
    let spawner = ToolCall::new("c1", "Spawner", json!({}));
    let r = h.runtime.call(&h.session, spawner, &EventSink::none(), &cancel).await;
    canceller.await.unwrap();
    assert!(r.is_error);
    assert_eq!(r.outcome, "cancelled");
    let pid = h.pid.lock().unwrap().unwrap();
    assert_process_gone(pid).await;
}

/// Waits (bounded) for the process to disappear; a zombie counts as gone only once reaped.
async fn assert_process_gone(pid: u32) {
    for _ in 0..200 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("process {pid} is still running after the call ended");
}

#[tokio::test]
async fn output_over_budget_is_cut_and_spilled_whole() {
    let config = RuntimeConfig { output_budget: 1_000, ..RuntimeConfig::default() };
    let h = harness_with(3, config, |b| b);
    let r = run(&h, "Probe", json!({"repeat": 5_000})).await;
    assert!(!r.is_error);
    let text = r.text();
    // Its head and its tail, three fifths and two fifths of the budget.
    let head = format!("{}\n[… 4,000 characters cut …]\n{}", "x".repeat(600), "x".repeat(400));
    assert!(text.starts_with(&head), "{text}");
    let notice = &text[head.len()..];
    assert!(
        notice.starts_with(
            "\n\n[Output truncated: showing the first 600 and the last 400 of 5,000 characters. The full output was saved to "
        ),
        "{notice}"
    );
    let path = notice.split("saved to ").nth(1).unwrap().split("; read it").next().unwrap();
    assert!(path.starts_with(data_dir(&h).to_str().unwrap()), "{path}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), "x".repeat(5_000));
    // Owner-only, in owner-only directories.
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(std::path::Path::new(path)), 0o600);
    assert_eq!(mode(&data_dir(&h).join("spill")), 0o700);
    assert_eq!(mode(&data_dir(&h)), 0o700);
    // The structured result is cut the same way and says where the same file is.
    let structured = r.structured.as_ref().unwrap();
    assert_eq!(structured["text"], head);
    assert_eq!(structured["truncation"]["full_output"], path);
    let notice = structured["truncation"]["notice"].as_str().unwrap();
    assert!(
        notice.starts_with(
            "Output truncated to the output budget of 1,000 characters: `text` keeps the first 600 and the last 400 of \
             5,000 characters. The full output was saved to "
        ),
        "{notice}"
    );
    assert!(notice.contains(path), "{notice}");

    // Within budget: untouched, nothing spilled.
    let r = run(&h, "Probe", json!({"repeat": 1_000})).await;
    assert_eq!(r.text(), "x".repeat(1_000));
    assert_eq!(r.structured, Some(json!({"text": "x".repeat(1_000)})));
    assert_eq!(std::fs::read_dir(data_dir(&h).join("spill")).unwrap().count(), 1);
}

// ---- policy and hooks, as test doubles ----

struct Fixed(Decision);
impl Authorizer for Fixed {
    fn authorize(&self, _: &CallInfo<'_>) -> Verdict {
        Verdict::new(self.0, "test rule", VerdictSource::Other("rule `Probe` in test.toml".into()))
    }
}

/// Hides `Probe` as a bare deny rule would.
struct Hiding;
impl Authorizer for Hiding {
    fn authorize(&self, _: &CallInfo<'_>) -> Verdict {
        Verdict::new(Decision::Allow, "allowed", VerdictSource::Other("test".into()))
    }
    fn hidden(&self, tool: &toolbelt_core::ToolSpec) -> Option<Verdict> {
        (tool.name == "Probe").then(|| {
            Verdict::new(
                Decision::Deny,
                "`Probe` is denied by the rule `Probe`",
                VerdictSource::Other("rule `Probe`".into()),
            )
        })
    }
}

#[tokio::test]
async fn a_tool_hidden_by_the_policy_is_denied_and_a_disabled_one_is_not_known() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let audit = toolbelt_runtime::AuditLog::new(toolbelt_runtime::AuditConfig::at(&path));
    let h = harness_with(3, RuntimeConfig::default(), |b| b.authorizer(Arc::new(Hiding)).audit(audit));
    h.runtime.registry().set_enabled("Probe", false);
    let r = run(&h, "probe_alias", json!({"text": "x"})).await;
    assert_eq!((r.outcome.as_str(), r.is_error, r.tool.as_deref()), ("denied", true, Some("Probe")));
    assert_eq!(r.text(), "permission denied: `Probe` is denied by the rule `Probe`");
    assert_eq!(h.observed.finished.load(Ordering::SeqCst), 0);
    // The policy explains it as the denial it is.
    let explained = h.runtime.explain(&h.session, call("Probe", json!({"text": "x"}))).unwrap();
    assert_eq!((explained.tool.as_str(), explained.verdict.decision), ("Probe", Decision::Deny));
    // Disabled by somebody else than the policy: still refused as disabled.
    let h2 = harness_with(3, RuntimeConfig::default(), |b| b.authorizer(Arc::new(Hiding)));
    h2.runtime.registry().set_enabled("Spawner", false);
    assert_eq!(run(&h2, "Spawner", json!({})).await.outcome, "disabled");

    let text = std::fs::read_to_string(&path).unwrap();
    let record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!((record["tool"].clone(), record["outcome"].clone()), (json!("Probe"), json!("denied")));
    assert_eq!(record["decision"]["decision"], "deny");
    assert_eq!(record["decision"]["source"], "rule `Probe`");
}

struct Answer(Approval, Arc<AtomicUsize>);
impl Approver for Answer {
    fn approve<'a>(&'a self, _: &'a CallInfo<'a>, _: &'a Verdict) -> BoxFuture<'a, Approval> {
        self.1.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(self.0.clone()))
    }
}

#[tokio::test]
async fn deny_and_ask_verdicts() {
    let h = harness_with(3, RuntimeConfig::default(), |b| b.authorizer(Arc::new(Fixed(Decision::Deny))));
    let r = run(&h, "Probe", json!({"text": "x"})).await;
    assert_eq!(r.outcome, "denied");
    assert_eq!(r.text(), "permission denied: test rule (rule `Probe` in test.toml)");
    assert_eq!(h.observed.finished.load(Ordering::SeqCst), 0);

    // Ask with nobody to approve: denied, and the message says what would allow it.
    let h = harness_with(3, RuntimeConfig::default(), |b| b.authorizer(Arc::new(Fixed(Decision::Ask))));
    let r = run(&h, "Probe", json!({})).await;
    assert_eq!(r.outcome, "denied");
    assert!(r.text().contains("needs approval") && r.text().contains("add an allow rule"), "{}", r.text());

    for (approval, allowed) in [
        (Approval::AllowOnce, true),
        (Approval::AllowSession, true),
        (Approval::Deny { reason: "not now".into() }, false),
    ] {
        let asked = Arc::new(AtomicUsize::new(0));
        let approver = Arc::new(Answer(approval, asked.clone()));
        let h = harness_with(3, RuntimeConfig::default(), |b| {
            b.authorizer(Arc::new(Fixed(Decision::Ask))).approver(approver)
        });
        let r = run(&h, "Probe", json!({"text": "ran"})).await;
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(!r.is_error, allowed, "{r:?}");
        if !allowed {
            assert_eq!(r.text(), "permission denied: not now");
        }
        // The metrics count the decision, the answer and the wait, and how the call ended.
        let mut metrics = String::new();
        h.runtime.metrics().write_prometheus(&mut metrics);
        let answer = if allowed { "ok" } else { "denied" };
        for line in [
            "toolbelt_decisions_total{decision=\"ask\",source=\"other\"} 1".to_string(),
            "toolbelt_approval_wait_seconds_count 1".to_string(),
            format!("toolbelt_calls_total{{tool=\"Probe\",outcome=\"{answer}\"}} 1"),
        ] {
            assert!(metrics.lines().any(|l| l == line), "{line} in:\n{metrics}");
        }
        let answered = metrics.lines().filter(|l| l.starts_with("toolbelt_approvals_total") && l.ends_with(" 1"));
        assert_eq!(answered.count(), 1, "{metrics}");
    }
}

/// An approver nobody answers.
struct Never;
impl Approver for Never {
    fn approve<'a>(&'a self, _: &'a CallInfo<'a>, _: &'a Verdict) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::pending())
    }
}

/// Runs a call that waits forever (for an approval, for its hooks), cancels it after 50 ms,
/// and checks it ended cancelled at once without the tool running.
async fn ends_cancelled_when_cancelled_while_waiting(h: &Harness) {
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        later.cancel();
    });
    let events = EventSink::none();
    let waiting = h.runtime.call(&h.session, call("Probe", json!({"text": "x"})), &events, &cancel);
    let r = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await.expect("it stopped waiting");
    assert_eq!(r.outcome, "cancelled", "{r:?}");
    assert_eq!(h.observed.finished.load(Ordering::SeqCst), 0, "the tool never ran");
}

#[tokio::test]
async fn a_call_cancelled_while_it_waits_for_an_approval_ends_cancelled() {
    let h = harness_with(3, RuntimeConfig::default(), |b| {
        b.authorizer(Arc::new(Fixed(Decision::Ask))).approver(Arc::new(Never))
    });
    ends_cancelled_when_cancelled_while_waiting(&h).await;
}

#[tokio::test]
async fn a_call_that_asks_for_approval_goes_to_the_approver() {
    // Allowed by the rules, but the call itself asks: nobody to approve means denied.
    let h = harness();
    let r = run(&h, "Probe", json!({"approval": "the sandbox is unavailable here"})).await;
    assert_eq!(r.outcome, "denied");
    assert!(r.text().contains("the sandbox is unavailable here"), "{}", r.text());
    let asked = Arc::new(AtomicUsize::new(0));
    let approver = Arc::new(Answer(Approval::AllowOnce, asked.clone()));
    let h = harness_with(3, RuntimeConfig::default(), |b| b.approver(approver));
    assert!(!run(&h, "Probe", json!({"approval": "x", "text": "ran"})).await.is_error);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_scheduled_job_s_run_is_never_approved_by_anyone() {
    // An approver that would allow everything (a terminal with someone at it): a job's run
    // has nobody watching it, so what asks is refused without asking.
    let asked = Arc::new(AtomicUsize::new(0));
    let approver = Arc::new(Answer(Approval::AllowAlways, asked.clone()));
    let h =
        harness_with(3, RuntimeConfig::default(), |b| b.authorizer(Arc::new(Fixed(Decision::Ask))).approver(approver));
    h.session.state().with_slot::<toolbelt_core::JobRun, _>(|r| r.run = Some("job_1a2b3c4d.1".into()));
    let r = run(&h, "Probe", json!({"text": "ran"})).await;
    assert_eq!(r.outcome, "denied", "{r:?}");
    assert!(r.text().contains("needs approval"), "{}", r.text());
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert_eq!(h.observed.finished.load(Ordering::SeqCst), 0);
}

struct TestHooks {
    pre: PreToolOutcome,
    post: PostToolOutcome,
    seen_post: Arc<std::sync::Mutex<Vec<String>>>,
}
impl Hooks for TestHooks {
    fn is_empty(&self) -> bool {
        false
    }
    fn pre_tool_use<'a>(&'a self, _: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome> {
        Box::pin(std::future::ready(self.pre.clone()))
    }
    fn post_tool_use<'a>(&'a self, done: &'a Finished<'a>) -> BoxFuture<'a, PostToolReport> {
        let seen = match done.result {
            Ok(out) => format!("ok:{}:{}", done.call.input["text"], out.joined_text()),
            Err(e) => format!("err:{}", e.kind()),
        };
        self.seen_post.lock().unwrap().push(seen);
        Box::pin(std::future::ready(PostToolReport { outcome: self.post.clone(), runs: Vec::new() }))
    }
}

/// PreToolUse hooks that never answer.
struct StuckHooks;
impl Hooks for StuckHooks {
    fn is_empty(&self) -> bool {
        false
    }
    fn pre_tool_use<'a>(&'a self, _: &'a CallInfo<'a>) -> BoxFuture<'a, PreToolOutcome> {
        Box::pin(std::future::pending())
    }
    fn post_tool_use<'a>(&'a self, _: &'a Finished<'a>) -> BoxFuture<'a, PostToolReport> {
        Box::pin(std::future::ready(PostToolReport { outcome: keep(), runs: Vec::new() }))
    }
}

#[tokio::test]
async fn a_call_cancelled_while_its_hooks_run_ends_cancelled() {
    let h = harness_with(3, RuntimeConfig::default(), |b| b.hooks(Arc::new(StuckHooks)));
    ends_cancelled_when_cancelled_while_waiting(&h).await;
}

fn with_hooks(pre: PreToolOutcome, post: PostToolOutcome) -> (Harness, Arc<std::sync::Mutex<Vec<String>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let hooks = Arc::new(TestHooks { pre, post, seen_post: seen.clone() });
    (harness_with(3, RuntimeConfig::default(), |b| b.hooks(hooks)), seen)
}

fn keep() -> PostToolOutcome {
    PostToolOutcome::Continue { additional_context: vec![] }
}

#[tokio::test]
async fn pre_hooks_rewrite_deny_and_add_context() {
    // A rewrite is validated and used.
    let pre = PreToolOutcome { updated_input: Some(json!({"text": "rewritten"})), ..Default::default() };
    let (h, seen) = with_hooks(pre, keep());
    let r = run(&h, "Probe", json!({"text": "original"})).await;
    assert_eq!(r.text(), "rewritten");
    assert_eq!(seen.lock().unwrap().as_slice(), ["ok:\"rewritten\":rewritten"]);

    // An invalid rewrite is an error naming the hook, not a crash.
    let pre = PreToolOutcome { updated_input: Some(json!({"text": 5})), ..Default::default() };
    let (h, _) = with_hooks(pre, keep());
    let r = run(&h, "Probe", json!({"text": "original"})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "a PreToolUse hook rewrote the input of `Probe` into an invalid one: /text: expected string, got integer; fix the hook"
    );

    // A hook's deny wins over the allow-all default.
    let pre = PreToolOutcome {
        verdict: Some(Verdict::new(
            Decision::Deny,
            "no probes on Fridays",
            VerdictSource::Other("hook probe-guard".into()),
        )),
        ..Default::default()
    };
    let (h, seen) = with_hooks(pre, keep());
    let r = run(&h, "Probe", json!({})).await;
    assert_eq!(r.text(), "permission denied: no probes on Fridays (hook probe-guard)");
    assert!(seen.lock().unwrap().is_empty(), "post hooks run only for calls that ran");

    // Context is added after the result.
    let pre = PreToolOutcome { additional_context: vec!["remember the style guide".into()], ..Default::default() };
    let post = PostToolOutcome::Continue { additional_context: vec!["run the linter next".into()] };
    let (h, _) = with_hooks(pre, post);
    let r = run(&h, "Probe", json!({"text": "out"})).await;
    assert_eq!(r.text(), "out\nremember the style guide\nrun the linter next");
    // And in the structured result, for a client that shows the model that instead.
    assert_eq!(
        r.structured,
        Some(json!({"text": "out", "hook_context": ["remember the style guide", "run the linter next"]}))
    );
}

#[tokio::test]
async fn post_hooks_block_replace_and_see_failures() {
    let (h, _) = with_hooks(PreToolOutcome::default(), PostToolOutcome::Block { reason: "contains a secret".into() });
    let r = run(&h, "Probe", json!({"text": "AKIA..."})).await;
    assert!(r.is_error);
    assert_eq!(r.text(), "a PostToolUse hook blocked this result: contains a secret");

    let (h, _) =
        with_hooks(PreToolOutcome::default(), PostToolOutcome::Replace { output: ToolOutput::text("[redacted]") });
    let r = run(&h, "Probe", json!({"text": "AKIA..."})).await;
    assert_eq!(r.text(), "[redacted]");
    // The replaced result's structured form is the hook's output alone: the secret does not
    // stay there, and it still matches the tool's output schema.
    assert_eq!(r.structured, Some(json!({"hook_output": "[redacted]"})));

    let (h, seen) = with_hooks(PreToolOutcome::default(), keep());
    let r = run(&h, "Probe", json!({"fail": "boom"})).await;
    assert!(r.is_error);
    assert_eq!(seen.lock().unwrap().as_slice(), ["err:failed"]);
}

#[tokio::test]
async fn every_call_is_audited_with_secrets_redacted() {
    let log_dir = tempfile::tempdir().unwrap();
    let path = log_dir.path().join("audit.jsonl");
    let pre = PreToolOutcome {
        runs: vec![toolbelt_policy::HookRun {
            event: toolbelt_policy::HookEvent::PreToolUse,
            handler: "command ./guard.sh".into(),
            outcome: toolbelt_policy::HookOutcome::NoDecision,
            duration: Duration::from_millis(3),
        }],
        ..Default::default()
    };
    let hooks = Arc::new(TestHooks { pre, post: keep(), seen_post: Arc::default() });
    let audit = toolbelt_runtime::AuditLog::new(toolbelt_runtime::AuditConfig::at(&path));
    let h = harness_with(3, RuntimeConfig::default(), |b| b.hooks(hooks).audit(audit));
    run(&h, "Probe", json!({"text": "hello", "api_token": "s3cret-value"})).await;
    run(&h, "Prbe", json!({"command": "curl -u admin:hunter2 x"})).await;
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("s3cret-value") && !text.contains("hunter2"), "{text}");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    assert_eq!(first["tool"], "Probe");
    assert_eq!(first["session"], "test");
    assert_eq!(first["input"], json!({"text": "hello", "api_token": "[redacted]"}));
    assert_eq!(first["decision"]["decision"], "allow");
    assert_eq!(first["decision"]["source"], "default policy (allow all)");
    assert_eq!(
        first["hooks"][0],
        json!({"event": "PreToolUse", "handler": "command ./guard.sh", "outcome": "no decision", "failed": false, "duration_ms": 3})
    );
    assert_eq!(
        (first["outcome"].clone(), first["is_error"].clone(), first["output_chars"].clone()),
        (json!("ok"), json!(false), json!(5))
    );
    assert_eq!(first["client"], json!({"kind": "embedded"}));
    assert_eq!((first["seq"].clone(), lines[1]["seq"].clone()), (json!(1), json!(2)));
    // A call refused before it ran is recorded too, with its input as it arrived (redacted)
    // and why it was refused.
    assert_eq!((lines[1]["tool"].clone(), lines[1]["outcome"].clone()), (json!("Prbe"), json!("unknown_tool")));
    assert_eq!(lines[1]["input"], json!({"command": "curl -u admin:[redacted] x"}));
    assert!(lines[1]["reason"].as_str().unwrap().starts_with("unknown tool `Prbe`"), "{}", lines[1]);
    assert_eq!(toolbelt_runtime::audit::verify(&path).unwrap().records, 2);
}

#[tokio::test]
async fn a_tool_removed_while_its_call_runs_finishes_that_call_and_no_new_one() {
    let h = harness();
    let registry = Arc::clone(h.runtime.registry());
    let changes = registry.subscribe();
    let running = run(&h, "Probe", json!({"sleep_ms": 300}));
    let remove = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(registry.unregister("Probe"));
    };
    let (r, ()) = tokio::join!(running, remove);
    assert!(!r.is_error, "the running call kept its tool: {}", r.text());
    assert!(changes.has_changed().unwrap(), "a registry change is announced");
    let r = run(&h, "Probe", json!({})).await;
    assert!(r.is_error && r.text().contains("Probe"), "{}", r.text());
}
