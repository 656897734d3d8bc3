//! The two syscalls of every request, made directly.
//!
//! std's socket reads and writes go through glibc's `recv` and `send`, which are cancellation
//! points: each call switches the thread's cancellation state with an atomic read-modify-write
//! before and after the syscall. This server never cancels threads, so rustix's raw syscalls do
//! the same I/O without that: about 150 instructions less per request (callgrind).

use std::io;

use bufslab::PoolBuf;
use mio::net::TcpStream;
use rustix::net::{RecvFlags, SendFlags};

/// One `recvfrom` into `buf`'s spare capacity; the bytes read (0 at end of stream, or when the
/// buffer is full, as [`PoolBuf::read_from`]).
pub(crate) fn recv_into(sock: &TcpStream, buf: &mut PoolBuf) -> io::Result<usize> {
    let spare = buf.spare_mut();
    if spare.is_empty() {
        return Ok(0);
    }
    let (n, _) = rustix::net::recv(sock, spare, RecvFlags::empty())?;
    buf.commit(n);
    Ok(n)
}

/// One `sendto` of `data`. `MSG_NOSIGNAL`: a peer that went away is an `EPIPE` error, not a
/// signal, as with std's sockets.
pub(crate) fn send(sock: &TcpStream, data: &[u8]) -> io::Result<usize> {
    Ok(rustix::net::send(sock, data, SendFlags::NOSIGNAL)?)
}
