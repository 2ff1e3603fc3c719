//! Skills on real directories: found from the working directory up to the repository root
//! and in the user's directories, nearest first; loaded through a runtime with arguments
//! filled in; `allowed-tools` granted for the user's own skills and held back for a
//! project's when nobody can approve; user-only skills refused to the model; the listing in
//! the description capped; links out of the repository and FIFOs refused without blocking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use toolbelt_core::{EventSink, Extensions, Registry};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};
use toolbelt_tools::knowledge::skill::LISTING_CAP;
use toolbelt_tools::knowledge::skills::{Scope, SkillDirs, discover};

fn write_skill(base: &Path, folder: &str, frontmatter: &str, body: &str) {
    let dir = base.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), format!("---\n{frontmatter}\n---\n{body}\n")).unwrap();
}

struct World {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("repo");
        let home = root.join("home");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("app/src")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        World { _dir: dir, repo, home }
    }

    fn dirs(&self) -> SkillDirs {
        SkillDirs { home: self.home.clone(), config_home: self.home.join(".config"), plugins: Vec::new() }
    }

    fn runtime(&self) -> Runtime {
        let registry = Registry::new();
        toolbelt_tools::register_builtin(&registry).unwrap();
        let mut services = Extensions::default();
        services.insert(self.dirs());
        Runtime::builder(Arc::new(registry)).services(services).build()
    }

    async fn call(&self, runtime: &Runtime, cwd: &Path, input: Value) -> ToolResult {
        let session = Session::new("s", cwd.to_path_buf(), vec![self.repo.clone()], self.repo.join(".data"));
        runtime.call(&session, ToolCall::new("c", "Skill", input), &EventSink::none(), &Default::default()).await
    }
}

#[test]
fn the_nearest_skill_wins_and_every_location_is_searched() {
    let w = World::new();
    write_skill(&w.home.join(".claude/skills"), "review", "name: review\ndescription: user review", "user");
    write_skill(&w.home.join(".config/toolbelt/skills"), "lint", "description: lint things", "lint");
    write_skill(&w.home.join(".agents/skills"), "notes", "description: keep notes", "notes");
    write_skill(&w.repo.join(".claude/skills"), "review", "description: repo review", "repo");
    write_skill(&w.repo.join(".agents/skills"), "deploy", "description: repo deploy", "deploy");
    write_skill(&w.repo.join("app/.toolbelt/skills"), "review", "description: app review", "app");
    // Above the repository root: never read.
    write_skill(&w.repo.parent().unwrap().join(".claude/skills"), "outside", "description: no", "no");

    let catalog = discover(&w.repo.join("app/src"), &w.dirs());
    let names: Vec<(&str, &str)> =
        catalog.skills.iter().map(|s| (s.text.name.as_str(), s.text.description.as_str())).collect();
    assert_eq!(
        names,
        [("review", "app review"), ("deploy", "repo deploy"), ("lint", "lint things"), ("notes", "keep notes"),]
    );
    assert_eq!(catalog.skills[0].scope, Scope::Project);
    assert_eq!(catalog.skills[2].scope, Scope::User);
    let shadowed: Vec<&str> = catalog.shadowed.iter().map(|(s, _)| s.text.description.as_str()).collect();
    assert_eq!(shadowed, ["repo review", "user review"]);
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
}

#[tokio::test]
async fn loading_fills_arguments_and_names_the_folder() {
    let w = World::new();
    write_skill(
        &w.repo.join(".claude/skills"),
        "fix-issue",
        "description: Fix a GitHub issue\nargument-hint: \"[number] [priority]\"",
        "Fix issue #$1 at priority $2.\nAll: $ARGUMENTS",
    );
    write_skill(&w.repo.join(".claude/skills"), "plain", "description: no placeholders", "Just do it.");
    let runtime = w.runtime();
    let r = w.call(&runtime, &w.repo, json!({"skill": "/fix-issue", "args": "123 high"})).await;
    assert!(!r.is_error, "{}", r.text());
    let dir = w.repo.join(".claude/skills/fix-issue");
    assert_eq!(
        r.text(),
        format!("Base directory for this skill: {}\n\nFix issue #123 at priority high.\nAll: 123 high", dir.display())
    );
    let s = r.structured.unwrap();
    assert_eq!((s["name"].as_str(), s["scope"].as_str()), (Some("fix-issue"), Some("project")));
    let r = w.call(&runtime, &w.repo, json!({"skill": "plain", "args": "src/lib.rs"})).await;
    assert!(r.text().ends_with("Just do it.\n\nARGUMENTS: src/lib.rs"), "{}", r.text());
    let r = w.call(&runtime, &w.repo, json!({"skill": "nope"})).await;
    assert!(r.is_error && r.text().contains("there is no skill `nope` here; the skills are: fix-issue, plain"));
}

#[tokio::test]
async fn the_users_skills_grant_their_tools_and_a_projects_wait_for_approval() {
    let w = World::new();
    write_skill(&w.home.join(".claude/skills"), "mine", "description: mine\nallowed-tools: Bash(make test), Read", "m");
    write_skill(&w.repo.join(".claude/skills"), "theirs", "description: theirs\nallowed-tools:\n  - Bash(*)", "t");
    let runtime = w.runtime();
    let r = w.call(&runtime, &w.repo, json!({"skill": "mine"})).await;
    let s = r.structured.clone().unwrap();
    assert_eq!(s["granted"], json!(["Bash(make test)", "Read"]), "{s}");
    assert!(r.text().contains("(Allowed for the rest of the session: Bash(make test), Read.)"));
    // Text the repository wrote never widens the policy by itself.
    let r = w.call(&runtime, &w.repo, json!({"skill": "theirs"})).await;
    let s = r.structured.unwrap();
    assert_eq!(s["granted"], json!([]), "{s}");
    assert!(s["not_granted"][0].as_str().unwrap().starts_with("Bash(*) (a project's skill needs the user's approval"));
}

#[tokio::test]
async fn user_only_skills_are_not_offered_to_the_model() {
    let w = World::new();
    write_skill(
        &w.repo.join(".claude/skills"),
        "release",
        "description: Cut a release\ndisable-model-invocation: true",
        "r",
    );
    write_skill(&w.repo.join(".claude/skills"), "docs", "description: Write docs", "d");
    let runtime = w.runtime();
    let r = w.call(&runtime, &w.repo, json!({"skill": "release"})).await;
    assert!(r.is_error && r.text().contains("for the user to start (as the /release prompt)"), "{}", r.text());
    let session = Session::new("s", w.repo.clone(), vec![w.repo.clone()], w.repo.join(".data"));
    let spec = runtime.tools_for(session.state()).into_iter().find(|s| s.name == "Skill").unwrap();
    assert!(spec.description.contains("- docs: Write docs") && !spec.description.contains("release"));
}

#[tokio::test]
async fn the_listing_is_capped_descriptions_shortened_first() {
    let w = World::new();
    for i in 0..60 {
        let description = format!("skill number {i} {}", "with a long description ".repeat(20));
        write_skill(&w.repo.join(".claude/skills"), &format!("s{i:02}"), &format!("description: {description}"), "b");
    }
    let runtime = w.runtime();
    let session = Session::new("s", w.repo.clone(), vec![w.repo.clone()], w.repo.join(".data"));
    let spec = runtime.tools_for(session.state()).into_iter().find(|s| s.name == "Skill").unwrap();
    let listing = &spec.description[spec.description.find("Available skills:").unwrap()..];
    assert!(listing.len() <= LISTING_CAP + 20, "{}", listing.len());
    // Every skill is still named; their descriptions were shortened.
    for i in 0..60 {
        assert!(listing.contains(&format!("- s{i:02}: skill number {i} ")), "s{i:02} missing");
    }
    assert!(listing.contains('…'));
}

#[test]
fn links_out_of_the_repository_and_fifos_are_refused_without_blocking() {
    let w = World::new();
    let secret = w.repo.parent().unwrap().join("secret.md");
    std::fs::write(&secret, "---\ndescription: stolen\n---\nsecret text\n").unwrap();
    let skills = w.repo.join(".claude/skills");
    std::fs::create_dir_all(skills.join("leak")).unwrap();
    std::os::unix::fs::symlink(&secret, skills.join("leak/SKILL.md")).unwrap();
    std::os::unix::fs::symlink(secret.parent().unwrap(), skills.join("dirlink")).unwrap();
    std::fs::create_dir_all(skills.join("pipe")).unwrap();
    nix::unistd::mkfifo(&skills.join("pipe/SKILL.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let catalog = discover(&w.repo, &w.dirs());
    assert!(catalog.skills.is_empty(), "{:?}", catalog.skills);
    let problems: Vec<String> =
        catalog.problems.iter().map(|p| format!("{}: {}", p.path.display(), p.message)).collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("leak/SKILL.md") && p.contains("not a link leading out")));
    assert!(problems.iter().any(|p| p.contains("dirlink/SKILL.md") && p.contains("not a link leading out")));
    assert!(problems.iter().any(|p| p.contains("pipe/SKILL.md") && p.contains("named pipe")), "{problems:?}");
    // The user's own links are followed: it is their directory.
    std::fs::create_dir_all(w.home.join(".claude/skills/linked")).unwrap();
    std::os::unix::fs::symlink(&secret, w.home.join(".claude/skills/linked/SKILL.md")).unwrap();
    let catalog = discover(&w.repo, &w.dirs());
    assert_eq!(catalog.skills.len(), 1);
    assert_eq!(catalog.skills[0].text.description, "stolen");
}
