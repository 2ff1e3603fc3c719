//! ApplyPatch on a large file: a 100-hunk patch on a 10,000-line file, with exact context,
//! with context that only matches at the Unicode level, and with a last hunk that fails (so
//! the report of the nearest match is built), plus the fixed cost of a call that does
//! nothing. Each figure is the median of 5 runs through the registry, as the runtime calls
//! it. A plain program, run by hand: `cargo bench -p toolbelt-tools --bench apply_patch`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{call, session};
use serde_json::{Value, json};

fn patch(body: &str) -> Value {
    json!({ "input": format!("*** Begin Patch\n{body}*** End Patch\n") })
}

fn line(i: usize, quote: (&str, &str)) -> String {
    format!("    let value_{i} = compute({i}, {}row {i}{});", quote.0, quote.1)
}

/// 100 hunks, each replacing one line with 3 lines of context either side; `broken` spoils
/// a context line of the last hunk.
fn hunks(quote: (&str, &str), broken: bool) -> Value {
    let mut body = String::from("*** Update File: big.rs\n");
    for h in 0..100 {
        let at = h * 100 + 50;
        body.push_str("@@\n");
        for i in at - 3..at {
            body.push_str(&format!(" {}\n", line(i, quote)));
        }
        body.push_str(&format!("-{}\n", line(at, ("\"", "\""))));
        let changed = line(at, ("\"", "\"")).replace(&format!("({at},"), &format!("({at} * 2,"));
        body.push_str(&format!("+{changed}\n"));
        for i in at + 1..=at + 3 {
            let i = if broken && h == 99 && i == at + 2 { 1 } else { i };
            body.push_str(&format!(" {}\n", line(i, quote)));
        }
    }
    patch(&body)
}

async fn run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let text: String = (1..=10_000).map(|i| format!("    let value_{i} = compute({i}, \"row {i}\");\n")).collect();
    println!("{:>10} {:>10} {:>10}  case (100 hunks on a 10,000-line file)", "median", "min", "max");
    for (name, input, succeeds) in [
        ("exact context", hunks(("\"", "\""), false), true),
        ("Unicode-tolerant context", hunks(("\u{201C}", "\u{201D}"), false), true),
        ("last hunk failing", hunks(("\"", "\""), true), false),
    ] {
        let mut times = Vec::new();
        for _ in 0..5 {
            std::fs::write(root.join("big.rs"), &text).unwrap();
            // A fresh session each time: the previous run's write is in the ledger.
            let s = session(&root, &[]);
            let start = Instant::now();
            let result = call(&s, "ApplyPatch", input.clone()).await;
            times.push(start.elapsed());
            assert_eq!(result.is_ok(), succeeds, "{name}: {:?}", result.err());
        }
        times.sort();
        println!("{:>10.2?} {:>10.2?} {:>10.2?}  {name}", times[2], times[0], times[4]);
    }
    let s = session(&root, &[]);
    let start = Instant::now();
    for _ in 0..20 {
        let _ = call(&s, "ApplyPatch", json!({"input": "nope"})).await;
    }
    let fixed: Duration = start.elapsed() / 20;
    println!("{fixed:>10.2?} {:>10} {:>10}  an invalid patch (the fixed cost of a call)", "", "");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(run());
}
