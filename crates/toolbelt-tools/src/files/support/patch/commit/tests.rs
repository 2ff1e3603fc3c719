use super::*;

#[test]
fn a_failed_commit_rolls_back_what_was_committed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "original a").unwrap();
    std::fs::write(root.join("b.txt"), "original b").unwrap();
    // Renaming a file over a non-empty directory fails: the third commit breaks.
    std::fs::create_dir_all(root.join("blocker/inner")).unwrap();
    let ws = OpenRoots::from_paths(std::slice::from_ref(&root)).unwrap();
    let at = |name: &str| ws.locate(&root.join(name)).unwrap();
    let write = |bytes: &[u8], restore: Option<&[u8]>| Action::Write {
        bytes: bytes.to_vec(),
        restore: restore.map(<[u8]>::to_vec),
        aside: false,
        perms: None,
    };
    let changes = vec![
        Change { loc: at("a.txt"), action: write(b"new a", Some(b"original a")) },
        Change { loc: at("new/c.txt"), action: write(b"new c", None) },
        Change { loc: at("b.txt"), action: Action::Delete },
        Change { loc: at("blocker"), action: write(b"boom", None) },
    ];
    let journal = tempfile::tempdir().unwrap();
    let e = apply(&ws, &changes, journal.path()).err().unwrap().to_string();
    assert!(e.contains("failed after 2 of 3 files were written"), "{e}");
    assert!(e.contains("Every change was rolled back; nothing was changed"), "{e}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "original a");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "original b");
    assert!(!root.join("new").exists());
    let mut names: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["a.txt", "b.txt", "blocker"]);
}

/// A tree of files, a patch's changes over it (updates, a new file in a new directory, a
/// delete), and a context whose journals go to `journal`.
struct Crash {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    journal: PathBuf,
}

const OLD: [(&str, &str); 3] = [("a.txt", "old a"), ("sub/b.txt", "old b"), ("gone.txt", "old gone")];
const NEW: [(&str, Option<&str>); 4] =
    [("a.txt", Some("new a")), ("sub/b.txt", Some("new b")), ("made/c.txt", Some("new c")), ("gone.txt", None)];

impl Crash {
    fn new() -> Crash {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (root, journal) = (base.join("root"), base.join("journal"));
        for (name, text) in OLD {
            std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
            std::fs::write(root.join(name), text).unwrap();
        }
        Crash { _tmp: tmp, root, journal }
    }

    fn ws(&self) -> OpenRoots {
        OpenRoots::from_paths(std::slice::from_ref(&self.root)).unwrap()
    }

    fn changes(&self, ws: &OpenRoots) -> Vec<Change> {
        NEW.iter()
            .map(|(name, text)| {
                let loc = ws.locate(&self.root.join(name)).unwrap();
                let action = match text {
                    Some(t) => Action::Write {
                        bytes: t.as_bytes().to_vec(),
                        restore: OLD.iter().find(|(n, _)| n == name).map(|(_, o)| o.as_bytes().to_vec()),
                        aside: false,
                        perms: None,
                    },
                    None => Action::Delete,
                };
                Change { loc, action }
            })
            .collect()
    }

    /// Runs the commit as `apply` does, but stops (as a kill would) after `renames` renames,
    /// or before the `commit` line when `committed` is false. The journal's lock is let go,
    /// as a dead process's is.
    fn crash(&self, committed: bool, renames: usize) {
        let ws = self.ws();
        let changes = self.changes(&ws);
        let header = header(&ws, &changes);
        let steps = replay::steps(&ws, &header).unwrap();
        let mut journal = Journal::create(&self.journal, &header).unwrap();
        for (c, s) in changes.iter().zip(&steps) {
            if let (Action::Write { bytes, .. }, StepKind::Write { temp, .. }) = (&c.action, &s.kind) {
                let options = StageOptions { temp: temp.file_name().map(OsStr::to_os_string), mode: None };
                atomic::stage_with(ws.dir(&c.loc), &c.loc.rel, bytes, &options).unwrap().keep();
            }
        }
        for (c, s) in changes.iter().zip(&steps) {
            if let (Action::Write { restore: Some(o), .. }, StepKind::Write { backup: Some(b), mode, .. }) =
                (&c.action, &s.kind)
            {
                back_up(s.dir, &c.loc.rel, b, o, *mode).unwrap();
            }
        }
        if committed {
            journal.mark_committed().unwrap();
            replay::set_aside(&steps).unwrap();
            for s in steps.iter().filter(|s| matches!(s.kind, StepKind::Write { .. })).take(renames) {
                replay::put_in_place(s).unwrap();
            }
        }
        drop(journal);
    }

    /// Runs the next write's recovery.
    fn recover(&self) -> Vec<String> {
        let mut services = toolbelt_core::Extensions::default();
        services.insert(crate::files::support::journal::JournalDir(self.journal.clone()));
        let session = std::sync::Arc::new(toolbelt_core::SessionState::new("t", self.root.clone(), vec![]));
        let cx = toolbelt_core::ToolContext::new(
            "c",
            session,
            toolbelt_core::CancellationToken::new(),
            toolbelt_core::EventSink::none(),
            toolbelt_core::Limits::default(),
            services,
        );
        crate::files::support::journal::recover(&self.ws(), &cx)
    }

    /// "old" or "new" when the whole tree is in one state and nothing else is left.
    fn state(&self) -> &'static str {
        let mut files = Vec::new();
        for entry in ignore::WalkBuilder::new(&self.root).standard_filters(false).build().flatten() {
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let rel = entry.path().strip_prefix(&self.root).unwrap().to_string_lossy().into_owned();
                files.push((rel, std::fs::read_to_string(entry.path()).unwrap()));
            }
        }
        files.sort();
        let set = |list: Vec<(&str, &str)>| {
            let mut v: Vec<(String, String)> = list.into_iter().map(|(a, b)| (a.into(), b.into())).collect();
            v.sort();
            v
        };
        let old = set(OLD.to_vec());
        let new = set(NEW.iter().filter_map(|(n, t)| t.map(|t| (*n, t))).collect());
        let journals = std::fs::read_dir(&self.journal).map(|d| d.count()).unwrap_or(0);
        assert_eq!(journals, 0, "a journal is left");
        if files == old {
            assert!(!self.root.join("made").exists(), "the directory made for a new file is left");
            "old"
        } else if files == new {
            "new"
        } else {
            panic!("a mixed tree: {files:?}")
        }
    }
}

#[test]
fn a_crash_before_the_commit_line_is_rolled_back() {
    let c = Crash::new();
    c.crash(false, 0);
    let notes = c.recover();
    assert!(notes[0].contains("rolled back"), "{notes:?}");
    assert_eq!(c.state(), "old");
}

#[test]
fn a_crash_between_renames_is_rolled_forward() {
    for renames in 0..=3 {
        let c = Crash::new();
        c.crash(true, renames);
        let notes = c.recover();
        assert!(notes[0].contains("changing 4 files") && notes[0].contains("completed"), "{notes:?}");
        assert_eq!(c.state(), "new", "after {renames} renames");
    }
}

#[test]
fn a_staged_file_changed_after_the_crash_rolls_everything_back() {
    let c = Crash::new();
    c.crash(true, 1);
    // Someone rewrites a staged temp file before recovery: its digest no longer matches.
    let sub = c.root.join("sub");
    let temp = std::fs::read_dir(&sub)
        .unwrap()
        .flatten()
        .find(|e| crate::files::support::atomic::parse_temp_name(&e.file_name()).is_some())
        .unwrap();
    std::fs::write(temp.path(), "planted").unwrap();
    let notes = c.recover();
    assert!(notes[0].contains("rolled back"), "{notes:?}");
    assert_eq!(c.state(), "old");
}

#[test]
fn a_live_commits_journal_is_left_alone() {
    let c = Crash::new();
    let ws = c.ws();
    let changes = c.changes(&ws);
    let journal = Journal::create(&c.journal, &header(&ws, &changes)).unwrap();
    assert!(c.recover().is_empty());
    assert_eq!(std::fs::read_dir(&c.journal).unwrap().count(), 1);
    journal.remove().unwrap();
}

#[test]
fn a_whole_commit_leaves_no_journal_backup_or_temp() {
    let c = Crash::new();
    let ws = c.ws();
    assert!(apply(&ws, &c.changes(&ws), &c.journal).unwrap().is_empty());
    assert_eq!(c.state(), "new");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(c.root.join("made/c.txt")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, crate::files::support::atomic::new_file_mode());
}
