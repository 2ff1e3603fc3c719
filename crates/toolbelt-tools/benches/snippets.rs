//! `snippet_list` full-text queries over 10,000 snippets (goal ≤ 5 ms a query).
//!
//! Fills a fresh database with `BENCH_SNIPPETS` (10,000) generated snippets through
//! `snippet_save` (one call, one transaction each; the fill rate is printed too), then times
//! `snippet_list` calls of several kinds — a rare word, a common word matching most snippets,
//! a prefix, a phrase, two words, a word with a tag and a language, an `OR`, an exclusion,
//! punctuation, and the plain list by name — each `BENCH_ROUNDS` (200) times, interleaved.
//! Every call goes the way the runtime sends it: through the registry (input validated), the
//! tool (database opened, query, rows read) and the rendered text. Prints p50 and p90 per kind
//! and over all. Run: `cargo bench -p toolbelt-tools --bench snippets`; `BENCH_DIR=/dev/shm`
//! puts the database on tmpfs.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_core::{
    CancellationToken, EventSink, Extensions, Limits, Registry, SessionState, ToolContext, ToolOutput,
};
use toolbelt_tools::snippets::SnippetStore;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// An index skewed toward 0 (roughly Zipf-like): common words are common.
    fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        self.below(a + 1)
    }
}

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mir", "sen", "ta", "vex", "dor", "pli", "qua", "ren", "sho", "tum", "ul", "ber", "cas", "fin", "gor",
    "hal", "jin", "nox", "par", "ris", "zel", "wyn",
];

const KEYWORDS: [&str; 16] = [
    "fn", "let", "return", "if", "else", "for", "while", "match", "async", "await", "self", "mut", "struct", "impl",
    "pub", "use",
];

const LANGUAGES: [&str; 6] = ["rust", "python", "sql", "bash", "go", "typescript"];

/// A vocabulary of made-up identifiers, the first ones used far more often than the rest.
fn vocabulary(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let parts = 2 + rng.below(3);
            let word: String = (0..parts).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
            format!("{word}{i}")
        })
        .collect()
}

/// One snippet's input: 10–60 lines of code-like text, a sentence, a language, 1–4 tags.
fn snippet(rng: &mut Rng, words: &[String], i: usize) -> Value {
    let pick = |rng: &mut Rng| words[rng.skewed(words.len())].clone();
    let lines = 10 + rng.below(50);
    let mut code = String::new();
    for _ in 0..lines {
        let kw = KEYWORDS[rng.below(KEYWORDS.len())];
        let (a, b, c) = (pick(rng), pick(rng), pick(rng));
        code.push_str(&format!("    {kw} {a} = {b}({c}, \"{}\");\n", pick(rng)));
    }
    let description = format!("{} the {} with {} and {}", pick(rng), pick(rng), pick(rng), pick(rng));
    let tags: Vec<String> = (0..1 + rng.below(4)).map(|_| format!("t{}", rng.skewed(40))).collect();
    json!({"name": format!("{}-{i}", pick(rng)), "code": code, "description": description,
           "language": LANGUAGES[rng.below(LANGUAGES.len())], "tags": tags})
}

fn cx(session: &Arc<SessionState>, store: &SnippetStore) -> ToolContext {
    let mut services = Extensions::default();
    services.insert(store.clone());
    ToolContext::new(
        "bench",
        Arc::clone(session),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        services,
    )
}

/// A call as the runtime makes it, minus policy: validated, run, rendered.
async fn call(registry: &Registry, cx: ToolContext, tool: &str, input: Value) -> ToolOutput {
    let entry = registry.lookup(tool).unwrap();
    let prepared = entry.prepare(input).unwrap();
    let out = entry.tool().call(prepared, cx).await.unwrap();
    assert!(!out.joined_text().is_empty());
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

async fn run() {
    let count = env_usize("BENCH_SNIPPETS", 10_000);
    let rounds = env_usize("BENCH_ROUNDS", 200);
    let tmp = match std::env::var_os("BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let root = tmp.path().canonicalize().unwrap();
    let session = Arc::new(SessionState::new("bench", root.clone(), vec![]));
    let store = SnippetStore::user(&root.join("data"));
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();

    let mut rng = Rng(0x5EED_2024_0BAD_F00D);
    let words = vocabulary(&mut rng, 5_000);
    let started = Instant::now();
    let mut bytes = 0;
    for i in 0..count {
        let input = snippet(&mut rng, &words, i);
        bytes += input["code"].as_str().unwrap().len();
        call(&registry, cx(&session, &store), "snippet_save", input).await;
    }
    let fill = started.elapsed();
    let db = std::fs::metadata(&store.path).map(|m| m.len()).unwrap_or(0);
    let wal = std::fs::metadata(store.path.with_extension("db-wal")).map(|m| m.len()).unwrap_or(0);
    println!(
        "filled {count} snippets ({:.1} MB of code) in {fill:.2?}: {:.0} saves/s, {:.2?} a save; database {:.1} MB \
         (+{:.1} MB WAL)",
        bytes as f64 / 1e6,
        count as f64 / fill.as_secs_f64(),
        fill / u32::try_from(count.max(1)).unwrap_or(1),
        db as f64 / 1e6,
        wal as f64 / 1e6,
    );

    let common = &words[0];
    let rare = &words[words.len() - 50];
    let cases: Vec<(String, Value)> = vec![
        ("rare word".into(), json!({"query": rare})),
        (format!("common word (`{common}`)"), json!({"query": common})),
        ("keyword in most code (`await`)".into(), json!({"query": "await"})),
        ("prefix".into(), json!({"query": format!("{}*", &words[3][..3])})),
        ("phrase".into(), json!({"query": format!("\"{} the\"", words[1])})),
        ("two words".into(), json!({"query": format!("{} {}", words[2], words[5])})),
        ("word + tag + language".into(), json!({"query": words[4], "tags": ["t1"], "language": "rust"})),
        ("a OR b".into(), json!({"query": format!("{} OR {}", words[40], words[41])})),
        ("word -word".into(), json!({"query": format!("{} -{}", words[6], words[0])})),
        ("punctuation".into(), json!({"query": format!("{}(\"x\": [*]) -", words[8])})),
        ("no query (by name)".into(), json!({})),
        ("tag only".into(), json!({"tags": ["t3"]})),
    ];
    // Warm up the page cache and the registry's compiled schemas.
    for (_, input) in &cases {
        call(&registry, cx(&session, &store), "snippet_list", input.clone()).await;
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); cases.len()];
    let mut totals: Vec<u64> = vec![0; cases.len()];
    for _ in 0..rounds {
        for (k, (_, input)) in cases.iter().enumerate() {
            let start = Instant::now();
            let out = call(&registry, cx(&session, &store), "snippet_list", input.clone()).await;
            times[k].push(start.elapsed());
            totals[k] = out.structured.as_ref().and_then(|s| s["total"].as_u64()).unwrap_or(0);
        }
    }
    println!("\nsnippet_list over {count} snippets, {rounds} calls each (registry + tool + render):");
    println!("{:>10} {:>10} {:>8}  case", "p50", "p90", "matches");
    let mut all = Vec::new();
    for (k, (name, _)) in cases.iter().enumerate() {
        let mut t = times[k].clone();
        t.sort();
        println!("{:>10.2?} {:>10.2?} {:>8}  {name}", percentile(&t, 0.5), percentile(&t, 0.9), totals[k]);
        all.extend(t);
    }
    all.sort();
    println!("{:>10.2?} {:>10.2?} {:>8}  all cases (goal: ≤ 5 ms)", percentile(&all, 0.5), percentile(&all, 0.9), "");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run());
}
