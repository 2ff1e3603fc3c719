//! What this machine can enforce, found once per process by trying.
//!
//! The Landlock ABI is asked of the kernel (a query that creates nothing). Then each layer is
//! applied for real, the way commands get it, in a short-lived child that runs `true`: the
//! filesystem rules (with the TCP rules when the ABI has them), then the socket filter. A
//! container that blocks the system calls, a kernel without Landlock enabled or an
//! architecture without a filter all show up here, before any command runs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::{Confinement, SandboxConfig, SandboxMode, SandboxUnavailable, landlock, protect, seccomp};

/// What this machine can enforce (probed once per process, cached).
#[derive(Debug, Clone)]
pub struct SandboxReport {
    /// The kernel release.
    kernel: String,
    /// The Landlock ABI version, or why Landlock cannot be used.
    abi: Result<u32, String>,
    /// Whether write confinement applied in a child, or why not.
    fs: Result<(), String>,
    /// Whether TCP bind/connect confinement applied in a child, or why not.
    tcp: Result<(), String>,
    /// Whether the socket-family filter applied in a child, or why not.
    seccomp: Result<(), String>,
    /// How protected paths are held read-only in writable roots, or why they cannot be.
    protect: Result<protect::Namespace, String>,
}

impl SandboxReport {
    /// The report for this machine, probed on first use.
    pub fn probe() -> &'static SandboxReport {
        static REPORT: OnceLock<SandboxReport> = OnceLock::new();
        REPORT.get_or_init(Self::run)
    }

    fn run() -> Self {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let abi = landlock_abi();
        let (fs, tcp) = match &abi {
            Ok(abi) => {
                let with_tcp = *abi >= landlock::NET_ABI as u32;
                let writable = landlock::writable(&SandboxConfig::default(), &[]);
                let fs = match landlock::ruleset(&writable, !with_tcp) {
                    Ok(ruleset) => try_in_child(Confinement {
                        ruleset: Some(ruleset),
                        filter: None,
                        binds: None,
                        caps: None,
                        sealed: Vec::new(),
                        missing: protect::Missing::default(),
                    }),
                    Err(e) => Err(format!("a Landlock ruleset cannot be built ({e})")),
                };
                let tcp = match (&fs, with_tcp) {
                    (Err(e), _) => Err(e.clone()),
                    (Ok(()), true) => Ok(()),
                    (Ok(()), false) => {
                        Err(format!("Landlock's TCP rules need ABI 4 (Linux 6.7); this kernel has ABI {abi}"))
                    }
                };
                (fs, tcp)
            }
            Err(why) => (Err(why.clone()), Err(why.clone())),
        };
        let seccomp = seccomp::filters(false).and_then(|filter| {
            try_in_child(Confinement {
                ruleset: None,
                filter: Some(filter),
                binds: None,
                caps: None,
                sealed: Vec::new(),
                missing: protect::Missing::default(),
            })
        });
        let protect = protect::probe();
        Self { kernel, abi, fs, tcp, seccomp, protect }
    }

    /// How protected paths inside writable roots are held read-only here, or why they are not.
    pub fn protected(&self) -> Result<protect::Namespace, SandboxUnavailable> {
        self.protect.clone().map_err(SandboxUnavailable)
    }

    /// The Landlock ABI version the kernel offers, if it offers Landlock.
    pub fn landlock_abi(&self) -> Option<u32> {
        self.abi.as_ref().ok().copied()
    }

    /// Whether commands can be run in `mode` (with the network on or off) here. Err is one
    /// plain line: what is missing and what to do.
    pub fn can_confine(&self, mode: SandboxMode, network: bool) -> Result<(), SandboxUnavailable> {
        if mode == SandboxMode::DangerFullAccess {
            return Ok(());
        }
        if let Err(why) = &self.fs {
            return Err(SandboxUnavailable(format!(
                "the {mode} sandbox cannot be applied on this machine: {why}; fix that, or choose the \
                 danger-full-access sandbox mode to run commands unconfined"
            )));
        }
        if !network && let Err(why) = &self.seccomp {
            return Err(SandboxUnavailable(format!(
                "the network cannot be turned off for commands on this machine: {why}; allow the network \
                 (network = true, --network) or choose the danger-full-access sandbox mode"
            )));
        }
        Ok(())
    }

    /// What the sandbox can enforce here, one fact per line (for `toolbelt sandbox check`).
    pub fn lines(&self) -> Vec<String> {
        let abi = match &self.abi {
            Ok(abi) => format!("ABI {abi}"),
            Err(why) => format!("unavailable: {why}"),
        };
        vec![
            format!("kernel: Linux {} ({})", self.kernel, std::env::consts::ARCH),
            format!("Landlock: {abi}"),
            format!("filesystem write confinement (Landlock): {}", yes_no(&self.fs)),
            format!("TCP bind/connect confinement (Landlock): {}", yes_no(&self.tcp)),
            format!("socket-family filter (seccomp): {}", yes_no(&self.seccomp)),
            format!(
                "protected paths read-only in writable roots (.git, .toolbelt, .claude, .mcp.json, .vscode, .idea): {}",
                match &self.protect {
                    Ok(protect::Namespace::Mount) => "yes (mount namespace)".to_string(),
                    Ok(protect::Namespace::User) => "yes (user and mount namespaces)".to_string(),
                    Err(why) => format!("no: {why}"),
                }
            ),
            format!(
                "capabilities of commands: {}",
                if nix::unistd::geteuid().is_root() {
                    "all dropped (bounding, ambient, inheritable, effective, permitted; root gains none at exec)"
                } else {
                    "none to drop (not root); kept none in any case"
                }
            ),
            format!(
                "device nodes, mounts, modules, reboot, kexec, bpf, keyrings, new namespaces (seccomp): {}",
                match &self.seccomp {
                    Ok(()) => "refused".to_string(),
                    Err(why) => format!("not refused: {why}"),
                }
            ),
            format!("typing into a terminal (TIOCSTI, TIOCLINUX): {}", self.terminal()),
            format!("signals to processes outside the sandbox (Landlock ABI 6): {}", self.at_abi(6, "refused")),
            format!("Unix sockets outside the workspace, network off: {}", self.unix_sockets()),
            format!(
                "a kill reaches every process a command starts (cgroup v2): {}",
                match crate::process::cgroup::base() {
                    Ok(base) => format!("yes ({})", base.display()),
                    Err(why) =>
                        format!("no: {why}; a process that leaves its session and closes its descriptors may survive"),
                }
            ),
        ]
    }

    /// `what` when Landlock has ABI `min` here, else why not.
    fn at_abi(&self, min: u32, what: &str) -> String {
        match &self.abi {
            Ok(abi) if *abi >= min => what.to_string(),
            Ok(abi) => format!("no: needs Landlock ABI {min}, this kernel has {abi}"),
            Err(why) => format!("no: {why}"),
        }
    }

    /// How commands are kept from typing into a terminal: no controlling terminal (every
    /// process toolbelt starts leads a session of its own), the filter's refusal, and the
    /// terminal toolbelt runs in covered in their mount namespace.
    fn terminal(&self) -> String {
        let filter = match &self.seccomp {
            Ok(()) => "the filter refuses both (seccomp)".to_string(),
            Err(why) => format!("the filter is unavailable ({why})"),
        };
        let kernel = match std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti") {
            Ok(v) if v.trim() == "0" => "; the kernel refuses TIOCSTI anyway (dev.tty.legacy_tiocsti = 0)",
            Ok(_) => "; the kernel would allow TIOCSTI on a process's own terminal (dev.tty.legacy_tiocsti = 1)",
            Err(_) => "",
        };
        let by_name = match &self.protect {
            Ok(_) => "; the terminal toolbelt runs in is covered by /dev/null for them (mount namespace)".to_string(),
            Err(why) => format!("; the terminal toolbelt runs in stays reachable by its name ({why})"),
        };
        format!(
            "refused: commands start without a controlling terminal (a session of their own); {filter}{by_name}{kernel}"
        )
    }

    /// How Unix sockets outside the workspace are kept from commands with the network off.
    fn unix_sockets(&self) -> String {
        let abstract_names = self.at_abi(6, "refused");
        let paths = match (&self.abi, &self.protect) {
            (Ok(abi), _) if *abi >= 9 => "refused (Landlock ABI 9)".to_string(),
            (_, Ok(_)) => "masked when the command starts (mount namespace; sockets created later are not)".to_string(),
            (_, Err(why)) => format!("reachable: {why}"),
        };
        format!("abstract names {abstract_names}; paths {paths}")
    }
}

fn yes_no(result: &Result<(), String>) -> String {
    match result {
        Ok(()) => "yes".into(),
        Err(why) => format!("no: {why}"),
    }
}

/// Runs `true` with `confinement` installed; Ok when it ran and exited 0.
fn try_in_child(confinement: Confinement) -> Result<(), String> {
    let mut command = probe_command();
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    toolbelt_core::process::new_session(&mut command);
    confinement.install_std(&mut command, None);
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("a confined test process failed ({status})")),
        Err(e) => Err(format!("applying it in a child process failed ({e})")),
    }
}

/// The cheapest program that does nothing.
fn probe_command() -> Command {
    match ["/usr/bin/true", "/bin/true"].into_iter().find(|p| Path::new(p).exists()) {
        Some(path) => Command::new(path),
        None => {
            let mut command = Command::new("sh");
            command.args(["-c", ":"]);
            command
        }
    }
}

/// Asks the kernel for its Landlock ABI version.
fn landlock_abi() -> Result<u32, String> {
    match query_abi() {
        Ok(abi) => Ok(abi),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => "this kernel has no Landlock (it needs Linux 5.13 or later built with \
                                   CONFIG_SECURITY_LANDLOCK), or a container hides its system calls"
                .to_string(),
            Some(libc::EOPNOTSUPP) => {
                "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)"
                    .to_string()
            }
            Some(libc::EPERM | libc::EACCES) => {
                "Landlock's system calls are blocked here, probably by a container's seccomp profile (allow \
                 landlock_create_ruleset, landlock_add_rule and landlock_restrict_self)"
                    .to_string()
            }
            _ => format!("Landlock cannot be queried ({e})"),
        }),
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`.
#[allow(unsafe_code)]
fn query_abi() -> std::io::Result<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, a size of 0 and the VERSION flag, the kernel only
    // returns its ABI version: it reads no memory and creates no descriptor.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        return Err(std::io::Error::last_os_error());
    }
    u32::try_from(version).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(fs: Result<(), String>, seccomp: Result<(), String>) -> SandboxReport {
        SandboxReport {
            kernel: "6.1".into(),
            abi: Ok(3),
            fs,
            tcp: Err("old".into()),
            seccomp,
            protect: Err("no namespaces".into()),
        }
    }

    #[test]
    fn can_confine_names_what_is_missing() {
        let all = report(Ok(()), Ok(()));
        assert!(all.can_confine(SandboxMode::WorkspaceWrite, false).is_ok());
        let no_fs = report(Err("Landlock is off".into()), Ok(()));
        let e = no_fs.can_confine(SandboxMode::ReadOnly, true).unwrap_err().to_string();
        assert!(e.contains("read-only sandbox") && e.contains("Landlock is off") && e.contains("danger-full-access"));
        assert!(!e.contains('\n'), "one line");
        assert!(no_fs.can_confine(SandboxMode::DangerFullAccess, false).is_ok());
        let no_filter = report(Ok(()), Err("no filter".into()));
        assert!(no_filter.can_confine(SandboxMode::WorkspaceWrite, true).is_ok(), "network on needs no filter");
        let e = no_filter.can_confine(SandboxMode::WorkspaceWrite, false).unwrap_err().to_string();
        assert!(e.contains("network cannot be turned off") && e.contains("no filter"), "{e}");
    }

    #[test]
    fn lines_say_yes_or_why_not() {
        let lines = report(Ok(()), Err("no filter".into())).lines();
        assert_eq!(lines[1], "Landlock: ABI 3");
        assert_eq!(lines[2], "filesystem write confinement (Landlock): yes");
        assert_eq!(lines[3], "TCP bind/connect confinement (Landlock): no: old");
        assert_eq!(lines[4], "socket-family filter (seccomp): no: no filter");
        assert!(lines[5].starts_with("protected paths read-only") && lines[5].ends_with("no: no namespaces"));
    }
}
