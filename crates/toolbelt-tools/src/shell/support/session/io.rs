//! Moving a session's bytes: the pipes of a session without a terminal, typing into its
//! input, and the pump that reads what it prints until every holder of its output is gone.

use std::os::fd::{AsFd as _, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::process::pty::register;

/// Most bytes read at once.
const CHUNK: usize = 16 * 1024;

/// The command's ends (stdin, stdout-and-stderr) and toolbelt's (where typing goes, where
/// output comes from) of a session without a terminal; toolbelt's are non-blocking.
pub type Pipes = (OwnedFd, OwnedFd, (std::sync::Arc<AsyncFd<OwnedFd>>, std::sync::Arc<AsyncFd<OwnedFd>>));

/// Two pipes for a session without a terminal.
pub fn pipes() -> std::io::Result<Pipes> {
    let (input_read, input_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (output_read, output_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    for fd in [&input_write, &output_read] {
        let flags = OFlag::from_bits_retain(fcntl(fd.as_fd(), FcntlArg::F_GETFL)?);
        fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    }
    let typing = std::sync::Arc::new(register(input_write, Interest::WRITABLE)?);
    let reading = std::sync::Arc::new(register(output_read, Interest::READABLE)?);
    Ok((input_read, output_write, (typing, reading)))
}

/// Writes all of `bytes` to `fd`, waiting while it is full.
pub async fn write_all(fd: &AsyncFd<OwnedFd>, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let mut ready = fd.writable().await?;
        match ready.try_io(|fd| nix::unistd::write(fd.get_ref(), bytes).map_err(std::io::Error::from)) {
            Ok(Ok(n)) => bytes = &bytes[n..],
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => {}
        }
    }
    Ok(())
}

/// Reads `fd` until its end (for a terminal: until no process holds its other side, which
/// reads as an error), handing each chunk to `took`.
pub async fn pump(fd: &AsyncFd<OwnedFd>, mut took: impl FnMut(&[u8])) {
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let Ok(mut ready) = fd.readable().await else { return };
        match ready.try_io(|fd| nix::unistd::read(fd.get_ref(), &mut chunk).map_err(std::io::Error::from)) {
            Ok(Ok(0)) => return,
            Ok(Ok(n)) => took(&chunk[..n]),
            Ok(Err(e)) if e.raw_os_error() == Some(Errno::EINTR as i32) => {}
            // EIO: the terminal's last holder closed it.
            Ok(Err(_)) => return,
            Err(_would_block) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_is_written_comes_out_of_the_other_end_and_the_pump_ends_with_it() {
        let (input, output, (typing, reading)) = pipes().unwrap();
        // Connect the command's ends to each other, as `cat` would.
        let (input, output) = (std::fs::File::from(input), std::fs::File::from(output));
        let copier = std::thread::spawn(move || {
            let (mut input, mut output) = (input, output);
            std::io::copy(&mut input, &mut output).unwrap();
        });
        write_all(&typing, b"hello\n").await.unwrap();
        drop(typing);
        let mut got = Vec::new();
        pump(&reading, |b| got.extend_from_slice(b)).await;
        copier.join().unwrap();
        assert_eq!(got, b"hello\n");
    }
}
