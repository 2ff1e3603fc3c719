//! Reading definition files that are not what they seem.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

fn read(path: &Path) -> Result<Parsed, DefinitionError> {
    AgentDefinition::read(path, Scope::User)
}

#[test]
fn a_file_is_named_after_its_stem_and_keeps_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db-migrator.MD");
    std::fs::write(&path, "---\ndescription: Runs migrations.\n---\nMigrate.\n").unwrap();
    let def = read(&path).unwrap().definition;
    assert_eq!(def.name, "db-migrator");
    assert_eq!(def.source, DefinitionSource::File { path: path.clone(), scope: Scope::User });
    assert_eq!(def.source.to_string(), format!("{} (user)", path.display()));
}

#[test]
fn fifos_devices_and_directories_are_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe.md");
    mkfifo(&fifo);
    let zero = tmp.path().join("zero.md");
    symlink("/dev/zero", &zero).unwrap();
    let dir = tmp.path().join("dir.md");
    std::fs::create_dir(&dir).unwrap();

    let started = Instant::now();
    assert_eq!(read(&fifo).unwrap_err(), DefinitionError::NotRegular("a named pipe (FIFO)"));
    assert_eq!(read(&zero).unwrap_err(), DefinitionError::NotRegular("a character device"));
    assert_eq!(read(&dir).unwrap_err(), DefinitionError::NotRegular("a directory"));
    assert!(started.elapsed() < Duration::from_secs(5), "an open blocked");
    let message = read(&zero).unwrap_err().to_string();
    assert!(message.contains("a character device, not a regular file"), "{message}");
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_missing_file_or_a_broken_link_is_unreadable() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("gone.md");
    symlink(tmp.path().join("nowhere"), &broken).unwrap();
    let e = read(&broken).unwrap_err();
    assert!(matches!(&e, DefinitionError::Unreadable(m) if m.contains("No such file")), "{e:?}");
    assert_eq!(e.line(), None);
}

#[test]
fn a_huge_file_is_not_read_past_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("huge.md");
    let mut text = String::from("---\nname: huge\ndescription: d\n---\n");
    text.push_str(&"x".repeat(MAX_FILE_BYTES as usize));
    std::fs::write(&path, text).unwrap();
    let e = read(&path).unwrap_err();
    assert_eq!(e, DefinitionError::TooLarge { limit: MAX_FILE_BYTES });
    assert!(e.to_string().contains("shorten its prompt"), "{e}");

    let at_cap = tmp.path().join("at-cap.md");
    let head = "---\nname: at-cap\ndescription: d\n---\n";
    std::fs::write(&at_cap, format!("{head}{}", "y".repeat(MAX_FILE_BYTES as usize - head.len()))).unwrap();
    assert_eq!(read(&at_cap).unwrap().definition.system_prompt.len(), MAX_FILE_BYTES as usize - head.len());
}

#[test]
fn a_file_that_is_not_utf8_names_the_line_of_the_first_bad_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("latin1.md");
    std::fs::write(&path, b"---\nname: caf\xe9\ndescription: d\n---\n").unwrap();
    let e = read(&path).unwrap_err();
    assert_eq!(e, DefinitionError::NotUtf8 { line: 2 });
    assert!(e.to_string().contains("save it as UTF-8"), "{e}");
}

#[test]
fn a_billion_laughs_is_not_expanded() {
    // Aliases are never expanded: a key that takes one is an error, an ignored key's is skipped.
    let mut text =
        String::from("---\nname: laughs\ndescription: d\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("---\n");
    let started = Instant::now();
    let parsed = AgentDefinition::parse(&text, "x", DefinitionSource::BuiltIn).unwrap();
    assert_eq!(parsed.definition.name, "laughs");
    assert!(started.elapsed() < Duration::from_secs(5));
    text.insert_str(text.len() - "---\n".len(), "tools: *a9\n");
    let e = AgentDefinition::parse(&text, "x", DefinitionSource::BuiltIn).unwrap_err();
    assert!(e.to_string().contains("`tools` must be tool names"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let text = format!("---\nname: deep\nhooks: {}\n---\n", "[".repeat(100_000));
    let e = AgentDefinition::parse(&text, "x", DefinitionSource::BuiltIn).unwrap_err();
    assert!(matches!(e, DefinitionError::Yaml { line: 3, .. }), "{e:?}");
}
