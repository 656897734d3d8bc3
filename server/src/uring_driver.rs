//! The io_uring driver: one ring per worker feeding the same connection core (`conn.rs`) as the
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
//! - **Accept:** one multishot accept on the worker's `SO_REUSEPORT` listener. Accepted sockets
//!   inherit `TCP_NODELAY` from the listener (set before it listens: see `server::bind`), so
//!   there is no setsockopt per connection.
//! - **Receive:** one multishot receive with buffer select per connection, armed when the
//!   core first asks for input and kept armed: the kernel takes a block from the buffer ring
//!   each time data arrives, so a keep-alive exchange costs one receive completion and one send,
//!   and no request is re-armed (nor its poll set up again) per exchange. An idle connection
//!   holds no block. A block that arrives while the core is busy (sending, or waiting for the
//!   pool) waits in the connection (`pending`); a second one is appended to it where it fits,
//!   else it is parked in the worker's queue and the receive is cancelled until the core has
//!   taken that input: the backpressure the epoll driver gets by not reading. The ring is refilled
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
use crate::link::Link;
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::shared::Shared;
use crate::stats::WorkerCounters;
use crate::timer::TimerKind;
use crate::wait_queue::WaitQueue;
use crate::worker::{deliver_answers, env, wake_pool_waiters, App, PoolWaiters, WorkerBase};

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

/// Sets up a ring the way a worker does: `SINGLE_ISSUER | DEFER_TASKRUN`, else
/// `COOP_TASKRUN`, else plain.
fn new_ring() -> Result<IoUring, UringError> {
    let mut last = None;
    for flags in 0..3 {
        let mut b = IoUring::builder();
        b.setup_cqsize(SQ_ENTRIES * 4).setup_submit_all();
        match flags {
            0 => {
                b.setup_single_issuer().setup_defer_taskrun();
            }
            1 => {
                b.setup_coop_taskrun();
            }
            _ => {}
        }
        match b.build(SQ_ENTRIES) {
            Ok(ring) => return Ok(ring),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(UringError::classify(e)),
        }
    }
    Err(UringError::classify(last.unwrap_or_else(|| {
        io::Error::from_raw_os_error(libc::EINVAL)
    })))
}

/// Whether this process can run the io_uring driver: a ring with the worker's flags, a
/// provided buffer ring (Linux 5.19), a timed wait (`IORING_FEAT_EXT_ARG`, 5.11), the opcodes,
/// and a multishot receive that works (6.0).
///
/// The rings are made on a thread of their own: a thread that once had a ring gets the
/// kernel's io_uring task context, whose teardown can interrupt that thread's next blocking
/// socket call (`EINTR` where a receive timeout is set), and the caller's thread is someone
/// else's.
pub(crate) fn probe() -> Result<(), UringError> {
    std::thread::Builder::new()
        .name("bufslab-uring-probe".into())
        .spawn(probe_here)
        .map_err(UringError::Io)?
        .join()
        .unwrap_or_else(|_| {
            Err(UringError::Io(io::Error::other(
                "the io_uring probe panicked",
            )))
        })
}

fn probe_here() -> Result<(), UringError> {
    Features::probe()?;
    let ring = new_ring()?;
    if !ring.params().is_feature_ext_arg() {
        return Err(UringError::Invalid);
    }
    let mut probe = io_uring::Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(UringError::classify)?;
    let ops = [
        opcode::Recv::CODE,
        opcode::Send::CODE,
        opcode::Writev::CODE,
        opcode::AcceptMulti::CODE,
        opcode::AsyncCancel::CODE,
        opcode::Close::CODE,
    ];
    if !ops.iter().all(|&op| probe.is_supported(op)) {
        return Err(UringError::Invalid);
    }
    probe_multishot_recv(ring)
}

/// Whether a multishot receive with buffer select works here (Linux 6.0; the opcode probe
/// cannot tell): one is armed on a socket pair over a two-block buffer ring and fed a byte,
/// which must come back in a completion that keeps the receive armed. Then it is cancelled
/// and drained to its final completion, so the buffer ring can be released.
fn probe_multishot_recv(mut ring: IoUring) -> Result<(), UringError> {
    use bufslab::ClassConfig;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    let pool = Pool::builder()
        .class(
            ClassConfig::new(64)
                .blocks_per_slab(4)
                .prealloc_slabs(1)
                .max_slabs(1),
        )
        .build()
        .map_err(|e| UringError::Io(io::Error::other(e.to_string())))?;
    let cache = pool.local_cache();
    let mut bufs = BufRing::new(&ring, &cache, GROUP, 2, 64)?;
    bufs.refill();
    let (rx, mut tx) = UnixStream::pair().map_err(UringError::Io)?;
    let recv = opcode::RecvMulti::new(types::Fd(rx.as_raw_fd()), GROUP)
        .build()
        .user_data(1);
    let cancel = opcode::AsyncCancel::new(1).build().user_data(2);
    // SAFETY: the receive names only the buffer group, registered until `release` below,
    // which runs only after the receive's final completion; the cancel names no memory.
    unsafe { queue(&mut ring, &recv).map_err(UringError::Io)? };
    tx.write_all(b"x").map_err(UringError::Io)?;
    let mut works = false;
    let mut cancelled = false;
    loop {
        ring.submit_and_wait(1).map_err(UringError::classify)?;
        let mut done = false;
        for cqe in ring.completion() {
            if cqe.user_data() != 1 {
                continue;
            }
            // SAFETY: a completion of this ring's receive on the group, taken once.
            drop(unsafe { bufs.take(&cqe) });
            works |= cqe.result() == 1 && cqueue::more(cqe.flags());
            done |= !cqueue::more(cqe.flags());
        }
        if done {
            break;
        }
        if !cancelled {
            cancelled = true;
            // SAFETY: see above.
            unsafe { queue(&mut ring, &cancel).map_err(UringError::Io)? };
        }
    }
    // SAFETY: the receive reached its final completion; nothing else selects from the group.
    unsafe { bufs.release() };
    if works {
        Ok(())
    } else {
        Err(UringError::Invalid)
    }
}

/// One connection slot of an io_uring worker.
struct UConn<T> {
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
    conn: Link<T>,
}

impl<T: Default> UConn<T> {
    /// Files a receive's result `res` but for `ENOBUFS`: `Some(n)` for `n` bytes received, else
    /// the end of stream or the error is noted. `ECANCELED`: the receive was cancelled (its
    /// input parked, or the connection closing); the core asks again if it wants input.
    #[inline]
    fn received(&mut self, res: i32) -> Option<usize> {
        match res {
            n if n > 0 => return Some(n as usize),
            0 => self.eof = true,
            e if e == -libc::ECANCELED || e == -libc::EINTR || e == -libc::EAGAIN => {}
            _ => self.read_error = true,
        }
        None
    }

    /// Releases a closed connection's blocks once the kernel no longer uses them; whether it
    /// did (the slot is free again).
    fn finish_close(&mut self, counters: &WorkerCounters) -> bool {
        if self.busy() || !self.closing {
            return false;
        }
        self.closing = false;
        self.conn.release(counters);
        true
    }

    /// The kernel uses the connection's blocks: a send, or a receive into its read block.
    fn busy(&self) -> bool {
        self.sending || self.recv_own
    }

    /// Pool blocks the connection holds: the core's, and the received ones waiting for it.
    fn blocks(&self) -> usize {
        self.conn.blocks() + usize::from(self.pending.is_some()) + self.parked as usize
    }

    fn new(parser: Parser, slot: usize, out_blocks: usize) -> UConn<T> {
        UConn {
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
            conn: Link::new(parser, slot, out_blocks),
        }
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
    listener: Option<TcpListener>,
    accept_armed: bool,
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
        listener: TcpListener,
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
            listener: Some(listener),
            accept_armed: false,
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
                    if self.conns[slot].sock.is_some() {
                        self.close(slot, CloseReason::Done);
                    }
                }
            }
            let idle = self.base.free.len() == self.conns.len()
                && self.recvs_in_flight == 0
                && self.sends_in_flight == 0
                && self.closes_in_flight == 0
                && !self.accept_armed;
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

    fn arm_accept(&mut self, now: Instant) -> io::Result<()> {
        if self.accept_armed || self.base.accept_paused_until.is_some_and(|t| now < t) {
            return Ok(());
        }
        self.base.accept_paused_until = None;
        let Some(listener) = &self.listener else {
            return Ok(());
        };
        let sqe = opcode::AcceptMulti::new(types::Fd(listener.as_raw_fd()))
            .flags(libc::SOCK_CLOEXEC)
            .build()
            .user_data(user_data(ACCEPT, 0, 0));
        // SAFETY: the request names no memory; the listener stays open until the accept's
        // final completion (it is dropped only once `accept_armed` is false).
        unsafe { self.push(&sqe)? };
        self.accept_armed = true;
        Ok(())
    }

    /// Handles one completion.
    fn complete(&mut self, cqe: &cqueue::Entry, now: Instant) -> io::Result<()> {
        let (kind, gen, slot) = split(cqe.user_data());
        let res = cqe.result();
        match kind {
            WAKE => {
                if !cqueue::more(cqe.flags()) {
                    self.wake_armed = false;
                }
                if let Some(fd) = self.base.mailbox.event_fd() {
                    // Reset the counter: a failed read only means it was already reset.
                    let mut count = [0u8; 8];
                    let _ = rustix::io::read(fd, &mut count);
                }
                deliver_answers(self, now)?;
            }
            ACCEPT => {
                if !cqueue::more(cqe.flags()) {
                    self.accept_armed = false;
                    if self.base.shutting_down() {
                        self.listener = None;
                    }
                }
                if res >= 0 {
                    // SAFETY: a successful accept's result is a new descriptor that nothing
                    // else owns.
                    let sock = unsafe { TcpStream::from_raw_fd(res) };
                    self.open(sock, now)?;
                } else if matches!(
                    -res,
                    libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM
                ) {
                    self.base.accept_backoff(now);
                }
            }
            RECV => {
                let last = !cqueue::more(cqe.flags());
                if last {
                    self.recvs_in_flight -= 1;
                }
                // SAFETY: read from this ring's completion queue, for a multishot receive on
                // the buffer ring's group (every RECV is one; each of its completions carries
                // at most one block), and taken once here.
                let buf = unsafe { self.bufs.take(cqe) };
                let open = self
                    .conns
                    .get(slot)
                    .is_some_and(|uc| uc.gen == gen && uc.sock.is_some());
                if !open {
                    // A closed connection's receive: the block goes home.
                    if buf.is_some() {
                        self.base.gave_back();
                    }
                    return Ok(());
                }
                let uc = &mut self.conns[slot];
                if last {
                    uc.recv_armed = false;
                    uc.recv_cancel = false;
                }
                if res == -libc::ENOBUFS {
                    return self.ring_ran_dry(slot, now);
                }
                match (uc.received(res), buf) {
                    (Some(_), Some(buf)) => self.file_block(slot, buf)?,
                    // The end of stream's block comes back empty, and goes home.
                    (None, Some(_)) => self.base.gave_back(),
                    _ => {}
                }
                self.run_conn(slot, now, res > 0)?;
            }
            RECV_OWN => {
                self.recvs_in_flight -= 1;
                let Some(uc) = self.blocks_back(slot, |uc| &mut uc.recv_own) else {
                    return Ok(());
                };
                if let Some(n) = uc.received(res) {
                    uc.conn.received(n);
                }
                match uc.expire_pending.take() {
                    Some(kind) => self.expire_conn(slot, kind, now)?,
                    None => self.run_conn(slot, now, res > 0)?,
                }
            }
            SEND => {
                self.sends_in_flight -= 1;
                let shutting_down = self.base.shutting_down();
                let Some(uc) = self.blocks_back(slot, |uc| &mut uc.sending) else {
                    return Ok(());
                };
                match res {
                    n if n > 0 => {
                        uc.conn.sent(n as usize);
                        if uc.recv_armed
                            && uc.pending.is_none()
                            && uc.parked == 0
                            && uc.conn.is_idle()
                            && !shutting_down
                        {
                            // The whole response went and the next receive is already in
                            // flight: nothing for the core to do (its idle deadline was
                            // refreshed when the request came).
                            uc.conn.release_read_block();
                            let blocks = uc.blocks();
                            self.base.holds(slot, blocks);
                            return Ok(());
                        }
                        self.run_conn(slot, now, true)?;
                    }
                    e if e == -libc::EINTR || e == -libc::EAGAIN => {
                        self.run_conn(slot, now, false)?
                    }
                    _ => self.close(slot, CloseReason::Io),
                }
            }
            CLOSE => self.closes_in_flight -= 1,
            _ => {} // CANCEL, and the shutdowns
        }
        Ok(())
    }

    /// Files a block received for the open connection in `slot` behind its unread input: as
    /// `pending` when there is none, else appended to `pending` where it fits (a copy, but only
    /// of input that came while the core was busy), else parked, and the multishot receive
    /// cancelled: the connection reads no further until the core has taken its input, as the
    /// epoll driver stops reading (the peer meets TCP's flow control). Blocks the kernel posted
    /// before the cancel took effect are parked too.
    fn file_block(&mut self, slot: usize, buf: PoolBuf) -> io::Result<()> {
        let Some(uc) = self.conns.get_mut(slot) else {
            return Ok(());
        };
        let Some(pending) = uc.pending.as_mut() else {
            uc.pending = Some(buf);
            return Ok(());
        };
        if uc.parked == 0 && pending.spare_capacity() >= buf.len() {
            pending.put_slice(&buf);
            // Copied: the block goes home.
            self.base.gave_back();
            return Ok(());
        }
        // The ring is refilled only to `entries - parked.len()`: there is room.
        debug_assert!(self.parked.len() < self.bufs.entries());
        self.parked.push_back((slot as u32, buf));
        uc.parked += 1;
        if uc.recv_armed && !uc.recv_cancel {
            uc.recv_cancel = true;
            WorkerCounters::add(&self.base.counters().receive_pauses, 1);
            let sqe = cancel_request(user_data(RECV, uc.gen, slot));
            // SAFETY: the request names no memory.
            unsafe { self.push(&sqe)? };
        }
        Ok(())
    }

    fn open(&mut self, sock: TcpStream, now: Instant) -> io::Result<()> {
        if self.base.shutting_down() {
            return Ok(()); // dropped: closed
        }
        if !self.base.admits_handshake() {
            return Ok(()); // dropped: closed
        }
        let Some(slot) = self.base.take_slot() else {
            return Ok(());
        };
        let uc = &mut self.conns[slot];
        let counters = &self.base.shared.counters[self.base.id];
        if !uc.conn.open(self.base.cfg.tls.as_ref(), counters) {
            self.base.free.push(slot as u32);
            return Ok(());
        }
        uc.sock = Some(sock);
        uc.eof = false;
        uc.read_error = false;
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
        let Some(fd) = uc.sock.as_ref().map(|s| types::Fd(s.as_raw_fd())) else {
            return Ok(());
        };
        // The requests go straight into the submission queue, built in place.
        //
        // SAFETY (every `queue` below): a multishot receive names only the buffer group, which
        // `bufs` keeps registered until every receive completed (`run`). A send names the
        // connection's output blocks and its `iov` array; a receive into the read block names
        // that block's spare bytes. Until the completion the connection is not
        // asked for anything (`busy`), a deadline waits for it (`expire_pending`) or closes
        // without releasing, and a closed connection keeps its blocks (`closing`); the slot
        // table never moves (it is allocated once).
        let ring = &mut self.ring;
        let parked = &mut self.parked;
        let ring_waiters = &mut self.ring_waiters;
        let (mut sends, mut recvs) = (0, 0);
        let mut stuck = false;
        let outcome = loop {
            if uc.busy() {
                break Outcome::Wait;
            }
            match uc.conn.next(&mut env) {
                Want::Send => {
                    if queue_last_send(ring, uc, slot)? {
                        sends += 1;
                        break Outcome::SentClosing;
                    }
                    let send = send_request(uc, fd, user_data(SEND, uc.gen, slot));
                    // SAFETY: see above.
                    unsafe { queue(ring, &send)? };
                    uc.sending = true;
                    sends += 1;
                    break Outcome::Wait;
                }
                Want::Receive => {
                    unpark(parked, uc, slot);
                    if let Some(buf) = uc.pending.take() {
                        let before = buf.len();
                        match uc.conn.receive_block(&mut env, buf) {
                            None => stuck = false,
                            Some(rest) => {
                                let untouched = rest.len() == before;
                                uc.pending = Some(rest);
                                if untouched && stuck {
                                    break Outcome::Pool;
                                }
                                stuck = untouched;
                            }
                        }
                        continue;
                    }
                    if uc.recv_armed {
                        break Outcome::Wait;
                    }
                    if uc.read_error {
                        break Outcome::Close(CloseReason::Io);
                    }
                    if uc.eof {
                        match uc.conn.peer_eof(&mut env) {
                            Some(reason) => break Outcome::Close(reason),
                            // An upgraded connection sends its last bytes, then closes.
                            None => continue,
                        }
                    }
                    // A partial request: the rest goes into the same block, as with epoll
                    // (no second block, no copy; a pool of partial heads still moves).
                    if uc.conn.holds_input() {
                        match uc.conn.read_space(&mut env) {
                            Ok(space) => {
                                let ud = user_data(RECV_OWN, uc.gen, slot);
                                // SAFETY: see above.
                                unsafe { queue(ring, &own_recv_request(fd, space, ud))? };
                                uc.recv_own = true;
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
                    arm_ring_recv(ring, uc, fd, slot)?;
                    recvs += 1;
                    break Outcome::Wait;
                }
                Want::HalfClose => {
                    // A system call, not a request: the kernel runs every shutdown request on
                    // an io-wq worker thread (a wake-up and a context switch, more than the
                    // call costs), and looks the descriptor up only there, so a close that
                    // overtook it could leave it to shut down whichever socket got the number
                    // next. A peer already gone: the drain tells.
                    if let Some(sock) = &uc.sock {
                        let _ = sock.shutdown(Shutdown::Write);
                    }
                }
                Want::Discard => {
                    unpark(parked, uc, slot);
                    if let Some(buf) = uc.pending.take() {
                        match uc.conn.discarded(buf.len()) {
                            Want::Close(reason) => break Outcome::Close(reason),
                            _ => continue,
                        }
                    }
                    if uc.recv_armed {
                        break Outcome::Wait;
                    }
                    if uc.eof || uc.read_error {
                        break Outcome::Close(uc.conn.peer_closed());
                    }
                    if ring_waiters.contains(slot) {
                        break Outcome::Wait;
                    }
                    arm_ring_recv(ring, uc, fd, slot)?;
                    recvs += 1;
                    break Outcome::Wait;
                }
                Want::Pool => break Outcome::Pool,
                Want::Wait => break Outcome::Wait,
                Want::Close(reason) => break Outcome::Close(reason),
            }
        };
        let idle = uc.conn.is_idle();
        let want = uc.conn.timer_kind();
        let blocks = uc.blocks();
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
        if shutting_down && idle {
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
        if uc.conn.holds_input() || uc.pending.is_some() || uc.parked > 0 {
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
            if uc.sock.is_none() {
                continue;
            }
            if uc.sending {
                // A reader that stopped reading: closing wakes the send, which then fails.
                if kind == TimerKind::Idle {
                    WorkerCounters::add(&self.base.counters().idle_timeouts, 1);
                }
                self.close(slot, CloseReason::Done);
            } else if uc.recv_own {
                // The receive writes the read block the deadline would drop: cancel it, and
                // apply the deadline at its completion.
                uc.expire_pending = Some(kind);
                let sqe = cancel_request(user_data(RECV_OWN, uc.gen, slot));
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

    /// Closes a connection: its socket now (which ends a receive in flight), its blocks now or,
    /// with a send in flight, at that send's completion.
    fn close(&mut self, slot: usize, reason: CloseReason) {
        self.base.detach(slot);
        let Some(uc) = self.conns.get_mut(slot) else {
            return;
        };
        let Some(sock) = uc.sock.take() else {
            return;
        };
        if !uc.sending {
            // A sound TLS connection closed without a word from its core says `close_notify`,
            // if the socket takes it at once (a system call: this is not the request path).
            let mut alert = [0u8; bufslab_tls::record::ALERT_RECORD_LEN];
            let n = uc.conn.farewell(&mut alert);
            if n > 0 {
                let _ = rustix::net::send(
                    &sock,
                    &alert[..n],
                    rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL,
                );
            }
        }
        let in_flight = [
            uc.recv_armed.then(|| user_data(RECV, uc.gen, slot)),
            uc.recv_own.then(|| user_data(RECV_OWN, uc.gen, slot)),
            uc.sending.then(|| user_data(SEND, uc.gen, slot)),
        ];
        self.close_socket(sock, in_flight);
        self.closed(slot, reason);
    }

    /// A connection's socket went to the kernel to close: its slot forgets it (completions of
    /// its requests are stale from here on), and its blocks go home now or, with a send in
    /// flight, at that send's completion.
    fn closed(&mut self, slot: usize, reason: CloseReason) {
        let uc = &mut self.conns[slot];
        uc.gen = uc.gen.wrapping_add(1) & 0xff_ffff;
        uc.recv_armed = false;
        uc.recv_cancel = false;
        if uc.pending.take().is_some() {
            self.base.gave_back();
        }
        if uc.parked > 0 {
            uc.parked = 0;
            self.parked.retain(|(s, _)| *s as usize != slot);
            self.base.gave_back();
        }
        uc.expire_pending = None;
        uc.closing = true;
        self.ring_waiters.remove(slot);
        if !uc.busy() {
            self.finish_close(slot);
        }
        self.base.count_close(reason);
    }

    /// Closes a socket with requests, no system call: a cancel of each request still in flight
    /// on it (`in_flight`, their user data), then the close. A request parked in the kernel
    /// holds the socket open past a close of its descriptor; the cancel completes it, stale,
    /// with its block. Both run inline at submission (a shutdown request would go to an io-wq
    /// worker thread). Where the submission queue has no room even after a submit, a shutdown
    /// and a close system call do the same.
    fn close_socket(&mut self, sock: TcpStream, in_flight: [Option<u64>; 3]) {
        if !make_room(&mut self.ring, 1 + in_flight.iter().flatten().count()) {
            let _ = sock.shutdown(Shutdown::Both);
            return; // `sock` closes as it drops
        }
        let fd = types::Fd(sock.into_raw_fd());
        let mut sq = self.ring.submission();
        for target in in_flight.into_iter().flatten() {
            // SAFETY: the request names no memory. There is room for it.
            let pushed = unsafe { sq.push(&cancel_request(target)) }.is_ok();
            debug_assert!(pushed);
        }
        // SAFETY: the request names no memory; the descriptor is the kernel's to close from
        // here on (`into_raw_fd` gave up ownership). There is room for it.
        let pushed = unsafe { sq.push(&close_request(fd)) }.is_ok();
        debug_assert!(pushed);
        drop(sq);
        self.closes_in_flight += 1;
    }

    /// Releases a closed connection's blocks and frees its slot, once the kernel no longer
    /// uses them.
    fn finish_close(&mut self, slot: usize) {
        let counters = &self.base.shared.counters[self.base.id];
        if self
            .conns
            .get_mut(slot)
            .is_some_and(|uc| uc.finish_close(counters))
        {
            self.conns[slot].conn.ended(&mut self.base.service);
            self.base.free.push(slot as u32);
            self.base.holds(slot, 0);
        }
    }

    /// The completion of a request that used the connection's blocks, `in_flight` its flag:
    /// the connection, where it is open; a closed one's close finishes here.
    #[inline]
    fn blocks_back(
        &mut self,
        slot: usize,
        in_flight: fn(&mut UConn<S::State>) -> &mut bool,
    ) -> Option<&mut UConn<S::State>> {
        let uc = self.conns.get_mut(slot)?;
        *in_flight(uc) = false;
        if uc.closing {
            self.finish_close(slot);
            return None;
        }
        self.conns.get_mut(slot)
    }

    /// Stops accepting; idle connections close now, busy ones after their current exchange.
    fn begin_shutdown(&mut self, now: Instant) -> io::Result<()> {
        self.base.begin_shutdown(now);
        if self.accept_armed {
            let sqe = cancel_request(user_data(ACCEPT, 0, 0));
            // SAFETY: the request names no memory.
            unsafe { self.push(&sqe)? };
        } else {
            self.listener = None;
        }
        for slot in 0..self.conns.len() {
            let uc = &self.conns[slot];
            if uc.sock.is_some() && uc.conn.is_idle() && !uc.busy() {
                self.close(slot, CloseReason::Done);
            } else if uc.sock.is_some() && uc.conn.is_upgraded() && !uc.busy() && !uc.closing {
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
            .is_some_and(|uc| uc.sock.is_some() && !uc.closing && uc.conn.resume(to, answer))
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

/// Arms the multishot receive of the connection in `slot`: the kernel takes a block from the
/// buffer ring each time data arrives, until the receive ends (end of stream, an error, a dry
/// ring, a cancel).
fn arm_ring_recv<T: Default>(
    ring: &mut IoUring,
    uc: &mut UConn<T>,
    fd: types::Fd,
    slot: usize,
) -> io::Result<()> {
    let sqe = opcode::RecvMulti::new(fd, GROUP)
        .build()
        .user_data(user_data(RECV, uc.gen, slot));
    // SAFETY: a receive with buffer select names no memory of the connection, only the buffer
    // group, which the worker's `BufRing` keeps registered until every receive has completed.
    unsafe { queue(ring, &sqe)? };
    uc.recv_armed = true;
    Ok(())
}

/// Queues the connection's last response and the close of its socket in one submission, where
/// the core closes as soon as it is sent (no lingering close), it is one block, and no input
/// waits: a cancel of the armed receive, then the send with `MSG_WAITALL` (the kernel resumes a
/// short send itself; a failure fails it), hard-linked to the close, which thus runs after the
/// send whatever its result. The socket is the kernel's from here on. Returns whether it did;
/// otherwise nothing is queued.
fn queue_last_send<T: Default>(
    ring: &mut IoUring,
    uc: &mut UConn<T>,
    slot: usize,
) -> io::Result<bool> {
    let last = uc.conn.closes_after_output()
        && uc.conn.output_blocks() == 1
        && uc.pending.is_none()
        && uc.parked == 0;
    if !last {
        return Ok(false);
    }
    // The three go into one submission: a link must not be split by a submit in between.
    if !make_room(ring, 3) {
        return Ok(false);
    }
    let Some(sock) = uc.sock.take() else {
        return Ok(false);
    };
    let fd = types::Fd(sock.into_raw_fd());
    let mut sq = ring.submission();
    if uc.recv_armed && !uc.recv_cancel {
        let cancel = cancel_request(user_data(RECV, uc.gen, slot));
        // SAFETY: the request names no memory. There is room for it.
        let pushed = unsafe { sq.push(&cancel) }.is_ok();
        debug_assert!(pushed);
    }
    let front = uc.conn.front();
    let send = opcode::Send::new(fd, front.as_ptr(), front.len() as u32)
        .flags(libc::MSG_WAITALL)
        .build()
        .flags(squeue::Flags::IO_HARDLINK)
        .user_data(user_data(SEND, uc.gen, slot));
    let close = close_request(fd);
    // SAFETY: the send names the connection's only output block, which it keeps until the
    // send's completion (the slot is `closing` and `sending` until then; see `run_conn`); the
    // close names no memory, and the descriptor is the kernel's to close (`into_raw_fd` gave
    // it up). There is room for both.
    let pushed = unsafe { sq.push(&send).is_ok() && sq.push(&close).is_ok() };
    debug_assert!(pushed);
    uc.sending = true;
    Ok(true)
}

/// Moves the oldest parked block of the connection in `slot` to its `pending`, if it has none.
fn unpark<T: Default>(parked: &mut VecDeque<(u32, PoolBuf)>, uc: &mut UConn<T>, slot: usize) {
    if uc.parked == 0 || uc.pending.is_some() {
        return;
    }
    if let Some(i) = parked.iter().position(|(s, _)| *s as usize == slot) {
        uc.pending = parked.remove(i).map(|(_, buf)| buf);
        uc.parked -= 1;
    }
}

/// Queues a request on `ring`, submitting first if the submission queue is full.
///
/// # Safety
/// Whatever memory `sqe` names stays valid until its completion.
unsafe fn queue(ring: &mut IoUring, sqe: &squeue::Entry) -> io::Result<()> {
    loop {
        // SAFETY: the caller's contract.
        if unsafe { ring.submission().push(sqe) }.is_ok() {
            return Ok(());
        }
        ring.submit()?;
    }
}

/// Whether the submission queue has room for `need` more entries, submitting what it holds
/// first if it has not.
fn make_room(ring: &mut IoUring, need: usize) -> bool {
    let free = |ring: &mut IoUring| {
        let sq = ring.submission();
        sq.capacity() - sq.len()
    };
    free(ring) >= need || (ring.submit().is_ok() && free(ring) >= need)
}

/// A cancel of the request whose user data is `target`.
fn cancel_request(target: u64) -> squeue::Entry {
    opcode::AsyncCancel::new(target)
        .build()
        .user_data(user_data(CANCEL, 0, 0))
}

/// The close of a socket the kernel now owns.
fn close_request(fd: types::Fd) -> squeue::Entry {
    opcode::Close::new(fd)
        .build()
        .user_data(user_data(CLOSE, 0, 0))
}

/// A receive into `space`, the spare bytes of the connection's read block.
fn own_recv_request(fd: types::Fd, space: &mut [u8], user_data: u64) -> squeue::Entry {
    let len = u32::try_from(space.len()).unwrap_or(u32::MAX);
    opcode::Recv::new(fd, space.as_mut_ptr(), len)
        .build()
        .user_data(user_data)
}

/// One `send` of the only output block, else one `writev` of them all (the iovecs kept in the
/// slot).
fn send_request<T: Default>(uc: &mut UConn<T>, fd: types::Fd, user_data: u64) -> squeue::Entry {
    let sqe = if uc.conn.output_blocks() == 1 {
        let front = uc.conn.front();
        opcode::Send::new(fd, front.as_ptr(), front.len() as u32).build()
    } else {
        let empty: &[u8] = &[];
        let mut slices = [io::IoSlice::new(empty); SEND_BLOCKS];
        let n = uc.conn.output(&mut slices);
        for (iov, s) in uc.iov.iter_mut().zip(&slices[..n]) {
            iov.iov_base = s.as_ptr() as *mut libc::c_void;
            iov.iov_len = s.len();
        }
        opcode::Writev::new(fd, uc.iov.as_ptr(), n as u32).build()
    };
    sqe.user_data(user_data)
}
