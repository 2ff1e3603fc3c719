//! A notebook as the model reads it: a summary line, then every cell with its index, id and
//! type, its source in full, and its outputs as text — stream text, `text/plain` results,
//! errors with their traceback (ANSI colours stripped), images as a one-line note. Long
//! outputs keep their head and tail; a cell's source is never cut, since edits need it.

use std::borrow::Cow;

use base64::Engine as _;
use serde_json::Value;
use toolbelt_core::json_kind;

/// Outputs with more lines than this are cut to their head and tail.
const MAX_OUTPUT_LINES: usize = 60;
/// Lines kept at each end of a cut output.
const EDGE_LINES: usize = 25;
/// Outputs longer than this (in bytes) are cut to their head and tail.
const MAX_OUTPUT_CHARS: usize = 8_000;
/// Characters of one output line shown before it is cut.
const MAX_LINE_CHARS: usize = 1_000;

/// Renders a notebook's text for reading. The error is a model-facing message: the JSON is
/// invalid (with the position), or it is JSON but not a notebook (with what is missing).
pub fn render_for_read(text: &str) -> Result<String, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc = parse_json(text)?;
    let cells = cells_of(&doc)?;
    let mut out = summary(&doc, &cells);
    for (i, cell) in cells.iter().enumerate() {
        out.push_str("\n\n");
        out.push_str(&render_cell(i, cell));
    }
    Ok(out)
}

/// Parses JSON, with a model-facing error.
pub(super) fn parse_json(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Err("the file is empty, so it is not a Jupyter notebook; write a notebook's JSON to it first".into());
    }
    serde_json::from_str(text).map_err(|e| {
        format!(
            "the notebook is not valid JSON ({e}); fix the JSON at that position (or restore the file from version \
             control) before reading or editing it as a notebook"
        )
    })
}

/// The cells of a notebook: `cells` (nbformat 4) or the cells of every worksheet
/// (nbformat 3). The error says why the JSON is not a notebook.
pub(super) fn cells_of(doc: &Value) -> Result<Vec<&Value>, String> {
    let shape = "a notebook is an object with `cells`, `metadata`, `nbformat` and `nbformat_minor`";
    let Value::Object(map) = doc else {
        return Err(format!("the JSON is {}, not a Jupyter notebook ({shape})", json_kind(doc)));
    };
    match (map.get("cells"), map.get("worksheets")) {
        (Some(Value::Array(cells)), _) => Ok(cells.iter().collect()),
        (Some(other), _) => {
            Err(format!("`cells` is {}, not an array, so this is not a valid notebook ({shape})", json_kind(other)))
        }
        (None, Some(Value::Array(sheets))) => {
            Ok(sheets.iter().filter_map(|w| w.get("cells")?.as_array()).flatten().collect())
        }
        _ => {
            let keys: Vec<&str> = map.keys().take(10).map(String::as_str).collect();
            let keys = if keys.is_empty() { "none".to_string() } else { keys.join(", ") };
            Err(format!(
                "the JSON object has no `cells` array, so it is not a Jupyter notebook (its keys: {keys}; {shape})"
            ))
        }
    }
}

/// `Jupyter notebook (nbformat 4.5, kernel "Python 3" [python3]): 3 cells (2 code, 1 markdown).`
fn summary(doc: &Value, cells: &[&Value]) -> String {
    let mut facts = Vec::new();
    if let Some(major) = doc.get("nbformat").and_then(Value::as_u64) {
        let minor = doc.get("nbformat_minor").and_then(Value::as_u64).map(|m| format!(".{m}")).unwrap_or_default();
        facts.push(format!("nbformat {major}{minor}"));
    }
    let meta = doc.get("metadata");
    let spec = meta.and_then(|m| m.get("kernelspec"));
    let display = spec.and_then(|s| s.get("display_name")).and_then(Value::as_str);
    let name = spec.and_then(|s| s.get("name")).and_then(Value::as_str);
    match (display, name) {
        (Some(d), Some(n)) => facts.push(format!("kernel \"{d}\" [{n}]")),
        (Some(k), None) | (None, Some(k)) => facts.push(format!("kernel \"{k}\"")),
        (None, None) => {}
    }
    let language = meta.and_then(|m| m.get("language_info")).and_then(|l| l.get("name")).and_then(Value::as_str);
    if let Some(language) = language {
        facts.push(format!("language {language}"));
    }
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for cell in cells {
        let t = cell_type(cell).to_string();
        match kinds.iter_mut().find(|(k, _)| *k == t) {
            Some((_, n)) => *n += 1,
            None => kinds.push((t, 1)),
        }
    }
    let count = match cells.len() {
        0 => "no cells".to_string(),
        n => {
            let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            format!("{n} cell{} ({})", if n == 1 { "" } else { "s" }, parts.join(", "))
        }
    };
    let facts = if facts.is_empty() { String::new() } else { format!(" ({})", facts.join(", ")) };
    format!("Jupyter notebook{facts}: {count}. Cells are shown with their 0-based index and id.")
}

fn cell_type(cell: &Value) -> &str {
    cell.get("cell_type").and_then(Value::as_str).unwrap_or("code")
}

/// One cell: `<cell 3 id="…" type="code" execution_count=5>`, its source, its outputs,
/// `</cell 3>`.
pub fn render_cell(index: usize, cell: &Value) -> String {
    let Some(map) = cell.as_object() else {
        return format!("<cell {index}: not a JSON object ({})>", json_kind(cell));
    };
    let ty = cell_type(cell);
    let mut out = format!("<cell {index}");
    if let Some(id) = map.get("id").and_then(Value::as_str) {
        out.push_str(&format!(" id=\"{id}\""));
    }
    out.push_str(&format!(" type=\"{ty}\""));
    if let Some(level) = map.get("level").and_then(Value::as_u64) {
        out.push_str(&format!(" level={level}"));
    }
    if let Some(n) = map.get("execution_count").or_else(|| map.get("prompt_number")).and_then(Value::as_i64) {
        out.push_str(&format!(" execution_count={n}"));
    }
    if let Some(attachments) = map.get("attachments").and_then(Value::as_object).filter(|a| !a.is_empty()) {
        let names: Vec<&str> = attachments.keys().map(String::as_str).collect();
        out.push_str(&format!(" attachments=\"{}\"", names.join(", ")));
    }
    out.push_str(">\n");
    let source = joined(map.get("source").or_else(|| map.get("input")));
    if !source.is_empty() {
        out.push_str(&source);
        if !source.ends_with('\n') {
            out.push('\n');
        }
    }
    for output in map.get("outputs").and_then(Value::as_array).into_iter().flatten() {
        out.push_str(&render_output(output));
    }
    out.push_str(&format!("</cell {index}>"));
    out
}

/// A multi-line string as nbformat stores it (a string, or a list of lines), joined.
fn joined(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn render_output(o: &Value) -> String {
    let ty = o.get("output_type").and_then(Value::as_str).unwrap_or("unknown");
    let (tag, body) = match ty {
        "stream" => {
            let name = o.get("name").or_else(|| o.get("stream")).and_then(Value::as_str).unwrap_or("stdout");
            (format!("<output type=\"stream\" name=\"{name}\">"), cut(&clean(&joined(o.get("text")))))
        }
        "execute_result" | "pyout" => {
            let count = o.get("execution_count").or_else(|| o.get("prompt_number")).and_then(Value::as_i64);
            let count = count.map(|n| format!(" execution_count={n}")).unwrap_or_default();
            (format!("<output type=\"execute_result\"{count}>"), bundle(o))
        }
        "display_data" | "update_display_data" => (format!("<output type=\"{ty}\">"), bundle(o)),
        "error" | "pyerr" => {
            let ename = o.get("ename").and_then(Value::as_str).unwrap_or("Error");
            let evalue = o.get("evalue").and_then(Value::as_str).unwrap_or("");
            let mut body = clean(&format!("{ename}: {evalue}"));
            let trace: Vec<&str> =
                o.get("traceback").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            if !trace.is_empty() {
                body.push('\n');
                body.push_str(&cut(&clean(&trace.join("\n"))));
            }
            ("<output type=\"error\">".to_string(), body)
        }
        other => (format!("<output type=\"{other}\">"), bundle(o)),
    };
    let body = body.trim_end_matches('\n');
    if body.is_empty() { format!("{tag}\n</output>\n") } else { format!("{tag}\n{body}\n</output>\n") }
}

/// A MIME bundle (`data`, or the output itself in nbformat 3) as text: image notes, then
/// `text/plain` (or the best text there is), then the other types by name.
fn bundle(o: &Value) -> String {
    let entries: Vec<(String, &Value)> = match o.get("data").and_then(Value::as_object) {
        Some(data) => data.iter().map(|(k, v)| (k.clone(), v)).collect(),
        None => {
            o.as_object().into_iter().flatten().filter_map(|(k, v)| v3_mime(k).map(|m| (m.to_string(), v))).collect()
        }
    };
    let mut parts = Vec::new();
    for (mime, v) in &entries {
        if mime.starts_with("image/") {
            parts.push(image_note(mime, v));
        }
    }
    let text_like = ["text/plain", "text/markdown", "text/latex", "application/json", "text/html"];
    let best = text_like.iter().find_map(|m| entries.iter().find(|(k, _)| k == m));
    if let Some((mime, v)) = best {
        let text = match v {
            Value::String(_) | Value::Array(_) if mime != "application/json" => joined(Some(v)),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        let text = cut(&clean(&text));
        parts.push(if mime == "text/plain" { text } else { format!("[{mime}]\n{text}") });
    }
    let shown = |k: &str| k.starts_with("image/") || best.is_some_and(|(b, _)| b == k);
    let others: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).filter(|k| !shown(k)).collect();
    if !others.is_empty() {
        parts.push(format!("[also: {}]", others.join(", ")));
    }
    parts.join("\n")
}

/// nbformat 3 stored output data under short names.
fn v3_mime(key: &str) -> Option<&'static str> {
    Some(match key {
        "text" => "text/plain",
        "html" => "text/html",
        "latex" => "text/latex",
        "markdown" => "text/markdown",
        "json" => "application/json",
        "png" => "image/png",
        "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// `[image/png output, 640×480, 12345 bytes]`.
fn image_note(mime: &str, v: &Value) -> String {
    let raw = joined(Some(v));
    if mime == "image/svg+xml" {
        return format!("[{mime} output, {} bytes]", raw.len());
    }
    let compact: String = raw.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    match base64::engine::general_purpose::STANDARD.decode(compact.as_bytes()) {
        Ok(bytes) => {
            let dims = imagesize::blob_size(&bytes).map(|d| format!(", {}×{}", d.width, d.height)).unwrap_or_default();
            format!("[{mime} output{dims}, {} bytes]", bytes.len())
        }
        Err(_) => format!("[{mime} output, {} bytes of base64]", compact.len()),
    }
}

/// Output text as a terminal would show it: ANSI escapes removed, and a line rewritten with
/// `\r` (progress bars) reduced to what was last written on it.
fn clean(text: &str) -> String {
    let text = strip_ansi(text);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push_str(line.rsplit('\r').find(|seg| !seg.is_empty()).unwrap_or(""));
    }
    out
}

/// Removes ANSI escape sequences (CSI colours and cursor moves, OSC titles and links).
pub(super) fn strip_ansi(text: &str) -> Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for n in chars.by_ref() {
                    if !('\u{20}'..='\u{3f}').contains(&n) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(n) = chars.next() {
                    if n == '\u{7}' {
                        break;
                    }
                    if n == '\u{1b}' {
                        chars.next_if_eq(&'\\');
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Long output cut to its head and tail, long lines cut, with notices saying how much.
fn cut(text: &str) -> String {
    let lines: Vec<Cow<'_, str>> = text.lines().map(cut_line).collect();
    let size: usize = lines.iter().map(|l| l.len() + 1).sum();
    if lines.len() <= MAX_OUTPUT_LINES && size <= MAX_OUTPUT_CHARS {
        return lines.join("\n");
    }
    let edge = |iter: &mut dyn Iterator<Item = &Cow<'_, str>>| {
        let (mut n, mut bytes) = (0, 0);
        for l in iter {
            if n == EDGE_LINES || (n > 0 && bytes + l.len() > MAX_OUTPUT_CHARS / 2) {
                break;
            }
            n += 1;
            bytes += l.len() + 1;
        }
        n
    };
    let head = edge(&mut lines.iter());
    let tail = edge(&mut lines[head..].iter().rev());
    let omitted = lines.len() - head - tail;
    if omitted == 0 {
        return lines.join("\n");
    }
    let mut out: Vec<Cow<'_, str>> = lines[..head].to_vec();
    out.push(Cow::Owned(format!("[… {omitted} more line{} of output cut …]", if omitted == 1 { "" } else { "s" })));
    out.extend_from_slice(&lines[lines.len() - tail..]);
    out.join("\n")
}

fn cut_line(line: &str) -> Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => Cow::Borrowed(line),
        Some((at, _)) => {
            let rest = line[at..].chars().count();
            Cow::Owned(format!("{}… [line cut: {rest} more characters]", &line[..at]))
        }
    }
}
