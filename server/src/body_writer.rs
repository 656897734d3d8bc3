//! [`BodyWriter`]: a body written in place, into the output block itself.

use std::io;

/// Where [`Response::body_with`](crate::Response::body_with) has a body written: a fixed
/// stretch of the output block, filled from the front. An [`io::Write`], so a serializer
/// (serde_json's `to_writer`, say) writes straight into the output.
///
/// A write that does not fit whole is refused ([`io::ErrorKind::WriteZero`]) and writes
/// nothing; nothing here allocates or panics. (Unlike the `io::Write` of a `&mut [u8]`,
/// which takes what fits and copies with a length known only at run time: each one-byte write
/// of a serializer becomes a call to `memset`.)
///
/// # Examples
///
/// ```
/// use std::io::Write;
/// use bufslab_server::BodyWriter;
///
/// let mut room = [0u8; 8];
/// let mut w = BodyWriter::new(&mut room);
/// w.write_all(b"{}")?;
/// assert_eq!(w.len(), 2);
/// assert!(w.write_all(b"too long").is_err());
/// assert_eq!(w.written(), b"{}");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct BodyWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl<'b> BodyWriter<'b> {
    /// A writer that fills `buf` from its start.
    #[must_use]
    pub fn new(buf: &'b mut [u8]) -> Self {
        BodyWriter { buf, len: 0 }
    }

    /// Bytes written so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing written yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes that can still be written.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.len
    }

    /// What was written.
    #[must_use]
    pub fn written(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Appends `bytes` whole, or nothing when they do not fit; says which.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) -> bool {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len += bytes.len();
                true
            }
            None => false,
        }
    }
}

impl io::Write for BodyWriter<'_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.put(buf) {
            Ok(())
        } else {
            Err(io::ErrorKind::WriteZero.into())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
