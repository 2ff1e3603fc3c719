//! The process table as Linux's `/proc` shows it: every pid, what `/proc/<pid>/stat` and
//! `status` say about one, its command line and working directory. The tree kill
//! ([`crate::process::tree`]) scans it to find a command's processes; the `Process` tool
//! lists and inspects it.
//!
//! Everything is read fresh on each call (a process may end between two reads, which shows
//! as `None`), and nothing here signals anything.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What `/proc/<pid>/stat` says about a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// Its pid.
    pub pid: i32,
    /// Its name as the kernel keeps it (at most 15 bytes; `comm`).
    pub comm: String,
    /// Its state letter (`R`, `S`, `D`, `Z`, `T`, …).
    pub state: char,
    /// Its parent's pid.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// CPU time spent in user mode, in clock ticks.
    pub utime: u64,
    /// CPU time spent in the kernel, in clock ticks.
    pub stime: u64,
    /// How many threads it has.
    pub threads: u64,
    /// When it started, in clock ticks after boot: with the pid, what tells one process from
    /// a later one given the same pid.
    pub starttime: u64,
    /// Its virtual memory size, in bytes.
    pub vsize: u64,
    /// Its resident set, in pages.
    pub rss_pages: u64,
}

impl Stat {
    /// Whether it has exited and waits to be reaped (or is being torn down).
    pub fn zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }

    /// Its CPU time so far (user and kernel).
    pub fn cpu_time(&self) -> Duration {
        ticks(self.utime.saturating_add(self.stime))
    }

    /// Its resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.rss_pages.saturating_mul(rustix::param::page_size() as u64) / 1024
    }

    /// When it started, in milliseconds since the Unix epoch (`None` when the boot time is
    /// unknown).
    pub fn started_ms(&self) -> Option<i64> {
        let boot = boot_time_secs()?;
        let after_boot = ticks(self.starttime);
        i64::try_from(Duration::from_secs(boot).saturating_add(after_boot).as_millis()).ok()
    }
}

/// Clock ticks as a duration.
fn ticks(n: u64) -> Duration {
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Duration::from_secs(n / hz) + Duration::from_nanos((n % hz) * 1_000_000_000 / hz)
}

/// Every pid under `/proc` (an empty list where there is no `/proc`).
pub fn list_pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc").into_iter().flatten().filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
}

/// Every process's stat, in pid order; a process that ended during the scan is left out.
pub fn all() -> Vec<Stat> {
    let mut procs: Vec<Stat> = list_pids().filter_map(stat).collect();
    procs.sort_by_key(|p| p.pid);
    procs
}

/// Whether this machine has a process table to read.
pub fn available() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
}

/// Reads `/proc/<pid>/stat`.
pub fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Parses a stat line: `pid (comm) state ppid pgrp …`, where comm may hold anything, `)`
/// and spaces included, so the fields are counted from its last `)`.
pub fn parse_stat(pid: i32, text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    // Field N of proc(5) is at index N - 3 here (state is field 3).
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    Some(Stat {
        pid,
        comm,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        utime: field(14).unwrap_or(0),
        stime: field(15).unwrap_or(0),
        threads: field(20).unwrap_or(1),
        starttime: field(22).unwrap_or(0),
        vsize: field(23).unwrap_or(0),
        rss_pages: field(24).unwrap_or(0),
    })
}

/// Its command line, arguments joined by spaces; empty for a kernel thread or a zombie.
pub fn cmdline(pid: i32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<String> =
        bytes.split(|&b| b == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
    Some(words.join(" "))
}

/// Its command line, or its name in brackets when it has none (a kernel thread, a zombie),
/// as `ps` shows it.
pub fn command(stat: &Stat) -> String {
    match cmdline(stat.pid) {
        Some(line) if !line.is_empty() => line,
        _ => format!("[{}]", stat.comm),
    }
}

/// Its working directory, or why it cannot be read (another user's process, say).
pub fn cwd(pid: i32) -> Result<PathBuf, std::io::Error> {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
}

/// What `/proc/<pid>/status` says beyond `stat`: the real uid and the memory figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// Its real user id.
    pub uid: Option<u32>,
    /// Resident memory, in KiB (`VmRSS`).
    pub vm_rss_kib: Option<u64>,
    /// Virtual memory, in KiB (`VmSize`).
    pub vm_size_kib: Option<u64>,
}

/// Reads `/proc/<pid>/status`.
pub fn status(pid: i32) -> Option<Status> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(parse_status(&text))
}

fn parse_status(text: &str) -> Status {
    let mut status = Status::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let first = value.split_ascii_whitespace().next().and_then(|v| v.parse::<u64>().ok());
        match key {
            "Uid" => status.uid = first.and_then(|u| u32::try_from(u).ok()),
            "VmRSS" => status.vm_rss_kib = first,
            "VmSize" => status.vm_size_kib = first,
            _ => {}
        }
    }
    status
}

/// The name of user `uid`, or the number when the password database has none.
pub fn user_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(user)) => user.name,
        _ => uid.to_string(),
    }
}

/// When the machine booted, in seconds since the Unix epoch (`btime` of `/proc/stat`).
fn boot_time_secs() -> Option<u64> {
    static BOOT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *BOOT.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        text.lines().find_map(|l| l.strip_prefix("btime ")).and_then(|v| v.trim().parse().ok())
    })
}

/// Milliseconds since the Unix epoch now.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_names() {
        let p = parse_stat(42, "42 (a) b (c)) S 7 42 42 0 -1 0 0 0 0 0 150 50 0 0 20 0 3 0 9000 4096 12").unwrap();
        assert_eq!((p.pid, p.ppid, p.pgrp, p.zombie()), (42, 7, 42, false));
        assert_eq!(p.comm, "a) b (c)");
        assert_eq!((p.utime, p.stime, p.threads, p.starttime, p.vsize, p.rss_pages), (150, 50, 3, 9000, 4096, 12));
        let z = parse_stat(9, "9 (x) Z 1 9 9").unwrap();
        assert!(z.zombie());
        assert!(parse_stat(1, "garbage").is_none());
    }

    #[test]
    fn reads_this_process() {
        let me = i32::try_from(std::process::id()).unwrap();
        let stat = stat(me).unwrap();
        assert_eq!(stat.pid, me);
        assert!(stat.started_ms().unwrap() <= now_ms());
        assert!(stat.started_ms().unwrap() > now_ms() - 24 * 3600 * 1000 * 365);
        let status = status(me).unwrap();
        assert_eq!(status.uid, Some(nix::unistd::getuid().as_raw()));
        assert!(status.vm_rss_kib.unwrap() > 0);
        assert_eq!(cwd(me).unwrap(), std::env::current_dir().unwrap());
        assert!(!command(&stat).is_empty());
        assert!(all().iter().any(|p| p.pid == me));
    }

    #[test]
    fn status_fields() {
        let s = parse_status("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nVmSize:\t  2048 kB\nVmRSS:\t   512 kB\n");
        assert_eq!(s, Status { uid: Some(1000), vm_rss_kib: Some(512), vm_size_kib: Some(2048) });
    }
}
