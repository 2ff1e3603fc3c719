use super::*;
use std::os::unix::fs::PermissionsExt as _;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn replaces_content_keeps_mode_and_leaves_no_temp() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a.sh");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    let root = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
    write(&root, Path::new("a.sh"), b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(mode(&path), 0o751);
    write(&root, Path::new("deep/er/b.txt"), b"x").unwrap();
    assert_eq!(std::fs::read_to_string(tmp.path().join("deep/er/b.txt")).unwrap(), "x");
    assert_eq!(mode(&tmp.path().join("deep/er/b.txt")), new_file_mode());
    // A staged write dropped without commit leaves the original and no temp behind.
    drop(stage(&root, Path::new("a.sh"), b"never").unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(names(tmp.path()), ["a.sh", "deep"]);
}

#[test]
fn a_temp_is_never_readable_by_others_while_it_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let secret = dir.join("secret.env");
    std::fs::write(&secret, "old").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let root = Dir::open_ambient_dir(&dir, cap_std::ambient_authority()).unwrap();

    let content = "SECRET=1\n".repeat(200_000);
    // A thread watches the directory for temp files and checks the mode of each it sees: a
    // 0600 file's replacement is owner-only throughout; a new file's temp is owner-only
    // until it is whole and given its final mode just before its rename.
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (dir, done, whole) = (dir.clone(), Arc::clone(&done), content.len() as u64);
        std::thread::spawn(move || {
            let (mut seen, mut exposed) = (0usize, Vec::new());
            while !done.load(Ordering::Relaxed) {
                for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                    let name = entry.file_name();
                    if parse_temp_name(&name).is_none() {
                        continue;
                    }
                    let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
                    seen += 1;
                    let mode = meta.permissions().mode() & 0o7777;
                    let final_new =
                        name.to_string_lossy().starts_with(".new-") && mode == new_file_mode() && meta.len() == whole;
                    if mode & 0o077 != 0 && !final_new {
                        exposed.push(format!("{name:?} {mode:o} {} bytes", meta.len()));
                    }
                }
            }
            (seen, exposed)
        })
    };
    for i in 0..40 {
        write(&root, Path::new("secret.env"), content.as_bytes()).unwrap();
        // New files too: owner-only until just before the rename.
        write(&root, Path::new(&format!("new-{i}.env")), content.as_bytes()).unwrap();
    }
    done.store(true, Ordering::Relaxed);
    let (seen, exposed) = watcher.join().unwrap();
    assert!(seen > 0, "the watcher never saw a temp file; the test proves nothing");
    assert!(exposed.is_empty(), "temp files readable by others: {exposed:?}");
    assert_eq!(mode(&secret), 0o600);
    assert_eq!(mode(&dir.join("new-0.env")), new_file_mode());
}

#[test]
fn a_dead_writers_old_temp_is_cleaned_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    let make = |name: &str, age: Option<SystemTime>| {
        let file = std::fs::File::create(dir.join(name)).unwrap();
        if let Some(at) = age {
            file.set_modified(at).unwrap();
        }
    };
    let stale = format!(".a.txt.tb{dead}-7.tmp");
    make(&stale, Some(old));
    let young = format!(".a.txt.tb{dead}-8.tmp");
    make(&young, None);
    let backup = format!(".a.txt.tbold{dead}-9.tmp");
    make(&backup, Some(old));
    let live = format!(".a.txt.tb{}-1.tmp", std::os::unix::process::parent_id());
    make(&live, Some(old));
    make("notes.tmp", Some(old));
    make(".b.tb12x-1.tmp", Some(old));

    let root = Dir::open_ambient_dir(dir, cap_std::ambient_authority()).unwrap();
    write(&root, Path::new("a.txt"), b"x").unwrap();
    let left = names(dir);
    assert!(!left.contains(&stale), "{left:?}");
    for kept in [&young, &backup, &live, &"notes.tmp".to_string(), &".b.tb12x-1.tmp".to_string()] {
        assert!(left.contains(kept), "{kept} was removed: {left:?}");
    }
}

#[test]
fn a_fifo_at_the_target_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
    std::fs::write(tmp.path().join("p"), "file").unwrap();
    let staged = stage(&root, Path::new("p"), b"new").unwrap();
    // Swapped for a FIFO between the check and the commit.
    std::fs::remove_file(tmp.path().join("p")).unwrap();
    nix::unistd::mkfifo(&tmp.path().join("p"), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let e = staged.commit().unwrap_err().to_string();
    assert!(e.contains("named pipe (FIFO)"), "{e}");
    let meta = std::fs::symlink_metadata(tmp.path().join("p")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()));
    assert_eq!(names(tmp.path()), ["p"]);
}
