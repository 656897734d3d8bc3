//! The epoll driver of one connection: its socket, the readiness mio reported, and the
//! system calls that move bytes between the socket and the connection core (`proto/conn/`).
//!
//! Readiness is edge-triggered, so the driver remembers it: a socket stays readable until a
//! read finds nothing (or reads less than it asked for, see below), writable until a send
//! would block.

use std::io::{self, IoSlice, Read, Write};
use std::net::Shutdown;

use bufslab::FreeList;
use bufslab_http::Parser;
use mio::net::TcpStream;

use crate::conn::{CloseReason, Env, Want};
use crate::link::{Link, Wire};
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::stats::WorkerCounters;
use crate::sys::Raw;
use crate::tls::TlsConfig;

/// Socket reads per turn before the connection yields to the others on its worker.
const READ_BUDGET: usize = 16;

/// What [`EpollConn::drive`] left the connection waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Waiting for socket readiness.
    Wait,
    /// Read budget used up with input still pending: run again soon.
    Yield,
    /// Waiting for the pool.
    Pool,
    /// Close it.
    Close(CloseReason),
}

/// What a turn did, for the timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) next: Next,
    /// Bytes were read or written.
    pub(crate) progress: bool,
    /// Pool blocks the connection holds after the turn.
    pub(crate) blocks: usize,
}

/// A connection slot of an epoll worker. Slots are preallocated; a free slot has no socket.
#[derive(Debug)]
pub(crate) struct EpollConn<T> {
    pub(crate) sock: Option<TcpStream>,
    pub(crate) readable: bool,
    /// The peer's FIN (or an error) was seen: from then on read until 0, since no further
    /// readiness edge will come.
    pub(crate) read_closed: bool,
    pub(crate) writable: bool,
    /// On the worker's run-again list already.
    pub(crate) queued: bool,
    /// The HTTP connection (behind TLS on an HTTPS listener).
    pub(crate) conn: Link<T>,
}

impl<T: Default> EpollConn<T> {
    /// An empty slot.
    pub(crate) fn new(parser: Parser, slot: usize, out_blocks: usize) -> EpollConn<T> {
        EpollConn {
            sock: None,
            readable: false,
            read_closed: false,
            writable: false,
            queued: false,
            conn: Link::new(parser, slot, out_blocks),
        }
    }

    /// Puts a freshly accepted socket into this (free) slot; `false` when its TLS handshake
    /// cannot start (the socket is dropped, the slot stays free).
    pub(crate) fn open(
        &mut self,
        sock: TcpStream,
        tls: Option<&TlsConfig>,
        counters: &WorkerCounters,
    ) -> bool {
        if !self.conn.open(tls, counters) {
            return false;
        }
        self.sock = Some(sock);
        self.readable = false;
        self.read_closed = false;
        self.writable = false;
        // `queued` is left alone: it says whether the slot is on a worker list, and a list
        // entry left by the previous occupant is simply run once for the new one.
        true
    }

    /// Empties the slot, returning its blocks; hands back the socket to deregister. A sound
    /// TLS connection closed without a word from its core (idle, on shutdown or past its
    /// deadline) says `close_notify` first, if the socket takes it at once.
    pub(crate) fn release(&mut self, counters: &WorkerCounters) -> Option<TcpStream> {
        if let Some(sock) = self.sock.as_mut() {
            let mut alert = [0u8; bufslab_tls::record::ALERT_RECORD_LEN];
            let n = self.conn.farewell(&mut alert);
            if n > 0 {
                let _ = Raw(sock).write(&alert[..n]);
            }
        }
        self.conn.release(counters);
        self.readable = false;
        self.writable = false;
        self.sock.take()
    }

    /// Runs the connection until it would block, must wait, or must close.
    pub(crate) fn drive<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Turn {
        let mut io = Io {
            sock: &mut self.sock,
            readable: &mut self.readable,
            read_closed: self.read_closed,
            writable: &mut self.writable,
        };
        match self.conn.plain() {
            Some(conn) => io.drive(conn, env),
            None => io.drive(&mut self.conn, env),
        }
    }
}

/// An epoll slot's socket and readiness, lent to one turn of its connection.
struct Io<'s> {
    sock: &'s mut Option<TcpStream>,
    readable: &'s mut bool,
    read_closed: bool,
    writable: &'s mut bool,
}

impl Io<'_> {
    /// Runs the connection `conn` (the core alone, or behind TLS) until it would block, must
    /// wait, or must close.
    #[inline(always)]
    fn drive<T: Default, W: Wire<T>, F: FreeList, S: Service<State = T>>(
        &mut self,
        conn: &mut W,
        env: &mut Env<'_, F, S>,
    ) -> Turn {
        let mut progress = false;
        let mut reads = 0;
        let next = loop {
            let Some(sock) = self.sock.as_mut() else {
                break Next::Close(CloseReason::Done);
            };
            match conn.next(env) {
                Want::Send => {
                    if !*self.writable {
                        break Next::Wait;
                    }
                    match send(conn, sock) {
                        Ok(0) => break Next::Close(CloseReason::Io),
                        Ok(n) => {
                            progress = true;
                            conn.sent(n);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            *self.writable = false;
                            break Next::Wait;
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break Next::Close(CloseReason::Io),
                    }
                }
                Want::HalfClose => {
                    // The peer may already be gone; the drain read will tell.
                    let _ = sock.shutdown(Shutdown::Write);
                }
                Want::Discard => {
                    if !*self.readable {
                        break Next::Wait;
                    }
                    match drain(conn, sock) {
                        Ok(()) => {
                            *self.readable = false;
                            break Next::Wait;
                        }
                        Err(reason) => break Next::Close(reason),
                    }
                }
                Want::Receive => {
                    if !*self.readable {
                        break Next::Wait;
                    }
                    if reads >= READ_BUDGET {
                        break Next::Yield;
                    }
                    let buf = match conn.read_buf(env) {
                        Ok(b) => b,
                        Err(Want::Close(reason)) => break Next::Close(reason),
                        Err(_) => break Next::Pool,
                    };
                    let room = buf.spare_capacity();
                    match buf.read_from(&mut Raw(sock)) {
                        Ok(0) => match conn.peer_eof(env) {
                            Some(reason) => break Next::Close(reason),
                            // An upgraded connection sends its last bytes, then closes.
                            None => *self.readable = false,
                        },
                        Ok(n) => {
                            progress = true;
                            reads += 1;
                            // A short read emptied the socket: with edge-triggered readiness,
                            // more data brings a new event, so reading again now would only
                            // return EAGAIN. That saves a syscall per request; a FIN seen
                            // already brings no new edge, so then the loop reads on to the 0.
                            if n < room && !self.read_closed {
                                *self.readable = false;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            *self.readable = false;
                            conn.release_read_block();
                            break Next::Wait;
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break Next::Close(CloseReason::Io),
                    }
                }
                Want::Pool => break Next::Pool,
                Want::Wait => break Next::Wait,
                Want::Close(reason) => break Next::Close(reason),
            }
        };
        Turn {
            next,
            progress,
            blocks: conn.blocks(),
        }
    }
}

/// One `send` of the only block (the common case: one response, or a pipelined batch that fit
/// one block), else one `writev` of them all. `send` spares the kernel the iovec import.
fn send<T: Default>(conn: &impl Wire<T>, sock: &mut TcpStream) -> io::Result<usize> {
    if conn.output_blocks() == 1 {
        return Raw(sock).write(conn.front());
    }
    let empty: &[u8] = &[];
    let mut slices = [IoSlice::new(empty); SEND_BLOCKS];
    let n = conn.output(&mut slices);
    sock.write_vectored(slices.get(..n).unwrap_or_default())
}

/// Reads and discards what the peer still sends after our last response. `Ok(())`: would
/// block; `Err`: close now.
fn drain<T: Default>(conn: &mut impl Wire<T>, sock: &mut TcpStream) -> Result<(), CloseReason> {
    let mut scratch = [0u8; 4096];
    loop {
        match sock.read(&mut scratch) {
            Ok(0) => return Err(conn.peer_closed()),
            Ok(n) => {
                if let Want::Close(reason) = conn.discarded(n) {
                    return Err(reason);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(CloseReason::Done),
        }
    }
}
