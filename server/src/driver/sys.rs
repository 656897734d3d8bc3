//! The two syscalls of every request, made directly.
//!
//! std's socket reads and writes go through glibc's `recv` and `send`, which are cancellation
//! points: each call switches the thread's cancellation state with an atomic read-modify-write
//! before and after the syscall. This server never cancels threads, so rustix's raw syscalls do
//! the same I/O without that: about 150 instructions less per request (callgrind).

use std::io;

use mio::net::TcpStream;
use rustix::net::{RecvFlags, SendFlags};

/// A socket whose `read` is one raw `recvfrom` and whose `write` is one raw `sendto`, so the
/// pool's [`PoolBuf::read_from`](bufslab::PoolBuf::read_from) and `io::Write` callers use them
/// as they would the socket itself.
pub(crate) struct Raw<'a>(pub(crate) &'a TcpStream);

impl io::Read for Raw<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::net::recv(self.0, buf, RecvFlags::empty())?.0)
    }
}

impl io::Write for Raw<'_> {
    /// `MSG_NOSIGNAL`: a peer that went away is an `EPIPE` error, not a signal, as with std's
    /// sockets.
    #[inline]
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        Ok(rustix::net::send(self.0, data, SendFlags::NOSIGNAL)?)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
