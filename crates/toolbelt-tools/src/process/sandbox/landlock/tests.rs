use super::*;

#[test]
fn paths_follow_the_mode() {
    let roots = vec![PathBuf::from("/work/a"), PathBuf::from("/work/b")];
    let config = SandboxConfig {
        writable_roots: vec![PathBuf::from("/cache"), "/work/a".into(), "/tmp".into()],
        ..Default::default()
    };
    let w = writable(&config, &roots);
    assert!(w.temp);
    for p in ["/work/a", "/work/b", "/cache"] {
        assert_eq!(w.dirs.iter().filter(|d| d.as_path() == Path::new(p)).count(), 1, "{p} once in {w:?}");
    }
    assert!(!w.dirs.contains(&PathBuf::from("/tmp")), "/tmp comes with the temp rules");

    let read_only = SandboxConfig { mode: SandboxMode::ReadOnly, ..config };
    assert_eq!(writable(&read_only, &roots), Writable { temp: false, dirs: vec![], sealed: vec![] });
}

#[test]
fn rulesets_build_with_and_without_the_network() {
    let w = writable(&SandboxConfig::default(), &[PathBuf::from("/nonexistent/root")]);
    ruleset(&w, true).unwrap();
    ruleset(&w, false).unwrap();
    assert!(!granted().contains(AccessFs::MakeChar) && !granted().contains(AccessFs::MakeBlock));
    assert!(granted().contains(AccessFs::MakeReg) && granted().contains(AccessFs::MakeFifo));
}

#[test]
fn a_ruleset_is_shared_while_its_directories_stay_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let config = SandboxConfig::default();
    let w = writable(&config, std::slice::from_ref(&root));
    let a = shared(&w, false).unwrap();
    assert!(Arc::ptr_eq(&a.0, &shared(&w, false).unwrap().0), "same roots, same ruleset");
    assert!(!Arc::ptr_eq(&a.0, &shared(&w, true).unwrap().0), "the network setting is part of it");
    // The root replaced by another directory: its rule would name the old one.
    std::fs::rename(&root, dir.path().join("moved")).unwrap();
    std::fs::create_dir(&root).unwrap();
    let b = shared(&w, false).unwrap();
    assert!(!Arc::ptr_eq(&a.0, &b.0), "a new ruleset for the new directory");
    assert!(Arc::ptr_eq(&b.0, &shared(&w, false).unwrap().0));
    // A root that did not exist, then does.
    let later = dir.path().join("later");
    let w = writable(&config, std::slice::from_ref(&later));
    let c = shared(&w, false).unwrap();
    std::fs::create_dir(&later).unwrap();
    assert!(!Arc::ptr_eq(&c.0, &shared(&w, false).unwrap().0));
}

#[test]
fn files_get_only_file_rights() {
    let dir = AccessFs::from_write(FS_ABI);
    let file = dir & AccessFs::from_file(FS_ABI);
    assert!(file.contains(AccessFs::WriteFile) && file.contains(AccessFs::Truncate));
    assert!(!file.contains(AccessFs::MakeReg) && !file.contains(AccessFs::Refer));
    assert!(!dir.contains(AccessFs::ReadFile), "reads are not handled, so allowed everywhere");
}

#[test]
fn a_sealed_ruleset_is_built_again_when_the_sealed_directory_gains_a_folder() {
    // Outside the temp directory, beneath which nothing is sealed.
    let Ok(dir) = tempfile::tempdir_in("/var/tmp") else {
        eprintln!("skipped: no /var/tmp");
        return;
    };
    let root = dir.path().canonicalize().unwrap().join("root");
    let home = root.join("home");
    std::fs::create_dir_all(home.join("a")).unwrap();
    let w = writable(&SandboxConfig::default(), std::slice::from_ref(&root)).sealing(std::slice::from_ref(&home));
    assert_eq!(w.split(), [home.clone(), root.clone()], "every directory from the root down to the seal");
    let a = shared(&w, false).unwrap();
    assert!(Arc::ptr_eq(&a.0, &shared(&w, false).unwrap().0));
    // A folder made since has no rule of its own yet: a new ruleset names it.
    std::fs::create_dir(home.join("b")).unwrap();
    let b = shared(&w, false).unwrap();
    assert!(!Arc::ptr_eq(&a.0, &b.0));
    // Beneath a temp directory nothing is sealed.
    let tmp = writable(&SandboxConfig::default(), &[]).sealing(&[PathBuf::from("/tmp/x/home")]);
    assert!(tmp.sealed.is_empty());
}
