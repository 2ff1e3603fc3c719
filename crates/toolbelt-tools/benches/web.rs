//! What the web tools cost beyond the network: `cargo bench -p toolbelt-tools --bench web`.
//!
//! * **HTML to Markdown** of a 1 MB page (goal ≤ 50 ms): `WebFetch` of a page already in its
//!   cache, so what is timed is the conversion (decode, parse, boilerplate out, readable
//!   part, Markdown) and the window of it returned. Two pages: one that marks its content
//!   (`<article>`), and "div soup" where its scoring has to find it (one pass, on a page
//!   this large). Median and best of 15 calls each.
//! * **Peak memory** while fetching a 10 MiB body from a loopback server (goal ≤ 3× the
//!   body): the growth of the process's peak resident set (`VmHWM`, reset before each case
//!   through `/proc/self/clear_refs`) over one uncached `WebFetch`, for a text body and for
//!   an HTML body (whose first 5 MiB are converted).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, Registry, SessionState, ToolContext};
use toolbelt_tools::web::testing::{Body, Reply, Server};
use toolbelt_tools::web::{Web, WebConfig};

fn article(size: usize, soup: bool) -> String {
    let (open, close) = if soup { ("<div class=\"c\">", "</div>") } else { ("<article>", "</article>") };
    let mut s = format!(
        "<html><head><title>Big page</title></head><body><nav><a href=\"/\">Home</a> <a href=\"/a\">About</a></nav>\
         <div class=\"sidebar\">Trending</div>{open}"
    );
    let mut i = 0;
    while s.len() < size {
        s.push_str(&format!(
            "<h2>Section {i}</h2><p>Text about item {i}, with a <a href=\"/x/{i}\">link</a>, <b>bold</b> and \
             <code>code</code> words; lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\
             <ul><li>point {i}.1</li><li>point {i}.2</li></ul>"
        ));
        i += 1;
    }
    s.push_str(close);
    s.push_str("<footer>Copyright</footer></body></html>");
    s
}

fn cx(web: &Arc<Web>, session: &Arc<SessionState>) -> ToolContext {
    let mut services = Extensions::default();
    services.insert_arc(Arc::clone(web));
    ToolContext::new(
        "bench",
        Arc::clone(session),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        services,
    )
}

async fn fetch(registry: &Registry, cx: ToolContext, url: &str) -> Duration {
    let entry = registry.lookup("WebFetch").unwrap();
    let input = entry.prepare(json!({"url": url})).unwrap();
    let started = Instant::now();
    let out = entry.tool().call(input, cx).await;
    let took = started.elapsed();
    assert!(out.is_ok(), "{:?}", out.err());
    took
}

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let pages: Arc<Vec<String>> = Arc::new(vec![article(1_000_000, false), article(1_000_000, true)]);
        let served = Arc::clone(&pages);
        let server = Server::start(move |req| match req.path() {
            "/article" => Reply::ok("text/html", served[0].clone()),
            "/soup" => Reply::ok("text/html", served[1].clone()),
            "/big.txt" => Reply { body: Body::Large { size: 10 << 20, fill: b'a' }, ..Reply::ok("text/plain", "") },
            _ => Reply { body: Body::Large { size: 10 << 20, fill: b'a' }, ..Reply::ok("text/html", "") },
        })
        .await
        .unwrap();
        let registry = Registry::new();
        toolbelt_tools::register_builtin(&registry).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let session = Arc::new(SessionState::new("bench", dir.path().to_path_buf(), vec![]));
        let web = Arc::new(Web::new(WebConfig { allow_private_network: true, ..WebConfig::default() }));

        println!("HTML to Markdown, 1 MB pages (the page in the cache; goal ≤ 50 ms)");
        for (name, path) in [("marked content (<article>)", "/article"), ("div soup (scored in one pass)", "/soup")] {
            let url = server.url(path);
            fetch(&registry, cx(&web, &session), &url).await;
            let mut times = Vec::new();
            for _ in 0..15 {
                times.push(fetch(&registry, cx(&web, &session), &url).await);
            }
            times.sort();
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            println!("  {name:<30} median {:>6.1} ms   best {:>6.1} ms", ms(times[times.len() / 2]), ms(times[0]));
        }

        println!("Peak memory fetching a 10 MiB body (goal ≤ 3× the body)");
        for (name, path) in [("text", "/big.txt"), ("HTML (5 MiB converted)", "/big.html")] {
            // A fresh cache each time, so the body is fetched.
            let web = Arc::new(Web::new(WebConfig { allow_private_network: true, ..WebConfig::default() }));
            reset_peak();
            let before = peak_kib();
            fetch(&registry, cx(&web, &session), &server.url(path)).await;
            let grown = peak_kib().saturating_sub(before);
            println!("  {name:<30} peak +{:>6} KiB   {:.2}× the body", grown, grown as f64 / (10.0 * 1024.0));
        }
    });
}
