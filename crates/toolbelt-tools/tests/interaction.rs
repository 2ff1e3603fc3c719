//! AskUserQuestion, Brief and Think, and plan mode through a real runtime and permission
//! engine, with a person whose answers each test scripts (the terminal and the MCP client
//! are driven for real through the binary).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolbelt_core::{
    Answer, AskError, AskRequest, Asker, BoxFuture, CancellationToken, EventSink, People, Registry, SessionState, Tone,
    ToolEvent,
};
use toolbelt_policy::rules::RuleEnv;
use toolbelt_policy::{PermissionEngine, PermissionMode, PermissionRules};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};

/// A person who answers from a script and remembers what they were asked and told.
#[derive(Default)]
struct Person {
    answers: Mutex<VecDeque<Result<Vec<Answer>, AskError>>>,
    asked: Mutex<Vec<AskRequest>>,
    told: Mutex<Vec<(String, Tone)>>,
}

impl Person {
    fn answering(answers: impl IntoIterator<Item = Result<Vec<Answer>, AskError>>) -> Arc<Self> {
        Arc::new(Self { answers: Mutex::new(answers.into_iter().collect()), ..Self::default() })
    }
}

impl Asker for Person {
    fn ask<'a>(&'a self, _: &'a SessionState, request: &'a AskRequest) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        self.asked.lock().unwrap().push(request.clone());
        let next = self.answers.lock().unwrap().pop_front().unwrap_or(Err(AskError::Cancelled));
        Box::pin(async move { next })
    }

    fn tell<'a>(&'a self, _: &'a SessionState, message: &'a str, tone: Tone) -> BoxFuture<'a, bool> {
        self.told.lock().unwrap().push((message.to_string(), tone));
        Box::pin(async { true })
    }
}

fn answer(question: &str, selected: &[&str], other: Option<&str>) -> Answer {
    Answer {
        question: question.into(),
        selected: selected.iter().map(|s| s.to_string()).collect(),
        other: other.map(str::to_string),
    }
}

struct World {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    runtime: Runtime,
    session: Session,
}

/// A runtime over every built-in tool, judged by the permission engine in `mode`, with
/// `person` behind it (none: nobody to ask).
fn world(mode: PermissionMode, person: Option<Arc<Person>>) -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    let env = RuleEnv { home: root.join("home"), cwd: root.clone() };
    let engine = PermissionEngine::new(PermissionRules { mode, ..Default::default() }, env);
    let mut services = toolbelt_core::Extensions::default();
    if let Some(person) = person {
        services.insert(People(person));
    }
    let runtime = Runtime::builder(Arc::new(registry)).authorizer(Arc::new(engine)).services(services).build();
    let session = Session::new("s", root.clone(), vec![root.clone()], root.join(".data"));
    World { _dir: dir, root, runtime, session }
}

impl World {
    async fn call(&self, tool: &str, input: Value) -> ToolResult {
        self.call_with(tool, input, &EventSink::none()).await
    }

    async fn call_with(&self, tool: &str, input: Value, events: &EventSink) -> ToolResult {
        self.runtime.call(&self.session, ToolCall::new("c", tool, input), events, &CancellationToken::new()).await
    }
}

fn db_question(multi: bool) -> Value {
    json!({"questions": [{
        "question": "Which database should the service use?",
        "header": "Database",
        "options": [
            {"label": "SQLite (Recommended)", "description": "embedded, nothing to run"},
            {"label": "Postgres", "description": "a server to run"}
        ],
        "multiSelect": multi
    }]})
}

#[tokio::test]
async fn a_question_is_put_to_the_person_and_the_answer_comes_back_as_claude_codes() {
    let q = "Which database should the service use?";
    let person = Person::answering([Ok(vec![answer(q, &["Postgres"], Some("version 16"))])]);
    let w = world(PermissionMode::Default, Some(person.clone()));
    let r = w.call("AskUserQuestion", db_question(false)).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(
        r.text(),
        "User has answered your questions: \"Which database should the service use?\"=\"Postgres, version 16\". You \
         can now continue with the user's answers in mind."
    );
    assert_eq!(
        r.structured.unwrap()["answers"],
        json!([{"question": q, "selected": ["Postgres"], "other": "version 16"}])
    );
    {
        let asked = person.asked.lock().unwrap();
        assert_eq!(asked[0].questions[0].header, "Database");
        assert_eq!(asked[0].questions[0].options.len(), 2);
    }
    // Aliases, in plan mode too (asking changes nothing).
    let person = Person::answering([Ok(vec![answer(q, &["SQLite (Recommended)"], None)])]);
    let w = world(PermissionMode::Plan, Some(person));
    assert!(!w.call("ask_user", db_question(true)).await.is_error);
}

#[tokio::test]
async fn with_nobody_to_answer_the_call_fails_and_repeats_the_questions() {
    for w in [
        world(PermissionMode::Default, None),
        world(PermissionMode::Default, Some(Person::answering([Err(AskError::Nobody("no terminal".into()))]))),
    ] {
        let r = w.call("AskUserQuestion", db_question(false)).await;
        assert!(r.is_error);
        let text = r.text();
        assert!(text.contains("The questions were not asked: nobody can answer here"), "{text}");
        assert!(
            text.contains("1. Which database should the service use? (choices: SQLite (Recommended) / Postgres)"),
            "{text}"
        );
        assert!(!text.contains("User has answered"), "{text}");
    }
    let declined = world(PermissionMode::Default, Some(Person::answering([Err(AskError::Declined)])));
    let r = declined.call("AskUserQuestion", db_question(false)).await;
    assert!(
        r.is_error && r.text().contains("the user declined to answer") && r.text().contains("Do not assume"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn questions_are_checked_before_anyone_is_asked() {
    let person = Person::answering([]);
    let w = world(PermissionMode::Default, Some(person.clone()));
    let too_long = json!({"questions": [{"question": "Q?", "header": "A very long header", "options": [
        {"label": "a", "description": "x"}, {"label": "b", "description": "y"}]}]});
    assert!(w.call("AskUserQuestion", too_long).await.text().contains("header"));
    let one_option =
        json!({"questions": [{"question": "Q?", "header": "H", "options": [{"label": "a", "description": "x"}]}]});
    assert!(w.call("AskUserQuestion", one_option).await.is_error);
    let twice = json!({"questions": [{"question": "Q?", "header": "H", "options": [
        {"label": "Same", "description": "x"}, {"label": "same", "description": "y"}]}]});
    assert!(w.call("AskUserQuestion", twice).await.text().contains("appears twice"));
    assert!(person.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn brief_tells_the_person_and_think_records_the_thought() {
    let person = Person::answering([]);
    let w = world(PermissionMode::Plan, Some(person.clone()));
    let (sink, events) = EventSink::recording();
    let r = w
        .call_with("Brief", json!({"message": "Tests pass; starting on the docs.", "attachments": ["docs/a.md"], "status": "proactive"}), &sink)
        .await;
    assert!(!r.is_error && r.text() == "Message shown to the user.", "{}", r.text());
    let told = person.told.lock().unwrap().clone();
    assert_eq!(told, [("Tests pass; starting on the docs.\n\nAttached:\n- docs/a.md".to_string(), Tone::Warning)]);
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ToolEvent::Progress { message, .. } if message.starts_with("Tests pass")))
    );
    // With nobody watching, the message stays in the result and the events.
    let alone = world(PermissionMode::Default, None);
    let r = alone.call("SendUserMessage", json!({"message": "hello"})).await;
    assert!(!r.is_error && r.text().contains("Nobody is watching"), "{}", r.text());
    let (sink, events) = EventSink::recording();
    let r = w.call_with("Think", json!({"thought": "The cache key must include the locale."}), &sink).await;
    assert_eq!(r.text(), "Thought recorded.");
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ToolEvent::Progress { message, .. } if message.contains("locale")))
    );
}

#[tokio::test]
async fn plan_mode_refuses_changes_until_a_person_approves_the_plan() {
    let approve = |choice: &str, other: Option<&str>| Ok(vec![answer("Approve this plan?", &[choice], other)]);
    let person = Person::answering([
        Ok(vec![answer("Approve this plan?", &["Keep planning"], Some("also update the changelog"))]),
        approve("Approve", Some("go ahead")),
    ]);
    let w = world(PermissionMode::AcceptEdits, Some(person.clone()));
    let write = json!({"file_path": "notes.txt", "content": "x"});
    assert!(!w.call("Write", write.clone()).await.is_error, "acceptEdits writes");
    let r = w.call("EnterPlanMode", json!({})).await;
    assert!(r.text().contains("Entered plan mode (from acceptEdits)"), "{}", r.text());

    // Edits and commands are refused, pointing at ExitPlanMode; reads run.
    let r = w.call("Write", json!({"file_path": "other.txt", "content": "x"})).await;
    assert!(
        r.is_error && r.text().contains("plan mode is read-only") && r.text().contains("ExitPlanMode"),
        "{}",
        r.text()
    );
    let r = w.call("Bash", json!({"command": "touch made"})).await;
    assert!(r.is_error && r.text().contains("plan mode"), "{}", r.text());
    assert!(!w.call("Read", json!({"file_path": "notes.txt"})).await.is_error);
    assert!(!w.root.join("other.txt").exists() && !w.root.join("made").exists());

    // Rejected: still planning, with the person's feedback.
    let plan = json!({"plan": "1. Add the flag.\n2. Test it.", "allowedPrompts": [{"tool": "Bash", "prompt": "cargo test *"}]});
    let r = w.call("ExitPlanMode", plan.clone()).await;
    assert!(r.is_error && r.text().contains("also update the changelog"), "{}", r.text());
    assert!(w.call("Write", json!({"file_path": "other.txt", "content": "x"})).await.is_error);
    let asked = person.asked.lock().unwrap()[0].clone();
    let intro = asked.intro.unwrap();
    assert!(intro.starts_with("1. Add the flag.") && intro.contains("Bash(cargo test *)"), "{intro}");
    assert!(asked.questions[0].options[0].description.contains("back in acceptEdits mode"));

    // Approved: back to the mode it had, the asked-for rule granted.
    let r = w.call("ExitPlanMode", plan).await;
    assert!(!r.is_error, "{}", r.text());
    let s = r.structured.unwrap();
    assert_eq!((s["mode"].as_str(), s["granted"][0].as_str()), (Some("acceptEdits"), Some("Bash(cargo test *)")));
    assert_eq!(s["feedback"], "go ahead");
    assert!(!w.call("Write", json!({"file_path": "other.txt", "content": "x"})).await.is_error);
    let r = w.call("ExitPlanMode", json!({"plan": "again"})).await;
    assert!(r.is_error && r.text().contains("not in plan mode"), "{}", r.text());
}

#[tokio::test]
async fn approving_with_accept_edits_and_nobody_to_approve() {
    let person = Person::answering([Ok(vec![answer("Approve this plan?", &["Approve, allow all edits"], None)])]);
    let w = world(PermissionMode::Default, Some(person));
    w.call("EnterPlanMode", json!({})).await;
    let r = w.call("ExitPlanMode", json!({"plan": "Do it."})).await;
    assert_eq!(r.structured.unwrap()["mode"], "acceptEdits");
    assert!(!w.call("Write", json!({"file_path": "a.txt", "content": "x"})).await.is_error);

    let alone = world(PermissionMode::Default, None);
    alone.call("EnterPlanMode", json!({})).await;
    let r = alone.call("ExitPlanMode", json!({"plan": "Do it."})).await;
    assert!(
        r.is_error && r.text().contains("nobody can answer here") && r.text().contains("stays in plan mode"),
        "{}",
        r.text()
    );
    assert!(alone.call("Write", json!({"file_path": "a.txt", "content": "x"})).await.is_error, "still planning");
}
