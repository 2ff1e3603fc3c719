//! A reply put together from stream fragments: text as it comes, tool calls by their index
//! (parallel calls interleave theirs), each reported to the sink as it starts.

use std::collections::HashMap;

use serde_json::Value;

use crate::message::{Part, StreamEvent};
use crate::provider::StreamSink;

/// A reply being received.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    pieces: Vec<Piece>,
    /// Tool calls by the protocol's index (OpenAI's `index`, Anthropic's block index).
    calls: HashMap<u64, usize>,
}

#[derive(Debug)]
enum Piece {
    Text(String),
    Call { id: String, name: String, arguments: String, announced: bool },
}

impl Assembler {
    /// Whether anything of the reply arrived yet.
    pub fn began(&self) -> bool {
        !self.pieces.is_empty()
    }

    /// Whether the reply holds a tool call.
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// More text.
    pub fn text(&mut self, text: &str, events: StreamSink<'_>) {
        if text.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Text(t)) => t.push_str(text),
            _ => self.pieces.push(Piece::Text(text.to_string())),
        }
        events(StreamEvent::Text(text));
    }

    /// A fragment of the tool call `index`: its id and name come once (later copies are
    /// ignored), its arguments in pieces. Reported to `events` once its name is known.
    pub fn call(
        &mut self,
        index: u64,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
        events: StreamSink<'_>,
    ) {
        let at = *self.calls.entry(index).or_insert_with(|| {
            self.pieces.push(Piece::Call {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
                announced: false,
            });
            self.pieces.len() - 1
        });
        let Some(Piece::Call { id: call_id, name: call_name, arguments: args, announced }) = self.pieces.get_mut(at)
        else {
            return;
        };
        if let Some(id) = id.filter(|id| !id.is_empty() && call_id.is_empty()) {
            *call_id = id.to_string();
        }
        if let Some(name) = name.filter(|n| !n.is_empty() && call_name.is_empty()) {
            *call_name = name.to_string();
        }
        if let Some(more) = arguments {
            args.push_str(more);
        }
        if !*announced && !call_name.is_empty() {
            *announced = true;
            events(StreamEvent::ToolUse { name: call_name });
        }
    }

    /// The index of the call with id `id`, for servers that send whole calls without an
    /// index; a new index when there is none.
    pub fn index_of(&self, id: Option<&str>) -> u64 {
        let found = id.and_then(|id| {
            self.calls.iter().find_map(|(index, at)| match &self.pieces[*at] {
                Piece::Call { id: call_id, .. } if call_id == id => Some(*index),
                _ => None,
            })
        });
        found.unwrap_or_else(|| self.calls.keys().max().map_or(0, |m| m + 1))
    }

    /// The parts, in the order they began. A call without arguments gets `{}`; one whose
    /// arguments are not JSON keeps their raw text as its input (a JSON string; see
    /// [`super::unparsed_arguments`]); one without an id gets `call_N`. A call that never
    /// got a name is an error.
    pub fn finish(self) -> Result<Vec<Part>, String> {
        let mut parts = Vec::with_capacity(self.pieces.len());
        for (n, piece) in self.pieces.into_iter().enumerate() {
            match piece {
                Piece::Text(text) => parts.push(Part::Text { text }),
                Piece::Call { id, name, arguments, .. } => {
                    if name.is_empty() {
                        return Err(format!("tool call {} came without a name", if id.is_empty() { "?" } else { &id }));
                    }
                    let input = if arguments.trim().is_empty() {
                        Value::Object(Default::default())
                    } else {
                        serde_json::from_str(&arguments).unwrap_or(Value::String(arguments))
                    };
                    let id = if id.is_empty() { format!("call_{n}") } else { id };
                    parts.push(Part::ToolUse { id, name, input });
                }
            }
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    #[test]
    fn interleaved_fragments_make_whole_calls_in_order() {
        let seen = Mutex::new(Vec::new());
        let sink = |e: StreamEvent<'_>| seen.lock().unwrap().push(format!("{e:?}"));
        let mut a = Assembler::default();
        a.text("Looking", &sink);
        a.text(" now", &sink);
        a.call(0, Some("call_a"), Some("Read"), Some("{\"file_"), &sink);
        a.call(1, Some("call_b"), Some("Grep"), Some(""), &sink);
        a.call(1, None, None, Some("{\"pattern\":\"x\"}"), &sink);
        a.call(0, None, None, Some("path\":\"a\"}"), &sink);
        a.call(2, Some("call_c"), Some("Bash"), Some("{not json"), &sink);
        a.call(3, None, Some("TodoRead"), None, &sink);
        let parts = a.finish().unwrap();
        assert_eq!(
            parts,
            vec![
                Part::text("Looking now"),
                Part::ToolUse { id: "call_a".into(), name: "Read".into(), input: json!({"file_path": "a"}) },
                Part::ToolUse { id: "call_b".into(), name: "Grep".into(), input: json!({"pattern": "x"}) },
                Part::ToolUse { id: "call_c".into(), name: "Bash".into(), input: json!("{not json") },
                Part::ToolUse { id: "call_4".into(), name: "TodoRead".into(), input: json!({}) },
            ]
        );
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert_eq!(seen[2], "ToolUse { name: \"Read\" }");
    }

    #[test]
    fn a_call_without_a_name_is_an_error_and_ids_find_their_index() {
        let sink = |_: StreamEvent<'_>| {};
        let mut a = Assembler::default();
        a.call(0, Some("x"), None, Some("{}"), &sink);
        assert_eq!(a.index_of(Some("x")), 0);
        assert_eq!(a.index_of(Some("y")), 1);
        assert_eq!(a.finish().unwrap_err(), "tool call x came without a name");
    }
}
