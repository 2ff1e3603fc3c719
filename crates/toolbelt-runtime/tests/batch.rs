//! The batch scheduler: concurrency of shared calls, exclusivity, order, isolation.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use toolbelt_core::{CancellationToken, EventSink, ToolEvent};
use toolbelt_runtime::{RuntimeConfig, ToolCall, ToolResult};

use common::*;

fn calls(inputs: &[(&str, Value)]) -> Vec<ToolCall> {
    inputs.iter().enumerate().map(|(i, (name, input))| ToolCall::new(format!("c{i}"), *name, input.clone())).collect()
}

async fn batch(h: &Harness, inputs: &[(&str, Value)]) -> Vec<ToolResult> {
    h.runtime.batch(&h.session, calls(inputs), &EventSink::none(), &CancellationToken::new()).await
}

#[tokio::test]
async fn shared_calls_really_run_together() {
    // Each call waits on a barrier of three: they can only all finish if they run at once.
    // The timeout turns a scheduler that serializes them into a failure instead of a hang.
    let h = harness();
    let waiter = json!({"barrier": true, "timeout_ms": 5_000, "text": "passed"});
    let results = batch(&h, &[("Probe", waiter.clone()), ("Probe", waiter.clone()), ("Probe", waiter)]).await;
    for r in &results {
        assert_eq!(r.text(), "passed", "{r:?}");
    }
    assert_eq!(h.observed.max_active.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_exclusive_call_splits_shared_groups_and_runs_alone() {
    let h = harness();
    let shared = json!({"sleep_ms": 20});
    let exclusive = json!({"sleep_ms": 20, "exclusive": true});
    let results = batch(
        &h,
        &[
            ("Probe", shared.clone()),
            ("Probe", shared.clone()),
            ("Probe", exclusive.clone()),
            ("Probe", shared.clone()),
            ("Probe", exclusive.clone()),
            ("Probe", exclusive),
            ("Probe", shared.clone()),
            ("Probe", shared),
        ],
    )
    .await;
    assert!(results.iter().all(|r| !r.is_error));
    assert_eq!(h.observed.overlaps_with_exclusive.load(Ordering::SeqCst), 0);
    assert_eq!(h.observed.max_active.load(Ordering::SeqCst), 2, "the shared pairs ran together");

    // A barrier of two across an exclusive call can never be met: the second waiter runs
    // only after the exclusive call, and the first can't finish without it.
    let h = harness_with(2, RuntimeConfig::default(), |b| b);
    let waiter = json!({"barrier": true, "timeout_ms": 300});
    let results =
        batch(&h, &[("Probe", waiter.clone()), ("Probe", json!({"exclusive": true})), ("Probe", waiter)]).await;
    assert_eq!(results[0].outcome, "timed_out");
}

#[tokio::test]
async fn concurrency_is_bounded() {
    let config = RuntimeConfig { concurrency: 2, ..RuntimeConfig::default() };
    let h = harness_with(3, config, |b| b);
    let inputs: Vec<(&str, Value)> = (0..6).map(|_| ("Probe", json!({"sleep_ms": 20}))).collect();
    let results = batch(&h, &inputs).await;
    assert!(results.iter().all(|r| !r.is_error));
    assert_eq!(h.observed.max_active.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn results_come_back_in_call_order() {
    let h = harness();
    let inputs: Vec<(&str, Value)> = [60, 0, 40, 10, 0, 30]
        .iter()
        .map(|ms| ("Probe", json!({"sleep_ms": ms, "text": format!("slept {ms}")})))
        .collect();
    let results = batch(&h, &inputs).await;
    let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4", "c5"]);
    assert_eq!(results[0].text(), "slept 60");
    assert_eq!(results[5].text(), "slept 30");
}

#[tokio::test]
async fn a_failing_call_never_harms_its_siblings() {
    let h = harness();
    let results = batch(
        &h,
        &[
            ("Probe", json!({"sleep_ms": 30, "text": "first"})),
            ("Probe", json!({"fail": "boom"})),
            ("Probe", json!({"panic": true})),
            ("Nope", json!({})),
            ("Probe", json!({"sleep_ms": "bad"})),
            ("Probe", json!({"sleep_ms": 10_000, "timeout_ms": 20})),
            ("Probe", json!({"sleep_ms": 30, "text": "last"})),
        ],
    )
    .await;
    let outcomes: Vec<&str> = results.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["ok", "failed", "internal", "unknown_tool", "invalid_input", "timed_out", "ok"]);
    assert_eq!(results[0].text(), "first");
    assert_eq!(results[6].text(), "last");
}

#[tokio::test]
async fn cancelling_a_batch_ends_every_running_call() {
    let h = harness();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let long = json!({"sleep_ms": 30_000});
    let results = h
        .runtime
        .batch(&h.session, calls(&[("Probe", long.clone()), ("Probe", long)]), &EventSink::none(), &cancel)
        .await;
    assert!(results.iter().all(|r| r.outcome == "cancelled"), "{results:?}");
}

#[tokio::test]
async fn streaming_results_and_events_arrive_in_order() {
    let h = harness();
    let (sink, log) = EventSink::recording();
    let mut seen = Vec::new();
    h.runtime
        .batch_streaming(
            &h.session,
            calls(&[("Probe", json!({"sleep_ms": 40})), ("Probe", json!({})), ("Probe", json!({"exclusive": true}))]),
            &sink,
            &CancellationToken::new(),
            |r| seen.push(r.id),
        )
        .await;
    assert_eq!(seen, ["c0", "c1", "c2"]);
    let events = log.lock().unwrap();
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::Finished { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    // Finished events arrive as calls end: the fast shared call before the slow one.
    assert_eq!(finished, ["c1", "c0", "c2"]);
}
