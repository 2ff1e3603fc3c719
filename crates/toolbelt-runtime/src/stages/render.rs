//! Stage 8: turn the output or error into what the model gets, within the output budget.
//!
//! Text over the budget keeps its head and its tail (three fifths and two fifths of the
//! budget: errors and summaries come last), cut at character boundaries, and the whole text
//! is written to a spill file under the session's data directory; the notice says how much was
//! cut and where the rest is, so the model can read it back instead of losing it. Images pass
//! through (tools cap those themselves).
//!
//! The structured result is held to the same budget ([`fit`]): a client may show it to the
//! model instead of the text. When it is cut, it carries the notice under `truncation`,
//! naming the same spill file (or, when only the structured result was over, a spill of it),
//! and the context hooks added goes under `hook_context` as it goes after the text — each only
//! where the tool's output schema declares it ([`toolbelt_core::additions`]).

use std::path::PathBuf;

use serde_json::Value;
use toolbelt_core::additions::{self, HOOK_CONTEXT, TRUNCATION, Truncation};
use toolbelt_core::{Content, EventSink, ToolError, ToolEvent, ToolOutput, thousands};

use super::{CallCx, fit};
use crate::call::{Outcome, ToolResult};
use crate::session::Session;

/// The result the model gets for the call's `result`, with the `context` hooks added after it;
/// emits the finished event.
pub(super) async fn run(cx: &CallCx<'_>, result: Result<ToolOutput, ToolError>, context: Vec<String>) -> ToolResult {
    let tool = cx.entry.spec().name.clone();
    let (mut content, mut structured, is_error, outcome) = match result {
        Ok(out) => {
            let outcome = if out.is_error { Outcome::ToolError } else { Outcome::Ok };
            (out.content, out.structured, out.is_error, outcome)
        }
        Err(e) => {
            if let ToolError::Internal { message } = &e {
                tracing::error!(tool = %tool, call_id = %cx.id, %message, "internal fault in a tool call");
            }
            (vec![Content::text(e.to_string())], None, true, Outcome::from(&e))
        }
    };
    let budget = cx.pipeline.config.output_budget;
    let spilled = apply_budget(budget, cx.session, cx.id, &tool, &mut content).await;
    if let Some(value) = structured.as_mut() {
        let schema = cx.entry.spec().output_schema.as_ref();
        fit_structured(budget, cx.session, cx.id, &tool, value, spilled.as_ref(), schema).await;
        if !context.is_empty()
            && additions::may_add(schema, HOOK_CONTEXT)
            && let Value::Object(map) = value
        {
            map.insert(HOOK_CONTEXT.to_string(), Value::from(context.clone()));
        }
    }
    content.extend(context.into_iter().map(Content::text));
    let result = ToolResult {
        id: cx.id.to_string(),
        tool: Some(tool),
        content,
        structured,
        is_error,
        outcome,
        duration: cx.arrived.elapsed(),
    };
    emit_finished(&result, cx.events);
    result
}

/// Emits the `finished` event for a result.
pub(super) fn emit_finished(result: &ToolResult, events: &EventSink) {
    if events.is_listening() {
        events.emit(&ToolEvent::Finished {
            id: result.id.clone(),
            is_error: result.is_error,
            duration: result.duration,
        });
    }
}

/// The first `budget` characters of `text` and the text's length in characters, or `None`
/// when it fits.
pub fn truncate_text(text: &str, budget: usize) -> Option<(&str, usize)> {
    if text.len() <= budget {
        return None; // bytes ≥ chars, so it fits
    }
    let cut = text.char_indices().nth(budget).map(|(i, _)| i)?;
    Some((&text[..cut], text.chars().count()))
}

/// Where the whole output went, as a notice says it.
fn saved_where(spill: &std::io::Result<PathBuf>) -> String {
    match spill {
        Ok(path) => format!(
            "The full output was saved to {}; read it with Read (offset/limit) or search it with Grep.",
            path.display()
        ),
        Err(e) => format!("The full output could not be saved ({e}); narrow the call to see the rest."),
    }
}

/// Cuts the text to the budget; when it did, returns where the whole text was saved.
async fn apply_budget(
    budget: usize,
    session: &Session,
    id: &str,
    tool: &str,
    content: &mut Vec<Content>,
) -> Option<std::io::Result<PathBuf>> {
    // Bytes ≥ characters: when the bytes fit, so do the characters, and nothing is counted.
    let bytes: usize = content.iter().filter_map(Content::as_text).map(str::len).sum();
    if bytes <= budget {
        return None;
    }
    let total: usize = content.iter().filter_map(Content::as_text).map(|t| t.chars().count()).sum();
    if total <= budget {
        return None;
    }
    let full: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
    let full = full.join("\n");
    let spill = spill(session, id, tool, "txt", &full).await;
    let where_ = saved_where(&spill);
    // One text (the usual case): its head and its tail, where errors and summaries are.
    let texts = content.iter().filter(|c| c.as_text().is_some()).count();
    if texts == 1
        && let Some(Content::Text { text }) = content.iter_mut().find(|c| c.as_text().is_some())
    {
        if let Some((head, tail, total)) = fit::head_and_tail(text, budget) {
            text.push_str(&format!(
                "\n\n[Output truncated: showing the first {} and the last {} of {} characters. {where_}]",
                thousands(head),
                thousands(tail),
                thousands(total)
            ));
        }
        return Some(spill);
    }

    let mut left = budget;
    let mut kept = Vec::with_capacity(content.len() + 1);
    for block in content.drain(..) {
        match block {
            Content::Text { text } if left == 0 => drop(text),
            Content::Text { text } => match truncate_text(&text, left) {
                None => {
                    left -= text.chars().count();
                    kept.push(Content::Text { text });
                }
                Some((head, _)) => {
                    left = 0;
                    kept.push(Content::text(head));
                }
            },
            other => kept.push(other),
        }
    }
    let notice = format!(
        "\n\n[Output truncated: showing the first {} of {} characters ({} cut). {where_}]",
        thousands(budget),
        thousands(total),
        thousands(total - budget)
    );
    match kept.iter_mut().rev().find_map(|c| match c {
        Content::Text { text } => Some(text),
        Content::Image { .. } => None,
    }) {
        Some(text) => text.push_str(&notice),
        None => kept.push(Content::text(notice.trim_start())),
    }
    *content = kept;
    Some(spill)
}

/// Cuts the structured result to the budget ([`fit`]) and, when it did, says so under
/// `truncation`: what was cut and where the whole output is — the text's spill file when the
/// text was cut too (it holds the same output), else a spill of the structured result.
async fn fit_structured(
    budget: usize,
    session: &Session,
    id: &str,
    tool: &str,
    value: &mut Value,
    text_spill: Option<&std::io::Result<PathBuf>>,
    schema: Option<&Value>,
) {
    let allowed = budget + fit::slack(budget);
    if fit::bytes(value) <= allowed || fit::size(value) <= allowed {
        return;
    }
    let own_spill;
    let saved = match text_spill {
        Some(saved) => saved,
        None => {
            let whole = serde_json::to_string_pretty(value).unwrap_or_default();
            own_spill = spill(session, id, tool, "json", &whole).await;
            &own_spill
        }
    };
    // Cut to the budget as the text is, the notice coming on top as the text's does.
    let cuts = fit::shrink(value, budget);
    let notice = format!(
        "Output truncated to the output budget of {} characters: {}. {}",
        thousands(budget),
        cuts.join("; "),
        saved_where(saved)
    );
    let full_output = saved.as_ref().ok().map(|p| p.display().to_string());
    let truncation = Truncation { notice, full_output };
    match value {
        Value::Object(map) if additions::may_add(schema, TRUNCATION) => {
            if let Ok(truncation) = serde_json::to_value(&truncation) {
                map.insert(TRUNCATION.to_string(), truncation);
            }
        }
        // A schema with a `truncation` of its own: the notice goes at the end of the first
        // string cut, where a reader of the result finds it.
        _ => {
            append_to_a_cut_string(value, &truncation.notice);
        }
    }
}

/// Appends `notice` to the first string holding a cut marker, if any.
fn append_to_a_cut_string(value: &mut Value, notice: &str) -> bool {
    match value {
        Value::String(s) if s.contains(fit::CUT_MARKER_END) => {
            s.push_str(&format!("\n\n[{notice}]"));
            true
        }
        Value::Array(items) => items.iter_mut().any(|v| append_to_a_cut_string(v, notice)),
        Value::Object(map) => map.values_mut().any(|v| append_to_a_cut_string(v, notice)),
        _ => false,
    }
}

/// Writes the whole output to a new owner-only file (`0600`) in the session's owner-only
/// `spill/` directory (`0700`, as is the session's own); never through a planted symlink.
async fn spill(session: &Session, id: &str, tool: &str, extension: &str, text: &str) -> std::io::Result<PathBuf> {
    let dir = session.data_dir().join("spill");
    crate::session::private_dir(session.data_dir())?;
    crate::session::private_dir(&dir)?;
    let safe: String = id
        .chars()
        .chain(std::iter::once('-'))
        .chain(tool.chars())
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(100)
        .collect();
    // A name a run of the same session in another process already used gets the next number.
    let mut attempts = 0;
    let (path, mut file) = loop {
        let path = dir.join(format!("{:04}-{safe}.{extension}", session.next_seq()));
        match tokio::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path).await {
            Ok(file) => break (path, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 10_000 => attempts += 1,
            Err(e) => return Err(e),
        }
    };
    tokio::io::AsyncWriteExt::write_all(&mut file, text.as_bytes()).await?;
    // A tokio file writes in the background: wait until the bytes are really written.
    tokio::io::AsyncWriteExt::flush(&mut file).await?;
    Ok(std::path::absolute(&path).unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate_text("héllo", 10), None);
        assert_eq!(truncate_text("héllo wörld", 4), Some(("héll", 11)));
        assert_eq!(truncate_text("ééé", 3), None);
    }
}
