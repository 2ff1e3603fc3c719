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
use toolbelt_core::{CancellationToken, EventSink};

use crate::call::{ToolCall, ToolResult};
use crate::runtime::Runtime;
use crate::session::Session;
use crate::stages::{self, Early, Planned};

// Slots live only while their group runs; boxing the planned call would cost an allocation
// per call on the hot path for no gain.
#[allow(clippy::large_enum_variant)]
enum Slot {
    Ready(Planned),
    Failed(Early),
}

pub(crate) async fn run(
    rt: &Runtime,
    session: &Session,
    calls: Vec<ToolCall>,
    events: &EventSink,
    cancel: &CancellationToken,
    mut on_result: impl FnMut(ToolResult),
) {
    let concurrency = rt.config.concurrency.max(1);
    let mut slots = calls.into_iter().map(|call| match stages::plan(rt, session, call) {
        Ok(p) => Slot::Ready(p),
        Err(e) => Slot::Failed(e),
    });
    let mut group: Vec<Slot> = Vec::new();
    let mut next = slots.next();
    while let Some(slot) = next.take() {
        let exclusive = matches!(&slot, Slot::Ready(p) if !p.is_shared());
        if exclusive {
            run_group(rt, session, std::mem::take(&mut group), events, cancel, concurrency, &mut on_result).await;
            run_group(rt, session, vec![slot], events, cancel, 1, &mut on_result).await;
        } else {
            group.push(slot);
        }
        next = slots.next();
    }
    run_group(rt, session, group, events, cancel, concurrency, &mut on_result).await;
}

async fn run_group(
    rt: &Runtime,
    session: &Session,
    group: Vec<Slot>,
    events: &EventSink,
    cancel: &CancellationToken,
    concurrency: usize,
    on_result: &mut impl FnMut(ToolResult),
) {
    if group.is_empty() {
        return;
    }
    let mut results = stream::iter(group.into_iter().map(|slot| async move {
        match slot {
            Slot::Ready(planned) => stages::run(rt, session, planned, events, cancel).await,
            Slot::Failed(early) => stages::finish_early(rt, session, early, events),
        }
    }))
    .buffered(concurrency);
    while let Some(result) = results.next().await {
        on_result(result);
    }
}
