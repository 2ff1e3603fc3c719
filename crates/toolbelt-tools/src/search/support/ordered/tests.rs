use super::*;
use crate::search::support::content::LineKind;

/// A run of one file, `name`, with one matching line.
fn run_of(name: &str) -> Run {
    let mut out = Output::default();
    out.names.push_str(name);
    out.text.push_str(&format!("{name}:1:x\n"));
    out.kinds.push(LineKind::Match);
    let file = RunFile { shown: 0..name.len(), count: 1, lines: 0..1, text: 0..out.text.len() };
    Run { out, files: vec![file], errors: WalkErrors::default() }
}

#[test]
fn runs_are_joined_in_order_whatever_order_they_come_in() {
    let mut found = Found::default();
    let mut joined = Joined { found: &mut found, waiting: VecDeque::new(), next: 0, spare: Vec::new() };
    assert!(joined.add(2, run_of("c")).is_none(), "nothing joined yet, no buffer to reuse");
    assert!(joined.add(0, run_of("a")).is_some(), "run 0 joined: its buffer comes back");
    assert!(joined.add(3, run_of("d")).is_none(), "run 1 missing: nothing joined");
    assert!(joined.add(1, run_of("b")).is_some());
    assert_eq!((joined.next, joined.waiting.len()), (4, 0));
    assert_eq!(found.text(), "a:1:x\nb:1:x\nc:1:x\nd:1:x\n");
    let names: Vec<&str> = found.files.iter().map(|hit| found.shown(hit)).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
}

#[test]
fn keys_sort_in_path_order() {
    let paths = [
        "a.txt",
        "a/b",
        "ab/c",
        "a",
        "a/b/c",
        "a-b",
        "b",
        "a/b.c",
        "a/b/d",
        "é/x",
        "a b",
        "a/.b",
        "abcdefgh/i",
        "abcdefgh",
        "abcdefg/h",
        "abcdefghij",
        "abcdefgh.i",
        "abcdefgh/a/b",
    ];
    let key = |p: &str| {
        let mut k = Vec::new();
        push_key(&mut k, p.as_bytes());
        let mut back = Vec::new();
        key_path(&k, &mut back);
        assert_eq!(back, p.as_bytes());
        k
    };
    let mut by_key = paths.to_vec();
    by_key.sort_by_key(|p| key(p));
    let mut keys = Vec::new();
    let mut files: Vec<(File, &str)> = paths
        .iter()
        .map(|p| {
            let at = keys.len();
            push_key(&mut keys, p.as_bytes());
            (File::new(&keys, at), *p)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0, &keys));
    assert_eq!(files.iter().map(|f| f.1).collect::<Vec<_>>(), by_key);
    let mut by_path = paths.to_vec();
    by_path.sort_by(|a, b| crate::fs::walk::path_order(Path::new(a), Path::new(b)));
    assert_eq!(by_key, by_path);
}
