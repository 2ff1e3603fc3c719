//! The crate's layering, checked from its source: tool families on top, shared machinery
//! below them, and arrows only going down.
//!
//! Every top-level module of `src/` has a layer ([`LAYERS`]). A file may name (`crate::NAME`)
//! its own module and modules of a lower layer only: one family never reaches into another,
//! and no shared module reaches up. A chain of `super::` that climbs to the crate's root is
//! refused too, as a way out of a module unseen. Comments are not read (a doc comment may mention what uses a module), and a
//! module the table does not list fails the test, so a new one is given its place on purpose.
#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};

/// Each top-level module and its layer: higher may use lower, never the other way, and two
/// modules of one layer not each other.
const LAYERS: &[(&str, u8)] = &[
    // Tools the settings define: run as Bash runs commands, sent as the web tools send.
    ("custom", 5),
    // The tool families.
    ("agents", 4),
    ("code", 4),
    ("cron", 4),
    ("files", 4),
    ("interaction", 4),
    ("knowledge", 4),
    ("planning", 4),
    ("search", 4),
    ("settings", 4),
    ("shell", 4),
    ("snippets", 4),
    ("web", 4),
    // Language servers: asked by the code tools, told of edits by the file tools.
    ("language_servers", 3),
    // Running commands: spawn, sandbox, cgroups, tree kill, environment.
    ("process", 2),
    // Reaching files: roots, regular files, links, the walk, shown paths.
    ("fs", 1),
    // What bytes are: encodings, images, PDF text.
    ("formats", 1),
    // Background tasks as every family lists them.
    ("tasks", 1),
    // Leaves.
    ("blocking", 0),
    ("dirs", 0),
    ("sqlite", 0),
    ("storage", 0),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(name, _)| *name == module).map(|(_, layer)| *layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read src").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`, the crate's top).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
}

/// How deep a file's module is below the crate root (`fs/walk/guard.rs` is 3, `fs/mod.rs`
/// and `tasks.rs` are 1).
fn depth(rel: &Path) -> usize {
    let parts = rel.components().count();
    if rel.file_name().is_some_and(|n| n == "mod.rs") { parts - 1 } else { parts }
}

/// Every `crate::NAME` on a line of code, and the longest chain of `super::` on it.
fn names_used(line: &str) -> (Vec<String>, usize) {
    let code = line.split("//").next().unwrap_or("");
    let names = code
        .match_indices("crate::")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(at, m)| code[at + m.len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .filter(|name: &String| !name.is_empty())
        .collect();
    let climb = (1..).take_while(|n| code.contains(&"super::".repeat(*n))).last().unwrap_or(0);
    (names, climb)
}

/// What is wrong with `file` using `used`, if anything.
fn violation(module: &str, used: &str) -> Option<String> {
    if used == module {
        return None;
    }
    let Some(own) = layer(module) else { return Some(format!("module `{module}` has no layer in LAYERS")) };
    match layer(used) {
        Some(theirs) if theirs < own => None,
        Some(theirs) if theirs == own && own == 4 => Some("one tool family imports another's internals".into()),
        Some(theirs) if theirs == own => Some("two shared modules of one layer import each other".into()),
        Some(_) => Some("a lower module imports a higher one".into()),
        // Items of the crate root (`crate::builtin`, …): the top, above everything.
        None => Some("a module imports the crate root, which imports every family".into()),
    }
}

fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("below src");
        let Some(module) = module_of(rel) else { continue };
        let text = std::fs::read_to_string(&file).expect("read file");
        // Inline modules (`mod tests {`, at a file's end) are one level deeper.
        let mut inline = 0;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            if trimmed.starts_with("mod ") && trimmed.ends_with('{') {
                inline += 1;
            }
            let (names, climb) = names_used(line);
            if climb >= depth(rel) + inline {
                found.push(format!("src/{}:{}: `super::` climbs to the crate root", rel.display(), n + 1));
            }
            for name in names {
                if let Some(why) = violation(&module, &name) {
                    found.push(format!("src/{}:{}: `crate::{name}`: {why}", rel.display(), n + 1));
                }
            }
        }
    }
    found
}

#[test]
fn arrows_between_modules_only_go_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "imports against the layering (move what two families share below them, see docs/design.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).expect("read src") {
        let path = entry.expect("entry").path();
        let rel = path.strip_prefix(&src).expect("below src");
        if let Some(module) = module_of(rel)
            && layer(&module).is_none()
        {
            missing.push(module);
        }
    }
    assert!(missing.is_empty(), "top-level modules without a layer in LAYERS: {missing:?}");
}

#[test]
fn the_check_sees_an_upward_import() {
    assert!(violation("fs", "files").is_some(), "shared machinery importing a family");
    assert!(violation("code", "shell").is_some(), "one family importing another");
    assert!(violation("files", "language_servers").is_none(), "a family importing shared machinery");
    assert!(violation("process", "fs").is_none(), "a lower shared module");
    assert_eq!(names_used("use crate::shell::support::spill; // crate::web").0, ["shell"]);
    assert_eq!(names_used("let x = toolbelt_core::thing(); let y = mycrate::z;").0, Vec::<String>::new());
    assert_eq!(names_used("super::super::pre_exec(&mut c)").1, 2);
    assert_eq!(depth(Path::new("process/sandbox/caps.rs")), 3);
    assert_eq!(depth(Path::new("fs/mod.rs")), 1);
}
