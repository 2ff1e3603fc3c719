//! NotebookEdit end to end: through the registry, after a real Read, on realistic notebooks.
//! Every edited file is checked with the official `nbformat` validator and against what
//! nbformat itself writes (so Jupyter would save it unchanged), and everything but the edited
//! cell must stay byte for byte.
//!
//! The validation runs `tests/nbformat_check.py` with `python3`. When python3 or the
//! `nbformat` package is missing the check is skipped with a notice, unless `CI=true`, where
//! it fails (install it with `pip install nbformat`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use toolbelt_core::SessionState;
use toolbelt_tools::files::{FileLedger, FileState};

/// An nbformat 4.5 notebook exactly as nbformat writes it: markdown, code cells with stream
/// (stdout and stderr), execute_result, error (ANSI traceback) and display_data (image)
/// outputs, cell metadata, an attachment, a raw cell, kernelspec and language_info.
const NB45: &str = r###"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Sales analysis\n",
    "\n",
    "Loads the data, plots **monthly** totals."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "load-data",
   "metadata": {
    "execution": {
     "iopub.status.busy": "2024-05-01T10:00:00.000Z"
    },
    "tags": [
     "setup"
    ]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "loaded 3\n"
     ]
    },
    {
     "name": "stderr",
     "output_type": "stream",
     "text": [
      "warn\n"
     ]
    }
   ],
   "source": [
    "import math\n",
    "print('loaded', 3)\n",
    "print('warn', file=__import__('sys').stderr)"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "id": "f3a9c2d1",
   "metadata": {},
   "outputs": [
    {
     "data": {
      "text/plain": [
       "6"
      ]
     },
     "execution_count": 2,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": [
    "total = sum([1, 2, 3])\n",
    "total"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "div",
   "metadata": {},
   "outputs": [
    {
     "ename": "ZeroDivisionError",
     "evalue": "division by zero",
     "output_type": "error",
     "traceback": [
      "\u001b[0;31m---------------------------------------------------------------------------\u001b[0m",
      "\u001b[0;31mZeroDivisionError\u001b[0m                         Traceback (most recent call last)",
      "Cell \u001b[0;32mIn[3], line 1\u001b[0m\n\u001b[0;32m----> 1\u001b[0m \u001b[38;5;241m1\u001b[39m \u001b[38;5;241m/\u001b[39m \u001b[38;5;241m0\u001b[39m\n",
      "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"
     ]
    }
   ],
   "source": [
    "1 / 0"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 4,
   "id": "plot",
   "metadata": {},
   "outputs": [
    {
     "data": {
      "image/png": "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP8z8DwnwEIGGEMAC3VAwHMb1WaAAAAAElFTkSuQmCC\n",
      "text/plain": [
       "<Figure size 640x480 with 1 Axes>"
      ]
     },
     "metadata": {
      "needs_background": "light"
     },
     "output_type": "display_data"
    }
   ],
   "source": [
    "import matplotlib.pyplot as plt\n",
    "plt.plot([1, 2])"
   ]
  },
  {
   "attachments": {
    "a.png": {
     "image/png": "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP8z8DwnwEIGGEMAC3VAwHMb1WaAAAAAElFTkSuQmCC\n"
    }
   },
   "cell_type": "markdown",
   "id": "notes",
   "metadata": {},
   "source": [
    "## Notes\n",
    "- café ☕ and \"quotes\"\n",
    "- tab\there"
   ]
  },
  {
   "cell_type": "raw",
   "id": "raw-1",
   "metadata": {},
   "source": [
    "raw text"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3 (ipykernel)",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "codemirror_mode": {
    "name": "ipython",
    "version": 3
   },
   "file_extension": ".py",
   "mimetype": "text/x-python",
   "name": "python",
   "nbconvert_exporter": "python",
   "pygments_lexer": "ipython3",
   "version": "3.11.7"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"###;

/// An nbformat 4.4 notebook (cells without ids), as nbformat writes it.
const NB44: &str = r###"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "Title"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [
    {
     "data": {
      "text/plain": [
       "1"
      ]
     },
     "execution_count": 1,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": [
    "x = 1\n",
    "x"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": []
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 4
}
"###;

struct Fx {
    _tmp: tempfile::TempDir,
    session: Arc<SessionState>,
    path: PathBuf,
}

fn fixture(name: &str, content: &str) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let path = root.join(name);
    std::fs::write(&path, content).unwrap();
    Fx { session: session(&root, &[]), _tmp: tmp, path }
}

impl Fx {
    async fn read(&self) -> String {
        ok(&self.session, "Read", json!({"file_path": self.path})).await
    }

    async fn edit(&self, mut input: Value) -> String {
        input["notebook_path"] = json!(self.path);
        ok(&self.session, "NotebookEdit", input).await
    }

    async fn fail(&self, mut input: Value) -> String {
        input["notebook_path"] = json!(self.path);
        err(&self.session, "NotebookEdit", input).await
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.path).unwrap()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.text()).unwrap()
    }

    fn ids(&self) -> Vec<String> {
        let doc = self.json();
        doc["cells"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()
    }
}

/// A notebook in nbformat's layout (indent 1) cut into the text before the cells, each
/// cell's text, and the text after them — found by layout alone, independently of the code
/// under test.
fn blocks(text: &str) -> (String, Vec<String>, String) {
    let (mut head, mut cells, mut tail) = (String::new(), Vec::new(), String::new());
    let mut current: Option<String> = None;
    for line in text.split_inclusive('\n') {
        match current.as_mut() {
            Some(cell) if line == "  }\n" || line == "  },\n" => {
                cell.push_str("  }");
                cells.push(current.take().unwrap());
            }
            Some(cell) => cell.push_str(line),
            None if line == "  {\n" => current = Some(line.to_string()),
            None if cells.is_empty() => head.push_str(line),
            None => tail.push_str(line),
        }
    }
    (head, cells, tail)
}

/// `after` is `before` with the cells at `removed` (indexes in `before`) taken out and those
/// at `added` (indexes in `after`) put in; every other byte is unchanged.
fn assert_only_changed(before: &str, after: &str, removed: &[usize], added: &[usize]) {
    let (h0, c0, t0) = blocks(before);
    let (h1, c1, t1) = blocks(after);
    assert_eq!(h0, h1, "the text before the cells changed");
    assert_eq!(t0, t1, "the text after the cells changed");
    let kept = |cells: &[String], skip: &[usize]| -> Vec<String> {
        cells.iter().enumerate().filter(|(i, _)| !skip.contains(i)).map(|(_, c)| c.clone()).collect()
    };
    assert_eq!(kept(&c0, removed), kept(&c1, added), "an untouched cell changed");
    assert_eq!(c1.len(), c0.len() - removed.len() + added.len());
}

/// Checks the file with the official nbformat validator; with `canonical`, also that it is
/// byte-identical to what nbformat writes for it.
fn nbformat(path: &Path, canonical: bool) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nbformat_check.py");
    let mut cmd = Command::new("python3");
    cmd.arg(&script);
    if canonical {
        cmd.arg("--canonical");
    }
    let out = match cmd.arg(path).output() {
        Ok(out) => out,
        Err(e) => return unavailable(&format!("python3 could not be run ({e})")),
    };
    match out.status.code() {
        Some(0) => {}
        Some(3) => unavailable("the Python package nbformat is not installed"),
        _ => panic!("nbformat rejects {}:\n{}", path.display(), String::from_utf8_lossy(&out.stderr)),
    }
}

fn unavailable(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}; CI validates notebooks with nbformat: install it with `pip install nbformat`");
    }
    eprintln!("SKIPPED nbformat validation: {why} (install it with `pip install nbformat`; with CI=true this fails)");
}

fn valid(path: &Path) {
    nbformat(path, false);
}

fn canonical(path: &Path) {
    nbformat(path, true);
}

fn is_generated_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test]
async fn fixtures_are_what_nbformat_writes() {
    for (name, text) in [("new.ipynb", NB45), ("old.ipynb", NB44)] {
        let fx = fixture(name, text);
        canonical(&fx.path);
    }
}

#[tokio::test]
async fn read_shows_cells_and_outputs() {
    let fx = fixture("sales.ipynb", NB45);
    let out = fx.read().await;
    assert!(
        out.starts_with(
            "Jupyter notebook (nbformat 4.5, kernel \"Python 3 (ipykernel)\" [python3], language python): 7 cells (2 \
         markdown, 4 code, 1 raw)."
        ),
        "{out}"
    );
    for part in [
        "<cell 1 id=\"load-data\" type=\"code\" execution_count=1>\nimport math\n",
        "<output type=\"stream\" name=\"stderr\">\nwarn\n</output>",
        "<output type=\"execute_result\" execution_count=2>\n6\n</output>",
        "<output type=\"error\">\nZeroDivisionError: division by zero\n---",
        "Cell In[3], line 1\n----> 1 1 / 0\n\nZeroDivisionError: division by zero\n</output>",
        "[image/png output, 2×1, 75 bytes]\n<Figure size 640x480 with 1 Axes>",
        "<cell 5 id=\"notes\" type=\"markdown\" attachments=\"a.png\">",
        "<cell 6 id=\"raw-1\" type=\"raw\">\nraw text\n</cell 6>",
    ] {
        assert!(out.contains(part), "missing {part:?} in:\n{out}");
    }
    assert!(!out.contains('\u{1b}'), "ANSI escapes must be stripped");
}

#[tokio::test]
async fn replace_clears_outputs_and_keeps_every_other_byte() {
    let fx = fixture("sales.ipynb", NB45);
    fx.read().await;
    let before = fx.json();
    let out = fx.edit(json!({"cell_id": "f3a9c2d1", "new_source": "total = sum(range(4))\ntotal\n"})).await;
    assert_eq!(
        out,
        "Replaced cell 2 (id=f3a9c2d1) of sales.ipynb; its output was cleared.\n\n\
         <cell 2 id=\"f3a9c2d1\" type=\"code\">\ntotal = sum(range(4))\ntotal\n</cell 2>"
    );
    let mut expected = before.clone();
    expected["cells"][2]["source"] = json!(["total = sum(range(4))\n", "total\n"]);
    expected["cells"][2]["outputs"] = json!([]);
    expected["cells"][2]["execution_count"] = Value::Null;
    assert_eq!(fx.json(), expected);
    assert_only_changed(NB45, &fx.text(), &[2], &[2]);
    canonical(&fx.path);

    // A markdown cell (non-ASCII, quotes, tabs) and a raw cell keep their type and keys.
    let step = fx.text();
    let out = fx.edit(json!({"cell_id": "notes", "new_source": "## Notes\n- naïve \"ok\"\t✓"})).await;
    assert!(out.starts_with("Replaced cell 5 (id=notes) of sales.ipynb.\n\n"), "{out}");
    assert_eq!(fx.json()["cells"][5]["source"], json!(["## Notes\n", "- naïve \"ok\"\t✓"]));
    assert_eq!(fx.json()["cells"][5]["attachments"], before["cells"][5]["attachments"]);
    assert_only_changed(&step, &fx.text(), &[5], &[5]);
    canonical(&fx.path);
    fx.edit(json!({"cell_id": 6, "new_source": "other raw"})).await;
    assert_eq!(
        fx.json()["cells"][6],
        json!({"cell_type": "raw", "id": "raw-1", "metadata": {}, "source": ["other raw"]})
    );
    canonical(&fx.path);
}

#[tokio::test]
async fn insert_at_the_start_in_the_middle_and_at_the_end() {
    let fx = fixture("nb.ipynb", NB45);
    fx.read().await;
    let out = fx.edit(json!({"edit_mode": "insert", "cell_type": "code", "new_source": "import os"})).await;
    let first = fx.ids()[0].clone();
    assert!(is_generated_id(&first), "{first}");
    assert_eq!(
        out,
        format!(
            "Inserted a code cell at index 0 (id={first}) of nb.ipynb, at the start; the notebook now has 8 cells.\n\n\
             <cell 0 id=\"{first}\" type=\"code\">\nimport os\n</cell 0>"
        )
    );
    assert_eq!(
        fx.json()["cells"][0],
        json!({"cell_type": "code", "execution_count": null, "id": first, "metadata": {}, "outputs": [], "source": ["import os"]})
    );
    assert_only_changed(NB45, &fx.text(), &[], &[0]);
    canonical(&fx.path);

    let step = fx.text();
    let source = "Dividing by zero fails:\n\n* on purpose\n";
    let out =
        fx.edit(json!({"edit_mode": "insert", "cell_id": "div", "cell_type": "markdown", "new_source": source})).await;
    let middle = fx.ids()[5].clone();
    assert!(
        out.starts_with(&format!(
            "Inserted a markdown cell at index 5 (id={middle}) of nb.ipynb, after cell 4 (id=div);"
        )),
        "{out}"
    );
    assert_eq!(
        fx.json()["cells"][5],
        json!({"cell_type": "markdown", "id": middle, "metadata": {}, "source": ["Dividing by zero fails:\n", "\n", "* on purpose\n"]})
    );
    assert_only_changed(&step, &fx.text(), &[], &[5]);
    canonical(&fx.path);

    let step = fx.text();
    let out = fx
        .edit(json!({"edit_mode": "insert", "cell_id": -1, "cell_type": "code", "new_source": "print('done')"}))
        .await;
    assert!(out.contains("at index 9"), "{out}");
    assert!(out.contains("after cell 8 (id=raw-1); the notebook now has 10 cells."), "{out}");
    assert_only_changed(&step, &fx.text(), &[], &[9]);
    canonical(&fx.path);

    let ids = fx.ids();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 10, "ids must be unique: {ids:?}");
    // Read sees the new cells; the edit kept the ledger current, so no re-read was needed.
    assert!(fx.read().await.contains(&format!("<cell 9 id=\"{}\" type=\"code\">\nprint('done')\n</cell 9>", ids[9])));
}

#[tokio::test]
async fn delete_the_first_a_middle_the_last_and_the_only_cell() {
    let fx = fixture("nb.ipynb", NB45);
    fx.read().await;
    let out = fx.edit(json!({"edit_mode": "delete", "cell_id": "intro"})).await;
    assert_eq!(
        out,
        "Deleted cell 0 (id=intro), a markdown cell, from nb.ipynb; the notebook now has 6 cells (the cells after it \
         moved up one index)."
    );
    assert_only_changed(NB45, &fx.text(), &[0], &[]);
    canonical(&fx.path);

    let step = fx.text();
    fx.edit(json!({"edit_mode": "delete", "cell_id": "div"})).await;
    assert_only_changed(&step, &fx.text(), &[2], &[]);
    canonical(&fx.path);

    let step = fx.text();
    let out = fx.edit(json!({"edit_mode": "delete", "cell_id": "-1"})).await;
    assert_eq!(out, "Deleted cell 4 (id=raw-1), a raw cell, from nb.ipynb; the notebook now has 4 cells.");
    assert_only_changed(&step, &fx.text(), &[4], &[]);
    canonical(&fx.path);
    assert_eq!(fx.ids(), ["load-data", "f3a9c2d1", "plot", "notes"]);

    for _ in 0..4 {
        fx.edit(json!({"edit_mode": "delete", "cell_id": 0})).await;
    }
    assert!(fx.text().starts_with("{\n \"cells\": [],\n \"metadata\": {\n"), "{}", fx.text());
    canonical(&fx.path);
    // And back from empty.
    fx.edit(json!({"edit_mode": "insert", "cell_type": "markdown", "new_source": "Fresh start"})).await;
    canonical(&fx.path);
}

#[tokio::test]
async fn type_changes_add_and_remove_what_the_schema_requires() {
    let fx = fixture("nb.ipynb", NB45);
    fx.read().await;
    let before = fx.json();
    let out =
        fx.edit(json!({"cell_id": "load-data", "cell_type": "markdown", "new_source": "Loading happens here."})).await;
    assert!(
        out.starts_with(
            "Replaced cell 1 (id=load-data) of nb.ipynb, changing it from code to markdown; its 2 outputs were removed."
        ),
        "{out}"
    );
    assert_eq!(
        fx.json()["cells"][1],
        json!({"cell_type": "markdown", "id": "load-data", "metadata": before["cells"][1]["metadata"], "source": ["Loading happens here."]})
    );
    assert_only_changed(NB45, &fx.text(), &[1], &[1]);
    canonical(&fx.path);

    let step = fx.text();
    let out = fx.edit(json!({"cell_id": "notes", "cell_type": "code", "new_source": "notes = []"})).await;
    assert!(out.starts_with("Replaced cell 5 (id=notes) of nb.ipynb, changing it from markdown to code.\n\n"), "{out}");
    // Code cells have no attachments in the schema; they gain outputs and an execution count.
    assert_eq!(
        fx.json()["cells"][5],
        json!({"cell_type": "code", "execution_count": null, "id": "notes", "metadata": {}, "outputs": [], "source": ["notes = []"]})
    );
    assert_only_changed(&step, &fx.text(), &[5], &[5]);
    canonical(&fx.path);
}

#[tokio::test]
async fn nbformat_4_4_notebooks_get_no_ids_and_take_indexes() {
    let fx = fixture("old.ipynb", NB44);
    let read = fx.read().await;
    assert!(read.contains("<cell 1 type=\"code\" execution_count=1>\nx = 1\nx\n"), "{read}");
    let out =
        fx.edit(json!({"edit_mode": "insert", "cell_id": "1", "cell_type": "markdown", "new_source": "Next"})).await;
    assert!(out.starts_with("Inserted a markdown cell at index 2 of old.ipynb, after cell 1;"), "{out}");
    assert_eq!(fx.json()["cells"][2], json!({"cell_type": "markdown", "metadata": {}, "source": ["Next"]}));
    assert_only_changed(NB44, &fx.text(), &[], &[2]);
    canonical(&fx.path);

    let out = fx.edit(json!({"cell_id": 1, "new_source": "x = 2"})).await;
    assert!(out.starts_with("Replaced cell 1 of old.ipynb; its output was cleared."), "{out}");
    canonical(&fx.path);
    let out = fx.edit(json!({"edit_mode": "delete", "cell_id": "cell-0"})).await;
    assert!(out.starts_with("Deleted cell 0, a markdown cell, from old.ipynb"), "{out}");
    canonical(&fx.path);
    let doc = fx.json();
    assert_eq!(doc["nbformat_minor"], 4);
    assert!(doc["cells"].as_array().unwrap().iter().all(|c| c.get("id").is_none()));

    let e = fx.fail(json!({"cell_id": "abc", "new_source": ""})).await;
    assert_eq!(
        e,
        "old.ipynb: no cell has id `abc`: this notebook's cells have no ids; use a 0-based index from 0 to 2"
    );
}

#[tokio::test]
async fn other_layouts_are_kept_indentation_line_endings_bom_and_string_sources() {
    // Two-space indentation, CRLF, a byte-order mark, sources as strings, no final newline.
    let mut doc: Value = serde_json::from_str(NB44).unwrap();
    for cell in doc["cells"].as_array_mut().unwrap() {
        let joined: String = cell["source"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        cell["source"] = json!(joined);
    }
    let text = format!("\u{feff}{}", serde_json::to_string_pretty(&doc).unwrap().replace('\n', "\r\n"));
    let fx = fixture("styled.ipynb", &text);
    fx.read().await;
    fx.edit(json!({"cell_id": 1, "new_source": "y = 3\ny\n"})).await;
    fx.edit(json!({"edit_mode": "insert", "cell_id": 0, "cell_type": "code", "new_source": "a\nb"})).await;
    fx.edit(json!({"edit_mode": "delete", "cell_id": 3})).await;
    let after = fx.text();
    assert!(after.starts_with("\u{feff}{\r\n  \"cells\": [\r\n    {\r\n"), "{after:?}");
    assert!(after.ends_with("\r\n}") && !after.replace("\r\n", "").contains('\n'), "{after:?}");
    assert!(after.contains("\r\n    {\r\n      \"cell_type\": \"code\",\r\n      \"execution_count\": null,\r\n      \"metadata\": {},\r\n      \"outputs\": [],\r\n      \"source\": \"a\\nb\"\r\n    }"), "{after:?}");
    let doc: Value = serde_json::from_str(after.trim_start_matches('\u{feff}')).unwrap();
    assert_eq!(doc["cells"][2]["source"], json!("y = 3\ny\n"));
    // Everything after the cells (metadata, nbformat) is untouched, byte for byte.
    let tail = |t: &str| t[t.find("\r\n  ],\r\n").unwrap()..].to_string();
    assert_eq!(tail(&after), tail(&text));
    valid(&fx.path);

    // A notebook on one line stays on one line.
    let compact = serde_json::to_string(&serde_json::from_str::<Value>(NB45).unwrap()).unwrap();
    let fx = fixture("compact.ipynb", &compact);
    fx.read().await;
    fx.edit(json!({"edit_mode": "insert", "cell_id": "plot", "cell_type": "markdown", "new_source": "x"})).await;
    fx.edit(json!({"cell_id": "intro", "new_source": "# Title"})).await;
    let after = fx.text();
    assert!(!after.contains('\n'));
    // The cells after the edits (from `notes` on) and the rest of the file are untouched.
    let notes = compact.find("{\"attachments\"").unwrap();
    assert_eq!(after[after.len() - (compact.len() - notes)..], compact[notes..]);
    valid(&fx.path);
}

#[tokio::test]
async fn errors_say_what_to_do_and_leave_the_file_alone() {
    let fx = fixture("nb.ipynb", NB45);
    let e = fx.fail(json!({"cell_id": "intro", "new_source": "x"})).await;
    assert!(e.contains("has not been read in this session; Read it first"), "{e}");
    fx.read().await;
    let e = fx.fail(json!({"cell_id": "nope", "new_source": "x"})).await;
    assert_eq!(
        e,
        "nb.ipynb: no cell has id `nope`; the cells are (index:id) 0:intro, 1:load-data, 2:f3a9c2d1, 3:div, 4:plot, \
         5:notes, 6:raw-1. Use one of these ids or a 0-based index from 0 to 6"
    );
    let e = fx.fail(json!({"cell_id": 7, "new_source": "x"})).await;
    assert_eq!(e, "nb.ipynb: cell index 7 is out of range: the notebook has 7 cells (indexes 0 to 6)");
    let e = fx.fail(json!({"edit_mode": "insert", "new_source": "x"})).await;
    assert_eq!(e, "edit_mode `insert` needs `cell_type`: `code` or `markdown`, the type of the new cell");
    let e = fx.fail(json!({"cell_id": "intro"})).await;
    assert!(e.starts_with("edit_mode `replace` needs `new_source`"), "{e}");
    let e = fx.fail(json!({"new_source": "x"})).await;
    assert!(e.starts_with("edit_mode `replace` needs `cell_id`"), "{e}");
    let e = fx.fail(json!({"edit_mode": "insert", "cell_id": 9, "cell_type": "code", "new_source": "x"})).await;
    assert!(e.contains("cell index 9 is out of range"), "{e}");
    let e = fx.fail(json!({"cell_id": "intro", "cell_type": "raw", "new_source": "x"})).await;
    assert!(e.contains("cell_type") && e.contains("\"code\", \"markdown\""), "{e}");
    assert_eq!(fx.text(), NB45, "a failed edit must not touch the file");

    // Changed on disk since the read.
    std::fs::write(&fx.path, NB45.replace("Sales analysis", "Revenue analysis")).unwrap();
    let e = fx.fail(json!({"cell_id": "intro", "new_source": "x"})).await;
    assert!(e.contains("has changed since you read it"), "{e}");

    // Not a notebook by name, or not there.
    let dir = fx.path.parent().unwrap();
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let e =
        err(&fx.session, "NotebookEdit", json!({"notebook_path": "notes.txt", "cell_id": 0, "new_source": ""})).await;
    assert_eq!(
        e,
        "notes.txt is not a Jupyter notebook (.ipynb); NotebookEdit changes .ipynb files only, use Edit for other files"
    );
    let e =
        err(&fx.session, "NotebookEdit", json!({"notebook_path": "gone.ipynb", "cell_id": 0, "new_source": ""})).await;
    assert!(e.contains("gone.ipynb does not exist"), "{e}");
}

#[tokio::test]
async fn invalid_json_and_json_that_is_not_a_notebook_are_refused() {
    let fx = fixture("broken.ipynb", "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n");
    let e = err(&fx.session, "Read", json!({"file_path": fx.path})).await;
    assert!(
        e.starts_with("broken.ipynb: the notebook is not valid JSON (EOF while parsing a value at line 5 column 0)"),
        "{e}"
    );
    // Recorded directly: whether a failed Read counts as seen is the Read tool's business.
    let bytes = std::fs::read(&fx.path).unwrap();
    FileLedger::record(&cx(&fx.session), &fx.path, FileState::of(&bytes, None));
    let e = fx.fail(json!({"cell_id": 0, "new_source": "x"})).await;
    assert!(
        e.starts_with("broken.ipynb: the notebook is not valid JSON (EOF while parsing a value at line 5 column 0)"),
        "{e}"
    );

    let fx = fixture("package.ipynb", "{\"name\": \"app\", \"version\": \"1.0.0\"}\n");
    let e = err(&fx.session, "Read", json!({"file_path": fx.path})).await;
    assert!(e.contains("has no `cells` array, so it is not a Jupyter notebook (its keys: name, version;"), "{e}");
}

#[tokio::test]
async fn answers_to_its_aliases_and_common_parameter_spellings() {
    let fx = fixture("nb.ipynb", NB45);
    fx.read().await;
    let path = fx.path.display().to_string();
    let out = ok(&fx.session, "notebook_edit", json!({"file_path": path, "cell_id": 0, "new_source": "# Sales"})).await;
    assert!(out.starts_with("Replaced cell 0 (id=intro)"), "{out}");
    let out = ok(&fx.session, "edit_notebook", json!({"path": path, "cell_id": "1", "edit_mode": "delete"})).await;
    assert!(out.starts_with("Deleted cell 1 (id=load-data)"), "{out}");
    canonical(&fx.path);
    // Optional parameters sent as null count as left out.
    let nulls = json!({"notebook_path": path, "cell_id": null, "cell_type": "markdown", "edit_mode": "insert", "new_source": "n"});
    assert!(ok(&fx.session, "NotebookEdit", nulls).await.starts_with("Inserted a markdown cell at index 0"));
    let nulls = json!({"notebook_path": path, "cell_id": 0, "cell_type": null, "edit_mode": null, "new_source": "m"});
    assert!(ok(&fx.session, "NotebookEdit", nulls).await.starts_with("Replaced cell 0"));
    fx.edit(json!({"edit_mode": "delete", "cell_id": 0})).await;
    let structured = call(
        &fx.session,
        "NotebookEdit",
        json!({"notebook_path": path, "edit_mode": "insert", "cell_type": "code", "new_source": ""}),
    )
    .await
    .unwrap()
    .structured
    .unwrap();
    assert_eq!(structured["edit_mode"], "insert");
    assert_eq!(structured["cell_index"], 0);
    assert_eq!(structured["cell_count"], 7);
    assert!(is_generated_id(structured["cell_id"].as_str().unwrap()));
}
