use super::*;

fn cx() -> ToolContext {
    ToolContext::detached(std::env::temp_dir())
}

fn at(reader: Reader, terminal: bool) -> Typing<'static> {
    let program = match reader {
        Reader::Shell => "bash",
        Reader::Interpreter(_) => "python3",
        Reader::Program => "vim",
    };
    Typing { reader, program, command: program, terminal, closing: false }
}

/// Judges `writes` typed one after another into bash in a terminal; the last one's access,
/// or the first refusal.
fn shell(writes: &[&str]) -> Result<Access, ToolError> {
    typed_into(at(Reader::Shell, true), writes)
}

fn typed_into(at: Typing<'_>, writes: &[&str]) -> Result<Access, ToolError> {
    let cx = cx();
    let mut typist = Typist::default();
    let mut last = Access::shared();
    for typed in writes {
        let (access, after) = judge(at, &typist, typed, &cx)?;
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
fn programs_are_told_apart_by_their_executable() {
    assert_eq!(reader_of("/usr/bin/bash", true), Reader::Shell);
    assert_eq!(reader_of("bash", false), Reader::Program, "a bash that is not the system's is any program");
    assert_eq!(reader_of("/usr/bin/python3.12", true), Reader::Interpreter("python"));
    assert_eq!(reader_of("sqlite3", true), Reader::Interpreter("sqlite"));
    assert_eq!(reader_of("/usr/bin/dash", true), Reader::Program, "only bash's line editor is modelled");
    assert_eq!(reader_of("vim", true), Reader::Program);
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
        &["echo )\n", "rm -rf /\n"],
    ] {
        let err = refused(shell(writes));
        assert!(err.starts_with("Refused"), "{writes:?}: {err}");
    }
}

#[test]
fn editing_keys_history_expansion_and_prompt_state_are_refused_in_bash() {
    for keys in ["\u{1b}[A\n", "cur\t x\n", "touch x\u{f}", "ls -l\u{7f}\n", "echo x\u{15}\n", "ls\u{4}"] {
        assert!(refused(shell(&[keys])).contains("editing key"), "{keys:?}");
    }
    for line in ["!!\n", "!curl\n", "^echo ^\n", "sudo !!\n", "echo 'hi!'\n", "true \"'\"; !-2:1*\n"] {
        assert!(refused(shell(&[line])).contains("history expansion"), "{line}");
    }
    for line in
        ["PROMPT_COMMAND='touch x'\n", "bind -x '\"q\": touch x'\n", "fc -s\n", "histchars=%\n", "stty erase z\n"]
    {
        assert!(refused(shell(&[line])).contains("uses `"), "{line}");
    }
    // Ctrl-C drops what is typed; Ctrl-D on an empty line is end of file.
    assert!(shell(&["echo x\u{3}", "ls\n"]).unwrap().is_shared());
    assert!(shell(&["\u{4}"]).unwrap().is_shared());
    for fine in ["[ a != b ]\n", "if ! true; then :; fi\n"] {
        assert!(shell(&[fine]).is_ok(), "{fine}");
    }
}

#[test]
fn through_a_pipe_bytes_are_read_as_they_are() {
    let pipe = at(Reader::Shell, false);
    // Ctrl-U and Ctrl-C edit nothing in a pipe: `touch` is in the line bash reads.
    for writes in [&["touch /x;\u{15}echo hi\n"][..], &["touch /x \u{3}\n"], &["echo ''\u{7f}; touch y #'\n"]] {
        let access = typed_into(pipe, writes).unwrap();
        assert!(!access.is_shared(), "{writes:?}");
    }
    let err = refused(typed_into(pipe, &["echo \u{3}\nrm -rf /\n"]));
    assert!(err.starts_with("Refused"), "{err}");
    // End of file hands over the last line.
    let cx = cx();
    let closing = Typing { closing: true, ..pipe };
    let (access, _) = judge(closing, &Typist::default(), "touch x", &cx).unwrap();
    assert!(!access.is_shared());
}

#[test]
fn once_a_line_may_have_changed_the_shell_no_later_line_is_read_from_its_text() {
    let access = shell(&["alias ls='touch x'\n", "ls\n"]).unwrap();
    assert!(!access.is_shared() && access.opaque.is_some(), "{access:?}");
    assert!(shell(&["pwd\n", "ls\n"]).unwrap().is_shared());
    assert!(!Typist::for_command("bash --norc").tainted);
    assert!(Typist::for_command("bash --rcfile ./x.sh").tainted);
    assert!(Typist::for_command("PROMPT_COMMAND=x bash").tainted);
}

#[test]
fn interpreters_and_other_programs() {
    let python = at(Reader::Interpreter("python"), true);
    assert!(!typed_into(python, &["x = 41\n"]).unwrap().is_shared());
    assert!(!typed_into(python, &["x"]).unwrap().is_shared(), "an interpreter's keys are its code");
    // What is typed is also read as shell lines: typed ahead, it may reach a shell.
    assert!(refused(typed_into(python, &["exit()\nrm -rf /\n"])).starts_with("Refused"));
    let vim = at(Reader::Program, true);
    let access = typed_into(vim, &["ZZ"]).unwrap();
    assert!(!access.is_shared() && access.opaque.is_some(), "keys into an editor are never a read");
    assert!(typed_into(vim, &[""]).unwrap().is_shared(), "reading types nothing");
}

#[test]
fn too_much_at_once_is_refused_before_it_is_judged() {
    let lines = "echo '\n".repeat(MAX_LINES + 1);
    assert!(refused(shell(&[&lines])).contains("too much"));
}
