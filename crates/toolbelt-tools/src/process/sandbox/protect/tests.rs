use super::*;

#[test]
fn plans_each_existing_entry_and_git_s_program_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for d in [".git/refs", "nested/.git", ".vscode", "src"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join(".git/config"), "").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    std::os::unix::fs::symlink("/tmp", root.join(".claude")).unwrap();

    let roots = std::slice::from_ref(&root);
    let (strict, missing) = plan(Plan { writable: roots, roots, ..Plan::default() }, Namespace::Mount);
    let mut ro = strict.unwrap().read_only();
    ro.sort();
    assert_eq!(ro, [root.join(".git"), root.join(".mcp.json"), root.join(".vscode"), root.join("nested/.git")]);
    // What is missing is noted, and told once made (a symlink is neither held nor missing).
    assert!(missing.made().is_empty());
    std::fs::create_dir(root.join(".idea")).unwrap();
    std::fs::write(root.join("src/.mcp.json"), "{}").unwrap();
    let mut made = missing.made();
    made.sort();
    assert_eq!(made, [root.join(".idea"), root.join("src/.mcp.json")]);
    std::fs::remove_dir(root.join(".idea")).unwrap();
    std::fs::remove_file(root.join("src/.mcp.json")).unwrap();

    let places = Places {
        hold: vec![root.join("src")],
        pin: vec![root.join("nested")],
        reopen: vec![root.join("src/work")],
        ..Places::default()
    };
    let writes = plan(
        Plan { writable: roots, roots, places: Some(&places), git_writes: true, ..Plan::default() },
        Namespace::Mount,
    )
    .0
    .unwrap();
    let ro = writes.read_only();
    assert!(!ro.contains(&root.join(".git")), "git's data stays writable");
    for p in [".git/config", ".git/hooks", ".git/info", "src"] {
        assert!(ro.contains(&root.join(p)), "{p} in {ro:?}");
    }
    let pinned = writes.binds.iter().find(|b| b.path.as_bytes() == root.join("nested").as_os_str().as_bytes());
    assert!(pinned.is_some_and(|b| !b.read_only && !b.reopen), "a pin is a plain bind");
    let reopened = writes.binds.iter().find(|b| b.path.as_bytes() == root.join("src/work").as_os_str().as_bytes());
    assert!(reopened.is_some_and(|b| !b.read_only && b.reopen), "a root inside a held place is reopened");
    assert!(root.join(".git/hooks").is_dir(), "a missing hooks directory is created so it can be held");

    let empty = tempfile::tempdir().unwrap();
    let empty = [empty.path().to_path_buf()];
    assert!(plan(Plan { writable: &empty, roots: &empty, ..Plan::default() }, Namespace::Mount).0.is_none());
    // A hidden file is masked, and so are its other names.
    std::fs::write(root.join("secret.txt"), "k").unwrap();
    std::fs::hard_link(root.join("secret.txt"), root.join("src/innocent.txt")).unwrap();
    let masks = [root.join("secret.txt"), root.join("missing")];
    let masked = plan(Plan { roots, masks: &masks, ..Plan::default() }, Namespace::Mount).0.unwrap();
    assert_eq!(masked.read_only(), [root.join("secret.txt"), root.join("src/innocent.txt")]);
    assert_eq!(masked.dropped(), 0);
    // More than the mounts a command may have: the plan says how many were left out (and
    // the sandbox then refuses it), never quietly hides only some.
    let many: Vec<PathBuf> = (0..MAX_BINDS + 3)
        .map(|i| {
            let file = root.join(format!("hidden-{i}.txt"));
            std::fs::write(&file, "k").unwrap();
            file
        })
        .collect();
    let over = plan(Plan { roots, masks: &many, ..Plan::default() }, Namespace::Mount).0.unwrap();
    assert_eq!(over.dropped(), 3);
}
