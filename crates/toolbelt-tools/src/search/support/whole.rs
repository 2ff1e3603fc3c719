//! Small files read whole, in one `read`.
//!
//! The searcher reading a file itself makes three `read` calls for a small one: three bytes
//! to look for a byte-order mark, the rest, and an empty read that says the file ended. A
//! search of tens of thousands of files feels each call. The length `fstat` gave when the
//! file was opened (the checks need that `fstat` anyway) allows one call instead: asked for
//! one byte more than that length, a read that returns exactly the length has reached the
//! end. The bytes are then searched as a slice, which looks for a byte-order mark and binary
//! data in them as the searcher does in what it reads.

use std::fs::File;
use std::io::{self, Read as _, Seek as _};

/// Files up to this length are read whole: the searcher's own buffer (64 KiB) holds such a
/// file at once, so it looks for binary data in all of it before the first match either way.
pub const WHOLE: u64 = 64 << 10;

/// A thread's buffer for files read whole, reused from file to file.
#[derive(Default)]
pub struct WholeFile {
    buf: Vec<u8>,
}

impl WholeFile {
    /// Reads `file`, `len` bytes long when opened, whole in one `read`; returns its bytes, or
    /// `None`, with the file back at its start, when it no longer has that length (then it
    /// is searched as the searcher reads it, in bounded memory, whatever it has grown to).
    pub fn read(&mut self, file: &mut File, len: u64) -> io::Result<Option<&[u8]>> {
        let len = usize::try_from(len).map_err(io::Error::other)?;
        // One byte more than the length: a read that fills it means the file grew.
        let want = len.saturating_add(1);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        let n = read_some(file, &mut self.buf[..want])?;
        if n == len {
            return Ok(Some(&self.buf[..n]));
        }
        file.rewind()?;
        Ok(None)
    }
}

/// One `read`, again when a signal interrupted it.
fn read_some(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_whole_files_of_the_length_given_or_says_they_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let mut whole = WholeFile::default();
        std::fs::write(&path, "first line\nsecond\n").unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(whole.read(&mut file, 18).unwrap(), Some(&b"first line\nsecond\n"[..]));
        // A shorter file after a longer one: only its own bytes.
        std::fs::write(&path, "x\n").unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(whole.read(&mut file, 2).unwrap(), Some(&b"x\n"[..]));
        // Grown or shrunk since its length was taken: left to be read as a stream, from its start.
        for (len, now) in [(2, "x\nmore\n"), (7, "")] {
            std::fs::write(&path, now).unwrap();
            let mut file = File::open(&path).unwrap();
            assert_eq!(whole.read(&mut file, len).unwrap(), None);
            let mut rest = String::new();
            file.read_to_string(&mut rest).unwrap();
            assert_eq!(rest, now);
        }
    }
}
