//! Running a command in the foreground: read both streams as they come, stop the whole tree
//! on timeout or cancellation, and leave nothing running when the call ends.

use std::future::pending;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt as _};
use toolbelt_core::{OutputStream, ToolContext, ToolError};

use crate::process::capture::Capture;
use crate::process::cgroup::CommandCgroup;
use crate::process::spawn::{Launch, Setup, Sink, Spawned, spawn};
use crate::process::spill::SpillTarget;
use crate::process::tree::TreeGuard;

/// How long output is still read after the command exited normally while something holds
/// the pipes open, before the tree is searched again (by its tag) and killed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How a foreground command ended.
#[derive(Debug)]
pub struct Outcome {
    /// The exit status, unless the command could not be waited for.
    pub status: Option<ExitStatus>,
    /// Stopped because it reached its time limit.
    pub timed_out: bool,
    /// Stopped because the call was cancelled.
    pub interrupted: bool,
    /// Wall time from spawn to the end of the output.
    pub duration: Duration,
    /// The output.
    pub capture: Capture,
    /// The working directory the script ended in (normal exits only).
    pub final_cwd: Option<PathBuf>,
    /// Output was still being held open when reading stopped (by a process that escaped the
    /// tree and had to be killed late).
    pub unread: bool,
    /// Whether a cgroup held the command, so the kill reached everything it started.
    pub held: bool,
    /// What came through the control pipe (normal exits only): the exit trap's reports.
    pub control: Vec<u8>,
}

/// Time kept back from the limit so the command is stopped, and its output collected,
/// before the runtime's own timer drops the call.
pub fn margin(limit: Duration) -> Duration {
    (limit / 10).clamp(Duration::from_millis(5), Duration::from_secs(1))
}

/// Runs `command` in `cwd` for at most `limit`, in `cgroup` when there is one, set up as
/// `setup` says (environment, sandbox).
pub async fn run(
    cx: &ToolContext,
    command: &str,
    cwd: &Path,
    limit: Duration,
    cgroup: Option<Arc<CommandCgroup>>,
    setup: Setup,
) -> Result<Outcome, ToolError> {
    let started = Instant::now();
    let launch = Launch { command, cwd, sink: Sink::Pipes, report_cwd: true, cgroup, setup };
    let Spawned { mut child, mut stdout, mut stderr, tree, mut control } = spawn(launch).map_err(spawn_error)?;
    let mut guard = TreeGuard::new(tree.clone());
    let spill = SpillTarget::new(cx, "spill", &format!("bash-{}", tree.tag()));
    let mut capture = Capture::new(cx.limits().output_budget, spill);
    // Read into spare capacity, never zeroed: most commands print a few bytes.
    let (mut out_buf, mut err_buf) = (Vec::with_capacity(PIPE), Vec::with_capacity(PIPE));

    let margin = margin(limit);
    let deadline = tokio::time::sleep_until((started + limit.saturating_sub(margin)).into());
    tokio::pin!(deadline);
    let cancelled = cx.cancellation().cancelled();
    tokio::pin!(cancelled);
    let grace = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(grace);

    let mut status = None;
    let (mut timed_out, mut interrupted, mut stopped, mut unread) = (false, false, false, false);
    let mut grace_armed = false;
    let mut searched_again = false;
    while stdout.is_some() || stderr.is_some() || status.is_none() {
        // Biased, in this order: stopping must win over a flood of output, the exit is seen
        // before the last bytes are read (they stay readable), and stdout goes first when both
        // streams are ready, so simultaneous writes come out in a stable order.
        tokio::select! {
            biased;
            () = &mut cancelled, if !stopped => {
                interrupted = true;
                stopped = true;
                tree.kill();
                guard.disarm();
                grace.as_mut().reset((Instant::now() + margin / 2).into());
                grace_armed = true;
            },
            () = &mut deadline, if !stopped => {
                timed_out = true;
                stopped = true;
                tree.kill();
                guard.disarm();
                grace.as_mut().reset((Instant::now() + margin / 2).into());
                grace_armed = true;
            },
            () = &mut grace, if grace_armed => {
                // Something still holds the output open: search by tag and kill once more,
                // then give up on what it would still print.
                if searched_again || stopped {
                    unread = true;
                    break;
                }
                searched_again = true;
                tree.kill();
                grace.as_mut().reset((Instant::now() + EXIT_GRACE).into());
            },
            s = child.wait(), if status.is_none() => {
                status = s.ok();
                if !stopped {
                    // Nothing of the tree may outlive the call, even after a normal exit.
                    let held = control.held();
                    tree.leftovers(held);
                    guard.disarm();
                    grace.as_mut().reset((Instant::now() + EXIT_GRACE).into());
                    grace_armed = true;
                }
            },
            n = read_some(&mut stdout, &mut out_buf) => match n {
                Some(n) => {
                    capture.push(OutputStream::Stdout, &out_buf[..n], cx).await;
                    grow_when_busy(stdout.as_ref(), &mut out_buf, capture.stdout.total());
                }
                None => stdout = None,
            },
            n = read_some(&mut stderr, &mut err_buf) => match n {
                Some(n) => {
                    capture.push(OutputStream::Stderr, &err_buf[..n], cx).await;
                    grow_when_busy(stderr.as_ref(), &mut err_buf, capture.stderr.total());
                }
                None => stderr = None,
            },
        }
    }
    capture.finish_events(cx);
    let final_cwd = if stopped { None } else { control.final_cwd() };
    let control = if stopped { Vec::new() } else { control.data().to_vec() };
    let held = tree.is_held();
    tree.retire();
    drop(guard);
    tree.recycle();
    Ok(Outcome {
        status,
        timed_out,
        interrupted,
        duration: started.elapsed(),
        capture,
        final_cwd,
        unread,
        held,
        control,
    })
}

/// A pipe's default size, and the read buffer's to begin with.
const PIPE: usize = 64 * 1024;
/// Bytes a stream delivers before its pipe and read buffer are enlarged.
const BUSY: u64 = 1024 * 1024;
/// The enlarged pipe and buffer: fewer, larger reads for commands that print a lot.
const BIG_PIPE: usize = 1024 * 1024;

/// Once a stream has delivered [`BUSY`] bytes, enlarges its pipe and read buffer to
/// [`BIG_PIPE`] (a quarter less time for a gigabyte of output). Most commands never get
/// there and keep the default 64 KiB. The kernel may refuse a larger pipe (a per-user
/// quota): the stream then simply keeps its size.
fn grow_when_busy(stream: Option<&impl AsFd>, buf: &mut Vec<u8>, total: u64) {
    if total < BUSY || buf.capacity() >= BIG_PIPE {
        return;
    }
    if let Some(stream) = stream {
        let size = libc::c_int::try_from(BIG_PIPE).unwrap_or(libc::c_int::MAX);
        let _ = nix::fcntl::fcntl(stream, nix::fcntl::FcntlArg::F_SETPIPE_SZ(size));
    }
    buf.reserve_exact(BIG_PIPE.saturating_sub(buf.len()));
}

/// Reads the next chunk of a stream into `buf` (emptied first, filled up to its capacity);
/// `None` at its end. A stream already ended never completes, so the select above stops
/// polling it.
pub(crate) async fn read_some<R: AsyncRead + Unpin>(stream: &mut Option<R>, buf: &mut Vec<u8>) -> Option<usize> {
    match stream {
        Some(r) => {
            // An empty vector reads into its whole capacity.
            buf.clear();
            match r.read_buf(buf).await {
                Ok(0) | Err(_) => None,
                Ok(n) => Some(n),
            }
        }
        None => pending().await,
    }
}

/// The model-facing message when the shell cannot be started.
pub fn spawn_error(e: std::io::Error) -> ToolError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ToolError::failed(
            "cannot start bash: it was not found on PATH. Install bash or fix PATH in the server's environment.",
        )
    } else {
        ToolError::failed(format!(
            "cannot start bash: {e}. Retry; if it keeps failing, the machine may be out of processes or memory."
        ))
    }
}
