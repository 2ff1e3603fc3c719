//! The Read tool on real files.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use toolbelt_core::Content;

fn dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    (tmp, root)
}

#[tokio::test]
async fn numbered_lines_windows_and_notices() {
    let (_t, root) = dir();
    let text: String = (1..=2_500).map(|i| format!("line {i}\n")).collect();
    std::fs::write(root.join("big.txt"), &text).unwrap();
    let s = session(&root, &[]);
    let out = ok(&s, "Read", json!({"file_path": "big.txt"})).await;
    assert!(out.starts_with("     1\tline 1\n     2\tline 2\n"));
    assert!(
        out.contains("  2000\tline 2000\n\n(Showing lines 1-2000 of 2500. Continue with offset=2001 to read more.)")
    );
    let out = ok(&s, "Read", json!({"file_path": "big.txt", "offset": 2499, "limit": 10})).await;
    assert_eq!(out, "  2499\tline 2499\n  2500\tline 2500");
    let e = err(&s, "Read", json!({"file_path": "big.txt", "offset": 3000})).await;
    assert!(e.contains("has 2500 lines; offset 3000 is past the end"), "{e}");
    // Aliases of the tool and of the parameter.
    assert!(ok(&s, "read_file", json!({"path": "big.txt", "limit": 1})).await.starts_with("     1\tline 1"));

    std::fs::write(root.join("empty.txt"), "").unwrap();
    assert_eq!(ok(&s, "Read", json!({"file_path": "empty.txt"})).await, "(empty.txt exists but is empty.)");
    let long = "x".repeat(2_100);
    std::fs::write(root.join("long.txt"), format!("{long}\nshort\n")).unwrap();
    let out = ok(&s, "Read", json!({"file_path": "long.txt"})).await;
    assert!(out.contains(&format!("{}… [line cut: 100 more characters]\n     2\tshort", "x".repeat(2_000))));
}

#[tokio::test]
async fn encodings_are_shown_as_text() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("bom.txt"), b"\xEF\xBB\xBFhello\r\nworld\r\n").unwrap();
    assert!(
        ok(&s, "Read", json!({"file_path": "bom.txt"}))
            .await
            .starts_with("     1\thello\n     2\tworld\n\n(Decoded as UTF-8 with BOM")
    );
    let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain("héllo\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    std::fs::write(root.join("u16.txt"), utf16).unwrap();
    assert!(ok(&s, "Read", json!({"file_path": "u16.txt"})).await.starts_with("     1\théllo"));
    let latin1: Vec<u8> = "café crème brûlée, naïve façade\n".chars().map(|c| c as u8).collect();
    std::fs::write(root.join("l1.txt"), latin1).unwrap();
    let out = ok(&s, "Read", json!({"file_path": "l1.txt"})).await;
    assert!(out.starts_with("     1\tcafé crème brûlée, naïve façade"), "{out}");
    assert!(out.contains("windows-1252"));
}

#[tokio::test]
async fn binaries_directories_and_images() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("prog"), b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0more").unwrap();
    let e = err(&s, "Read", json!({"file_path": "prog"})).await;
    assert!(e.starts_with("prog is a binary file (ELF executable, 20 B)"), "{e}");
    std::fs::create_dir(root.join("sub")).unwrap();
    assert!(err(&s, "Read", json!({"file_path": "sub"})).await.contains("use ListDir"));
    assert!(err(&s, "Read", json!({"file_path": "nope"})).await.contains("does not exist"));

    // A 2x1 PNG.
    let png: &[u8] = &[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 2, 0, 0, 0, 1,
        8, 2, 0, 0, 0, 0x7B, 0x40, 0xE8, 0xDD, 0, 0, 0, 0x0C, 0x49, 0x44, 0x41, 0x54, 0x08, 0xD7, 0x63, 0xF8, 0xCF,
        0xC0, 0xF0, 0x1F, 0, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ];
    std::fs::write(root.join("dot.png"), png).unwrap();
    let out = call(&s, "Read", json!({"file_path": "dot.png"})).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap(), "Image dot.png (image/png, 2×1, 70 B)");
    match &out.content[1] {
        Content::Image { data, mime_type } => {
            assert_eq!(mime_type, "image/png");
            assert!(data.starts_with("iVBORw0KGgo"));
        }
        other => panic!("{other:?}"),
    }
    // The structured result describes the image; its bytes go as image content only.
    assert_eq!(
        out.structured.unwrap(),
        json!({"file_path": "dot.png", "type": "image", "bytes": 70,
            "image": {"mime_type": "image/png", "width": 2, "height": 1}})
    );
}

/// A file over the whole-file limit is streamed: the right window, the right line count,
/// and the ledger entry needed to edit it later.
#[tokio::test]
async fn large_files_are_read_in_slices() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let path = root.join("huge.log");
    {
        use std::io::Write as _;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for i in 1..=700_000 {
            writeln!(f, "entry {i:07} {}", "payload ".repeat(5)).unwrap();
        }
    }
    assert!(std::fs::metadata(&path).unwrap().len() > 32 * 1024 * 1024);
    let out = ok(&s, "Read", json!({"file_path": "huge.log", "offset": 500_000, "limit": 2})).await;
    assert!(out.starts_with("500000\tentry 0500000 payload"), "{out}");
    assert!(
        out.contains("(Showing lines 500000-500001 of 700000. Continue with offset=500002 to read more.)"),
        "{out}"
    );
    // The streamed hash matches the one-shot hash, so an edit after it is allowed.
    let bytes = std::fs::read(&path).unwrap();
    let state = toolbelt_tools::files::FileLedger::get(&cx(&s), &path).unwrap();
    assert_eq!(state.hash, toolbelt_tools::files::content_hash(&bytes));
    assert_eq!(state.size, bytes.len() as u64);
}

#[tokio::test]
async fn notebooks_are_shown_as_cells_with_outputs() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let nb = json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Some text"]},
            {"cell_type": "code", "id": "calc", "execution_count": 1, "metadata": {}, "source": "print(6 * 7)",
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}]}
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    std::fs::write(root.join("n.ipynb"), serde_json::to_string_pretty(&nb).unwrap()).unwrap();
    let out = ok(&s, "Read", json!({"file_path": "n.ipynb"})).await;
    for expected in ["# Title", "intro", "print(6 * 7)", "calc", "42"] {
        assert!(out.contains(expected), "{expected} missing in:\n{out}");
    }
    assert!(out.find("print(6 * 7)").unwrap() < out.rfind("42").unwrap());
    std::fs::write(root.join("bad.ipynb"), "{not json").unwrap();
    assert!(err(&s, "Read", json!({"file_path": "bad.ipynb"})).await.starts_with("bad.ipynb: "));
}

/// A PDF is read as its text, page by page; a long one needs `pages`, at most 20 a call.
#[tokio::test]
async fn pdfs_are_read_as_text_page_by_page() {
    let (_t, root) = dir();
    let pdf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/guide.pdf")).unwrap();
    std::fs::write(root.join("guide.pdf"), &pdf).unwrap();
    let short = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/three.pdf")).unwrap();
    std::fs::write(root.join("three.pdf"), &short).unwrap();
    let s = session(&root, &[]);
    // Up to 10 pages, a PDF is read whole.
    let text = ok(&s, "Read", json!({"file_path": "three.pdf"})).await;
    assert!(
        text.starts_with(
            "--- Page 1 ---
Page 1 heading"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "--- Page 3 ---
Page 3 heading"
        ) && !text.contains("(Pages"),
        "{text}"
    );
    // A longer one needs `pages`.
    let e = err(&s, "Read", json!({"file_path": "guide.pdf"})).await;
    assert!(e.contains("it has 12 pages") && e.contains("pages: \"1-20\""), "{e}");
    let out = call(&s, "Read", json!({"file_path": "guide.pdf", "pages": "2-3"})).await.unwrap();
    let text = out.joined_text();
    assert!(text.starts_with("--- Page 2 ---\nChapter 2"), "{text}");
    assert!(text.contains("--- Page 3 ---") && text.contains("Café crème on page 3."), "{text}");
    assert!(!text.contains("Chapter 4"), "{text}");
    assert!(text.ends_with("(Pages 2-3 of 12. Read others with pages, e.g. pages: \"4-12\".)"), "{text}");
    let structured = out.structured.unwrap();
    assert_eq!(structured["type"], "pdf");
    assert_eq!(structured["pdf"], json!({"total_pages": 12, "pages": [2, 3]}));
    let text = ok(&s, "Read", json!({"file_path": "guide.pdf", "pages": "12, 1"})).await;
    assert!(text.starts_with("--- Page 1 ---") && text.contains("--- Page 12 ---"), "pages come in order: {text}");
    for (pages, says) in [
        ("13", "has 12 pages; 13 is past the end"),
        ("1-21", "read at most 20 per call"),
        ("two", "is not a page selection"),
    ] {
        let e = err(&s, "Read", json!({"file_path": "guide.pdf", "pages": pages})).await;
        assert!(e.contains(says), "{pages}: {e}");
    }
    // `pages` is for PDFs; a broken PDF is an error, never a crash.
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    let e = err(&s, "Read", json!({"file_path": "notes.txt", "pages": "1"})).await;
    assert!(e.contains("is not a PDF"), "{e}");
    std::fs::write(root.join("broken.pdf"), b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer")
        .unwrap();
    let e = err(&s, "Read", json!({"file_path": "broken.pdf"})).await;
    assert!(e.contains("broken.pdf: it is not a readable PDF"), "{e}");
}
