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
//!
//! **Hot code together** (`--symbol-ordering-file hot-symbols.txt`). The functions the start
//! and the common calls run (listed by `bench/hot-symbols.py`) are laid out side by side, so
//! the pages of code a process touches are few and the kernel's 64 KB mapping around each
//! touched page maps them, not the code around them: an idle MCP server holds 10 MB instead of
//! 19, and a one-shot call takes fewer page faults. Passed when the linker rustc uses takes
//! the flag (lld, rustc's own linker on this target since 1.90), found by linking a probe with
//! rustc itself; a name the list holds but the executable lacks (another toolchain, changed
//! code) is skipped without a word.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target == host && target.ends_with("-linux-gnu") && packs_relative_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=hot-symbols.txt");
    let hot = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("hot-symbols.txt");
    if target.contains("-linux-") && hot.is_file() && orders_symbols() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", hot.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the linker rustc uses for this build takes a symbol ordering file: a probe
/// program is linked by rustc, with this build's target and flags, and such a file.
fn orders_symbols() -> bool {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let (source, order, program) = (out.join("order_probe.rs"), out.join("order_probe.txt"), out.join("order_probe"));
    if std::fs::write(&source, "fn main() {}\n").is_err() || std::fs::write(&order, "main\n").is_err() {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut probe = Command::new(rustc);
    probe.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Ok(target) = std::env::var("TARGET") {
        probe.args(["--target", &target]);
    }
    probe
        .arg("-o")
        .arg(&program)
        .arg("-C")
        .arg(format!("link-arg=-Wl,--symbol-ordering-file={}", order.display()))
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success())
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
