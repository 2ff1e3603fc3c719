//! The writing half of MCP over stdio, shared by rmcp's sends and our own answers.
//!
//! A message is queued when it is handed over, in the order handed, and written by whichever
//! flush comes first, together with everything queued by then: rmcp hands over the answers of
//! calls that finished together one after another before any of its send tasks runs, so a
//! burst of answers leaves in one `write` instead of one each (a system call per answer,
//! and a wake-up of the client's reader). A flush that finds the queue empty returns at once.
//!
//! A flush may be cancelled at any await (our reads run inside rmcp's `select!`): bytes taken
//! from the queue stay in the writing state with how far they were written, and the next
//! flush goes on from there, so no message is lost, repeated or cut into another.

use std::io;
use std::sync::PoisonError;

use tokio::io::{AsyncWrite, AsyncWriteExt as _};

/// A buffer grown past this is given back once written.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// The writer and what is queued for it.
pub(super) struct Out<W> {
    /// Messages handed over and not yet taken by a flush.
    queue: std::sync::Mutex<Queue>,
    /// The writer, and the bytes a flush took, with how many of them are written.
    writing: tokio::sync::Mutex<Writing<W>>,
}

struct Queue {
    bytes: Vec<u8>,
    closed: bool,
}

struct Writing<W> {
    writer: W,
    taken: Vec<u8>,
    sent: usize,
}

impl<W: AsyncWrite + Unpin> Out<W> {
    pub(super) fn new(writer: W) -> Self {
        Self {
            queue: std::sync::Mutex::new(Queue { bytes: Vec::new(), closed: false }),
            writing: tokio::sync::Mutex::new(Writing { writer, taken: Vec::new(), sent: 0 }),
        }
    }

    /// Queues one message (a whole line, newline included). Refused once the connection is
    /// closed.
    pub(super) fn queue(&self, line: &[u8]) -> io::Result<()> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.closed {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the MCP connection is closed"));
        }
        queue.bytes.extend_from_slice(line);
        Ok(())
    }

    /// Writes everything queued, and what was queued meanwhile, then flushes the writer.
    pub(super) async fn flush(&self) -> io::Result<()> {
        let mut writing = self.writing.lock().await;
        let Writing { writer, taken, sent } = &mut *writing;
        loop {
            if *sent == taken.len() {
                taken.clear();
                *sent = 0;
                let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                std::mem::swap(&mut queue.bytes, taken);
                if queue.bytes.capacity() > KEEP_CAPACITY {
                    queue.bytes = Vec::new();
                }
                drop(queue);
                if taken.is_empty() {
                    break;
                }
            }
            let n = writer.write(&taken[*sent..]).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            *sent += n;
        }
        if taken.capacity() > KEEP_CAPACITY {
            *taken = Vec::new();
        }
        writer.flush().await
    }

    /// Refuses further messages and writes those queued.
    pub(super) async fn close(&self) -> io::Result<()> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        self.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    #[tokio::test]
    async fn a_burst_leaves_in_order_and_a_cancelled_flush_loses_nothing() {
        // A pipe that holds 64 bytes: a flush of more waits for the reader.
        let (mut client, server) = tokio::io::duplex(64);
        let out = Out::new(server);
        let lines: Vec<String> = (0..20).map(|i| format!("{{\"id\":{i},\"pad\":\"{}\"}}\n", "x".repeat(i))).collect();
        for line in &lines[..10] {
            out.queue(line.as_bytes()).unwrap();
        }
        // Cancelled while the pipe is full.
        assert!(tokio::time::timeout(std::time::Duration::from_millis(50), out.flush()).await.is_err());
        for line in &lines[10..] {
            out.queue(line.as_bytes()).unwrap();
        }
        let reader = tokio::spawn(async move {
            let mut got = String::new();
            client.read_to_string(&mut got).await.unwrap();
            got
        });
        out.close().await.unwrap();
        assert!(out.queue(b"late\n").is_err(), "closed");
        drop(out);
        assert_eq!(reader.await.unwrap(), lines.concat());
    }
}
