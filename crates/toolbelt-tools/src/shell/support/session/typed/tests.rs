use super::*;

fn cx() -> ToolContext {
    ToolContext::detached(std::env::temp_dir())
}

/// Judges `writes` typed one after another into a shell; the last one's access, or the
/// first refusal.
fn shell(writes: &[&str]) -> Result<Access, ToolError> {
    let cx = cx();
    let mut typist = Typist::default();
    let mut last = Access::shared();
    for typed in writes {
        let (access, after) = judge(Reader::Shell, "bash", "bash", &typist, typed, &cx)?;
        typist = after;
        last = access;
    }
    Ok(last)
}

fn refused(result: Result<Access, ToolError>) -> String {
    match result {
        Ok(access) => panic!("not refused: {access:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn programs_are_told_apart_by_name() {
    assert_eq!(reader_of("/bin/bash"), Reader::Shell);
    assert_eq!(reader_of("-bash"), Reader::Shell);
    assert_eq!(reader_of("python3.12"), Reader::Interpreter);
    assert_eq!(reader_of("python3"), Reader::Interpreter);
    assert_eq!(reader_of("sqlite3"), Reader::Interpreter);
    assert_eq!(reader_of("psql"), Reader::Interpreter);
    assert_eq!(reader_of("vim"), Reader::Program);
    assert_eq!(reader_of("git"), Reader::Program);
}

#[test]
fn a_read_only_line_reads_and_nothing_runs_before_enter() {
    assert!(shell(&["ls -la\r"]).unwrap().is_shared());
    assert!(shell(&["rm -rf /"]).unwrap().is_shared(), "nothing runs before Enter");
    assert!(!shell(&["touch x\n"]).unwrap().is_shared());
}

#[test]
fn a_denied_command_is_refused_however_it_is_split() {
    for writes in [
        &["rm -rf /\n"][..],
        &["rm -rf ", "/\n"],
        &["rm -rf \\\n", "/\n"],
        &["echo \"\n", "\"; rm -rf /\n"],
        &["echo hi\u{3}", "rm -rf /\n"],
        &["ls -l\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}rm -rf /\n"],
        &["echo )\n", "rm -rf /\n"],
    ] {
        let err = refused(shell(writes));
        assert!(err.starts_with("Refused"), "{writes:?}: {err}");
    }
}

#[test]
fn editing_keys_and_history_expansion_are_refused_in_a_shell() {
    assert!(refused(shell(&["echo x\n", "\u{1b}[A\u{1}\n"])).contains("editing keys"));
    assert!(refused(shell(&["cur\t x\n"])).contains("editing keys"));
    assert!(refused(shell(&["echo \u{1b}[D", "x\n"])).contains("editing keys"), "an edit in an earlier write counts");
    for line in ["!!\n", "!curl\n", "^echo ^\n", "sudo !!\n"] {
        assert!(refused(shell(&[line])).contains("history expansion"), "{line}");
    }
    // Ctrl-C drops the edited line with the rest.
    assert!(shell(&["echo \u{1b}[D\u{3}", "ls\n"]).unwrap().is_shared());
    for fine in ["[ a != b ]\n", "if ! true; then :; fi\n", "echo 'hi!'\n"] {
        assert!(shell(&[fine]).is_ok(), "{fine}");
    }
}

#[test]
fn once_a_line_may_have_changed_the_shell_no_later_line_is_a_read() {
    assert!(!shell(&["alias ls='touch x'\n", "ls\n"]).unwrap().is_shared());
    assert!(shell(&["pwd\n", "ls\n"]).unwrap().is_shared());
}

#[test]
fn interpreters_and_other_programs() {
    let cx = cx();
    let typist = Typist::default();
    let (access, _) = judge(Reader::Interpreter, "python3", "python3", &typist, "x = 41\n", &cx).unwrap();
    assert!(!access.is_shared());
    let (access, after) = judge(Reader::Interpreter, "python3", "python3", &typist, "\tx", &cx).unwrap();
    assert!(access.is_shared(), "an indent runs nothing");
    assert_eq!(after.line, "\tx");
    let (access, _) = judge(Reader::Program, "vim", "vim notes.txt", &typist, "ZZ", &cx).unwrap();
    assert!(!access.is_shared() && access.unproven.is_some(), "keys into an editor are never a read");
    let (access, _) = judge(Reader::Program, "vim", "vim notes.txt", &typist, "", &cx).unwrap();
    assert!(access.is_shared(), "reading types nothing");
}
