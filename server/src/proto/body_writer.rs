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
    #[inline(always)]
    pub fn put(&mut self, bytes: &[u8]) -> bool {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(dst) => {
                copy(dst, bytes);
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

/// Copies `src` into `dst`, of the same length. What a response is made of (a status line and
/// headers of under a hundred bytes, a small body) is copied with a few fixed-size moves, two
/// or four of them overlapping when the length is not their multiple: `copy_from_slice` with a
/// length known only at run time calls `memcpy`, whose call and size dispatch cost more than
/// such a copy itself (33 of the 1,100 instructions of a pipelined `/plaintext` exchange).
#[inline(always)]
fn copy(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    debug_assert_eq!(dst.len(), n, "copy: the two slices differ in length");
    if n > 128 {
        dst.copy_from_slice(src);
    } else if n > 64 {
        moves::<32, 4>(dst, src, [0, 32, n - 64, n - 32]);
    } else if n >= 32 {
        moves::<32, 2>(dst, src, [0, n - 32]);
    } else if n >= 16 {
        moves::<16, 2>(dst, src, [0, n - 16]);
    } else if n >= 8 {
        moves::<8, 2>(dst, src, [0, n - 8]);
    } else if n >= 4 {
        moves::<4, 2>(dst, src, [0, n - 4]);
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    }
}

/// `K` bytes from each offset in `at` (each at most `len - K`) of `src` to the same offset of
/// `dst`.
#[inline(always)]
fn moves<const K: usize, const N: usize>(dst: &mut [u8], src: &[u8], at: [usize; N]) {
    for i in at {
        if let (Some(d), Some(s)) = (dst.get_mut(i..i + K), src.get(i..i + K)) {
            d.copy_from_slice(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_short_length_whole() {
        let src: Vec<u8> = (0..200u8).collect();
        for n in 0..=200 {
            let mut dst = vec![0xAA; n];
            copy(&mut dst, &src[..n]);
            assert_eq!(dst, &src[..n], "length {n}");
        }
    }

    #[test]
    fn puts_only_what_fits() {
        let mut room = [0u8; 70];
        let mut w = BodyWriter::new(&mut room);
        assert!(w.put(&[1; 40]));
        assert!(!w.put(&[2; 31]));
        assert!(w.put(&[3; 30]));
        assert_eq!(w.remaining(), 0);
        let mut want = vec![1u8; 40];
        want.extend([3; 30]);
        assert_eq!(w.written(), &want[..]);
    }
}
