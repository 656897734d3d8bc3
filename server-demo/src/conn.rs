//! One connection: its socket, its request state machine, and the blocks it holds.
//!
//! A connection holds pool blocks only while it has something in them: a read block from the
//! moment its socket is readable until its input is consumed, and output blocks until they are
//! written. An idle keep-alive connection holds none.
//!
//! [`Conn::drive`] runs the connection as far as it can go without blocking:
//! flush output → process buffered input → read more, in that order, so that a connection with
//! output pending is never read further (backpressure), and all responses to a pipelined batch
//! leave in one write call.

use std::io::{self, IoSlice, Read, Write};
use std::net::Shutdown;

use bufslab::{FreeList, LocalCache, PoolBuf};
use bufslab_http::{
    write_chunk, write_last_chunk, BodyDecoder, BodyFraming, HeaderSlot, Method, Parser, Status,
    Version,
};
use bytes::{Buf, BufMut};
use mio::net::TcpStream;

use crate::config::SMALL_BLOCK;
use crate::routes::{self, Persist, Reply, Route};
use crate::server::Shared;
use crate::stats::WorkerCounters;
use crate::sys::Raw;
use crate::timer::TimerKind;

/// Most output blocks queued per connection (one `writev` carries them all). Eight 4 KiB
/// blocks hold a pipelined batch of over 200 small responses, or 32 KiB of echo in flight.
pub(crate) const OUT_BLOCKS: usize = 8;

/// Socket reads per turn before the connection yields to the others on its worker.
const READ_BUDGET: usize = 16;

/// Bytes a lingering close discards before giving up on the peer.
const DRAIN_LIMIT: usize = 256 * 1024;

/// A small FIFO of output blocks, in a fixed array so queuing never allocates.
#[derive(Debug, Default)]
pub(crate) struct OutQueue {
    bufs: [Option<PoolBuf>; OUT_BLOCKS],
    head: usize,
    len: usize,
}

impl OutQueue {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn is_full(&self) -> bool {
        self.len == OUT_BLOCKS
    }

    fn tail(&mut self) -> Option<&mut PoolBuf> {
        if self.len == 0 {
            return None;
        }
        self.bufs[(self.head + self.len - 1) % OUT_BLOCKS].as_mut()
    }

    fn push(&mut self, buf: PoolBuf) {
        if !self.is_full() {
            self.bufs[(self.head + self.len) % OUT_BLOCKS] = Some(buf);
            self.len += 1;
        }
    }

    /// The tail block if it has `room` spare bytes, else a fresh block queued behind it.
    fn reserve<F: FreeList>(
        &mut self,
        cache: &LocalCache<F>,
        room: usize,
    ) -> Result<&mut PoolBuf, Blocked> {
        let fits = self.tail().is_some_and(|t| t.spare_capacity() >= room);
        if !fits {
            if self.is_full() {
                return Err(Blocked::OutputFull);
            }
            let buf = cache
                .get(room.max(SMALL_BLOCK))
                .map_err(|_| Blocked::Pool)?;
            self.push(buf);
        }
        self.tail().ok_or(Blocked::Pool)
    }

    /// Writes as much as the socket takes, one write call per round. Fully written blocks go
    /// back to the pool at once. Returns whether everything was written.
    fn flush(&mut self, sock: &mut TcpStream) -> io::Result<bool> {
        while self.len > 0 {
            // A block reserved for output that got none (a body step that decoded only
            // framing) goes straight back: an empty write would read as a dead peer.
            if self.bufs[self.head].as_ref().map_or(true, |b| b.is_empty()) {
                self.bufs[self.head] = None;
                self.head = (self.head + 1) % OUT_BLOCKS;
                self.len -= 1;
                continue;
            }
            match self.write_to(sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.consume(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// One `send` of the only block (the common case: one response, or a pipelined batch that
    /// fit one block), else one `writev` of them all. `send` spares the kernel the iovec import.
    fn write_to(&self, sock: &mut TcpStream) -> io::Result<usize> {
        if let (1, Some(b)) = (self.len, &self.bufs[self.head]) {
            return Raw(sock).write(b);
        }
        let empty: &[u8] = &[];
        let mut slices = [IoSlice::new(empty); OUT_BLOCKS];
        for (i, s) in slices.iter_mut().enumerate().take(self.len) {
            if let Some(b) = &self.bufs[(self.head + i) % OUT_BLOCKS] {
                *s = IoSlice::new(b);
            }
        }
        sock.write_vectored(&slices[..self.len])
    }

    fn consume(&mut self, mut n: usize) {
        while n > 0 && self.len > 0 {
            let slot = &mut self.bufs[self.head];
            let Some(b) = slot.as_mut() else {
                break;
            };
            let take = n.min(b.len());
            b.advance(take);
            n -= take;
            if b.is_empty() {
                *slot = None; // the block goes home now
                self.head = (self.head + 1) % OUT_BLOCKS;
                self.len -= 1;
            }
        }
    }

    fn clear(&mut self) {
        for b in &mut self.bufs {
            *b = None;
        }
        self.head = 0;
        self.len = 0;
    }
}

/// Why processing stopped short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// The output queue is full: flush first.
    OutputFull,
    /// The pool has no block for us: wait until blocks come back.
    Pool,
}

/// How a body is being consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyUse {
    /// `/echo` with Content-Length: copy the data through.
    EchoLength,
    /// `/echo` with chunked framing: re-chunk the data as it is decoded. The 200 head waits
    /// (`Some`) for the first decoded bytes, so a body that passes `--max-body` before any
    /// data went out still gets its 413.
    EchoChunked(Option<Persist>),
    /// Anything else: skip it without looking.
    Skip,
}

/// Where the connection is in its life.
#[derive(Clone, Debug)]
enum Phase {
    /// Waiting for (or parsing) a request head.
    Head,
    /// Reading the current request's body.
    Body {
        decoder: BodyDecoder,
        using: BodyUse,
        received: u64,
    },
    /// No more requests will be served: flush the output, then drain.
    Closing,
    /// Our side is shut down for writing; discarding input until the peer closes.
    Drain { discarded: usize },
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CloseReason {
    /// The peer closed between requests, or after our last response.
    Done,
    /// The peer closed or reset in the middle of a request.
    PeerAborted,
    /// A socket error (reset, broken pipe).
    Io,
    /// A body framing error or an oversized chunked body after the response had started.
    BadBody,
}

/// What [`Conn::drive`] left the connection waiting for.
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
}

/// Per-worker context a connection needs while processing.
pub(crate) struct Env<'a, F: FreeList> {
    pub(crate) slot: usize,
    /// The worker's header slots, shared by its connections (see `slots_owner`).
    pub(crate) slots: &'a mut [HeaderSlot],
    /// Which connection's partial head the slots hold. The parser resumes from the slots it
    /// filled; if another connection used them since, the parser must start over.
    pub(crate) slots_owner: &'a mut Option<usize>,
    pub(crate) cache: &'a LocalCache<F>,
    pub(crate) date: &'a bufslab_http::DateCache,
    pub(crate) counters: &'a WorkerCounters,
    pub(crate) max_body: u64,
    pub(crate) large_block: usize,
    /// The server is shutting down: every response says `Connection: close`.
    pub(crate) shutting_down: bool,
    /// The server's shared state, for `/stats`.
    pub(crate) shared: &'a Shared,
}

/// A connection slot. Slots are preallocated; a free slot has no socket.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) sock: Option<TcpStream>,
    pub(crate) readable: bool,
    /// The peer's FIN (or an error) was seen: from then on read until 0, since no further
    /// readiness edge will come.
    pub(crate) read_closed: bool,
    pub(crate) writable: bool,
    /// On the worker's pool-wait or run-again list already.
    pub(crate) queued: bool,
    phase: Phase,
    parser: Parser,
    rbuf: Option<PoolBuf>,
    out: OutQueue,
    /// Close once the current request's body is done (its response said `Connection: close`).
    close_after_body: bool,
}

impl Conn {
    /// An empty slot.
    pub(crate) fn new(parser: Parser) -> Conn {
        Conn {
            sock: None,
            readable: false,
            read_closed: false,
            writable: false,
            queued: false,
            phase: Phase::Head,
            parser,
            rbuf: None,
            out: OutQueue::default(),
            close_after_body: false,
        }
    }

    /// Puts a freshly accepted socket into this (free) slot.
    pub(crate) fn open(&mut self, sock: TcpStream) {
        self.sock = Some(sock);
        self.readable = false;
        self.read_closed = false;
        self.writable = false;
        // `queued` is left alone: it says whether the slot is on a worker list, and a list
        // entry left by the previous occupant is simply run once for the new one.
        self.phase = Phase::Head;
        self.parser.reset();
        self.rbuf = None;
        self.out.clear();
        self.close_after_body = false;
    }

    /// Empties the slot, returning its blocks; hands back the socket to deregister.
    pub(crate) fn release(&mut self) -> Option<TcpStream> {
        self.rbuf = None;
        self.out.clear();
        self.phase = Phase::Head;
        self.parser.reset();
        self.readable = false;
        self.writable = false;
        self.sock.take()
    }

    /// Unconsumed input is buffered.
    pub(crate) fn holds_input(&self) -> bool {
        self.rbuf.as_ref().is_some_and(|b| !b.is_empty())
    }

    /// No request in progress and nothing to send: safe to close on shutdown or idle.
    pub(crate) fn is_idle(&self) -> bool {
        matches!(self.phase, Phase::Head) && !self.holds_input() && self.out.is_empty()
    }

    /// Which deadline applies now (see `timer.rs`).
    pub(crate) fn timer_kind(&self) -> TimerKind {
        match self.phase {
            Phase::Drain { .. } => TimerKind::Drain,
            Phase::Head if self.out.is_empty() && self.holds_input() => TimerKind::Header,
            _ => TimerKind::Idle,
        }
    }

    /// The request head timed out: answer 408 if a block is at hand, then close.
    pub(crate) fn head_timed_out<F: FreeList>(&mut self, env: &mut Env<'_, F>) -> bool {
        self.rbuf = None;
        if *env.slots_owner == Some(env.slot) {
            *env.slots_owner = None;
        }
        let r = Reply {
            date: env.date,
            persist: Persist::Close,
            head_only: false,
        };
        let answered = match self.out.reserve(env.cache, routes::HEAD_ROOM + 64) {
            Ok(out) => {
                routes::error(out, &r, 408, None);
                true
            }
            Err(_) => false,
        };
        self.phase = Phase::Closing;
        answered
    }

    /// Runs the connection until it would block, must wait, or must close.
    pub(crate) fn drive<F: FreeList>(&mut self, env: &mut Env<'_, F>) -> Turn {
        let mut progress = false;
        let mut reads = 0;
        let next = loop {
            let Some(sock) = self.sock.as_mut() else {
                break Next::Close(CloseReason::Done);
            };
            // 1. Output first: everything queued goes out before anything more is read.
            if !self.out.is_empty() {
                if !self.writable {
                    break Next::Wait;
                }
                match self.out.flush(sock) {
                    Ok(true) => progress = true,
                    Ok(false) => {
                        self.writable = false;
                        break Next::Wait;
                    }
                    Err(_) => break Next::Close(CloseReason::Io),
                }
            }
            // 2. Closing: output is flushed; half-close and drain.
            match &mut self.phase {
                Phase::Closing => {
                    self.rbuf = None;
                    // The peer may already be gone; the drain read will tell.
                    let _ = sock.shutdown(Shutdown::Write);
                    self.phase = Phase::Drain { discarded: 0 };
                    continue;
                }
                Phase::Drain { discarded } => {
                    if !self.readable {
                        break Next::Wait;
                    }
                    break match drain(sock, discarded) {
                        Ok(()) => {
                            self.readable = false;
                            Next::Wait
                        }
                        Err(reason) => Next::Close(reason),
                    };
                }
                _ => {}
            }
            // 3. Buffered input.
            if self.holds_input() {
                match self.process(env) {
                    Ok(()) => {}
                    Err(Stop::Blocked(Blocked::OutputFull)) => {
                        if self.out.is_empty() {
                            // Cannot happen (an empty queue always has room); never spin.
                            break Next::Close(CloseReason::Io);
                        }
                        continue;
                    }
                    Err(Stop::Blocked(Blocked::Pool)) => break Next::Pool,
                    Err(Stop::Close(reason)) => break Next::Close(reason),
                }
                if !self.out.is_empty() || matches!(self.phase, Phase::Closing) {
                    continue;
                }
            }
            // Input consumed: the read block goes home (idle connections hold no blocks).
            if self.rbuf.as_ref().is_some_and(|b| b.is_empty()) {
                self.rbuf = None;
            }
            // 4. Read more.
            if !self.readable {
                break Next::Wait;
            }
            if reads >= READ_BUDGET {
                break Next::Yield;
            }
            let buf = match Self::read_buf(&mut self.rbuf, env) {
                Ok(b) => b,
                Err(Stop::Blocked(_)) => break Next::Pool,
                Err(Stop::Close(reason)) => break Next::Close(reason),
            };
            let Some(sock) = self.sock.as_mut() else {
                break Next::Close(CloseReason::Done);
            };
            let room = buf.spare_capacity();
            match buf.read_from(&mut Raw(sock)) {
                Ok(0) => {
                    let mid_request = !buf.is_empty() || !matches!(self.phase, Phase::Head);
                    break Next::Close(if mid_request {
                        CloseReason::PeerAborted
                    } else {
                        CloseReason::Done
                    });
                }
                Ok(n) => {
                    progress = true;
                    reads += 1;
                    // A short read emptied the socket: with edge-triggered readiness, more
                    // data brings a new event, so reading again now would only return
                    // EAGAIN. That saves a syscall per request; a FIN seen already brings
                    // no new edge, so then the loop reads on to the 0.
                    if n < room && !self.read_closed {
                        self.readable = false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    if buf.is_empty() {
                        self.rbuf = None;
                    }
                    break Next::Wait;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break Next::Close(CloseReason::Io),
            }
        };
        Turn { next, progress }
    }

    /// The read block, rented now if needed, with room for at least one more byte.
    fn read_buf<'r, F: FreeList>(
        rbuf: &'r mut Option<PoolBuf>,
        env: &mut Env<'_, F>,
    ) -> Result<&'r mut PoolBuf, Stop> {
        match rbuf.take() {
            None => {
                let b = env.cache.get(SMALL_BLOCK).map_err(|_| Blocked::Pool)?;
                Ok(rbuf.insert(b))
            }
            Some(mut b) => {
                if b.spare_capacity() < 512 {
                    b.compact();
                }
                if b.spare_capacity() == 0 {
                    // A head larger than the block: move it to the large class. The codec
                    // answers 431 before that one fills up.
                    if b.capacity() >= env.large_block {
                        *rbuf = Some(b);
                        return Err(Stop::Close(CloseReason::BadBody));
                    }
                    let Ok(mut big) = env.cache.get(env.large_block) else {
                        *rbuf = Some(b);
                        return Err(Blocked::Pool.into());
                    };
                    big.put_slice(&b);
                    drop(b);
                    return Ok(rbuf.insert(big));
                }
                Ok(rbuf.insert(b))
            }
        }
    }

    /// Serves what the read block holds: complete requests, then body bytes, until the input
    /// runs out, the output queue fills, or the connection must close.
    fn process<F: FreeList>(&mut self, env: &mut Env<'_, F>) -> Result<(), Stop> {
        loop {
            if !self.holds_input() {
                return Ok(());
            }
            match self.phase {
                Phase::Head => {
                    if !self.head(env)? {
                        return Ok(()); // partial head: need more input
                    }
                }
                Phase::Body { .. } => self.body(env)?,
                Phase::Closing | Phase::Drain { .. } => return Ok(()),
            }
        }
    }

    /// Parses and answers one request head. `Ok(false)`: the head is incomplete.
    fn head<F: FreeList>(&mut self, env: &mut Env<'_, F>) -> Result<bool, Stop> {
        let Some(rb) = self.rbuf.as_ref() else {
            return Ok(false);
        };
        if *env.slots_owner != Some(env.slot) {
            self.parser.reset();
        }
        let info = match self.parser.parse(rb, env.slots) {
            Ok(Status::Partial) => {
                *env.slots_owner = Some(env.slot);
                return Ok(false);
            }
            Ok(Status::Complete(req)) => {
                *env.slots_owner = None;
                let method = req.method();
                Ok(Info {
                    route: Route::of(method, req.path()),
                    head_only: method == Method::Head,
                    head_len: req.head_len(),
                    framing: req.framing(),
                    keep_alive: req.keep_alive(),
                    http10: req.version() == Version::Http10,
                    expect_continue: req.expect_continue(),
                })
            }
            Err(e) => {
                *env.slots_owner = None;
                Err(e)
            }
        };
        match info {
            Ok(info) => self.answer(env, info).map(|()| true),
            Err(e) => {
                self.answer_error(env, e.status())?;
                Ok(true)
            }
        }
    }

    /// Answers a framing error: the status, `Connection: close`, and nothing after it is
    /// served, since the request boundaries can no longer be trusted.
    fn answer_error<F: FreeList>(&mut self, env: &mut Env<'_, F>, status: u16) -> Result<(), Stop> {
        WorkerCounters::add(&env.counters.requests, 1);
        self.refuse(env, status)
    }

    /// Writes an error response for the current request (already counted), then closes.
    fn refuse<F: FreeList>(&mut self, env: &mut Env<'_, F>, status: u16) -> Result<(), Stop> {
        let out = self.out.reserve(env.cache, routes::HEAD_ROOM + 64)?;
        let r = Reply {
            date: env.date,
            persist: Persist::Close,
            head_only: false,
        };
        routes::error(out, &r, status, None);
        WorkerCounters::add(&env.counters.bad_requests, 1);
        self.rbuf = None;
        self.phase = Phase::Closing;
        Ok(())
    }

    /// Encodes the response to a complete head and consumes it from the input.
    fn answer<F: FreeList>(&mut self, env: &mut Env<'_, F>, info: Info) -> Result<(), Stop> {
        let has_body = !matches!(info.framing, BodyFraming::None | BodyFraming::Length(0));
        if let BodyFraming::Length(n) = info.framing {
            if n > env.max_body {
                return self.answer_error(env, 413);
            }
        }
        let mut keep = info.keep_alive && !env.shutting_down;
        // A client that waits for `100 Continue` may never send a body we do not ask for, so
        // the connection cannot be reused after answering without reading it.
        if has_body && info.expect_continue && info.route != Route::Echo {
            keep = false;
        }
        let r = Reply {
            date: env.date,
            persist: match (keep, info.http10) {
                (false, _) => Persist::Close,
                (true, true) => Persist::KeepAlive10,
                (true, false) => Persist::Default,
            },
            head_only: info.head_only,
        };
        // The common case, one request and nothing behind it: its bytes are no longer needed
        // (`info` holds everything), so its block becomes the response block. One block per
        // exchange instead of two, and a connection can always answer with the block it
        // already holds, even with the pool exhausted.
        let reuse = self.out.is_empty()
            && !has_body
            && self
                .rbuf
                .as_ref()
                .is_some_and(|rb| rb.len() == info.head_len && rb.capacity() >= info.route.room());
        if reuse {
            if let Some(mut rb) = self.rbuf.take() {
                rb.clear();
                self.out.push(rb);
            }
        }
        let out = self.out.reserve(env.cache, info.route.room())?;
        let mut using = BodyUse::Skip;
        match info.route {
            Route::Plaintext => routes::plaintext(out, &r),
            Route::Json => routes::hello_json(out, &r).map_err(|_| Blocked::OutputFull)?,
            Route::Stats => {
                routes::json(out, &r, &env.shared.snapshot()).map_err(|_| Blocked::OutputFull)?
            }
            Route::NotFound => routes::error(out, &r, 404, None),
            Route::MethodNotAllowed(allow) => routes::error(out, &r, 405, Some(allow)),
            Route::Echo => {
                let len = match info.framing {
                    BodyFraming::None => Some(0),
                    BodyFraming::Length(n) => Some(n),
                    BodyFraming::Chunked => None,
                };
                let expect_continue = info.expect_continue && has_body;
                using = match len {
                    Some(_) => {
                        routes::echo_head(out, &r, len, expect_continue);
                        BodyUse::EchoLength
                    }
                    None => {
                        if expect_continue {
                            routes::continue_100(out);
                        }
                        BodyUse::EchoChunked(Some(r.persist))
                    }
                };
            }
        }
        WorkerCounters::add(&env.counters.requests, 1);
        // (When the read block became the response block, `rbuf` is empty already.)
        if let Some(rb) = self.rbuf.as_mut() {
            rb.advance(info.head_len.min(rb.len()));
        }
        if has_body && (keep || using != BodyUse::Skip) {
            self.phase = Phase::Body {
                decoder: BodyDecoder::new(info.framing),
                using,
                received: 0,
            };
            self.close_after_body = !keep;
        } else if !keep {
            self.phase = Phase::Closing;
        }
        Ok(())
    }

    /// Consumes body bytes from the input: echoes them into the output or skips them.
    fn body<F: FreeList>(&mut self, env: &mut Env<'_, F>) -> Result<(), Stop> {
        let Phase::Body {
            decoder,
            using,
            received,
        } = &mut self.phase
        else {
            return Ok(());
        };
        let Some(rb) = self.rbuf.as_mut() else {
            return Ok(());
        };
        let done = match *using {
            BodyUse::Skip => {
                let (n, done) = decoder.skip(rb).map_err(|_| CloseReason::BadBody)?;
                rb.advance(n);
                *received += n as u64;
                if *received > env.max_body {
                    // The response is complete already; just stop reading this peer.
                    self.phase = Phase::Closing;
                    return Ok(());
                }
                done
            }
            BodyUse::EchoLength | BodyUse::EchoChunked(_) => {
                // Feed the decoder only as much input as the output block can take, so the
                // decoded data always fits (chunk framing costs at most 24 bytes).
                // Room for the deferred 200 head, when it is still to be written.
                let head_room = match using {
                    BodyUse::EchoChunked(Some(_)) => routes::HEAD_ROOM,
                    _ => 0,
                };
                let out = self.out.reserve(env.cache, 64 + head_room)?;
                let room = out.spare_capacity() - 32 - head_room;
                let input = rb.get(..rb.len().min(room)).unwrap_or_default();
                let step = decoder.decode(input).map_err(|_| CloseReason::BadBody)?;
                *received += step.data.len() as u64;
                if *received > env.max_body {
                    if let BodyUse::EchoChunked(Some(_)) = using {
                        // Nothing of the response is out yet: refuse it properly.
                        self.rbuf = None;
                        return self.refuse(env, 413);
                    }
                    // The 200 head is on its way; all we can do is cut the response short.
                    return Err(CloseReason::BadBody.into());
                }
                if let BodyUse::EchoChunked(head) = using {
                    let pending = if step.data.is_empty() && !step.done {
                        None
                    } else {
                        head.take()
                    };
                    if let Some(persist) = pending {
                        let r = Reply {
                            date: env.date,
                            persist,
                            head_only: false,
                        };
                        routes::echo_head(out, &r, None, false);
                    }
                    write_chunk(out, step.data);
                    if step.done {
                        write_last_chunk(out);
                    }
                } else {
                    out.put_slice(step.data);
                }
                let (consumed, done) = (step.consumed, step.done);
                rb.advance(consumed);
                done
            }
        };
        if done {
            self.phase = if self.close_after_body {
                Phase::Closing
            } else {
                Phase::Head
            };
        }
        Ok(())
    }
}

/// Reads and discards what the peer still sends after our last response. `Ok(())`: would
/// block; `Err`: close now.
fn drain(sock: &mut TcpStream, discarded: &mut usize) -> Result<(), CloseReason> {
    let mut scratch = [0u8; 4096];
    loop {
        match sock.read(&mut scratch) {
            Ok(0) => return Err(CloseReason::Done),
            Ok(n) => {
                *discarded += n;
                if *discarded > DRAIN_LIMIT {
                    return Err(CloseReason::Done);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(CloseReason::Done),
        }
    }
}

/// What routing and framing need from a parsed head, copied out so the head's borrow of the
/// read block ends before the response is written.
#[derive(Clone, Copy, Debug)]
struct Info {
    route: Route,
    head_only: bool,
    head_len: usize,
    framing: BodyFraming,
    keep_alive: bool,
    http10: bool,
    expect_continue: bool,
}

/// Why `process` stopped.
#[derive(Debug)]
enum Stop {
    Blocked(Blocked),
    Close(CloseReason),
}

impl From<Blocked> for Stop {
    fn from(b: Blocked) -> Self {
        Stop::Blocked(b)
    }
}

impl From<CloseReason> for Stop {
    fn from(r: CloseReason) -> Self {
        Stop::Close(r)
    }
}
