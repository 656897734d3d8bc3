//! One HTTP/1.1 connection as a state machine with no I/O and no clock: bytes and events in,
//! output blocks and decisions out, in the manner of hyper's `proto::h1` and h11.
//!
//! A driver (the epoll one in `epoll.rs`; anything that can move bytes) runs it like this:
//!
//! ```text
//! loop {
//!     match conn.next(env) {
//!         Want::Send      => send conn.output(..) (or conn.front()), then conn.sent(n)
//!         Want::Receive   => read into conn.read_buf(env);
//!                            or hand over a filled block: conn.receive_block(env, buf);
//!                            at the end of the stream: conn.peer_closed()
//!         Want::HalfClose => shut the socket down for writing
//!         Want::Discard   => read and throw away, reporting conn.discarded(n)
//!         Want::Pool      => ask again once blocks came back to the pool
//!         Want::Close(r)  => close the socket; conn.release()
//!     }
//! }
//! ```
//!
//! and arms the deadline [`Conn::timer_kind`] names, calling [`Conn::expire`] when it passes.
//!
//! Input is served only once all output is sent, so a connection with output pending is never
//! read further (backpressure), and every response to a pipelined batch is queued before the
//! driver is asked to send: the batch leaves in one write. At most one send in flight is the
//! driver's business: it calls `next` again after `sent`.
//!
//! A connection holds pool blocks only while it has something in them: a read block from its
//! first received byte until its input is consumed, and output blocks until they are sent. An
//! idle keep-alive connection holds none.

use std::io::IoSlice;

use bufslab::{FreeList, LocalCache, PoolBuf};
use bufslab_http::{BodyFraming, HeaderSlot, KnownHeader, Parser, Status};
use bytes::{Buf, BufMut};

use crate::body::{Body, BodyFault, BodyUse};
use crate::config::SMALL_BLOCK;
use crate::deferred::Deferred;
use crate::exchange::{flag, Ctx, Exchange, ExchangeState, Progress, CHUNK_FRAMING, RESPONSE_ROOM};
use crate::out_queue::{Blocked, OutQueue};
use crate::protocol::{Head, ERROR_ROOM};
use crate::service::Service;
use crate::stats::WorkerCounters;
use crate::timer::TimerKind;
use crate::tls_info::TlsInfo;
use crate::upgrade::{UpState, UpgradeEvent, Upgraded};

/// The [`Exchange`] of the connection `$conn`'s current request, over the worker context in
/// `$env`. A macro rather than a method: it borrows fields of both disjointly from the
/// `env.service` and `conn.state` the caller hands the service at the same time.
macro_rules! exchange {
    ($conn:ident, $env:ident) => {
        Exchange::new(&mut $conn.out, &$env.ctx, &mut $conn.ex)
    };
}

/// The [`Upgraded`] handle of the connection `$conn`, whose upgrade state `$up` was taken out
/// of its phase, over the worker context in `$env`.
macro_rules! upgraded {
    ($conn:ident, $env:ident, $up:ident) => {
        Upgraded {
            out: &mut $conn.out,
            ctx: &$env.ctx,
            st: $up,
            shutting_down: $env.shutting_down,
            token: $conn.ex.token(),
        }
    };
}

mod process;

/// Bytes a lingering close discards before giving up on the peer.
const DRAIN_LIMIT: usize = 256 * 1024;

/// The most output room a pulled body's part is written into: one large block, sent whole.
const PULL_ROOM: usize = 32 * 1024;

/// A read block with less room than this is compacted before the next read.
const COMPACT_BELOW: usize = 512;

/// Where the connection is in its life.
#[derive(Clone, Debug)]
enum Phase {
    /// Waiting for (or parsing) a request head.
    Head,
    /// Reading the current request's body.
    Body(Body),
    /// No more requests will be served: send the output, then close. `linger`: the peer may
    /// still be sending (a refused or unread body, bytes after the last request, a close the
    /// client did not ask for), so close lingering: half-close, then drain until the peer
    /// closes, lest unread input reset the connection and destroy the last response
    /// (RFC 9112 §9.6). Without it (the client asked to close, and everything it sent was read)
    /// the connection closes as soon as the output is sent, as nginx's `lingering_close on`
    /// does.
    Closing { linger: bool },
    /// Our side is shut down for writing; discarding input until the peer closes.
    Drain { discarded: usize },
    /// Closed; holds no blocks and produces nothing more.
    Closed,
    /// Switched to another protocol (`101`): the bytes are the service's
    /// ([`Service::upgraded`]).
    Upgraded,
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CloseReason {
    /// The peer closed between requests or after our last response, a lingering close ended,
    /// or a deadline passed.
    Done,
    /// The peer closed or reset in the middle of a request.
    PeerAborted,
    /// A socket error (reset, broken pipe).
    Io,
    /// Input the connection cannot hold (a head past the largest block).
    BadInput,
}

/// What [`Conn::unsettled`] leaves the serving loop to do.
enum Step {
    Return(Want),
    Again,
    On,
}

/// What the connection needs from its driver next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// Send the queued output ([`Conn::output`]) and report it with [`Conn::sent`].
    Send,
    /// More input (read into [`Conn::read_buf`], or hand over a block: [`Conn::receive_block`]).
    Receive,
    /// Every response is sent and no more will come: shut the socket down for writing.
    /// Then comes [`Want::Discard`].
    HalfClose,
    /// Read and discard what the peer still sends, reporting it with [`Conn::discarded`],
    /// until it closes (a lingering close, so our last response is not lost to a reset).
    Discard,
    /// The pool has no block: ask again once blocks came back.
    Pool,
    /// The service deferred its answer: nothing to do (read nothing further) until the answer
    /// arrives ([`Conn::resume`]) or a deadline passes.
    Wait,
    /// Close the connection now.
    Close(CloseReason),
}

/// Per-worker context a connection needs while processing.
pub(crate) struct Env<'a, F: FreeList, S> {
    pub(crate) slot: usize,
    /// The worker's header slots, shared by its connections (see `slots_owner`).
    pub(crate) slots: &'a mut [HeaderSlot],
    /// Which connection's partial head the slots hold. The parser resumes from the slots it
    /// filled; if another connection used them since, the parser must start over.
    pub(crate) slots_owner: &'a mut Option<usize>,
    pub(crate) cache: &'a LocalCache<F>,
    /// What every exchange of the worker shares: the cache again (as a `BlockSource`), the
    /// Date, the `Server` name, and the server's state for the service's
    /// [`Exchange::stats`].
    pub(crate) ctx: Ctx<'a>,
    pub(crate) counters: &'a WorkerCounters,
    pub(crate) max_body: u64,
    pub(crate) large_block: usize,
    /// The most output entries a connection may have queued when it takes the next pipelined
    /// head: beyond, what is queued is sent first, so that every response finds room for a
    /// whole body of `Config::whole_body_limit`.
    pub(crate) head_gate: usize,
    /// `Config::min_body_rate`'s bytes: what a body being read must move on by each time its
    /// deadline passes (0: no minimum).
    pub(crate) min_body_bytes: u64,
    /// The server is shutting down: every response says `Connection: close`.
    pub(crate) shutting_down: bool,
    /// The worker's service.
    pub(crate) service: &'a mut S,
}

impl<F: FreeList, S> Env<'_, F, S> {
    /// The same context for one connection whose exchanges are to see its TLS session.
    pub(crate) fn with_tls<'b>(&'b mut self, tls: TlsInfo<'b>) -> Env<'b, F, S> {
        Env {
            slot: self.slot,
            slots: &mut *self.slots,
            slots_owner: &mut *self.slots_owner,
            cache: self.cache,
            ctx: Ctx {
                tls: Some(tls),
                ..self.ctx
            },
            counters: self.counters,
            max_body: self.max_body,
            large_block: self.large_block,
            head_gate: self.head_gate,
            min_body_bytes: self.min_body_bytes,
            shutting_down: self.shutting_down,
            service: &mut *self.service,
        }
    }
}

/// One connection's HTTP state: parser, read block, output queue. Slots are preallocated and
/// reused; [`Conn::open`] starts a new connection in one.
#[derive(Debug)]
pub(crate) struct Conn<T> {
    phase: Phase,
    parser: Parser,
    rbuf: Option<PoolBuf>,
    out: OutQueue,
    /// What follows the current request's body: `None`, the next request; `Some(linger)`,
    /// [`Phase::Closing`] (its response said `Connection: close`).
    close_after_body: Option<bool>,
    /// Between requests, input arrived (or may have) and no block was free to take it
    /// ([`starve`](Self::starve)), or the connection was just accepted: a head has started as
    /// far as its deadline goes.
    starved: bool,
    /// The current request's exchange, kept across the service's calls for its body.
    ex: ExchangeState,
    /// What the service keeps of the current request between its calls.
    state: T,
    /// The parser holds progress on a partial head, whose header lines are in the worker's
    /// shared slots: another connection's parse since then means starting it over.
    mid_head: bool,
    /// No byte has arrived since the connection opened: its first head's deadline runs from
    /// the accept, and passing it closes the connection without a word (there is no request
    /// to answer).
    fresh: bool,
    /// The connection ended while an exchange was unfinished (its body not all read, its
    /// response not complete): the service is told ([`Service::aborted`]) before its state is
    /// dropped.
    unfinished: bool,
    /// The connection was switched to another protocol: the service is told when it ends
    /// ([`Service::upgrade_ended`]).
    upgraded: bool,
    /// The upgraded connection's events so far ([`Phase::Upgraded`]).
    up: UpState,
}

impl<T: Default> Conn<T> {
    /// A closed connection slot.
    pub(crate) fn new(parser: Parser, slot: usize, out_blocks: usize) -> Conn<T> {
        Conn {
            phase: Phase::Closed,
            parser,
            rbuf: None,
            out: OutQueue::new(out_blocks),
            close_after_body: None,
            starved: false,
            ex: ExchangeState::new(slot),
            state: T::default(),
            mid_head: false,
            fresh: false,
            unfinished: false,
            upgraded: false,
            up: UpState::default(),
        }
    }

    /// Starts a new connection: waiting for its first request.
    pub(crate) fn open(&mut self) {
        self.release();
        // Nothing of the slot's last connection carries over: its large reads above all.
        self.up = UpState::default();
        self.phase = Phase::Head;
        // The first head's deadline runs from the accept.
        self.fresh = true;
        self.starved = true;
    }

    /// Ends the connection, giving its blocks back. Its service state stays until
    /// [`ended`](Self::ended), which tells the service if the exchange was unfinished.
    pub(crate) fn release(&mut self) {
        let delivering = matches!(&self.phase, Phase::Body(b) if b.using() == BodyUse::Deliver);
        self.unfinished |= delivering || !self.ex.is_settled();
        self.rbuf = None;
        self.out.clear();
        self.phase = Phase::Closed;
        self.parser.reset();
        self.mid_head = false;
        self.close_after_body = None;
        self.starved = false;
        self.fresh = false;
        // A deferred exchange of this connection is forgotten; its answer will not match.
        self.ex.progress = Progress::NotStarted;
    }

    /// After the connection closed ([`release`](Self::release)): tells the service when its
    /// last exchange ended unfinished ([`Service::aborted`]), then drops the service's state
    /// of it, so that what it holds (a pooled block being filled, say) goes now rather than
    /// when the slot serves its next head.
    pub(crate) fn ended<S: Service<State = T>>(&mut self, service: &mut S) {
        if std::mem::take(&mut self.unfinished) {
            service.aborted(&mut self.state);
        }
        if std::mem::take(&mut self.upgraded) {
            service.upgrade_ended(&mut self.state);
        }
        self.state = T::default();
    }

    /// Closed (by a [`Want::Close`], or never opened).
    #[cfg_attr(
        not(any(all(test, feature = "ws"), feature = "fuzzing")),
        allow(dead_code)
    )]
    pub(crate) fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// Switched to another protocol and not closing yet: on shutdown, it is run so that its
    /// service hears of it ([`UpgradeEvent::Shutdown`]).
    pub(crate) fn is_upgraded(&self) -> bool {
        matches!(self.phase, Phase::Upgraded)
    }

    /// Unconsumed input is buffered.
    pub(crate) fn holds_input(&self) -> bool {
        self.rbuf.as_ref().is_some_and(|b| !b.is_empty())
    }

    /// No request in progress and nothing to send: safe to close on shutdown or idle.
    pub(crate) fn is_idle(&self) -> bool {
        matches!(self.phase, Phase::Head)
            && !self.holds_input()
            && self.out.is_empty()
            && self.ex.is_settled()
    }

    /// The answer to a deferred exchange: `true` when this connection waits for it (then run
    /// it: [`next`](Self::next) has the service write the response), `false` when the
    /// exchange is over (the connection closed, or this is not its current exchange), and the
    /// answer is to be dropped.
    pub(crate) fn resume(&mut self, to: Deferred, answer: T) -> bool {
        if matches!(self.phase, Phase::Upgraded) {
            let up = &mut self.up;
            // A wake-up ([`Mailbox::wake`](crate::Mailbox::wake)): the service's state stays,
            // and the answer (a default) is dropped.
            up.woken |= self.ex.token() == to;
            return up.woken;
        }
        if self.ex.deferred_token() != Some(to) {
            return false;
        }
        self.state = answer;
        self.ex.progress = Progress::Answered;
        true
    }

    /// Which deadline applies now (see `timer.rs`). A head's deadline runs from its first byte
    /// whether or not a block was free to read that byte: were it armed only once the head got
    /// a block, the connections holding the pool's blocks with partial heads would be cut one
    /// header timeout after another, a wave per pool's worth, before a waiting one got a block.
    pub(crate) fn timer_kind(&self) -> TimerKind {
        match self.phase {
            Phase::Drain { .. } => TimerKind::Drain,
            // Waiting for body bytes (not for the peer to read our output).
            Phase::Body(_) if self.out.is_empty() => TimerKind::Body,
            // Input behind an exchange the service has not settled (a deferred answer, a
            // pulled body) is no head being received: the connection waits for its service.
            Phase::Head
                if self.out.is_empty()
                    && (self.holds_input() || self.starved)
                    && self.ex.is_settled() =>
            {
                TimerKind::Header
            }
            _ => TimerKind::Idle,
        }
    }

    /// The driver has (or may have) input for a head waiting and no block to take it into: from
    /// here the header deadline applies, as it would had a block been free. Ignored outside a
    /// head; forgotten once a block takes input.
    pub(crate) fn starve(&mut self) {
        self.fresh = false;
        if matches!(self.phase, Phase::Head) && self.out.is_empty() {
            self.starved = true;
        }
    }

    /// Pool blocks the connection holds: its read block and its output blocks. Its driver
    /// compares this after each turn, since blocks a connection gives back are what wakes the
    /// connections waiting for the pool.
    pub(crate) fn blocks(&self) -> usize {
        usize::from(self.rbuf.is_some()) + self.out.blocks()
    }

    /// The deadline of `kind` passed. A request head that timed out is answered 408 when a
    /// block is at hand (`true`: run the connection to send it, then it closes); otherwise
    /// (`false`) the connection is to close now.
    pub(crate) fn expire<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        kind: TimerKind,
    ) -> bool {
        match kind {
            TimerKind::Header => {
                WorkerCounters::add(&env.counters.header_timeouts, 1);
                if self.fresh {
                    // Not a byte came: no request to answer.
                    self.release();
                    return false;
                }
                self.rbuf = None;
                if *env.slots_owner == Some(env.slot) {
                    *env.slots_owner = None;
                }
                if matches!(self.phase, Phase::Head) && self.final_error(env, 408, false).is_ok() {
                    WorkerCounters::add(&env.counters.requests, 1);
                    return true;
                }
            }
            TimerKind::Idle => WorkerCounters::add(&env.counters.idle_timeouts, 1),
            TimerKind::Body => return self.body_deadline(env),
            TimerKind::Drain => {}
        }
        self.release();
        false
    }

    /// A body's rate deadline passed: it goes on if it moved on by the minimum since the last
    /// time. Otherwise, while its response can still be taken back, it is refused as any body
    /// fault is ([`body_fault`](Self::body_fault): `408`); once the response has started going
    /// out, the connection closes now. `true`: run the connection (armed again, or sending the
    /// `408`); `false`: close it.
    #[cold]
    fn body_deadline<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> bool {
        let Phase::Body(body) = &mut self.phase else {
            return true;
        };
        if body.take_progress() >= env.min_body_bytes {
            return true;
        }
        WorkerCounters::add(&env.counters.slow_bodies, 1);
        if body.unsent_from().is_some() && self.body_fault(env, BodyFault::TooSlow).is_ok() {
            return true;
        }
        self.release();
        false
    }

    /// Runs the connection as far as its buffered input and output allow, and says what it
    /// needs next.
    #[inline]
    pub(crate) fn next<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Want {
        // Between requests with everything sent, the most frequent call by far: no input to
        // serve, the read block (if any) goes home.
        if self.out.is_empty()
            && matches!(self.phase, Phase::Head)
            && !self.holds_input()
            && self.ex.is_settled()
        {
            self.rbuf = None;
            return Want::Receive;
        }
        self.serve(env)
    }

    fn serve<F: FreeList, S: Service<State = T>>(&mut self, env: &mut Env<'_, F, S>) -> Want {
        loop {
            if !self.out.is_empty() {
                self.out.settle();
                if !self.out.is_empty() {
                    return Want::Send;
                }
            }
            // One check on the common path: the exchange is answered or between requests.
            if !self.ex.is_settled() {
                match self.unsettled(env) {
                    Step::Return(want) => return want,
                    Step::Again => continue,
                    Step::On => {}
                }
            }
            match self.phase {
                Phase::Closing { .. } if self.closes_after_output() => {
                    return self.close(CloseReason::Done);
                }
                Phase::Closing { .. } => {
                    self.rbuf = None;
                    self.phase = Phase::Drain { discarded: 0 };
                    return Want::HalfClose;
                }
                Phase::Drain { .. } => return Want::Discard,
                Phase::Closed => return Want::Close(CloseReason::Done),
                Phase::Upgraded => match self.upgraded_step(env) {
                    Step::Return(want) => return want,
                    Step::Again => continue,
                    Step::On => {}
                },
                Phase::Head | Phase::Body(_) => {}
            }
            if self.holds_input() {
                match self.process(env) {
                    Ok(()) => {}
                    Err(Blocked::OutputFull) if !self.out.is_empty() => continue,
                    // An empty queue always has room: never spin.
                    Err(Blocked::OutputFull) => return self.close(CloseReason::Io),
                    // Sending what is queued gives blocks back; waiting with it queued could
                    // wait for blocks only this connection would free.
                    Err(Blocked::Pool) if !self.out.is_empty() => continue,
                    Err(Blocked::Pool) => return Want::Pool,
                }
                if !self.out.is_empty() || matches!(self.phase, Phase::Closing { .. }) {
                    continue;
                }
            }
            // Input consumed: the read block goes home (idle connections hold no blocks).
            self.release_read_block();
            return Want::Receive;
        }
    }

    /// What an exchange that is not settled needs before anything else: its deferred answer
    /// (wait for it, or have the service write it), or the next part of its pulled body. A
    /// body being read goes [`On`](Step::On).
    fn unsettled<F: FreeList, S: Service<State = T>>(&mut self, env: &mut Env<'_, F, S>) -> Step {
        if matches!(self.phase, Phase::Closed | Phase::Drain { .. }) {
            return Step::On;
        }
        let done = match self.ex.progress {
            // Nothing goes on, and nothing more is read, until the answer: the input waits
            // where it is, and so does the peer (backpressure).
            Progress::Deferred => return Step::Return(Want::Wait),
            Progress::Answered => self.answered(env),
            // The output drained: the next part of the body.
            _ if self.ex.pulls() => self.pull(env),
            _ => return Step::On,
        };
        match done {
            Ok(()) => Step::Again,
            Err(Blocked::Pool) => Step::Return(Want::Pool),
            Err(Blocked::OutputFull) => Step::Return(self.close(CloseReason::Io)),
        }
    }

    /// The upgraded connection's events that come from no input: its start, the server's
    /// shutdown, and the close its service asked for.
    #[cold]
    #[inline(never)]
    fn upgraded_step<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Step {
        if !matches!(self.phase, Phase::Upgraded) {
            return Step::On;
        }
        let up = &mut self.up;
        let event = if !up.started {
            up.started = true;
            UpgradeEvent::Start
        } else if env.shutting_down && !up.told_shutdown {
            up.told_shutdown = true;
            UpgradeEvent::Shutdown
        } else if up.woken {
            up.woken = false;
            UpgradeEvent::Wake
        } else {
            return Step::On;
        };
        let mut handle = upgraded!(self, env, up);
        env.service.upgraded(event, &mut handle, &mut self.state);
        self.close_if_upgrade_closes();
        Step::Again
    }

    /// The service of the upgraded connection called [`Upgraded::close`]: what is queued goes
    /// out, then the close lingers (half-close, drain), as for HTTP.
    fn close_if_upgrade_closes(&mut self) {
        if matches!(self.phase, Phase::Upgraded) && self.up.close {
            self.rbuf = None;
            self.phase = Phase::Closing { linger: true };
        }
    }

    /// Hands the upgraded connection's input to its service, whole: one block at most, and
    /// only while nothing is queued to send (backpressure), so the service has the whole
    /// output queue to answer in.
    #[inline(never)]
    fn deliver<F: FreeList, S: Service<State = T>>(&mut self, env: &mut Env<'_, F, S>) {
        let (Phase::Upgraded, Some(rb)) = (&self.phase, self.rbuf.as_mut()) else {
            return;
        };
        let up = &mut self.up;
        up.large_reads |= rb.spare_capacity() == 0 && rb.capacity() < env.large_block;
        let mut handle = upgraded!(self, env, up);
        env.service.upgraded(
            UpgradeEvent::Data(&mut rb[..]),
            &mut handle,
            &mut self.state,
        );
        let n = rb.len();
        rb.advance(n);
        self.close_if_upgrade_closes();
    }

    fn close(&mut self, reason: CloseReason) -> Want {
        self.release();
        Want::Close(reason)
    }

    // ---- Input ----

    /// The read block to read into, rented now if needed, with room for at least one more
    /// byte: fill its spare room (e.g. with [`PoolBuf::read_from`]), then call
    /// [`next`](Self::next) again.
    ///
    /// The driver asks only when input is there to read, so a head that finds no block here
    /// has started all the same: its deadline runs from now ([`starve`](Self::starve)).
    ///
    /// # Errors
    /// [`Want::Pool`] when no block is to be had; [`Want::Close`] when a head fills the
    /// largest block (the codec answers 431 before that, so this is a guard).
    #[inline(always)]
    pub(crate) fn read_buf<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<&mut PoolBuf, Want> {
        // Out of the rental below, which then finds the block in place: with the size chosen
        // there, a plain request paid 11 to 17 instructions more (callgrind).
        if self.up.large_reads && self.rbuf.is_none() {
            self.rbuf = large_read_block(env);
        }
        let b = match self.rbuf.take() {
            None => {
                let Ok(b) = env.cache.get(SMALL_BLOCK) else {
                    self.starve();
                    return Err(Want::Pool);
                };
                self.starved = false;
                self.fresh = false;
                b
            }
            Some(mut b) => {
                if b.spare_capacity() < COMPACT_BELOW {
                    b.compact();
                }
                if b.spare_capacity() == 0 {
                    // A head larger than the block: move it to the large class.
                    if b.capacity() >= env.large_block {
                        return Err(self.close(CloseReason::BadInput));
                    }
                    let Ok(mut big) = env.cache.get(env.large_block) else {
                        self.rbuf = Some(b);
                        return Err(Want::Pool);
                    };
                    big.put_slice(&b);
                    big
                } else {
                    b
                }
            }
        };
        Ok(self.rbuf.insert(b))
    }

    /// [`read_buf`](Self::read_buf)'s spare room as a plain slice, for a driver that reads
    /// into memory it is lent; report what was read with [`received`](Self::received).
    ///
    /// # Errors
    /// As [`read_buf`](Self::read_buf).
    pub(crate) fn read_space<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<&mut [u8], Want> {
        self.read_buf(env).map(PoolBuf::spare_mut)
    }

    /// `n` bytes were read into the room [`read_space`](Self::read_space) gave.
    pub(crate) fn received(&mut self, n: usize) {
        if let Some(b) = self.rbuf.as_mut() {
            b.commit(n.min(b.spare_capacity()));
        }
    }

    /// Gives the read block back if it holds nothing: call when a read found nothing to
    /// take, so an idle connection holds no block.
    pub(crate) fn release_read_block(&mut self) {
        if self.rbuf.as_ref().is_some_and(|b| b.is_empty()) {
            self.rbuf = None;
        }
    }

    /// Takes a block filled elsewhere (by the kernel, for a completion-based driver). With no
    /// input buffered it becomes the read block as it is; otherwise its bytes are appended to
    /// the read block (moved to the large class when a head outgrows a small one).
    ///
    /// Returns what could not be taken: `None` when all of it was. The rest (`Some`) is to be
    /// offered again after the next [`next`](Self::next); when `next` then says
    /// [`Want::Receive`] and the rest comes back untouched, the pool is out of blocks, so
    /// wait as for [`Want::Pool`].
    // The entry of a completion-based driver; the epoll driver reads into `read_buf`.
    #[cfg_attr(
        not(any(all(test, feature = "ws"), feature = "fuzzing")),
        allow(dead_code)
    )]
    pub(crate) fn receive_block<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        mut buf: PoolBuf,
    ) -> Option<PoolBuf> {
        if !matches!(self.phase, Phase::Head | Phase::Body(_) | Phase::Upgraded) {
            return None;
        }
        if !self.holds_input() {
            self.starved = false;
            self.fresh = false;
            self.rbuf = Some(buf);
            return None;
        }
        let rb = self.rbuf.as_mut()?;
        if rb.spare_capacity() < buf.len() {
            rb.compact();
        }
        if rb.spare_capacity() < buf.len() && rb.capacity() < env.large_block {
            if let Ok(mut big) = env.cache.get(env.large_block) {
                big.put_slice(rb);
                *rb = big;
            }
        }
        let take = buf.len().min(rb.spare_capacity());
        rb.put_slice(buf.get(..take).unwrap_or_default());
        buf.advance(take);
        (!buf.is_empty()).then_some(buf)
    }

    /// The peer ended its stream (a read returned 0). An upgraded connection's service is told
    /// ([`UpgradeEvent::PeerClosed`]) and may write last bytes: `None`, run the connection on
    /// (it sends them, then closes). Otherwise the connection closes now, as
    /// [`peer_closed`](Self::peer_closed) says.
    pub(crate) fn peer_eof<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Option<CloseReason> {
        if matches!(self.phase, Phase::Upgraded) {
            let up = &mut self.up;
            let mut handle = upgraded!(self, env, up);
            env.service
                .upgraded(UpgradeEvent::PeerClosed, &mut handle, &mut self.state);
            self.rbuf = None;
            self.phase = Phase::Closing { linger: false };
            return None;
        }
        Some(self.peer_closed())
    }

    /// The peer ended its stream (a read returned 0): the connection closes. Says whether it
    /// closed cleanly (between requests) or mid-request.
    pub(crate) fn peer_closed(&mut self) -> CloseReason {
        let reason = match self.phase {
            Phase::Head if !self.holds_input() => CloseReason::Done,
            Phase::Drain { .. } | Phase::Closed | Phase::Upgraded => CloseReason::Done,
            _ => CloseReason::PeerAborted,
        };
        self.release();
        reason
    }

    /// `n` bytes were read and thrown away while draining. Says whether to go on
    /// ([`Want::Discard`]) or close.
    pub(crate) fn discarded(&mut self, n: usize) -> Want {
        if let Phase::Drain { discarded } = &mut self.phase {
            *discarded += n;
            if *discarded <= DRAIN_LIMIT {
                return Want::Discard;
            }
        }
        self.close(CloseReason::Done)
    }

    // ---- Output ----

    /// The queued output as slices, oldest first, in `slices`; returns how many. One write of
    /// all of them sends a pipelined batch at once.
    pub(crate) fn output<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        self.out.slices(slices)
    }

    /// The oldest output block's bytes: what a plain `send` takes when it is the only one.
    pub(crate) fn front(&self) -> &[u8] {
        self.out.front()
    }

    /// The queued output is the connection's last: once it is sent, the connection closes at
    /// once ([`Want::Close`], no lingering close). A completion-based driver may queue the close
    /// behind the send.
    pub(crate) fn closes_after_output(&self) -> bool {
        matches!(self.phase, Phase::Closing { linger: false })
            && !self.holds_input()
            && self.ex.is_settled()
    }

    /// Output blocks the connection queues at most.
    pub(crate) fn output_capacity(&self) -> usize {
        self.out.capacity()
    }

    /// Output blocks queued.
    pub(crate) fn output_blocks(&self) -> usize {
        self.out.blocks()
    }

    /// `n` bytes of the output were sent; fully sent blocks go back to the pool.
    #[inline(always)]
    pub(crate) fn sent(&mut self, n: usize) {
        self.out.consume(n);
        if let Phase::Body(body) = &mut self.phase {
            body.sent(n);
        }
    }
}

/// A read block for an upgraded connection whose input once filled a small one
/// (`UpState::large_reads`): a large one, if the pool has one left (else the caller rents a
/// small one as for any read).
#[cold]
#[inline(never)]
fn large_read_block<F: FreeList, S>(env: &Env<'_, F, S>) -> Option<PoolBuf> {
    env.cache.get(env.large_block).ok()
}
