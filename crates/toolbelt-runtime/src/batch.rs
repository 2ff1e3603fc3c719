//! The batch scheduler: consecutive shared calls run together, exclusive calls alone.
//!
//! Calls are planned (resolve, validate, describe) in order as the scheduler reaches them.
//! A run of consecutive shared calls forms a group that runs concurrently, at most
//! `concurrency` at once; an exclusive call is a group of its own. Groups run one after another, so an exclusive call sees
//! every effect of the calls before it and none of the calls after. A call that fails
//! planning takes no slot: its error result stands in its place. Results are handed out in
//! call order, each as soon as it and all before it are done.

use futures_util::StreamExt as _;
use futures_util::stream;

use crate::call::{ToolCall, ToolResult};
use crate::stages::{self, Plan, Scope};

pub(crate) async fn run(scope: Scope<'_>, calls: Vec<ToolCall>, mut on_result: impl FnMut(ToolResult)) {
    let concurrency = scope.pipeline.config.concurrency.max(1);
    let mut plans = calls.into_iter().map(|call| stages::plan(scope.pipeline, scope.session, call));
    let mut group: Vec<Plan> = Vec::new();
    let mut next = plans.next();
    while let Some(plan) = next.take() {
        if plan.is_shared() {
            group.push(plan);
        } else {
            run_group(scope, std::mem::take(&mut group), concurrency, &mut on_result).await;
            run_group(scope, vec![plan], 1, &mut on_result).await;
        }
        next = plans.next();
    }
    run_group(scope, group, concurrency, &mut on_result).await;
}

async fn run_group(scope: Scope<'_>, group: Vec<Plan>, concurrency: usize, on_result: &mut impl FnMut(ToolResult)) {
    if group.is_empty() {
        return;
    }
    let mut results = stream::iter(group.into_iter().map(|plan| stages::run(scope, plan))).buffered(concurrency);
    while let Some(result) = results.next().await {
        on_result(result);
    }
}
