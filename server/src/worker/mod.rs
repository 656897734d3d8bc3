//! One worker thread: its own `SO_REUSEPORT` listener on each address, mio `Poll`, connection
//! slab, deadline lists and local cache of the shared pool. Nothing on the request path crosses threads.
//!
//! Each loop turn: poll → run the connections that became ready → expire deadlines → rerun
//! the connections that yielded → wake the connections waiting for the pool, if blocks came
//! back → accept a batch. Accepting last means a slot freed in this turn is reused only in a
//! later turn, so a stale event for a closed connection can never be delivered to its
//! successor.
//!
//! `WorkerBase` is the per-worker state and bookkeeping that both drivers' workers share (this
//! one and the io_uring driver's), whatever drives their sockets, and [`wake_pool_waiters`] the
//! wake-up of the connections waiting for the pool, for either.

pub(crate) mod timer;
pub(crate) mod wait_queue;

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bufslab::{FreeList, LocalCache, Pool};
use bufslab_http::{Config as HttpConfig, DateCache, HeaderSlot, Parser};
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};

use crate::config::{Config, MAX_LISTENERS};
use crate::conn::{CloseReason, Env};
use crate::deferred::{Deferred, Mailbox};
use crate::epoll::{EpollConn, Next};
use crate::service::Service;
use crate::shared::Shared;
use crate::stats::WorkerCounters;
use crate::timer::{TimerKind, Timers};
use crate::tls::TlsConfig;
use crate::wait_queue::WaitQueue;

pub(crate) const WAKER: Token = Token(usize::MAX - 2);

/// Listener `i`'s token is `LISTENERS + i`, above every connection slot (below 2^31).
const LISTENERS: usize = usize::MAX - 2 - MAX_LISTENERS;

/// Header slots per worker: the codec's default `max_headers`.
const HEADER_SLOTS: usize = 100;

/// How long accepting pauses after the process ran out of file descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// With more than one worker, how often the oldest connection waiting for the pool tries
/// again though none of this worker's blocks came back: blocks other workers give back reach
/// the shared free list with no word to this one.
const POOL_RETRY: Duration = Duration::from_millis(50);

/// Longest a lingering close waits for the peer.
const MAX_DRAIN: Duration = Duration::from_secs(2);

/// The `Env` a connection runs with, from a worker's `base`. A macro rather than a method: it
/// borrows fields of the base disjointly from the worker's `conns`, which the caller holds at
/// the same time.
macro_rules! env {
    ($w:ident, $slot:expr, $shutting_down:expr) => {
        Env {
            slot: $slot,
            slots: &mut $w.base.slots,
            slots_owner: &mut $w.base.slots_owner,
            cache: &$w.base.cache,
            ctx: $crate::exchange::Ctx {
                blocks: &$w.base.cache,
                date: &$w.base.date,
                server_name: $w.base.cfg.server_name.map(str::as_bytes),
                shared: &$w.base.shared,
                whole_body: $w.base.whole_body,
                body_with_max: $w.base.body_with_max,
                large_block: $w.base.large_block,
                upgrade_h2c: $w.base.cfg.upgrade_h2c,
                tls: None,
            },
            counters: &$w.base.shared.counters[$w.base.id],
            max_body: $w.base.cfg.max_body,
            large_block: $w.base.large_block,
            head_gate: $w.base.head_gate,
            min_body_bytes: $w.base.min_body_bytes,
            shutting_down: $shutting_down,
            service: &mut $w.base.service,
        }
    };
}
// The io_uring worker builds its `Env` the same way.
pub(crate) use env;

/// Everything one epoll worker owns.
pub(crate) struct Worker<F: FreeList, S: Service> {
    base: WorkerBase<F, S>,
    poll: Poll,
    /// The worker's socket on each address, in `Config::listener`'s order; empty once
    /// shutting down.
    listeners: Vec<TcpListener>,
    /// Each listener's TLS (see [`listener_tls`]).
    tls: Vec<Option<TlsConfig>>,
    conns: Vec<EpollConn<S::State>>,
    /// Connections to run again next turn (read budget used up).
    runnable: Vec<u32>,
    /// Bit `i`: listener `i` may have connections waiting.
    accept_ready: u32,
    /// The listener `accept` offers a batch to first.
    accept_first: u32,
}

impl<F: FreeList, S: Service> Worker<F, S> {
    /// Sets a worker up on its own thread (the local cache belongs to the calling thread).
    /// Every slot, list and scratch array is allocated here, once.
    pub(crate) fn new(
        id: usize,
        poll: Poll,
        listeners: Vec<std::net::TcpListener>,
        pool: &Pool<F>,
        shared: Arc<Shared>,
        cfg: Config,
        app: App<S>,
    ) -> io::Result<Self> {
        let mut mine = Vec::with_capacity(listeners.len());
        for (i, listener) in listeners.into_iter().enumerate() {
            let mut listener = TcpListener::from_std(listener);
            poll.registry()
                .register(&mut listener, Token(LISTENERS + i), Interest::READABLE)?;
            mine.push(listener);
        }
        let accept_ready = (1u32 << mine.len()) - 1;
        let n = cfg.max_conns;
        let tls = listener_tls(&cfg);
        let base = WorkerBase::new(id, pool.local_cache(), shared, cfg, app);
        let conns = (0..n)
            .map(|slot| EpollConn::new(base.parser(), slot, base.cfg.out_blocks))
            .collect();
        Ok(Worker {
            base,
            poll,
            listeners: mine,
            tls,
            conns,
            runnable: Vec::with_capacity(n),
            accept_ready,
            accept_first: 0,
        })
    }

    /// The event loop; returns once shut down and every connection is closed.
    pub(crate) fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let now = Instant::now();
            let timeout = self.poll_timeout(now);
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            let now = Instant::now();
            self.tick(now);
            for ev in events.iter() {
                match ev.token() {
                    Token(t) if (LISTENERS..LISTENERS + MAX_LISTENERS).contains(&t) => {
                        self.accept_ready |= 1 << (t - LISTENERS);
                    }
                    // Shutdown, or answers in the mailbox.
                    WAKER => deliver_answers(&mut self, now)?,
                    Token(slot) => {
                        let Some(conn) = self.conns.get_mut(slot) else {
                            continue;
                        };
                        if conn.sock.is_none() {
                            continue;
                        }
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            conn.readable = true;
                        }
                        if ev.is_read_closed() || ev.is_error() {
                            conn.read_closed = true;
                        }
                        if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                            conn.writable = true;
                        }
                        self.run_conn(slot, now);
                    }
                }
            }
            if self.base.shared.shutdown.load(Ordering::Acquire) && !self.base.shutting_down() {
                self.begin_shutdown(now);
            }
            self.expire(now);
            self.rerun(now);
            wake_pool_waiters(&mut self, now)?;
            if let Some(deadline) = self.base.shutdown_deadline {
                if self.base.free.len() == self.conns.len() {
                    return Ok(());
                }
                if now >= deadline {
                    for slot in 0..self.conns.len() {
                        if self.conns[slot].sock.is_some() {
                            self.close(slot, CloseReason::Done);
                        }
                    }
                    return Ok(());
                }
            } else {
                self.accept(now);
            }
        }
    }

    /// How long the next poll may sleep: until the next deadline, date refresh, accept retry
    /// or pool retry; zero if work is pending.
    fn poll_timeout(&self, now: Instant) -> Option<Duration> {
        let accept_now = self.acceptable() != 0
            && !self.listeners.is_empty()
            && self.base.accept_paused_until.is_none()
            && !self.base.free.is_empty();
        if !self.runnable.is_empty() || accept_now {
            return Some(Duration::ZERO);
        }
        let wake = self.base.next_wake();
        // Round up to the next millisecond so a deadline has passed when the poll returns.
        Some(wake.saturating_duration_since(now) + Duration::from_micros(999))
    }

    /// Once-per-second housekeeping: the Date header, and the pool's idle eviction.
    fn tick(&mut self, now: Instant) {
        self.base.housekeeping(now);
        if let Some(until) = self.base.accept_paused_until {
            if now >= until {
                self.base.accept_paused_until = None;
            }
        }
    }

    /// Runs one connection and files it where its outcome says.
    fn run_conn(&mut self, slot: usize, now: Instant) {
        let shutting_down = self.base.shutting_down();
        let mut env = env!(self, slot, shutting_down);
        let Some(conn) = self.conns.get_mut(slot) else {
            return;
        };
        let turn = conn.drive(&mut env);
        match turn.next {
            Next::Close(reason) => return self.close(slot, reason),
            Next::Wait | Next::Pool => {}
            Next::Yield => {
                if !conn.queued {
                    conn.queued = true;
                    self.runnable.push(slot as u32);
                }
            }
        }
        self.base.ran(slot, turn.next == Next::Pool, turn.blocks);
        if shutting_down && conn.conn.is_idle() {
            return self.close(slot, CloseReason::Done);
        }
        let want = conn.conn.timer_kind();
        self.base.rearm(slot, want, turn.progress, now);
    }

    /// Reruns connections that yielded.
    fn rerun(&mut self, now: Instant) {
        let pending = self.runnable.len();
        for i in 0..pending {
            let slot = self.runnable[i] as usize;
            if let Some(c) = self.conns.get_mut(slot) {
                c.queued = false;
                if c.sock.is_some() {
                    self.run_conn(slot, now);
                }
            }
        }
        // Entries added while rerunning stay for the next turn. `drain` on a Vec with spare
        // capacity does not allocate.
        self.runnable.drain(..pending);
    }

    /// Handles expired deadlines.
    fn expire(&mut self, now: Instant) {
        while let Some((slot, kind)) = self.base.timers.pop_expired(now) {
            if self.conns.get(slot).map_or(true, |c| c.sock.is_none()) {
                continue;
            }
            let mut env = env!(self, slot, true);
            if self.conns[slot].conn.expire(&mut env, kind) {
                self.run_conn(slot, now);
            } else {
                self.close(slot, CloseReason::Done);
            }
        }
    }

    /// Accepts up to a batch of connections on each listener that may have some, registering
    /// them all before serving any.
    fn accept(&mut self, now: Instant) {
        // Accepting goes on while connections wait for the pool: one left in the backlog has no
        // deadline running, so it would hold its place there until every waiter got a block.
        // Accepted, it waits in the queue behind them (a slot, no block) with its deadline
        // running like theirs. Each listener that may have connections waiting gets a batch
        // in turn, with no loop at all when none may (the kept-alive turn). The turn starts
        // after the last listener that took a connection: at the handshake bound a freed
        // place goes to the first HTTPS listener that asks, and one listener's backlog must
        // not keep another's clients waiting.
        let first = self.accept_first;
        let mut ready = self.accept_ready.rotate_right(first);
        while ready != 0 && self.base.accept_paused_until.is_none() {
            let i = (ready.trailing_zeros() + first) as usize % 32;
            ready &= ready - 1;
            if i >= self.listeners.len() {
                continue;
            }
            if self.accept_on(i, now) {
                self.accept_first = ((i + 1) % self.listeners.len()) as u32;
            }
        }
    }

    /// The listeners that may have connections waiting and may take one now: `accept_ready`
    /// but for the HTTPS listeners held at the handshake bound.
    fn acceptable(&self) -> u32 {
        let mut ready = self.accept_ready;
        let mut each = ready;
        while each != 0 {
            let i = each.trailing_zeros() as usize;
            each &= each - 1;
            if !self
                .base
                .handshake_room(self.tls.get(i).and_then(Option::as_ref))
            {
                ready &= !(1 << i);
            }
        }
        ready
    }

    /// Accepts up to a batch of connections on listener `i`. An HTTPS listener stops at the
    /// handshake bound with its `accept_ready` bit still set: its connections wait in the
    /// backlog, and the first turn after a handshake ends takes them. Whether a connection
    /// was taken (and opened).
    fn accept_on(&mut self, i: usize, now: Instant) -> bool {
        let tls = self.tls[i].as_ref();
        let mut took = false;
        for _ in 0..self.base.cfg.accept_batch {
            if !self.base.may_start_handshake(tls) {
                return took;
            }
            match self.listeners[i].accept() {
                Ok((mut sock, _peer)) => {
                    let Some(slot) = self.base.take_slot() else {
                        // At max-conns: close at once rather than let it wait unserved.
                        drop(sock);
                        continue;
                    };
                    // `TCP_NODELAY` comes from the listener (`server::bind`).
                    if self
                        .poll
                        .registry()
                        .register(
                            &mut sock,
                            Token(slot),
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .is_err()
                    {
                        self.base.free.push(slot as u32);
                        continue;
                    }
                    let counters = &self.base.shared.counters[self.base.id];
                    if !self.conns[slot].open(sock, tls, counters) {
                        self.base.free.push(slot as u32);
                        continue;
                    }
                    self.base.opened(slot, now);
                    took = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.accept_ready &= !(1 << i);
                    return took;
                }
                Err(e) if is_resource_exhaustion(&e) => {
                    // Out of descriptors: the pending connection stays in the backlog, and
                    // retrying now would spin. Pause and let closes free descriptors.
                    self.base.accept_backoff(now);
                    return took;
                }
                // The peer gave up before we accepted, or a signal: next one.
                Err(_) => {}
            }
        }
        took
    }

    /// Closes a connection and frees its slot and blocks.
    fn close(&mut self, slot: usize, reason: CloseReason) {
        self.base.detach(slot);
        let Some(conn) = self.conns.get_mut(slot) else {
            return;
        };
        let Some(mut sock) = conn.release(&self.base.shared.counters[self.base.id]) else {
            return;
        };
        conn.conn.ended(&mut self.base.service);
        let _ = self.poll.registry().deregister(&mut sock);
        drop(sock);
        self.base.free.push(slot as u32);
        self.base.holds(slot, 0);
        self.base.count_close(reason);
    }

    /// Stops accepting; idle connections close now, busy ones after their current exchange.
    fn begin_shutdown(&mut self, now: Instant) {
        self.base.begin_shutdown(now);
        for mut l in self.listeners.drain(..) {
            let _ = self.poll.registry().deregister(&mut l);
        }
        for slot in 0..self.conns.len() {
            let conn = &mut self.conns[slot];
            if conn.sock.is_none() {
                continue;
            }
            if conn.conn.is_idle() {
                self.close(slot, CloseReason::Done);
            } else if conn.conn.is_upgraded() {
                // Its service is told, and says goodbye in its protocol.
                self.run_conn(slot, now);
            }
        }
    }
}

impl<F: FreeList, S: Service> PoolWaiters<F, S> for Worker<F, S> {
    fn base(&mut self) -> &mut WorkerBase<F, S> {
        &mut self.base
    }

    fn run_waiter(&mut self, slot: usize, now: Instant) -> io::Result<()> {
        if self.conns.get(slot).is_some_and(|c| c.sock.is_some()) {
            self.run_conn(slot, now);
        }
        Ok(())
    }

    fn answer(&mut self, to: Deferred, answer: S::State) -> bool {
        self.conns
            .get_mut(to.slot as usize)
            .is_some_and(|c| c.sock.is_some() && c.conn.resume(to, answer))
    }
}

/// A worker of either driver, as the wake-ups of its waiting connections (for the pool, for a
/// deferred answer) see it.
pub(crate) trait PoolWaiters<F: FreeList, S: Service> {
    fn base(&mut self) -> &mut WorkerBase<F, S>;
    /// Runs the open connection in `slot` as far as it goes, and files it by its outcome
    /// ([`WorkerBase::ran`]).
    fn run_waiter(&mut self, slot: usize, now: Instant) -> io::Result<()>;
    /// Hands a deferred answer to the open connection it names; `false` when none waits for
    /// it (see [`Conn::resume`](crate::conn::Conn::resume)).
    fn answer(&mut self, to: Deferred, answer: S::State) -> bool;
}

/// Runs the connections whose deferred answers arrived in the worker's mailbox; an answer no
/// connection waits for any more is dropped.
pub(crate) fn deliver_answers<F: FreeList, S: Service, W: PoolWaiters<F, S>>(
    w: &mut W,
    now: Instant,
) -> io::Result<()> {
    w.base().mailbox.draining();
    while let Some((to, answer)) = w.base().mailbox.take() {
        if w.answer(to, answer) {
            w.run_waiter(to.slot as usize, now)?;
        }
    }
    Ok(())
}

/// Runs the connections waiting for the pool, oldest first, once blocks came back to this
/// worker since the last time (or, with several workers, once `POOL_RETRY` passed), until one
/// finds no block again: that one keeps its place at the head, and the rest wait for the next
/// blocks. A wait is thus retried only when there is something to take, and each return of
/// blocks costs at most one connection a wasted try, however many wait: no retry timer, no
/// rerun of every waiter each turn.
pub(crate) fn wake_pool_waiters<F: FreeList, S: Service, W: PoolWaiters<F, S>>(
    w: &mut W,
    now: Instant,
) -> io::Result<()> {
    if w.base().pool_wake_due(now) {
        while let Some(slot) = w.base().pool_waiters.pop_front() {
            w.run_waiter(slot, now)?;
            let queue = &mut w.base().pool_waiters;
            if queue.remove(slot) {
                queue.push_front(slot);
                break;
            }
        }
    }
    w.base().done_waking(now);
    Ok(())
}

/// What a worker runs: the service it made, and the mailbox its deferred answers come to.
pub(crate) struct App<S: Service> {
    pub(crate) service: S,
    pub(crate) mailbox: Mailbox<S::State>,
}

/// The earliest of `first` and the `Some` instants: when a worker's wait must end.
fn earliest<const N: usize>(first: Instant, others: [Option<Instant>; N]) -> Instant {
    others.into_iter().flatten().fold(first, Instant::min)
}

/// The per-worker state both drivers keep alike, and the bookkeeping on it that does not
/// depend on how sockets are driven: free slots, deadlines, header slots, the local cache, the
/// Date header, pool waiters, accept back-off and the shutdown deadline.
pub(crate) struct WorkerBase<F: FreeList, S: Service> {
    /// The worker's service, made on its thread.
    pub(crate) service: S,
    /// Where answers to the service's deferred exchanges arrive.
    pub(crate) mailbox: Mailbox<S::State>,
    pub(crate) id: usize,
    /// Free connection slots; the lowest is popped first.
    pub(crate) free: Vec<u32>,
    pub(crate) timers: Timers,
    pub(crate) slots: Vec<HeaderSlot>,
    pub(crate) slots_owner: Option<usize>,
    pub(crate) cache: LocalCache<F>,
    pub(crate) date: DateCache,
    pub(crate) next_date: Instant,
    pub(crate) shared: Arc<Shared>,
    pub(crate) cfg: Config,
    pub(crate) large_block: usize,
    /// `Config::whole_body_limit`.
    pub(crate) whole_body: usize,
    /// The most `Response::body_with` may write: the whole-body limit, or what one block of
    /// the large class holds besides the head's end.
    pub(crate) body_with_max: usize,
    /// `Config::head_gate`.
    pub(crate) head_gate: usize,
    /// `Config::min_body_rate`'s bytes (0: no minimum).
    pub(crate) min_body_bytes: u64,
    /// Connections waiting for the pool, oldest first (see [`wake_pool_waiters`]).
    pub(crate) pool_waiters: WaitQueue,
    /// The blocks each connection held after its last turn (see [`holds`](Self::holds)).
    held: Vec<u16>,
    /// Blocks came back since the pool waiters were last woken.
    blocks_returned: bool,
    /// With several workers, when the oldest pool waiter tries again regardless.
    pool_retry_at: Option<Instant>,
    pub(crate) accept_paused_until: Option<Instant>,
    /// Accepting on an HTTPS listener waits for a handshake to end (see
    /// [`may_start_handshake`](Self::may_start_handshake)).
    handshakes_held: bool,
    pub(crate) shutdown_deadline: Option<Instant>,
    pub(crate) next_evict: Option<Instant>,
}

impl<F: FreeList, S: Service> WorkerBase<F, S> {
    /// Sets up the shared state for `cfg.max_conns` slots, on the worker's own thread (`cache`
    /// belongs to it). Every slot, list and scratch array is allocated here, once.
    pub(crate) fn new(
        id: usize,
        cache: LocalCache<F>,
        shared: Arc<Shared>,
        cfg: Config,
        app: App<S>,
    ) -> Self {
        let n = cfg.max_conns;
        let now = Instant::now();
        WorkerBase {
            service: app.service,
            mailbox: app.mailbox,
            id,
            // Lowest slot first: pop from the end.
            free: (0..n as u32).rev().collect(),
            timers: Timers::new(
                n,
                cfg.idle_timeout,
                cfg.header_timeout,
                cfg.idle_timeout.min(MAX_DRAIN),
                cfg.min_body_rate.map(|r| r.per),
            ),
            slots: vec![HeaderSlot::EMPTY; HEADER_SLOTS],
            slots_owner: None,
            cache,
            date: DateCache::new(SystemTime::now()),
            next_date: now,
            large_block: cfg.large_block(),
            whole_body: cfg.whole_body_limit(),
            body_with_max: crate::exchange::body_with_max(&cfg),
            head_gate: cfg.head_gate(),
            min_body_bytes: cfg.min_body_rate.map_or(0, |r| r.bytes),
            pool_waiters: WaitQueue::new(n),
            held: vec![0; n],
            blocks_returned: false,
            pool_retry_at: None,
            accept_paused_until: None,
            handshakes_held: false,
            shutdown_deadline: None,
            next_evict: if id == 0 {
                cfg.evict_interval.map(|d| now + d)
            } else {
                None
            },
            shared,
            cfg,
        }
    }

    /// A parser for one connection slot, with the worker's limits.
    pub(crate) fn parser(&self) -> Parser {
        Parser::new(
            HttpConfig::DEFAULT
                .with_max_head_bytes(self.cfg.max_head)
                .with_max_headers(HEADER_SLOTS),
        )
    }

    /// This worker's counters.
    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        &self.shared.counters[self.id]
    }

    /// Whether shutdown has begun.
    #[inline]
    pub(crate) fn shutting_down(&self) -> bool {
        self.shutdown_deadline.is_some()
    }

    /// The earliest of the next Date refresh, deadline, accept retry, shutdown deadline,
    /// eviction and pool retry: when the worker's wait must end.
    pub(crate) fn next_wake(&self) -> Instant {
        earliest(
            self.next_date,
            [
                self.timers.next_deadline(),
                self.accept_paused_until,
                self.shutdown_deadline,
                self.next_evict,
                self.pool_retry_at,
            ],
        )
    }

    /// Once-per-second housekeeping: the Date header when `next_date` has passed (then the
    /// next refresh is at the next wall-clock second), and the pool's idle eviction when
    /// `next_evict` has.
    pub(crate) fn housekeeping(&mut self, now: Instant) {
        if now >= self.next_date {
            let wall = SystemTime::now();
            self.date.refresh(wall);
            let into_second = wall
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            self.next_date =
                now + Duration::from_nanos(1_000_000_000 - u64::from(into_second.min(999_999_999)));
        }
        if let (Some(at), Some(every)) = (self.next_evict, self.cfg.evict_interval) {
            if now >= at {
                // A slab given back makes room under the bound for one of another class.
                if self.shared.pool.evict_idle() > 0 {
                    self.blocks_returned = true;
                }
                self.next_evict = Some(now + every);
            }
        }
    }

    /// Files `slot` after a turn of its connection: at the back of the pool's wait queue when
    /// the turn ended waiting for blocks (`waits`; one that waits already keeps its place),
    /// off the queue otherwise. `blocks` is what the connection holds now (see
    /// [`holds`](Self::holds)).
    #[inline]
    pub(crate) fn ran(&mut self, slot: usize, waits: bool, blocks: usize) {
        if !waits {
            self.pool_waiters.remove(slot);
        } else if self.pool_waiters.push_back(slot) {
            self.count_pool_wait();
        }
        self.holds(slot, blocks);
    }

    /// Notes that the connection in `slot` holds `blocks` pool blocks now; fewer than after its
    /// last turn means blocks came back to this worker, so the pool waiters are woken at the
    /// end of this turn. Blocks go back to the pool only from this worker's connections (or its
    /// driver: [`gave_back`](Self::gave_back)), so this sees every return but those of other
    /// workers (and the idle eviction's room under the bound: `housekeeping`).
    #[inline]
    pub(crate) fn holds(&mut self, slot: usize, blocks: usize) {
        if let Some(held) = self.held.get_mut(slot) {
            let blocks = u16::try_from(blocks).unwrap_or(u16::MAX);
            self.blocks_returned |= blocks < *held;
            *held = blocks;
        }
    }

    /// The driver gave a block back that no connection held (a received block it dropped).
    #[inline]
    pub(crate) fn gave_back(&mut self) {
        self.blocks_returned = true;
    }

    /// Counts a connection's wait for pool blocks.
    #[inline]
    pub(crate) fn count_pool_wait(&self) {
        WorkerCounters::add(&self.counters().pool_waits, 1);
    }

    /// Whether the pool waiters are to be woken now (see [`wake_pool_waiters`]).
    fn pool_wake_due(&self, now: Instant) -> bool {
        !self.pool_waiters.is_empty()
            && (self.blocks_returned || self.pool_retry_at.is_some_and(|at| now >= at))
    }

    /// After the pool waiters' turn: the blocks that came back were offered, and the retry for
    /// other workers' blocks is due a `POOL_RETRY` after the last one.
    fn done_waking(&mut self, now: Instant) {
        let due = self.pool_wake_due(now);
        self.blocks_returned = false;
        if self.pool_waiters.is_empty() || self.cfg.workers < 2 {
            self.pool_retry_at = None;
        } else if due || self.pool_retry_at.is_none() {
            self.pool_retry_at = Some(now + POOL_RETRY);
        }
    }

    /// Pauses accepting after the system ran out of descriptors or memory.
    pub(crate) fn accept_backoff(&mut self, now: Instant) {
        WorkerCounters::add(&self.counters().accept_backoffs, 1);
        self.accept_paused_until = Some(now + ACCEPT_BACKOFF);
    }

    /// Whether a listener with `tls` may take another connection now: a plain one always; an
    /// HTTPS one while the worker's handshakes in progress (those of every HTTPS listener)
    /// are under its `max_handshakes`. A connection not taken waits in the listen backlog,
    /// where it costs the worker nothing and loses nothing.
    #[inline]
    pub(crate) fn handshake_room(&self, tls: Option<&TlsConfig>) -> bool {
        let Some(tls) = tls else {
            return true;
        };
        let running = self.counters().tls_handshakes.load(Ordering::Relaxed);
        running < tls.max_handshakes as u64
    }

    /// [`handshake_room`](Self::handshake_room) for a listener about to accept: on an HTTPS
    /// one, the first `false` after accepting is counted as a hold
    /// ([`ServerStats::tls_accept_holds`]).
    ///
    /// [`ServerStats::tls_accept_holds`]: crate::ServerStats::tls_accept_holds
    #[inline]
    pub(crate) fn may_start_handshake(&mut self, tls: Option<&TlsConfig>) -> bool {
        let room = self.handshake_room(tls);
        if tls.is_some() {
            if !room && !self.handshakes_held {
                WorkerCounters::add(&self.counters().tls_accept_holds, 1);
            }
            self.handshakes_held = !room;
        }
        room
    }

    /// A free slot for a new connection; `None` (counted as rejected) at max-conns.
    #[inline]
    pub(crate) fn take_slot(&mut self) -> Option<usize> {
        let slot = self.free.pop();
        if slot.is_none() {
            WorkerCounters::add(&self.counters().rejected, 1);
        }
        slot.map(|s| s as usize)
    }

    /// Counts a connection opened in `slot` and starts its idle deadline.
    #[inline]
    pub(crate) fn opened(&mut self, slot: usize, now: Instant) {
        let c = &self.shared.counters[self.id];
        WorkerCounters::add(&c.accepted, 1);
        WorkerCounters::add(&c.open, 1);
        // The first head's deadline runs from the accept (`Conn::timer_kind`): a connection
        // that never sends a byte is cut as soon as one that sent a byte would be.
        self.timers.arm(slot, TimerKind::Header, now);
    }

    /// Moves `slot`'s deadline to what the connection waits for: the header deadline runs
    /// from the first byte of the head and is never extended; the progress deadline moves
    /// with the bytes read or written.
    #[inline]
    pub(crate) fn rearm(&mut self, slot: usize, want: TimerKind, progress: bool, now: Instant) {
        let want = self.timers.in_use(want);
        let refresh = want == TimerKind::Idle && progress;
        if self.timers.kind(slot) != Some(want) {
            self.timers.arm(slot, want, now);
        } else if refresh {
            self.timers.refresh(slot, want, now);
        }
    }

    /// Stops `slot`'s deadline, takes it off the pool's wait queue and takes back the header
    /// slots it holds, as it closes.
    #[inline]
    pub(crate) fn detach(&mut self, slot: usize) {
        self.timers.disarm(slot);
        self.pool_waiters.remove(slot);
        if self.slots_owner == Some(slot) {
            self.slots_owner = None;
        }
    }

    /// Counts a connection closed for `reason`.
    #[inline]
    pub(crate) fn count_close(&self, reason: CloseReason) {
        let c = self.counters();
        WorkerCounters::sub(&c.open, 1);
        if matches!(reason, CloseReason::Io | CloseReason::PeerAborted) {
            WorkerCounters::add(&c.io_errors, 1);
        }
    }

    /// Sets the shutdown deadline, the grace period from `now`.
    pub(crate) fn begin_shutdown(&mut self, now: Instant) {
        self.shutdown_deadline = Some(now + self.cfg.shutdown_grace);
    }
}

/// Each listener's TLS, in `Config::listener`'s order (`None`: plain HTTP): a worker's own
/// copy, which it reads while it changes its `WorkerBase`.
pub(crate) fn listener_tls(cfg: &Config) -> Vec<Option<TlsConfig>> {
    (0..cfg.listener_count())
        .map(|i| cfg.listener(i).1.cloned())
        .collect()
}

/// `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`: the system, not the peer, is out of something.
fn is_resource_exhaustion(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12))
}
