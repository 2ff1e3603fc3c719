//! Each format on output its linter really printed (trimmed); the live runs are in
//! `tests/lint.rs`.

use super::*;

#[test]
fn cargo_messages_take_the_primary_span_and_skip_summaries() {
    let out = concat!(
        r#"{"reason":"compiler-artifact","package_id":"x"}"#,
        "\n",
        r#"{"reason":"compiler-message","message":{"children":[{"children":[],"code":null,"level":"help","message":"remove `return`","rendered":null,"spans":[{"file_name":"src/main.rs","line_start":3,"column_start":5,"is_primary":true,"suggestion_applicability":"MachineApplicable"}]}],"level":"warning","message":"unneeded `return` statement","spans":[{"file_name":"src/main.rs","line_start":3,"column_start":5,"is_primary":true,"suggestion_applicability":null}],"code":{"code":"clippy::needless_return","explanation":null}}}"#,
        "\n",
        r#"{"reason":"compiler-message","message":{"children":[],"level":"error","message":"aborting due to 1 previous error","spans":[],"code":null}}"#,
        "\n",
        "a build script's own line\n",
        r#"{"reason":"build-finished","success":false}"#,
    );
    let found = parse(Format::Cargo, out, "").unwrap();
    assert_eq!(
        found,
        [Finding {
            path: "src/main.rs".into(),
            line: 3,
            column: 5,
            severity: Severity::Warning,
            code: Some("clippy::needless_return".into()),
            message: "unneeded `return` statement".into(),
            fixable: true,
        }]
    );
}

#[test]
fn ruff_eslint_and_shellcheck_json() {
    let ruff = r#"[{"cell":null,"code":"F401","filename":"/p/app.py","fix":{"applicability":"safe","edits":[]},"location":{"column":8,"row":1},"message":"`os` imported but unused","severity":"error"},
        {"cell":null,"code":"invalid-syntax","filename":"/p/bad.py","fix":null,"location":{"column":12,"row":1},"message":"Expected `)`","severity":"error"}]"#;
    let found = parse(Format::Ruff, ruff, "").unwrap();
    assert_eq!((found[0].line, found[0].column, found[0].fixable), (1, 8, true));
    assert_eq!(found[1].code.as_deref(), Some("invalid-syntax"));
    assert!(!found[1].fixable);

    let eslint = r#"[{"filePath":"/p/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'unused' is assigned a value but never used.","line":1,"column":7},
        {"ruleId":"eqeqeq","severity":1,"message":"Expected '==='","line":2,"column":7}]},
        {"filePath":"/p/broken.js","messages":[{"ruleId":null,"fatal":true,"severity":2,"message":"Parsing error: The keyword 'let' is reserved","line":1,"column":1}]}]"#;
    let found = parse(Format::Eslint, eslint, "").unwrap();
    let summary: Vec<(&str, Severity, Option<&str>)> =
        found.iter().map(|f| (f.path.as_str(), f.severity, f.code.as_deref())).collect();
    assert_eq!(
        summary,
        [
            ("/p/a.js", Severity::Error, Some("no-unused-vars")),
            ("/p/a.js", Severity::Warning, Some("eqeqeq")),
            ("/p/broken.js", Severity::Error, None)
        ]
    );

    let json1 = r#"{"comments":[{"file":"sh/run.sh","line":2,"endLine":2,"column":10,"endColumn":21,"level":"error","code":2045,"message":"Iterating over ls output is fragile. Use globs.","fix":null},
        {"file":"sh/run.sh","line":3,"column":8,"level":"info","code":2086,"message":"Double quote to prevent globbing and word splitting.","fix":{"replacements":[]}}]}"#;
    let found = parse(Format::Shellcheck, json1, "").unwrap();
    assert_eq!(found[0].code.as_deref(), Some("SC2045"));
    assert_eq!(found[1].severity, Severity::Info);
    assert!(found[1].fixable);
    // The older `-f json` is the bare list.
    let json = r#"[{"file":"a.sh","line":1,"column":1,"level":"warning","code":2034,"message":"x appears unused."}]"#;
    assert_eq!(parse(Format::Shellcheck, json, "").unwrap()[0].code.as_deref(), Some("SC2034"));
}

#[test]
fn sarif_results_with_uris() {
    let sarif = r#"{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"results":[
        {"fixes":[{"description":{"text":"Remove unused import"}}],"level":"error","locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///tmp/my%20project/app.py"},"region":{"startColumn":8,"startLine":1}}}],"message":{"text":"`os` imported but unused"},"ruleId":"F401"},
        {"level":"note","locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/x.go"},"region":{"startLine":4}}}],"message":{"text":"a note"},"ruleId":"S1"}]}]}"#;
    let found = parse(Format::Sarif, sarif, "").unwrap();
    assert_eq!(resolve(Path::new("/elsewhere"), &found[0].path), Path::new("/tmp/my project/app.py"));
    assert_eq!((found[0].severity, found[0].fixable), (Severity::Error, true));
    assert_eq!(resolve(Path::new("/repo"), &found[1].path), Path::new("/repo/src/x.go"));
    assert_eq!((found[1].line, found[1].column, found[1].severity), (4, 0, Severity::Info));
}

#[test]
fn text_lines_of_compilers_and_linters() {
    let stdout = "\
app/main.py:6: error: Name \"undefined_name\" is not defined  [name-defined]
Found 1 error in 1 file (checked 3 source files)
./app.py:1:1: F401 'os' imported but unused
";
    let stderr = "\
# example.com/m
vet: ./main.go:7:2: fmt.Printf format %d has arg s of wrong type string
main.c:4:19: error: too few arguments to function 'area'
main.c:1:5: note: declared here
src/lib.rs:10:3: warning[unused]: unused variable
";
    let found = parse(Format::Lines, stdout, stderr).unwrap();
    let got: Vec<String> = found
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{} {} {} {}",
                f.path,
                f.line,
                f.column,
                f.severity.name(),
                f.code.as_deref().unwrap_or("-"),
                f.message
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "app/main.py:6:0 error name-defined Name \"undefined_name\" is not defined",
            "./app.py:1:1 warning F401 'os' imported but unused",
            "./main.go:7:2 warning - fmt.Printf format %d has arg s of wrong type string",
            "main.c:4:19 error - too few arguments to function 'area'",
            "main.c:1:5 info - declared here",
            "src/lib.rs:10:3 warning unused unused variable",
        ]
    );
}

#[test]
fn output_that_is_not_the_format_says_how_it_begins() {
    let err = parse(Format::Ruff, "error: unexpected argument '--bogus'", "").unwrap_err();
    assert!(err.0.contains("begins: error: unexpected argument"), "{}", err.0);
    assert!(parse(Format::Eslint, "  ", "").unwrap_err().0.contains("printed nothing"));
    assert_eq!(Format::parse("Clippy"), Some(Format::Cargo));
    assert_eq!(Format::parse("xml"), None);
}
