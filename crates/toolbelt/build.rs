//! Link-time choices for the `toolbelt` executable.
//!
//! **Packed relative relocations** (`-z pack-relative-relocs`, `DT_RELR`). The executable is
//! position-independent, and every pointer in its read-only data (vtables, static tables of
//! strings, the parsers' tables) is a relative relocation the dynamic loader applies at each
//! start: some 78,000 of them, a 1.9 MB table read and walked before `main` — half of what
//! `toolbelt --version` executed. Packed, the table is a few kilobytes of bitmaps and the walk
//! a fraction of the work; the executable keeps its address randomization (a non-PIE link
//! would have none). Used only where the linker knows the flag and the C library's loader
//! reads the packed form (glibc 2.36 and later): a probe program is linked with it and run,
//! and anything else (another target, an older toolchain) links as before.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target == host && target.ends_with("-linux-gnu") && packs_relative_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether a program linked with `-z pack-relative-relocs` links and runs here.
fn packs_relative_relocations() -> bool {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out.join("relr_probe.c");
    let program = out.join("relr_probe");
    // A pointer in initialized data makes a relative relocation for the loader to apply.
    let text = "static const char *p = \"ok\";\nint main(void) { return p[0] == 'o' ? 0 : 1; }\n";
    if std::fs::write(&source, text).is_err() {
        return false;
    }
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let linked = Command::new(cc)
        .args(["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}
