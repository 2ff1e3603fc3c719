//! Discovery in temporary project, home and configuration directories.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    config: PathBuf,
}

impl Dirs {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (project, home) = (root.join("project"), root.join("home"));
        let config = home.join("xdg-config");
        for dir in [&project, &home, &config] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self { _tmp: tmp, project, home, config }
    }

    fn search(&self) -> SearchDirs {
        SearchDirs::new(&self.project, &self.home, &self.config)
    }
}

fn agent(dir: &Path, file: &str, name: &str, description: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("---\nname: {name}\ndescription: {description}\n---\nPrompt of {name}.\n")).unwrap();
    path
}

fn file(path: &Path) -> DefinitionSource {
    let scope = if path.to_string_lossy().contains("/project/") { Scope::Project } else { Scope::User };
    DefinitionSource::File { path: path.to_path_buf(), scope }
}

#[test]
fn project_before_user_and_within_a_scope_in_the_listed_order() {
    let d = Dirs::new();
    let toolbelt = agent(&d.project, ".toolbelt/agents/reviewer.md", "reviewer", "toolbelt's");
    let claude = agent(&d.project, ".claude/agents/reviewer.md", "reviewer", "claude's");
    let agents = agent(&d.project, ".agents/agents/tester.md", "tester", "project tester");
    let user_tb = agent(&d.config, "toolbelt/agents/tester.md", "tester", "user tester");
    let user_claude = agent(&d.home, ".claude/agents/writer.md", "writer", "user writer");
    let user_reviewer = agent(&d.home, ".claude/agents/Reviewer.md", "Reviewer", "user's, other case");

    let catalog = discover(&d.search());
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    let found: Vec<(&str, &DefinitionSource)> =
        catalog.definitions.iter().map(|d| (d.name.as_str(), &d.source)).collect();
    assert_eq!(
        found,
        vec![
            ("reviewer", &file(&toolbelt)),
            ("tester", &file(&agents)),
            ("writer", &file(&user_claude)),
            ("general-purpose", &DefinitionSource::BuiltIn),
            ("Explore", &DefinitionSource::BuiltIn),
        ]
    );
    assert_eq!(catalog.get("reviewer").unwrap().description, "toolbelt's");
    assert_eq!(catalog.get("reviewer").unwrap().system_prompt, "Prompt of reviewer.");
    let shadowed: Vec<(&Path, &DefinitionSource)> =
        catalog.shadowed.iter().map(|s| (s.definition.source.path().unwrap(), &s.by)).collect();
    assert_eq!(
        shadowed,
        vec![
            (claude.as_path(), &file(&toolbelt)),
            (user_tb.as_path(), &file(&agents)),
            (user_reviewer.as_path(), &file(&toolbelt)),
        ]
    );
}

#[test]
fn a_file_replaces_a_builtin_of_its_name() {
    let d = Dirs::new();
    let mine = agent(&d.home, ".claude/agents/explore.md", "Explore", "my explorer");
    let catalog = discover(&d.search());
    let explore = catalog.get("Explore").unwrap();
    assert_eq!(explore.source, file(&mine));
    assert_eq!(catalog.definitions.last().unwrap().name, "general-purpose");
    assert_eq!(catalog.shadowed.len(), 1);
    assert!(catalog.shadowed[0].definition.is_builtin());
    assert_eq!(catalog.shadowed[0].by, file(&mine));
}

#[test]
fn subdirectories_are_read_after_their_parents_files_and_hidden_ones_never() {
    let d = Dirs::new();
    let root = d.project.join(".claude/agents");
    let nested = agent(&root, "review/security.md", "security", "nested");
    let top = agent(&root, "zeta.md", "security", "top level wins");
    agent(&root, ".git/hooks.md", "hidden", "never read");
    agent(&root, ".draft.md", "draft", "never read");
    std::fs::write(root.join("notes.txt"), "not markdown").unwrap();
    std::fs::write(root.join("README.md"), "# My agents\n\nA collection.\n").unwrap();
    std::fs::write(root.join("review/CONTRIBUTING.md"), "How to add one.\n").unwrap();

    let catalog = discover(&d.search());
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    assert_eq!(catalog.get("security").unwrap().source, file(&top));
    assert_eq!(catalog.shadowed[0].definition.source, file(&nested));
    assert!(catalog.get("hidden").is_none() && catalog.get("draft").is_none());
}

#[test]
fn bad_files_are_problems_and_the_good_ones_still_load() {
    let d = Dirs::new();
    let root = d.project.join(".claude/agents");
    agent(&root, "good.md", "good", "fine");
    let no_front = root.join("plain.md");
    std::fs::write(&no_front, "Just a prompt.\n").unwrap();
    let yaml = root.join("broken.md");
    std::fs::write(&yaml, "---\nname: broken\ndescription: d\ntools: [Read\n---\n").unwrap();
    let mode = root.join("mode.md");
    std::fs::write(&mode, "---\nname: mode\ndescription: d\npermissionMode: turbo\n---\n").unwrap();
    let bytes = root.join("bytes.md");
    std::fs::write(&bytes, b"---\nname: b\ndescription: \xff\n---\n").unwrap();
    let pipe = root.join("pipe.md");
    assert!(std::process::Command::new("mkfifo").arg(&pipe).status().unwrap().success());
    let colon = root.join("colon.md");
    std::fs::write(&colon, "---\nname: colon\ndescription: Use it when: logs pile up\n---\n").unwrap();
    std::fs::create_dir_all(root.join("folder.md")).unwrap();
    agent(&root, "folder.md/inner.md", "inner", "a directory named like a file is a directory");

    let catalog = discover(&d.search());
    assert_eq!(catalog.names(), vec!["colon", "good", "inner", "general-purpose", "Explore"]);
    let shown: Vec<String> = catalog.problems.iter().map(ToString::to_string).collect();
    let expect = |path: &Path, line: &str, words: &str| {
        let prefix = format!("{}{line}: ", path.display());
        assert!(
            shown.iter().any(|p| p.starts_with(&prefix) && p.contains(words)),
            "no problem `{prefix}…{words}…` in {shown:#?}"
        );
    };
    expect(&bytes, ":3", "not UTF-8");
    expect(&yaml, ":5", "not valid YAML");
    expect(&mode, ":4", "`permissionMode: turbo` is not valid");
    expect(&no_front, ":1", "no frontmatter");
    expect(&pipe, "", "a named pipe (FIFO), not a regular file");
    expect(&colon, ":3", "warning: the value of `description` has `: ` in it");
    assert_eq!(catalog.problems.len(), 6, "{shown:#?}");
    assert_eq!(catalog.problems.iter().filter(|p| p.severity == Severity::Warning).count(), 1);
}

#[test]
fn loops_and_links_end_and_a_shared_directory_is_read_once() {
    let d = Dirs::new();
    let root = d.home.join(".claude/agents");
    agent(&root, "a.md", "a", "one");
    symlink(&root, root.join("loop")).unwrap();
    let shared = d.home.join("shared-agents");
    agent(&shared, "b.md", "b", "linked in");
    symlink(&shared, root.join("team")).unwrap();
    symlink(shared.join("b.md"), root.join("b-again.md")).unwrap();

    // The project is the home directory: `~/.claude/agents` is both, and read once.
    let catalog = discover(&SearchDirs::new(&d.home, &d.home, &d.config));
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    assert_eq!(catalog.names(), vec!["a", "b", "general-purpose", "Explore"]);
    let b = catalog.get("b").unwrap();
    assert_eq!(b.source, DefinitionSource::File { path: root.join("b-again.md"), scope: Scope::Project });
    assert_eq!(catalog.shadowed.len(), 1, "the link to the directory holds b.md again");
}

#[test]
fn an_agents_path_that_is_a_file_or_unreadable_is_reported() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.project.join(".claude")).unwrap();
    std::fs::write(d.project.join(".claude/agents"), "oops").unwrap();
    let catalog = discover(&d.search());
    assert_eq!(catalog.problems.len(), 1, "{:?}", catalog.problems);
    assert_eq!(catalog.problems[0].path, d.project.join(".claude/agents"));
    assert!(catalog.problems[0].message.contains("not a directory"), "{}", catalog.problems[0]);
    assert_eq!(catalog.names(), vec!["general-purpose", "Explore"]);
}

#[test]
fn nothing_outside_the_given_directories_is_read() {
    let d = Dirs::new();
    let catalog = discover(&d.search());
    assert_eq!(catalog, Catalog::builtin());
    assert_eq!(
        d.search().directories(),
        vec![
            (Scope::Project, d.project.join(".toolbelt/agents")),
            (Scope::Project, d.project.join(".claude/agents")),
            (Scope::Project, d.project.join(".agents/agents")),
            (Scope::User, d.config.join("toolbelt/agents")),
            (Scope::User, d.home.join(".claude/agents")),
        ]
    );
}
