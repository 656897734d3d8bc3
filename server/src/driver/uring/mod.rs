//! The io_uring driver: one ring per worker feeding the same connection core (`proto/conn/`) as the
//! epoll driver, with the kernel receiving into pool blocks through a provided buffer ring
//! (`bufslab_uring::BufRing`).
//!
//! Each loop turn: refill the buffer ring and arm the receives waiting for it, submit everything
//! queued and wait for completions in **one** `io_uring_enter` (its timeout is the next
//! deadline), handle the completions, then deadlines, then the connections waiting for the pool
//! if blocks came back (`worker::wake_pool_waiters`). The ring is `SINGLE_ISSUER | DEFER_TASKRUN`
//! (`COOP_TASKRUN` where the kernel refuses those), with a completion queue four times the
//! submission queue.
//!
//! - **Accept:** one multishot accept on each of the worker's plain `SO_REUSEPORT` listeners
//!   (its index in the request's slot field); on an HTTPS listener, one single-shot accept at
//!   a time, armed only while the worker has room for another handshake
//!   (`TlsConfig::max_handshakes`), so that connections past the bound wait in the backlog
//!   instead of being accepted and closed (`arm_accept`). Accepted sockets
//!   inherit `TCP_NODELAY` from the listener (set before it listens: see `server::bind`), so
//!   there is no setsockopt per connection.
//! - **Receive:** one multishot receive with buffer select per connection, armed when the
//!   core first asks for input and kept armed: the kernel takes a block from the buffer ring
//!   each time data arrives, so a keep-alive exchange costs one receive completion and one send,
//!   and no request is re-armed (nor its poll set up again) per exchange. An idle connection
//!   holds no block. A block that arrives while the core is busy (sending, or waiting for the
//!   pool) waits in the connection (`pending`); a second one is appended to it where it fits,
//!   else it is parked in the worker's queue and the receive is cancelled until the core has
//!   taken that input: the backpressure the epoll driver gets by not reading. While any block
//!   of the connection is parked, the next goes behind it (`requests::file`), so the core
//!   takes its input in the order it came. The ring is refilled
//!   only to its size less the parked blocks, so the queue never grows (see `parked`).
//!   `ENOBUFS` (the ring ran dry, which ends the receive) is a wait for the pool, never a close:
//!   the connection waits in the worker's queue of ring waiters (its head's deadline running
//!   from then), and its receive is armed again, oldest first, once a refill put a block in the
//!   ring for it. A receive is armed even on a dry ring, so only a peer whose input has come
//!   waits, as under epoll; one with nothing to say holds no block either way. A connection
//!   that holds part of a request while no receive is armed receives the rest into the spare
//!   room of its own read block, as the epoll driver does: no copy, and a pool drained by
//!   partial requests still moves.
//! - **Send:** at most one in flight per connection (`send` of one block, `writev` of several);
//!   a short send is resumed by the next one. The output blocks stay in the connection until
//!   the completion: a connection closed with a send in flight keeps them until then. A fully
//!   sent response with the receive still armed costs the core no turn at its completion.
//! - **Close:** a cancel of each request still in flight on the socket, then a close, queued
//!   together (no system call of their own, both run inline at submission). A request parked
//!   in the kernel holds the socket open past the close of its descriptor; the cancel ends it,
//!   and its completion (and the block it may carry) is recognised as stale by the slot's
//!   generation. A lingering close's half-close is a `shutdown` system call: the kernel runs
//!   shutdown requests on io-wq worker threads, which costs more than the call (a quarter more
//!   CPU per connection with `ab -c 256`, measured), and resolves their descriptor only there,
//!   after a later close may have handed the number to a new socket.
//!
//! The `unsafe` here is the submission of requests that name memory (send buffers and iovecs,
//! which the connection keeps until the completion) and the taking of completed receive blocks
//! from the buffer ring; each block says why it holds.

use std::collections::VecDeque;
use std::io;
use std::mem::MaybeUninit;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bufslab::{FreeList, Pool, PoolBuf};
use bufslab_http::Parser;
use bufslab_uring::{BufRing, Error as UringError, Features};
use bytes::BufMut;
use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::config::{Config, SMALL_BLOCK};
use crate::conn::{CloseReason, Env, Want};
use crate::deferred::Deferred;
use crate::link::{Link, Wire};
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::shared::Shared;
use crate::stats::WorkerCounters;
use crate::timer::TimerKind;
use crate::tls::TlsConfig;
use crate::wait_queue::WaitQueue;
use crate::worker::{
    deliver_answers, env, listener_tls, wake_pool_waiters, App, PoolWaiters, WorkerBase,
};

mod close;
mod complete;
mod probe;
mod requests;

use probe::new_ring;
pub(crate) use probe::probe;
use requests::*;

/// Submission queue entries; the completion queue gets four times as many.
const SQ_ENTRIES: u32 = 1024;

/// Completions taken from the queue at a time.
const CQE_BATCH: usize = 32;

/// Most blocks in each worker's buffer ring.
const BUF_RING_ENTRIES: usize = 1024;

/// The buffer ring's size: at most a quarter of the small blocks the pool may ever hold,
/// shared among the workers, so that the rings never starve the connections' output.
fn ring_entries(cfg: &Config) -> usize {
    let small_blocks = cfg.pool.max_bytes / SMALL_BLOCK;
    let share = small_blocks / (4 * cfg.workers.max(1));
    // The largest power of two not above the share, at least 1.
    let pow2 = if share == 0 { 1 } else { 1 << share.ilog2() };
    pow2.min(BUF_RING_ENTRIES)
}

/// The buffer group of each worker's ring (each worker has its own io_uring).
const GROUP: u16 = 0;

/// Longest a wait sleeps: the shutdown flag is read once per turn.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// After the shutdown deadline, how long to wait for the kernel to finish requests in flight
/// before leaving (the buffer ring's blocks are then leaked, never freed under the kernel).
const DRAIN_OPS: Duration = Duration::from_secs(1);

// Request kinds, in the top byte of `user_data`; then a 24-bit generation and a 32-bit slot.
const ACCEPT: u64 = 1;
const RECV: u64 = 2;
const SEND: u64 = 3;
const CANCEL: u64 = 4;
/// A receive into the connection's own read block (it holds a partial request).
const RECV_OWN: u64 = 5;
/// The close of a connection's socket (after the cancels of its requests in flight).
const CLOSE: u64 = 6;
/// The poll on the mailbox's eventfd: answers to deferred exchanges arrived.
const WAKE: u64 = 7;

fn user_data(kind: u64, gen: u32, slot: usize) -> u64 {
    kind << 56 | u64::from(gen & 0xff_ffff) << 32 | (slot as u64 & 0xffff_ffff)
}

fn split(user_data: u64) -> (u64, u32, usize) {
    (
        user_data >> 56,
        (user_data >> 32) as u32 & 0xff_ffff,
        (user_data & 0xffff_ffff) as usize,
    )
}

/// One connection slot of an io_uring worker.
struct UConn<T> {
    /// The socket and the requests in flight on it.
    io: UIo,
    conn: Link<T>,
}

/// An io_uring slot's socket and the state of its requests: apart from the connection, so
/// that a turn can run a plain connection's core directly (`Wire`).
struct UIo {
    sock: Option<TcpStream>,
    /// Bumped when the slot's connection closes: completions of an older generation are stale.
    gen: u32,
    /// The multishot receive is armed (until its final completion).
    recv_armed: bool,
    /// A cancel of the multishot receive is in flight (input is parked: stop receiving).
    recv_cancel: bool,
    /// Blocks of this connection in the worker's `parked` queue, behind `pending`.
    parked: u32,
    /// A receive into the connection's read block is in flight.
    recv_own: bool,
    sending: bool,
    /// Closed while the kernel still uses its blocks (a send, or a receive into the read
    /// block, in flight): they stay until that completion.
    closing: bool,
    /// A deadline passed during a receive into the read block: applied at its completion.
    expire_pending: Option<TimerKind>,
    /// The peer's end of stream was received.
    eof: bool,
    /// A receive failed (reset).
    read_error: bool,
    /// The oldest received block the core has not taken yet (more may be parked).
    pending: Option<PoolBuf>,
    /// The iovecs of a `writev` in flight (the kernel reads them until its completion).
    iov: [libc::iovec; SEND_BLOCKS],
}

impl<T: Default> UConn<T> {
    /// Files a receive's result `res` but for `ENOBUFS`: `Some(n)` for `n` bytes received, else
    /// the end of stream or the error is noted. `ECANCELED`: the receive was cancelled (its
    /// input parked, or the connection closing); the core asks again if it wants input.
    #[inline]
    fn received(&mut self, res: i32) -> Option<usize> {
        match res {
            n if n > 0 => return Some(n as usize),
            0 => self.io.eof = true,
            e if e == -libc::ECANCELED || e == -libc::EINTR || e == -libc::EAGAIN => {}
            _ => self.io.read_error = true,
        }
        None
    }

    /// Releases a closed connection's blocks once the kernel no longer uses them; whether it
    /// did (the slot is free again).
    fn finish_close(&mut self, counters: &WorkerCounters) -> bool {
        if self.busy() || !self.io.closing {
            return false;
        }
        self.io.closing = false;
        self.conn.release(counters);
        true
    }

    /// The kernel uses the connection's blocks: a send, or a receive into its read block.
    fn busy(&self) -> bool {
        self.io.busy()
    }

    /// Pool blocks the connection holds: the core's, and the received ones waiting for it.
    fn blocks(&self) -> usize {
        self.conn.blocks() + self.io.blocks()
    }

    fn new(parser: Parser, slot: usize, out_blocks: usize) -> UConn<T> {
        UConn {
            io: UIo::new(),
            conn: Link::new(parser, slot, out_blocks),
        }
    }
}

impl UIo {
    /// A closed slot's: no socket, nothing in flight, nothing received.
    fn new() -> UIo {
        UIo {
            sock: None,
            gen: 0,
            recv_armed: false,
            recv_cancel: false,
            parked: 0,
            recv_own: false,
            sending: false,
            closing: false,
            expire_pending: None,
            eof: false,
            read_error: false,
            pending: None,
            iov: [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; SEND_BLOCKS],
        }
    }

    /// The kernel uses the connection's blocks: a send, or a receive into its read block.
    fn busy(&self) -> bool {
        self.sending || self.recv_own
    }

    /// Received blocks waiting for the core.
    fn blocks(&self) -> usize {
        usize::from(self.pending.is_some()) + self.parked as usize
    }
}

/// How a connection's turn ended, and what it queued.
struct Turn {
    outcome: Outcome,
    sends: usize,
    recvs: usize,
    /// Pool blocks the connection holds after it.
    blocks: usize,
}

/// What a connection's turn borrows of its worker.
struct Lent<'w> {
    ring: &'w mut IoUring,
    parked: &'w mut VecDeque<(u32, PoolBuf)>,
    ring_waiters: &'w mut WaitQueue,
    fd: types::Fd,
    slot: usize,
}

impl Lent<'_> {
    /// Runs the connection `conn` (the core alone, or behind TLS) as far as it goes without
    /// waiting, queueing the requests it needs; returns how the turn ended and the sends and
    /// receives it queued. The requests go straight into the submission queue, built in place.
    ///
    /// SAFETY (every `queue` in it): a multishot receive names only the buffer group, which
    /// `bufs` keeps registered until every receive completed (`UringWorker::run`). A send
    /// names the connection's output blocks (the core's, or the TLS layer's records) and
    /// `uio.iov`; a receive into the read block names that block's spare bytes. Until the
    /// completion the connection is not asked for anything (`busy`), a deadline waits for it
    /// (`expire_pending`) or closes without releasing, and a closed connection keeps its blocks
    /// (`closing`); the slot table never moves (it is allocated once).
    #[inline(always)]
    fn turn<T: Default, W: Wire<T>, F: FreeList, S: Service<State = T>>(
        &mut self,
        uio: &mut UIo,
        conn: &mut W,
        env: &mut Env<'_, F, S>,
    ) -> io::Result<Turn> {
        let (ring, parked, ring_waiters) =
            (&mut *self.ring, &mut *self.parked, &mut *self.ring_waiters);
        let (fd, slot) = (self.fd, self.slot);
        let (mut sends, mut recvs) = (0, 0);
        let mut stuck = false;
        let outcome = loop {
            if uio.busy() {
                break Outcome::Wait;
            }
            match conn.next(env) {
                Want::Send => {
                    if queue_last_send(ring, uio, conn, slot)? {
                        sends += 1;
                        break Outcome::SentClosing;
                    }
                    let send = send_request(uio, conn, fd, user_data(SEND, uio.gen, slot));
                    // SAFETY: see this function's doc.
                    unsafe { queue(ring, &send)? };
                    uio.sending = true;
                    sends += 1;
                    break Outcome::Wait;
                }
                Want::Receive => {
                    unpark(parked, uio, slot);
                    if let Some(buf) = uio.pending.take() {
                        let before = buf.len();
                        match conn.receive_block(env, buf) {
                            None => stuck = false,
                            Some(rest) => {
                                let untouched = rest.len() == before;
                                uio.pending = Some(rest);
                                if untouched && stuck {
                                    break Outcome::Pool;
                                }
                                stuck = untouched;
                            }
                        }
                        continue;
                    }
                    if uio.recv_armed {
                        break Outcome::Wait;
                    }
                    if uio.read_error {
                        break Outcome::Close(CloseReason::Io);
                    }
                    if uio.eof {
                        match conn.peer_eof(env) {
                            Some(reason) => break Outcome::Close(reason),
                            // An upgraded connection sends its last bytes, then closes.
                            None => continue,
                        }
                    }
                    // A partial request: the rest goes into the same block, as with epoll
                    // (no second block, no copy; a pool of partial heads still moves).
                    if conn.holds_input() {
                        match conn.read_space(env) {
                            Ok(space) => {
                                let ud = user_data(RECV_OWN, uio.gen, slot);
                                // SAFETY: see this function's doc.
                                unsafe { queue(ring, &own_recv_request(fd, space, ud))? };
                                uio.recv_own = true;
                                ring_waiters.remove(slot);
                                recvs += 1;
                                break Outcome::Wait;
                            }
                            Err(Want::Close(reason)) => break Outcome::Close(reason),
                            Err(_) => break Outcome::Pool,
                        }
                    }
                    // Armed even on a dry ring: a peer with nothing to say holds no block
                    // either way, and one whose input waits ends the receive at once with
                    // `ENOBUFS`, which is how the connection learns it has to wait.
                    if ring_waiters.contains(slot) {
                        break Outcome::Wait;
                    }
                    arm_ring_recv(ring, uio, fd, slot)?;
                    recvs += 1;
                    break Outcome::Wait;
                }
                Want::HalfClose => {
                    // A system call, not a request: the kernel runs every shutdown request on
                    // an io-wq worker thread (a wake-up and a context switch, more than the
                    // call costs), and looks the descriptor up only there, so a close that
                    // overtook it could leave it to shut down whichever socket got the number
                    // next. A peer already gone: the drain tells.
                    if let Some(sock) = &uio.sock {
                        let _ = sock.shutdown(Shutdown::Write);
                    }
                }
                Want::Discard => {
                    unpark(parked, uio, slot);
                    if let Some(buf) = uio.pending.take() {
                        match conn.discarded(buf.len()) {
                            Want::Close(reason) => break Outcome::Close(reason),
                            _ => continue,
                        }
                    }
                    if uio.recv_armed {
                        break Outcome::Wait;
                    }
                    if uio.eof || uio.read_error {
                        break Outcome::Close(conn.peer_closed());
                    }
                    if ring_waiters.contains(slot) {
                        break Outcome::Wait;
                    }
                    arm_ring_recv(ring, uio, fd, slot)?;
                    recvs += 1;
                    break Outcome::Wait;
                }
                Want::Pool => break Outcome::Pool,
                Want::Wait => break Outcome::Wait,
                Want::Close(reason) => break Outcome::Close(reason),
            }
        };
        Ok(Turn {
            outcome,
            sends,
            recvs,
            blocks: conn.blocks() + uio.blocks(),
        })
    }
}

/// What a connection's turn ended on.
enum Outcome {
    Wait,
    Pool,
    Close(CloseReason),
    /// The last response and the close of the socket are queued together.
    SentClosing,
}

/// Everything one io_uring worker owns.
pub(crate) struct UringWorker<F: FreeList, S: Service> {
    base: WorkerBase<F, S>,
    ring: IoUring,
    bufs: BufRing<F>,
    /// The worker's socket on each address, in `Config::listener`'s order; each dropped
    /// during shutdown once its accept has completed for the last time.
    listeners: Vec<Option<TcpListener>>,
    /// Bit `i`: listener `i`'s accept is armed.
    accept_armed: u32,
    /// A bit for each listener: `accept_armed` in the usual turn.
    accept_all: u32,
    /// Each listener's TLS (see `worker::listener_tls`): an HTTPS listener's accept takes one
    /// connection at a time (see `arm_accept`), a plain one's is multishot.
    tls: Vec<Option<TlsConfig>>,
    /// The poll on the mailbox's eventfd is armed.
    wake_armed: bool,
    conns: Vec<UConn<S::State>>,
    /// Received blocks waiting behind a connection's `pending` one, oldest first, with their
    /// slot. Its capacity is the buffer ring's size and the ring is refilled only to
    /// `entries - parked.len()`, so it never grows: a block is parked only as it leaves the ring.
    parked: VecDeque<(u32, PoolBuf)>,
    /// Connections whose receive ended on a dry buffer ring (`ENOBUFS`) with input waiting in
    /// the socket, oldest first: each is armed again when the ring holds a block for it (see
    /// `wake_ring_waiters`), not before, since a receive armed on a dry ring with input waiting
    /// ends at once.
    ring_waiters: WaitQueue,
    /// Receives, sends and socket closes submitted and not yet completed.
    recvs_in_flight: usize,
    sends_in_flight: usize,
    closes_in_flight: usize,
}

impl<F: FreeList, S: Service> UringWorker<F, S> {
    /// Sets a worker up on its own thread (the ring's single issuer, the cache's owner).
    pub(crate) fn new(
        id: usize,
        listeners: Vec<TcpListener>,
        pool: &Pool<F>,
        shared: Arc<Shared>,
        cfg: Config,
        app: App<S>,
    ) -> io::Result<Self> {
        let to_io = |e: UringError| io::Error::other(e.to_string());
        let ring = new_ring().map_err(to_io)?;
        let cache = pool.local_cache();
        let bufs =
            BufRing::new(&ring, &cache, GROUP, ring_entries(&cfg), SMALL_BLOCK).map_err(to_io)?;
        let n = cfg.max_conns;
        let parked = VecDeque::with_capacity(bufs.entries());
        let base = WorkerBase::new(id, cache, shared, cfg, app);
        Ok(UringWorker {
            ring,
            bufs,
            parked,
            accept_all: (1u32 << listeners.len()) - 1,
            listeners: listeners.into_iter().map(Some).collect(),
            accept_armed: 0,
            tls: listener_tls(&base.cfg),
            wake_armed: false,
            conns: (0..n)
                .map(|slot| UConn::new(base.parser(), slot, base.cfg.out_blocks))
                .collect(),
            ring_waiters: WaitQueue::new(n),
            base,
            recvs_in_flight: 0,
            sends_in_flight: 0,
            closes_in_flight: 0,
        })
    }

    /// The event loop; returns once shut down, every connection closed and every request
    /// completed.
    pub(crate) fn run(mut self) -> io::Result<()> {
        let mut ops_deadline = None;
        loop {
            let now = Instant::now();
            if !self.base.shutting_down() {
                self.arm_accept(now)?;
            }
            self.arm_wake()?;
            // Parked blocks count against the ring's size (see `parked`).
            self.bufs.refill_to(self.bufs.entries() - self.parked.len());
            self.wake_ring_waiters(now)?;
            self.report_ring();
            self.wait(now)?;
            let now = Instant::now();
            self.base.housekeeping(now);
            // Completions are copied out a batch at a time: one acquire load of the tail and
            // one release store of the head per batch, not per completion.
            let mut batch = [const { MaybeUninit::<cqueue::Entry>::uninit() }; CQE_BATCH];
            loop {
                let cqes = self.ring.completion().fill(&mut batch);
                if cqes.is_empty() {
                    break;
                }
                for cqe in cqes.iter() {
                    self.complete(cqe, now)?;
                }
            }
            if self.base.shared.shutdown.load(Ordering::Acquire) && !self.base.shutting_down() {
                self.begin_shutdown(now)?;
            }
            self.expire(now)?;
            wake_pool_waiters(&mut self, now)?;
            self.report_ring();
            let Some(deadline) = self.base.shutdown_deadline else {
                continue;
            };
            if now >= deadline {
                for slot in 0..self.conns.len() {
                    if self.conns[slot].io.sock.is_some() {
                        self.close(slot, CloseReason::Done);
                    }
                }
            }
            let idle = self.base.free.len() == self.conns.len()
                && self.recvs_in_flight == 0
                && self.sends_in_flight == 0
                && self.closes_in_flight == 0
                && self.accept_armed == 0;
            if idle {
                // SAFETY: no request that selects from the buffer group is in flight (every
                // receive completed, the accept was cancelled), and every completion was taken.
                unsafe { self.bufs.release() };
                self.base.counters().ring_blocks.store(0, Ordering::Relaxed);
                return Ok(());
            }
            let ops_deadline = *ops_deadline.get_or_insert(deadline.max(now) + DRAIN_OPS);
            if now >= ops_deadline {
                // Requests still in flight: leave, and let dropping the buffer ring leak the
                // blocks the kernel may still write.
                return Ok(());
            }
        }
    }

    /// Publishes how many blocks the buffer ring holds, for the stats.
    fn report_ring(&self) {
        self.base
            .counters()
            .ring_blocks
            .store(self.bufs.held() as u64, Ordering::Relaxed);
    }

    /// Submits what is queued and waits for a completion until the next deadline, in one
    /// `io_uring_enter`.
    fn wait(&mut self, now: Instant) -> io::Result<()> {
        // The shutdown flag is read once per turn: the wait is never longer than `MAX_WAIT`.
        let wake = self.base.next_wake().min(now + MAX_WAIT);
        let d = wake.saturating_duration_since(now);
        let ts = types::Timespec::new()
            .sec(d.as_secs())
            .nsec(d.subsec_nanos());
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Queues a request, submitting first if the submission queue is full.
    ///
    /// # Safety
    /// Whatever memory `sqe` names stays valid until its completion.
    unsafe fn push(&mut self, sqe: &squeue::Entry) -> io::Result<()> {
        // SAFETY: the caller's contract.
        unsafe { queue(&mut self.ring, sqe) }
    }

    /// Keeps a multishot poll armed on the mailbox's eventfd.
    fn arm_wake(&mut self) -> io::Result<()> {
        if self.wake_armed {
            return Ok(());
        }
        let Some(fd) = self.base.mailbox.event_fd().map(|fd| fd.as_raw_fd()) else {
            return Ok(());
        };
        let sqe = opcode::PollAdd::new(types::Fd(fd), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(user_data(WAKE, 0, 0));
        // SAFETY: the request names no memory, and the eventfd stays open as long as the
        // worker holds its mailbox, past the ring's teardown.
        unsafe { self.push(&sqe)? };
        self.wake_armed = true;
        Ok(())
    }

    /// Arms the accept of every listener that has none armed. An HTTPS listener's accept is
    /// armed for one connection, and only while the handshakes in progress are under the
    /// bound: past it, connections wait in the backlog, where a multishot accept would take
    /// them all the same. Each HTTPS listener keeps one accept armed below the bound, so that
    /// none waits for another's next client: with several, the bound can be passed by one
    /// handshake per further HTTPS listener.
    fn arm_accept(&mut self, now: Instant) -> io::Result<()> {
        // The usual turn: every listener's accept armed.
        if self.accept_armed == self.accept_all
            || self.base.accept_paused_until.is_some_and(|t| now < t)
        {
            return Ok(());
        }
        self.base.accept_paused_until = None;
        for i in 0..self.listeners.len() {
            let Some(listener) = &self.listeners[i] else {
                continue;
            };
            if self.accept_armed & (1 << i) != 0 {
                continue;
            }
            let fd = types::Fd(listener.as_raw_fd());
            let tls = self.tls[i].as_ref();
            let sqe = if tls.is_none() {
                opcode::AcceptMulti::new(fd)
                    .flags(libc::SOCK_CLOEXEC)
                    .build()
            } else if self.base.may_start_handshake(tls) {
                opcode::Accept::new(fd, std::ptr::null_mut(), std::ptr::null_mut())
                    .flags(libc::SOCK_CLOEXEC)
                    .build()
            } else {
                continue;
            };
            let sqe = sqe.user_data(user_data(ACCEPT, 0, i));
            // SAFETY: the request names no memory; the listener stays open until the accept's
            // final completion (it is dropped only once its `accept_armed` bit is clear).
            unsafe { self.push(&sqe)? };
            self.accept_armed |= 1 << i;
        }
        Ok(())
    }

    /// Serves a connection accepted on listener `i`.
    fn open(&mut self, sock: TcpStream, i: usize, now: Instant) -> io::Result<()> {
        if self.base.shutting_down() {
            return Ok(()); // dropped: closed
        }
        let tls = self.tls[i].as_ref();
        let Some(slot) = self.base.take_slot() else {
            return Ok(());
        };
        let uc = &mut self.conns[slot];
        let counters = &self.base.shared.counters[self.base.id];
        if !uc.conn.open(tls, counters) {
            self.base.free.push(slot as u32);
            return Ok(());
        }
        uc.io.sock = Some(sock);
        uc.io.eof = false;
        uc.io.read_error = false;
        self.base.opened(slot, now);
        self.run_conn(slot, now, false)
    }

    /// Runs a connection as far as it goes without waiting, submitting the requests it needs,
    /// and files it where its outcome says.
    fn run_conn(&mut self, slot: usize, now: Instant, progress: bool) -> io::Result<()> {
        let shutting_down = self.base.shutting_down();
        let mut env = env!(self, slot, shutting_down);
        let Some(uc) = self.conns.get_mut(slot) else {
            return Ok(());
        };
        let Some(fd) = uc.io.sock.as_ref().map(|s| types::Fd(s.as_raw_fd())) else {
            return Ok(());
        };
        let UConn { io: uio, conn } = uc;
        let mut lent = Lent {
            ring: &mut self.ring,
            parked: &mut self.parked,
            ring_waiters: &mut self.ring_waiters,
            fd,
            slot,
        };
        let Turn {
            outcome,
            sends,
            recvs,
            blocks,
        } = match conn.plain() {
            Some(core) => lent.turn(uio, core, &mut env)?,
            None => lent.turn(uio, conn, &mut env)?,
        };
        let uc = &mut self.conns[slot];
        let idle = shutting_down && uc.conn.is_idle();
        let want = uc.conn.timer_kind();
        self.sends_in_flight += sends;
        self.recvs_in_flight += recvs;
        match outcome {
            Outcome::Close(reason) => {
                self.close(slot, reason);
                return Ok(());
            }
            Outcome::SentClosing => {
                self.base.detach(slot);
                self.closes_in_flight += 1;
                self.closed(slot, CloseReason::Done);
                return Ok(());
            }
            Outcome::Pool | Outcome::Wait => {}
        }
        self.base
            .ran(slot, matches!(outcome, Outcome::Pool), blocks);
        if idle {
            self.close(slot, CloseReason::Done);
            return Ok(());
        }
        self.base.rearm(slot, want, progress, now);
        Ok(())
    }

    /// The connection's multishot receive ended on `ENOBUFS`: input came while the buffer ring
    /// was dry. With input buffered already, the core goes on (the rest is received into its
    /// read block); otherwise the connection waits for the ring, its head's deadline running
    /// from now as though the input had been read.
    fn ring_ran_dry(&mut self, slot: usize, now: Instant) -> io::Result<()> {
        let Some(uc) = self.conns.get_mut(slot) else {
            return Ok(());
        };
        if uc.conn.holds_input() || uc.io.pending.is_some() || uc.io.parked > 0 {
            return self.run_conn(slot, now, false);
        }
        uc.conn.starve();
        let want = uc.conn.timer_kind();
        if self.ring_waiters.push_back(slot) {
            self.base.count_pool_wait();
        }
        self.base.rearm(slot, want, false, now);
        Ok(())
    }

    /// Arms the receives of the connections waiting for the ring, oldest first, as many as it
    /// holds blocks: each has input waiting, so each receive takes a block at once, and one
    /// armed beyond them would end on `ENOBUFS` again.
    fn wake_ring_waiters(&mut self, now: Instant) -> io::Result<()> {
        for _ in 0..self.bufs.held() {
            let Some(slot) = self.ring_waiters.pop_front() else {
                break;
            };
            self.run_conn(slot, now, false)?;
        }
        Ok(())
    }

    fn expire(&mut self, now: Instant) -> io::Result<()> {
        while let Some((slot, kind)) = self.base.timers.pop_expired(now) {
            let Some(uc) = self.conns.get_mut(slot) else {
                continue;
            };
            if uc.io.sock.is_none() {
                continue;
            }
            if uc.io.sending {
                // A reader that stopped reading: closing wakes the send, which then fails.
                if kind == TimerKind::Idle {
                    WorkerCounters::add(&self.base.counters().idle_timeouts, 1);
                }
                self.close(slot, CloseReason::Done);
            } else if uc.io.recv_own {
                // The receive writes the read block the deadline would drop: cancel it, and
                // apply the deadline at its completion.
                uc.io.expire_pending = Some(kind);
                let sqe = cancel_request(user_data(RECV_OWN, uc.io.gen, slot));
                // SAFETY: the request names no memory.
                unsafe { self.push(&sqe)? };
            } else {
                self.expire_conn(slot, kind, now)?;
            }
        }
        Ok(())
    }

    /// Applies a passed deadline to an open connection the kernel is not using.
    fn expire_conn(&mut self, slot: usize, kind: TimerKind, now: Instant) -> io::Result<()> {
        let mut env = env!(self, slot, true);
        let Some(uc) = self.conns.get_mut(slot) else {
            return Ok(());
        };
        if uc.conn.expire(&mut env, kind) {
            self.run_conn(slot, now, false)
        } else {
            self.close(slot, CloseReason::Done);
            Ok(())
        }
    }

    /// Stops accepting; idle connections close now, busy ones after their current exchange.
    fn begin_shutdown(&mut self, now: Instant) -> io::Result<()> {
        self.base.begin_shutdown(now);
        for i in 0..self.listeners.len() {
            if self.accept_armed & (1 << i) != 0 {
                let sqe = cancel_request(user_data(ACCEPT, 0, i));
                // SAFETY: the request names no memory.
                unsafe { self.push(&sqe)? };
            } else {
                self.listeners[i] = None;
            }
        }
        for slot in 0..self.conns.len() {
            let uc = &self.conns[slot];
            if uc.io.sock.is_some() && uc.conn.is_idle() && !uc.busy() {
                self.close(slot, CloseReason::Done);
            } else if uc.io.sock.is_some() && uc.conn.is_upgraded() && !uc.busy() && !uc.io.closing
            {
                // Its service is told, and says goodbye in its protocol; a busy one is told
                // when its request completes.
                self.run_conn(slot, now, false)?;
            }
        }
        Ok(())
    }
}

impl<F: FreeList, S: Service> PoolWaiters<F, S> for UringWorker<F, S> {
    fn base(&mut self) -> &mut WorkerBase<F, S> {
        &mut self.base
    }

    fn run_waiter(&mut self, slot: usize, now: Instant) -> io::Result<()> {
        self.run_conn(slot, now, false)
    }

    fn answer(&mut self, to: Deferred, answer: S::State) -> bool {
        self.conns
            .get_mut(to.slot as usize)
            .is_some_and(|uc| uc.io.sock.is_some() && !uc.io.closing && uc.conn.resume(to, answer))
    }
}

impl<F: FreeList, S: Service> Drop for UringWorker<F, S> {
    /// A worker that stops with sends or receives into read blocks still in flight (an error,
    /// a panic, or requests that outlived the shutdown) leaks its connections' blocks rather
    /// than return blocks the kernel may still read or write. (Dropping the buffer ring leaks
    /// its blocks for the same reason.)
    fn drop(&mut self) {
        if self.conns.iter().any(UConn::busy) {
            std::mem::forget(std::mem::take(&mut self.conns));
        }
    }
}
