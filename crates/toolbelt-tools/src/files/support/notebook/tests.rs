#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::*;

/// A small notebook as nbformat writes it (indent 1, sorted keys, trailing newline).
const NB: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "id": "calc",
   "metadata": {
    "tags": [
     "x"
    ]
   },
   "outputs": [
    {
     "data": {
      "text/plain": [
       "3"
      ]
     },
     "execution_count": 2,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": [
    "1 + 2"
   ]
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
 "nbformat_minor": 5
}
"##;

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn renders_cells_with_index_id_type_and_outputs() {
    let out = render_for_read(NB).unwrap();
    assert_eq!(
        out,
        "Jupyter notebook (nbformat 4.5, kernel \"Python 3\" [python3]): 2 cells (1 markdown, 1 code). Cells are \
         shown with their 0-based index and id.\n\n\
         <cell 0 id=\"intro\" type=\"markdown\">\n# Title\ntext\n</cell 0>\n\n\
         <cell 1 id=\"calc\" type=\"code\" execution_count=2>\n1 + 2\n\
         <output type=\"execute_result\" execution_count=2>\n3\n</output>\n</cell 1>"
    );
}

#[test]
fn renders_streams_errors_images_and_other_data() {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP8z8DwnwEIGGEMAC3VAwHMb1WaAAAAAElFTkSuQmCC\n";
    let nb = json!({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [{
        "cell_type": "code", "execution_count": null, "metadata": {}, "source": "run()",
        "outputs": [
            {"output_type": "stream", "name": "stderr", "text": ["\u{1b}[31mwarn\u{1b}[0m\n", " 10%|#\r 50%|##\r100%|###\n"]},
            {"output_type": "error", "ename": "KeyError", "evalue": "'x'",
             "traceback": ["\u{1b}[0;31m----\u{1b}[0m", "\u{1b}]8;;file:///a.py\u{7}a.py\u{1b}]8;;\u{7} line 1", "\u{1b}[0;31mKeyError\u{1b}[0m: 'x'"]},
            {"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": ["<Figure>"]}},
            {"output_type": "display_data", "metadata": {}, "data": {"text/html": ["<b>hi</b>"], "application/vnd.custom+json": {}}},
            {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"application/json": {"a": 1}}}
        ]
    }]});
    let out = render_for_read(&nb.to_string()).unwrap();
    let cell = out.split_once("\n\n").unwrap().1;
    assert_eq!(
        cell,
        "<cell 0 type=\"code\">\nrun()\n\
         <output type=\"stream\" name=\"stderr\">\nwarn\n100%|###\n</output>\n\
         <output type=\"error\">\nKeyError: 'x'\n----\na.py line 1\nKeyError: 'x'\n</output>\n\
         <output type=\"display_data\">\n[image/png output, 2×1, 75 bytes]\n<Figure>\n</output>\n\
         <output type=\"display_data\">\n[text/html]\n<b>hi</b>\n[also: application/vnd.custom+json]\n</output>\n\
         <output type=\"execute_result\" execution_count=1>\n[application/json]\n{\n  \"a\": 1\n}\n</output>\n\
         </cell 0>"
    );
}

#[test]
fn long_outputs_keep_head_and_tail() {
    let text: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    let long_line = "y".repeat(5_000);
    let nb = json!({"cells": [{"cell_type": "code", "source": "", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": text},
        {"output_type": "stream", "name": "stdout", "text": long_line}
    ]}]});
    let out = render_for_read(&nb.to_string()).unwrap();
    assert!(out.contains("line 25\n[… 450 more lines of output cut …]\nline 476\n"), "{out}");
    assert!(out.contains("line 500\n</output>"));
    assert!(!out.contains("line 26\n"));
    assert!(out.contains(&format!("{}… [line cut: 4000 more characters]", "y".repeat(1_000))));
}

#[test]
fn refuses_invalid_json_and_json_that_is_not_a_notebook() {
    let e = render_for_read("{\n \"cells\": [\n  {,\n").unwrap_err();
    assert!(e.starts_with("the notebook is not valid JSON (key must be a string at line 3 column 4)"), "{e}");
    let e = render_for_read("[1, 2]").unwrap_err();
    assert!(e.starts_with("the JSON is an array, not a Jupyter notebook (a notebook is an object with `cells`"), "{e}");
    let e = render_for_read(r#"{"name": "x", "version": 1}"#).unwrap_err();
    assert!(
        e.starts_with(
            "the JSON object has no `cells` array, so it is not a Jupyter notebook (its keys: name, version;"
        ),
        "{e}"
    );
    assert!(render_for_read("  \n").unwrap_err().starts_with("the file is empty"));
    // A byte-order mark does not get in the way.
    assert!(render_for_read(&format!("\u{feff}{NB}")).is_ok());
}

#[test]
fn renders_nbformat_3_worksheets() {
    let nb = json!({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "source": ["Intro"]},
        {"cell_type": "code", "input": ["print(1)"], "prompt_number": 4, "language": "python",
         "outputs": [{"output_type": "pyout", "prompt_number": 4, "text": ["1"], "png": "AAAA"}]}
    ]}]});
    let out = render_for_read(&nb.to_string()).unwrap();
    assert!(out.contains("<cell 0 type=\"heading\" level=1>\nIntro\n</cell 0>"), "{out}");
    assert!(out.contains("<cell 1 type=\"code\" execution_count=4>\nprint(1)\n<output type=\"execute_result\" execution_count=4>\n[image/png output, 3 bytes]\n1\n</output>"), "{out}");
    assert!(Notebook::parse(&nb.to_string()).unwrap_err().contains("nbformat 3"));
}

#[test]
fn splits_lines_like_python_splitlines() {
    assert_eq!(split_lines("a\nb\n"), vec!["a\n", "b\n"]);
    assert_eq!(split_lines("a\r\nb\rc\u{2028}d"), vec!["a\r\n", "b\r", "c\u{2028}", "d"]);
    assert!(split_lines("").is_empty());
    assert_eq!(source_value("x\ny", false), json!(["x\n", "y"]));
    assert_eq!(source_value("x\ny", true), json!("x\ny"));
    assert_eq!(source_value("", false), json!([]));
}

#[test]
fn finds_cells_by_id_index_numeric_string_and_cell_n() {
    let nb = Notebook::parse(NB).unwrap();
    assert_eq!(nb.find(&CellRef::Id("calc".into())), Ok(1));
    assert_eq!(nb.find(&CellRef::Index(0)), Ok(0));
    assert_eq!(nb.find(&CellRef::Index(-1)), Ok(1));
    assert_eq!(nb.find(&CellRef::Id("1".into())), Ok(1));
    assert_eq!(nb.find(&CellRef::Id("cell-0".into())), Ok(0));
    assert_eq!(
        nb.find(&CellRef::Index(2)).unwrap_err(),
        "cell index 2 is out of range: the notebook has 2 cells (indexes 0 to 1)"
    );
    assert_eq!(
        nb.find(&CellRef::Id("nope".into())).unwrap_err(),
        "no cell has id `nope`; the cells are (index:id) 0:intro, 1:calc. Use one of these ids or a 0-based index \
         from 0 to 1"
    );
}

#[test]
fn replace_changes_only_the_cell_and_clears_outputs() {
    let mut nb = Notebook::parse(NB).unwrap();
    let change = nb.replace(1, "a = 1\nb = 2\n", None).unwrap();
    assert_eq!(change.cleared_outputs, 1);
    assert_eq!(change.id.as_deref(), Some("calc"));
    let mut expected = parsed(NB);
    expected["cells"][1]["source"] = json!(["a = 1\n", "b = 2\n"]);
    expected["cells"][1]["outputs"] = json!([]);
    expected["cells"][1]["execution_count"] = Value::Null;
    assert_eq!(parsed(nb.text()), expected);
    // Everything before the edited cell is byte-identical, and so is what follows it.
    let cell_start = NB.find("  {\n   \"cell_type\": \"code\"").unwrap();
    assert_eq!(&nb.text()[..cell_start], &NB[..cell_start]);
    assert!(nb.text().ends_with(&NB[NB.find("\n ],\n \"metadata\"").unwrap()..]));
    assert!(nb.text().contains(
        "  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"calc\",\n   \"metadata\": {\n    \
         \"tags\": [\n     \"x\"\n    ]\n   },\n   \"outputs\": [],\n   \"source\": [\n    \"a = 1\\n\",\n    \
         \"b = 2\\n\"\n   ]\n  }\n ],"
    ));
}

#[test]
fn type_changes_add_and_remove_code_only_keys() {
    let mut nb = Notebook::parse(NB).unwrap();
    let change = nb.replace(1, "Now prose", Some(CellType::Markdown)).unwrap();
    assert_eq!(change.previous_type.as_deref(), Some("code"));
    let cell = &nb.cells()[1];
    assert_eq!(
        cell,
        &json!({"cell_type": "markdown", "id": "calc", "metadata": {"tags": ["x"]}, "source": ["Now prose"]})
    );
    let keys: Vec<&String> = cell.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["cell_type", "id", "metadata", "source"]);

    let change = nb.replace(0, "print(1)", Some(CellType::Code)).unwrap();
    assert_eq!(change.previous_type.as_deref(), Some("markdown"));
    let keys: Vec<&String> = nb.cells()[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]);
}

#[test]
fn insert_places_cells_with_fresh_ids_and_sorted_keys() {
    let mut nb = Notebook::parse(NB).unwrap();
    let first = nb.insert(0, "import os", CellType::Code).unwrap();
    let last = nb.insert(3, "## End", CellType::Markdown).unwrap();
    let middle = nb.insert(2, "", CellType::Markdown).unwrap();
    // Each index is where the cell went at the time; the middle insert then moved the last one to 4.
    assert_eq!((first.index, middle.index, last.index), (0, 2, 3));
    assert_eq!(nb.cells()[4]["source"], json!(["## End"]));
    let ids: Vec<String> = (0..5).map(|i| nb.cell_id(i).unwrap()).collect();
    assert_eq!(&ids[1], "intro");
    for id in [&ids[0], &ids[2], &ids[4]] {
        assert!(is_valid_id(id) && id.len() == 8, "{id}");
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 5);
    assert_eq!(
        nb.cells()[0],
        json!({"cell_type": "code", "execution_count": null, "id": ids[0], "metadata": {}, "outputs": [], "source": ["import os"]})
    );
    let keys: Vec<&String> = nb.cells()[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]);
    assert_eq!(nb.cells()[2], json!({"cell_type": "markdown", "id": ids[2], "metadata": {}, "source": []}));
    assert!(nb.text().ends_with("}\n"));
}

#[test]
fn delete_handles_first_last_and_only_cells() {
    let mut nb = Notebook::parse(NB).unwrap();
    nb.delete(1).unwrap();
    assert_eq!(nb.cells().len(), 1);
    assert!(nb.text().contains("\"text\"\n   ]\n  }\n ],\n \"metadata\""), "{}", nb.text());
    nb.delete(0).unwrap();
    assert!(nb.text().starts_with("{\n \"cells\": [],\n \"metadata\""), "{}", nb.text());
    nb.insert(0, "back", CellType::Markdown).unwrap();
    assert!(nb.text().starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \""));
    let mut nb = Notebook::parse(NB).unwrap();
    nb.delete(0).unwrap();
    assert!(nb.text().starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"code\""), "{}", nb.text());
}

#[test]
fn keeps_string_sources_compact_files_and_old_notebooks_without_ids() {
    let compact = r#"{"cells":[{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[],"source":"a\nb"}],"metadata":{},"nbformat":4,"nbformat_minor":4}"#;
    let mut nb = Notebook::parse(compact).unwrap();
    let change = nb.replace(0, "c\nd", None).unwrap();
    assert_eq!(change.id, None);
    nb.insert(1, "e", CellType::Markdown).unwrap();
    assert_eq!(
        nb.text(),
        r#"{"cells":[{"cell_type":"code","execution_count":null,"metadata":{},"outputs":[],"source":"c\nd"},{"cell_type":"markdown","metadata":{},"source":"e"}],"metadata":{},"nbformat":4,"nbformat_minor":4}"#
    );
}

#[test]
fn unsorted_cells_keep_their_key_order() {
    let text = "{\n  \"nbformat\": 4,\n  \"nbformat_minor\": 5,\n  \"metadata\": {},\n  \"cells\": [\n    {\n      \
                \"source\": \"x\",\n      \"cell_type\": \"code\",\n      \"outputs\": [1],\n      \"metadata\": {},\n      \
                \"execution_count\": 1,\n      \"id\": \"a\"\n    }\n  ]\n}";
    let mut nb = Notebook::parse(text).unwrap();
    nb.replace(0, "y", Some(CellType::Markdown)).unwrap();
    assert_eq!(
        nb.text(),
        "{\n  \"nbformat\": 4,\n  \"nbformat_minor\": 5,\n  \"metadata\": {},\n  \"cells\": [\n    {\n      \
         \"source\": \"y\",\n      \"cell_type\": \"markdown\",\n      \"metadata\": {},\n      \"id\": \"a\"\n    }\n  ]\n}"
    );
}

#[test]
fn refuses_notebooks_it_cannot_edit_safely() {
    assert!(Notebook::parse(r#"{"cells": [1]}"#).unwrap_err().contains("cell 0 of the notebook is not a JSON object"));
    assert!(Notebook::parse(r#"{"cells": {}}"#).unwrap_err().contains("`cells` is an object, not an array"));
    assert!(Notebook::parse("{\"cells\": [}").unwrap_err().contains("line 1 column 12"));
}
