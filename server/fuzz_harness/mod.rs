//! Drives one connection core from a script of events, and checks what it sends with a client's
//! eyes. Built for the fuzz target in `server/fuzz` (feature `fuzzing`) and for the unit
//! tests that replay its seeds. [`run`] is the `conn` target; [`run_tls`] (the `conn_tls`
//! target) drives the TLS layer in front of a core against a rustls client, with a script of
//! its own.
//!
//! The script is the fuzz input, read as one-byte operations:
//!
//! | byte | event |
//! |---|---|
//! | `0x00..=0x3f` | the peer sends the next `b + 1` bytes of the script (arbitrary split points) |
//! | `0x40..=0x5f` | a readiness-driven read of at most `(b & 15) * 128 + 1` bytes, into the core's read block (`0x40..`) or its spare room as a slice (`0x50..`) |
//! | `0x60..=0x7f` | a completion-driven receive: a block from the pool, filled by "the kernel", handed over whole |
//! | `0x80..=0xbf` | a send of what the core has queued: all of it, or `(b & 63) * 13` bytes (a short send) |
//! | `0xc0..=0xc7` | the connection's deadline passes |
//! | `0xc8..=0xcf` | the answer to the exchange the service deferred last arrives; with none, a wake-up of the upgraded connection ([`Mailbox::wake`](crate::Mailbox::wake)) |
//! | `0xd0..=0xd7` | other connections take every free block of the pool |
//! | `0xd8..=0xdf` | they give them back |
//! | `0xe0..=0xef` | the peer ends its stream |
//! | `0xf0..=0xf7` | the server starts shutting down |
//! | `0xf8..=0xff` | the socket fails: the driver closes the connection |
//!
//! After the script the peer reads everything with its side still open, then ends its stream,
//! so the exchange runs to its end. The service is a model of every kind the API allows (its
//! routes are listed at `Model`). Checked, by panicking:
//! * the core never asks to send once it said to half-close, and says nothing once closed;
//! * what it sent parses as a sequence of well-formed responses (`httparse`, bodies framed by
//!   Content-Length or chunked), one per request in request order: each has the status its
//!   request's route gives, and the body it gives byte for byte (echoed, pulled, deferred,
//!   whole, owned); HEAD gets no body, no 1xx goes to HTTP/1.0;
//! * a refusal (an error status with `Connection: close`, after which nothing follows) is one
//!   the engine may make: of the request's form (400, 408, 413, 414, 417, 431, 501, 505); a
//!   500 only to a route that misuses its exchange or a whole body over the limit; a 503 only
//!   as often as the pool was found truly dry (see below); any status to a request the client
//!   model could not frame;
//! * the service's own view: every call it makes succeeds, but for the misuses it makes on
//!   purpose (each refused with the error it provokes: `ReservedHeader`, `TooLarge` for a
//!   whole body over `Config::whole_body_limit`, and only then) and `NoRoom` when the pool
//!   truly has no block to give, which the service checks at once by asking the pool for
//!   the block the call needed: `NoRoom` with a block to be had (a full output queue, the
//!   old way a pipelined batch of whole bodies failed halfway) is a failure;
//! * after a response to a route that calls `Exchange::close` (from `head`, `data`, `end`,
//!   `resume` or `fill`), nothing more is answered; with everything sent and the peer still
//!   there, the connection has half-closed or closed by itself;
//! * `data` is not called again once a response completed with `close()` asked; `aborted` is
//!   called only with an exchange in flight, and at most once;
//! * a connection that never received a byte waits under the header deadline and ends
//!   without a word when it passes;
//! * a response is cut short only where the connection was closed under it;
//! * once the connection has ended (and the driver called `Conn::ended`, which drops the
//!   service's state, a rented block with it), every pool block is back
//!   (`rented_blocks == 0`);
//! * an upgrade (`GET /upgrade`, switched to the `echo` protocol): a `101` only to a request
//!   that may switch (HTTP/1.1, not `HEAD`, no body, `Connection: upgrade`, `Upgrade: echo`,
//!   not closing), and to one that may, a `101` or a refusal that closes; after the `101` the
//!   service's greeting, then every byte the peer sent behind the head, echoed in order up to
//!   and including the first `!` (where the service closes), then its goodbye on the peer's
//!   end or the shutdown: all of it where nothing cut the connection, a prefix of it where
//!   something did. Its events come in the order and under the conditions
//!   [`UpgradeEvent`] promises (`Start` first and once, `Data` only with the output all
//!   sent, nothing after `close`, `Wake` only when woken), and `upgrade_ended` once;
//! * a WebSocket (`GET /ws`, `bufslab_server::ws` with an echo handler, messages over
//!   100 bytes in fragments, frames over 3 000 bytes and messages over 5 000 refused): what
//!   the server sent decodes as valid server frames; every message the peer completed comes
//!   back whole and in order (of one it did not complete, at most a prefix), every ping is
//!   answered by its pong, and the peer's close, a violation or the shutdown is answered by
//!   one close frame with the code RFC 6455 names, after which nothing is sent; all of it
//!   where nothing cut the connection, no echo was refused and no frame the adapter owed
//!   found the pool dry (checked to be dry: the connection is then failed without a close
//!   frame, and the handler told `1006`), a prefix where something did.
//!
//! With `FUZZ_TRACE` set in the environment, each event and the bytes sent are printed (to
//! read a crash: `FUZZ_TRACE=1 cargo +nightly fuzz run conn <artifact>`, or without the fuzz
//! toolchain `FUZZ_TRACE=1 FUZZ_REPLAY=<path> cargo test -p bufslab-server --features fuzzing
//! --lib fuzzing::tests::replay -- --nocapture`).

use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use bufslab::{LocalCache, Pool, PoolBuf, PoolBytes, QueueFreeList};
use bufslab_http::{
    BodyFraming, Config as HttpConfig, DateCache, HeaderSlot, KnownHeader, Method, Parser, Request,
};
use bytes::{BufMut, Bytes};

use crate::config::{Config, PoolConfig, SMALL_BLOCK};
use crate::conn::{CloseReason, Conn, Env, Want};
use crate::deferred::Deferred;
use crate::exchange::{Ctx, Exchange, ResponseError, StaticResponse, HEAD_END};
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::shared::Shared;
use crate::stats::WorkerCounters;
use crate::timer::TimerKind;
use crate::upgrade::{UpgradeEvent, Upgraded, WriteError};
use crate::ws::{Message, WebSocket, WsConfig, WsHandler, WsSender};
use bufslab_ws::{CloseCode, Decoder, Event, Limits as WsLimits, MessageKind, Role};

mod tls;
pub use tls::run_tls;

/// Largest body the core under test accepts (small, so 413 paths are reachable).
const MAX_BODY: u64 = 3000;

/// Largest head (small, so 431 and the large class are reachable).
const MAX_HEAD: usize = 1024;

/// Most `next` calls while finishing: a connection that neither ends nor progresses is a bug.
const FINISH_STEPS: usize = 100_000;

/// Runs the script `data` against a fresh connection core and checks the outcome.
///
/// # Panics
/// When the core breaks one of the rules in the module documentation: that is what the fuzz
/// target looks for.
pub fn run(data: &[u8]) {
    let mut worker = Worker::new(
        Config {
            max_head: MAX_HEAD,
            ..Config::default()
        },
        128 << 10,
    );
    let (cfg, pool) = (worker.cfg.clone(), worker.pool.clone());
    let http = HttpConfig::DEFAULT
        .with_max_head_bytes(MAX_HEAD)
        .with_max_headers(worker.slots.len());
    let limits = Limits {
        whole: cfg.whole_body_limit(),
        with: crate::exchange::body_with_max(&cfg),
        large: cfg.large_block(),
    };
    let mut conn: Conn<St> = Conn::new(Parser::new(http), 0, cfg.out_blocks);
    let mut service = Model::new(limits);
    conn.open();
    let mut h = Harness::default();
    let trace = std::env::var_os("FUZZ_TRACE").is_some();
    {
        let mut env = worker.env(&mut service);
        let mut hog: Vec<PoolBuf> = Vec::new();
        let mut i = 0;
        while i < data.len() && !conn.is_closed() {
            let op = data[i];
            i += 1;
            match op {
                0x00..=0x3f => {
                    let end = (i + usize::from(op) + 1).min(data.len());
                    h.peer_send(&data[i..end]);
                    i = end;
                }
                0x40..=0x5f => {
                    let max = usize::from(op & 15) * 128 + 1;
                    h.read(&mut conn, &mut env, max, op & 0x10 != 0);
                }
                0x60..=0x7f => h.receive_block(&mut conn, &mut env, &pool),
                0x80..=0xbf => h.send(&mut conn, &mut env, usize::from(op & 63) * 13),
                0xc8..=0xcf => h.answer(&mut conn, &mut env),
                0xc0..=0xc7 => h.deadline(&mut conn, &mut env),
                0xd0..=0xd7 => {
                    while let Ok(b) = pool.get(SMALL_BLOCK) {
                        hog.push(b);
                    }
                }
                0xd8..=0xdf => hog.clear(),
                0xe0..=0xef => h.peer_eof = true,
                0xf0..=0xf7 => {
                    env.shutting_down = true;
                    if conn.is_idle() {
                        conn.release();
                    }
                }
                0xf8..=0xff => {
                    h.cut_allowed = true;
                    conn.release();
                }
            }
            h.step(&mut conn, &mut env);
            h.end_if_closed(&mut conn, &mut env);
            if trace {
                let small = pool.class_stats(0).unwrap_or_default();
                eprintln!(
                    "op {op:#x} in {} left {:?} wire {} closed {} blocks free {} cached {} rented {} hog {}",
                    h.sock_in.len(),
                    h.leftover.as_ref().map(|b| b.len()),
                    h.wire.len(),
                    conn.is_closed(),
                    small.free_blocks,
                    small.cached_blocks,
                    small.rented_blocks,
                    hog.len()
                );
            }
        }
        hog.clear();
        h.finish(&mut conn, &mut env);
        h.end_if_closed(&mut conn, &mut env);
        assert!(h.ended, "the connection did not end");
    }
    // What the service keeps across requests goes with it, as a store's values would.
    service.store = None;
    h.leftover = None;
    let shared = worker.finish();
    assert_eq!(pool.stats().rented_blocks, 0, "blocks left rented");
    let late = shared.snapshot().late_body_faults > 0;
    if trace {
        eprintln!("sent:\n{}", String::from_utf8_lossy(&h.wire));
    }
    assert_eq!(
        service.up.switched, service.up.ended,
        "upgrade_ended after a switch, and only then"
    );
    // `closed` is told why a WebSocket ended, unless the handler closed it itself (after a
    // refused echo).
    assert_eq!(
        service.up.ws && !service.up.refused,
        service.up.ws_closed.is_some(),
        "WsHandler::closed once a WebSocket ended, and only then"
    );
    check(
        &h.peer_sent,
        &h.wire,
        h.cut_allowed || late,
        service.dry,
        &limits,
        &service.up,
    );
}

/// What the one worker of a harness owns: its pool (small: 4 blocks a slab, so that it runs
/// dry), its share of the server's state, its cache, Date and header slots.
struct Worker {
    cfg: Config,
    pool: Pool<QueueFreeList>,
    shared: Shared,
    cache: LocalCache<QueueFreeList>,
    date: DateCache,
    slots: Vec<HeaderSlot>,
    slots_owner: Option<usize>,
}

impl Worker {
    /// The worker of `cfg`, its pool made small: at most `max_bytes`.
    fn new(cfg: Config, max_bytes: usize) -> Worker {
        let cfg = Config {
            pool: PoolConfig {
                blocks_per_slab: 4,
                prealloc_slabs: 1,
                max_bytes,
                local_capacity: 4,
                ..PoolConfig::default()
            },
            ..cfg
        };
        let Ok(pool) = cfg.build_pool::<QueueFreeList>() else {
            panic!("the test pool configuration is valid");
        };
        let shared = Shared {
            counters: vec![WorkerCounters::default()].into_boxed_slice(),
            pool: Box::new(pool.clone()),
            shutdown: AtomicBool::new(false),
            alloc_counter: None,
            driver: "none",
        };
        Worker {
            cache: pool.local_cache(),
            cfg,
            pool,
            shared,
            date: DateCache::from_unix(784_111_777),
            slots: vec![HeaderSlot::EMPTY; 100],
            slots_owner: None,
        }
    }

    /// What the worker lends its connection, to serve with `service`.
    fn env<'a, S>(&'a mut self, service: &'a mut S) -> Env<'a, QueueFreeList, S> {
        Env {
            slot: 0,
            slots: &mut self.slots,
            slots_owner: &mut self.slots_owner,
            cache: &self.cache,
            ctx: Ctx {
                blocks: &self.cache,
                date: &self.date,
                server_name: Some(b"fuzz"),
                shared: &self.shared,
                whole_body: self.cfg.whole_body_limit(),
                body_with_max: crate::exchange::body_with_max(&self.cfg),
                large_block: self.cfg.large_block(),
                upgrade_h2c: false,
                tls: None,
            },
            counters: &self.shared.counters[0],
            max_body: MAX_BODY,
            large_block: self.cfg.large_block(),
            head_gate: self.cfg.head_gate(),
            // A body that made no progress between two of its deadlines is cut: the deadline
            // op exercises the rate check, and stands for the idle timeout a worker without a
            // rate applies there.
            min_body_bytes: 1,
            shutting_down: false,
            service,
        }
    }

    /// The worker stops: its cache gives its blocks back to the pool. Its state, for the
    /// counters.
    fn finish(self) -> Shared {
        drop(self.cache);
        self.shared
    }
}

/// The fake socket and what went through it.
#[derive(Default)]
struct Harness {
    /// Bytes the peer sent that the server has not read yet.
    sock_in: VecDeque<u8>,
    /// Everything the peer sent.
    peer_sent: Vec<u8>,
    peer_eof: bool,
    /// Everything the server sent.
    wire: Vec<u8>,
    /// The core said to half-close.
    write_shut: bool,
    /// The connection was closed while output was pending.
    cut_allowed: bool,
    /// A received block the core could not take whole yet.
    leftover: Option<PoolBuf>,
    /// The driver has offered the core input (or asked it for a block to read into) at least
    /// once: until then the connection has received nothing.
    touched: bool,
    /// `Conn::ended` was called, as a driver does once the connection is released.
    ended: bool,
}

impl Harness {
    fn peer_send(&mut self, bytes: &[u8]) {
        if !self.peer_eof {
            self.sock_in.extend(bytes);
            self.peer_sent.extend_from_slice(bytes);
        }
    }

    /// The answer to the deferred exchange arrives, as a worker takes it from its mailbox.
    fn answer(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>) {
        let Some(p) = env.service.pending.take() else {
            // Nothing deferred: a wake-up for the upgraded connection, if there is one.
            if let Some(token) = env.service.up.token {
                if conn.resume(token, St::Idle) {
                    env.service.up.wakes_asked += 1;
                    self.step(conn, env);
                }
            }
            return;
        };
        // A connection that closed since drops it; one that waits runs on.
        let resumed = conn.resume(p.token, p.answer);
        assert!(
            !(resumed && p.void),
            "a token voided by answering at once resumed the exchange"
        );
        if resumed {
            self.step(conn, env);
        }
    }

    /// The deadline `timer_kind` names passes.
    fn deadline(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>) {
        let kind = conn.timer_kind();
        // Closing mid-exchange cuts the response in progress.
        let pending = !conn.is_idle();
        let fresh = !self.touched && !conn.is_closed();
        if fresh {
            assert_eq!(
                kind,
                TimerKind::Header,
                "a connection that has received nothing is not under the header deadline"
            );
        }
        let answers = conn.expire(env, kind);
        if fresh {
            // Not a byte came: there is no request to answer 408.
            assert!(
                !answers && conn.is_closed(),
                "a connection that never received a byte is answered at its deadline"
            );
        }
        if !answers {
            self.cut_allowed |= pending;
        }
    }

    /// What the driver does after an event: act on the decisions that need no event.
    fn step(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>) {
        if conn.is_closed() {
            return;
        }
        match conn.next(env) {
            Want::HalfClose => {
                self.write_shut = true;
                assert!(conn.next(env) != Want::Send, "output after the half-close");
            }
            Want::Send => assert!(!self.write_shut, "output after the half-close"),
            Want::Close(_) => assert!(conn.is_closed()),
            Want::Receive | Want::Discard | Want::Pool | Want::Wait => {}
        }
    }

    /// Once the connection is released, what a driver does next: `Conn::ended`, which tells
    /// the service of an unfinished exchange and drops its state.
    fn end_if_closed(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>) {
        if conn.is_closed() && !self.ended {
            conn.ended(&mut *env.service);
            self.ended = true;
        }
    }

    fn read(
        &mut self,
        conn: &mut Conn<St>,
        env: &mut Env<'_, QueueFreeList, Model>,
        max: usize,
        as_slice: bool,
    ) {
        // Bytes of a received block the core has not taken yet come before anything read now.
        if conn.is_closed() || self.leftover.is_some() {
            return;
        }
        match conn.next(env) {
            Want::Receive => {
                if self.sock_in.is_empty() {
                    if self.peer_eof {
                        // As a driver does on a read of 0: an upgraded connection's service
                        // is told and the connection runs on; a request the peer abandoned
                        // gets no whole response.
                        if let Some(reason) = conn.peer_eof(env) {
                            self.cut_allowed |= reason == CloseReason::PeerAborted;
                        }
                    } else {
                        conn.release_read_block();
                    }
                    return;
                }
                self.touched = true;
                if as_slice {
                    let Ok(space) = conn.read_space(env) else {
                        return;
                    };
                    let n = space.len().min(max).min(self.sock_in.len());
                    for (d, s) in space.iter_mut().zip(self.sock_in.drain(..n)) {
                        *d = s;
                    }
                    conn.received(n);
                } else {
                    let Ok(buf) = conn.read_buf(env) else {
                        return;
                    };
                    let n = buf.spare_capacity().min(max).min(self.sock_in.len());
                    let (front, back) = self.sock_in.as_slices();
                    let from_front = n.min(front.len());
                    buf.put_slice(&front[..from_front]);
                    buf.put_slice(&back[..n - from_front]);
                    self.sock_in.drain(..n);
                }
            }
            Want::Discard => {
                let n = self.sock_in.len().min(max);
                self.sock_in.drain(..n);
                if n == 0 && self.peer_eof {
                    conn.peer_closed();
                } else if n > 0 {
                    conn.discarded(n);
                }
            }
            _ => {}
        }
    }

    fn receive_block(
        &mut self,
        conn: &mut Conn<St>,
        env: &mut Env<'_, QueueFreeList, Model>,
        pool: &Pool<QueueFreeList>,
    ) {
        if conn.is_closed() {
            return;
        }
        let buf = match self.leftover.take() {
            Some(b) => b,
            None => {
                if self.sock_in.is_empty() {
                    return;
                }
                let Ok(mut b) = pool.get(SMALL_BLOCK) else {
                    return;
                };
                let n = b.spare_capacity().min(self.sock_in.len());
                let bytes: Vec<u8> = self.sock_in.drain(..n).collect();
                b.put_slice(&bytes);
                b
            }
        };
        self.touched = true;
        self.leftover = conn.receive_block(env, buf);
    }

    fn send(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>, limit: usize) {
        if conn.is_closed() || conn.next(env) != Want::Send {
            return;
        }
        assert!(!self.write_shut, "output after the half-close");
        let empty: &[u8] = &[];
        let mut slices = [IoSlice::new(empty); SEND_BLOCKS];
        let k = conn.output(&mut slices);
        assert!(k > 0, "Send with nothing to send");
        // A driver may queue the close behind the last response: nothing may follow it.
        let last = conn.closes_after_output();
        let queued: usize = slices[..k].iter().map(|s| s.len()).sum();
        let mut n = 0;
        for s in &slices[..k] {
            let take = if limit == 0 {
                s.len()
            } else {
                s.len().min(limit - n)
            };
            self.wire.extend_from_slice(&s[..take]);
            n += take;
            if limit != 0 && n == limit {
                break;
            }
        }
        assert_eq!(
            conn.front().as_ptr(),
            slices[0].as_ptr(),
            "front is not the first slice"
        );
        conn.sent(n);
        if last && n == queued {
            assert_eq!(
                conn.next(env),
                Want::Close(CloseReason::Done),
                "the last response sent, but the connection goes on"
            );
        }
    }

    /// The peer reads everything with its side still open, then ends its stream; the
    /// connection must end.
    fn finish(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>) {
        self.settle(conn, env);
        // A service that asked to close (from any of its calls) has had its response
        // complete by now: the connection closes by itself, without the peer's help.
        if env.service.asked_close && !conn.is_closed() {
            assert!(
                self.write_shut,
                "the service asked to close and the connection goes on"
            );
        }
        self.peer_eof = true;
        assert!(
            self.pump(conn, env, false),
            "the connection neither ends nor progresses"
        );
    }

    /// Runs the connection while it makes progress with the peer's side open: sends, reads
    /// what the peer sent, delivers the deferred answer.
    fn settle(&mut self, conn: &mut Conn<St>, env: &mut Env<'_, QueueFreeList, Model>) {
        self.pump(conn, env, true);
    }

    /// Runs the connection: with the peer's side open (`peer_open`), while there is something
    /// to do (output, what the peer sent, a deferred answer); after the peer's end, until the
    /// connection ends, which it must without waiting for the pool. Returns whether it ended.
    fn pump(
        &mut self,
        conn: &mut Conn<St>,
        env: &mut Env<'_, QueueFreeList, Model>,
        peer_open: bool,
    ) -> bool {
        for _ in 0..FINISH_STEPS {
            if conn.is_closed() {
                return true;
            }
            if let Some(b) = self.leftover.take() {
                self.leftover = conn.receive_block(env, b);
            }
            let input = !self.sock_in.is_empty() && self.leftover.is_none();
            match conn.next(env) {
                Want::Send => self.send(conn, env, 0),
                Want::Receive | Want::Discard if !peer_open || input => {
                    self.read(conn, env, usize::MAX, false);
                }
                Want::HalfClose => self.write_shut = true,
                Want::Wait if !peer_open || env.service.pending.is_some() => {
                    self.answer(conn, env);
                }
                Want::Pool if !peer_open => {
                    panic!("waits for the pool with every other block free")
                }
                Want::Close(_) => return true,
                _ => return false,
            }
        }
        false
    }
}

// ---- The client's view: what each request should get ----

/// What a request the client model understood should be answered with.
#[derive(Debug)]
struct Expect {
    head_only: bool,
    http10: bool,
    /// `None`: its body could not be framed by the model; only the form of its response is
    /// checked, and nothing after it.
    status: Option<u16>,
    /// The response body, where the route makes it known.
    body: Option<Vec<u8>>,
    /// The route closes the connection after its response: nothing follows it.
    closes: bool,
    /// A 500 may answer it: its route misuses the exchange or writes a whole body over the
    /// limit (or the model could not read its head, so does not know its route).
    may_500: bool,
    /// An upgrade request that may switch: where the new protocol's bytes start in what the
    /// peer sent, and whether it must switch (unless the connection is closing or the pool
    /// is dry). The requests after it are not the model's to read.
    upgrade: Option<UpgradeAt>,
}

/// See [`Expect::upgrade`].
#[derive(Debug, Clone, Copy)]
struct UpgradeAt {
    /// `None`: the model could not read the request's head.
    start: Option<usize>,
    sure: bool,
    /// A WebSocket (`/ws`), not the echo protocol (`/upgrade`).
    ws: bool,
}

/// Whether a request may switch to `protocol`, by the rules of
/// `Exchange::switch_protocols`: `Some(true)` it must, `Some(false)` it must not, `None`
/// where the model cannot tell (more than one `Upgrade` line: the engine reads the first).
fn switchable(req: &httparse::Request<'_, '_>, has_body: bool, protocol: &[u8]) -> Option<bool> {
    fn fields<'r>(
        req: &'r httparse::Request<'_, '_>,
        name: &'static str,
    ) -> impl Iterator<Item = &'r [u8]> {
        req.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .flat_map(|h| h.value.split(|&b| b == b','))
            .map(<[u8]>::trim_ascii)
    }
    let connection =
        |token: &[u8]| fields(req, "connection").any(|t| t.eq_ignore_ascii_case(token));
    let http11 = req.version == Some(1) && req.method != Some("HEAD");
    let offered = fields(req, "upgrade").any(|item| {
        let name = item.split(|&b| b == b'/').next().unwrap_or_default();
        name.eq_ignore_ascii_case(protocol)
    });
    let may = http11 && !has_body && !connection(b"close") && connection(b"upgrade") && offered;
    let upgrade_lines = req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("upgrade"))
        .count();
    match (may, upgrade_lines) {
        (true, 1) => Some(true),
        (false, 0 | 1) => Some(false),
        _ => None,
    }
}

/// Reads the requests in `input` as a client would have written them, with httparse (a parser
/// independent of the one under test) and a plain chunked reader. Stops at the first request
/// it cannot frame.
fn requests(mut input: &[u8], limits: &Limits) -> Vec<Expect> {
    let total = input.len();
    let mut out = Vec::new();
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        let head_len = match req.parse(input) {
            Ok(httparse::Status::Complete(n)) => n,
            // A head httparse does not take (or not yet): the server may think otherwise, so
            // its response is only checked for form.
            _ => {
                if input.iter().any(|b| !b.is_ascii_whitespace()) {
                    out.push(Expect {
                        head_only: input.trim_ascii_start().starts_with(b"HEAD "),
                        http10: false,
                        status: None,
                        body: None,
                        closes: false,
                        may_500: true,
                        // The engine may read it as an upgrade (`HTTP/1.2` is an HTTP/1.1
                        // request to it, not to httparse): what follows a `101` is unknown.
                        upgrade: Some(UpgradeAt {
                            start: None,
                            sure: false,
                            ws: false,
                        }),
                    });
                }
                return out;
            }
        };
        let method = req.method.unwrap_or("");
        let target = req.path.unwrap_or("");
        let http10 = req.version == Some(0);
        let (mut cl, mut te, mut framing_ok) = (None, None, true);
        for h in req.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                framing_ok &= cl.is_none();
                cl = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok());
                framing_ok &= cl.is_some() && h.value.iter().all(u8::is_ascii_digit);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                framing_ok &= te.is_none() && h.value.eq_ignore_ascii_case(b"chunked");
                te = Some(());
            }
        }
        framing_ok &= te.is_none() || (cl.is_none() && !http10);
        let star = method == "OPTIONS" && target == "*";
        let route = Route::of(path_of(target).as_bytes());
        let status = if star {
            200
        } else {
            route.status(method, limits)
        };
        let head_only = method == "HEAD";
        let mut e = Expect {
            head_only,
            http10,
            status: Some(status),
            body: None,
            closes: !star && route.closes(),
            may_500: status == 500,
            upgrade: None,
        };
        input = &input[head_len..];
        let has_body = te.is_some() || cl.is_some_and(|n| n > 0) || !framing_ok;
        if route == Route::Upgrade && !star {
            let may = switchable(&req, has_body, UP_PROTOCOL);
            if may != Some(false) {
                e.status = Some(101);
                e.upgrade = Some(UpgradeAt {
                    start: Some(total - input.len()),
                    sure: may == Some(true),
                    ws: false,
                });
                out.push(e);
                return out;
            }
        }
        if route == Route::Ws && !star {
            // A handshake the model reads as the adapter does switches; of any other it
            // knows only that the response is well-formed, and it reads no further.
            let field = |name: &str| {
                let mut it = req
                    .headers
                    .iter()
                    .filter(|h| h.name.eq_ignore_ascii_case(name));
                match (it.next(), it.next()) {
                    (Some(h), None) => Some(h.value),
                    _ => None,
                }
            };
            let handshake = method == "GET"
                && switchable(&req, has_body, b"websocket") == Some(true)
                && matches!(
                    (field("sec-websocket-key"), field("sec-websocket-version")),
                    (Some(k), Some(v)) if bufslab_ws::accept(k, v).is_ok()
                );
            e.status = handshake.then_some(101);
            e.upgrade = Some(UpgradeAt {
                start: handshake.then_some(total - input.len()),
                sure: handshake,
                ws: true,
            });
            out.push(e);
            return out;
        }
        let body = if !framing_ok {
            None
        } else if te.is_some() {
            dechunk(input)
        } else {
            let n = cl.unwrap_or(0);
            (n <= MAX_BODY && n as usize <= input.len())
                .then(|| (input[..n as usize].to_vec(), n as usize))
        };
        match body {
            Some((data, used)) if (data.len() as u64) <= MAX_BODY => {
                if !head_only && !star {
                    e.body = route.body(status, &data);
                }
                input = &input[used..];
                out.push(e);
            }
            _ => {
                e.status = None;
                out.push(e);
                return out;
            }
        }
    }
}

/// A chunked body at the start of `input`: the data and the bytes it took. `None` when it is
/// malformed or incomplete.
fn dechunk(input: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut data = Vec::new();
    let mut at = 0;
    loop {
        let line_end = at + input.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        let line = &input[at..line_end];
        let size_end = line.iter().position(|&b| b == b';').unwrap_or(line.len());
        let size = std::str::from_utf8(&line[..size_end]).ok()?;
        if size.is_empty() || size.len() > 8 || line.iter().any(|&b| b < 0x20 && b != b'\t') {
            return None;
        }
        let size = usize::from_str_radix(size, 16).ok()?;
        at = line_end + 2;
        if size == 0 {
            // Trailer fields: skip lines up to the empty one.
            loop {
                let end = at + input.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
                let empty = end == at;
                at = end + 2;
                if empty {
                    return Some((data, at));
                }
            }
        }
        data.extend_from_slice(input.get(at..at + size)?);
        at += size;
        if input.get(at..at + 2)? != b"\r\n" {
            return None;
        }
        at += 2;
    }
}

/// The path of a request-target, by RFC 3986's generic syntax: origin-form up to `?`; for
/// an absolute-form one (`scheme ":" ["//" authority] path`), its path, `/` when empty.
fn path_of(target: &str) -> &str {
    let t = match (target.starts_with('/'), target.split_once(':')) {
        (false, Some((_, rest))) => match rest.strip_prefix("//") {
            Some(h) => &h[h.find(['/', '?']).unwrap_or(h.len())..],
            None => rest,
        },
        _ => target,
    };
    match t.split('?').next() {
        Some("") | None => "/",
        Some(p) => p,
    }
}

// ---- The service under test ----

/// The sizes the engine's configuration sets, which the routes' outcomes depend on.
#[derive(Clone, Copy, Debug)]
struct Limits {
    /// `Config::whole_body_limit`: a larger body given whole is `TooLarge`.
    whole: usize,
    /// The most `Response::body_with` may write.
    with: usize,
    /// The block size of the pool's large class, its largest.
    large: usize,
}

/// Largest size a sized route (`/body/<n>`, ...) takes; beyond it, the path is not found.
const MAX_SIZE: usize = 40_000;

/// Bytes of the `/pull` body.
const PULL_LEN: usize = 5000;

/// The most request body `/rent-echo` takes (`Exchange::read_body_limited`): 413 beyond, so
/// less than [`MAX_BODY`].
const RENT_LIMIT: u64 = 2000;

/// The fixed bodies.
const HELLO: &[u8] = b"Hello, World!";
const CLOSING: &[u8] = b"closing";
const CLOSED_EARLY: &[u8] = b"closed early";
const NO_UPGRADE: &[u8] = b"no upgrade";

/// The protocol `/upgrade` switches to: every byte received is echoed, up to and including
/// the first `!`, where the service closes.
const UP_PROTOCOL: &[u8] = b"echo";
/// What the service writes on `Start`, on the peer's end and on the shutdown.
const UP_HELLO: &[u8] = b"[up]";
const UP_EOF: &[u8] = b"[eof]";
const UP_BYE: &[u8] = b"[bye]";

/// `/ws` delivers messages over this many bytes in fragments of it.
const WS_BUFFER: usize = 100;
/// `/ws`'s largest frame and message: beyond, close 1009.
const WS_LIMITS: WsLimits = WsLimits::new(3000, 5000);

/// How a route gives a body whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Whole {
    /// `Response::body`.
    Body,
    /// `Response::body_with`, written in place.
    With,
    /// A `StaticResponse` made for the request.
    Static,
}

/// What a route hands over as an owned body (`Response::body_owned`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owned {
    /// A `bytes::Bytes` of its own.
    Bytes,
    /// A slice of a `PoolBytes` value the service keeps, as a store keeps its values.
    Shared,
    /// A block rented with `Exchange::rent` and filled for the response.
    Rent,
}

/// Which of the service's calls asks to close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Close {
    /// `head`, before the response: its head says `Connection: close`.
    Head,
    /// `head`, after the response was written.
    After,
    /// `data`, with the response written whole there (the rest of the body is not read).
    Data,
    /// `end`, after the body was echoed.
    End,
    /// `resume`, after the deferred answer was written.
    Resume,
    /// `fill`, at the first part of a pulled body.
    Fill,
}

/// The service's routes, by path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Plaintext,
    Json,
    Stats,
    /// `POST /echo`.
    Echo,
    Defer,
    /// Defers, then answers at once in the same call (the token is void).
    DeferNow,
    Pull,
    Fail,
    /// `/body/<n>`, `/with/<n>`, `/static/<n>`: `n` bytes given whole.
    Whole(Whole, usize),
    /// `/owned/bytes/<n>`, `/owned/shared/<n>`, `/owned/rent/<n>`.
    Owned(Owned, usize),
    /// The body collected into a rented block, sent back owned.
    RentEcho,
    /// `/close-head`, `/close-after`, `/close-data`, `/close-end`, `/close-resume`,
    /// `/close-fill`.
    Close(Close),
    /// `/upgrade`: switched to [`UP_PROTOCOL`] where the request allows, else 426.
    Upgrade,
    /// `/ws`: a WebSocket echo (`bufslab_server::ws`), or the adapter's refusal.
    Ws,
    NotFound,
}

/// A route with a size in its path: the path's prefix, the largest size, the route of a size.
type SizedRoute = (&'static [u8], usize, fn(usize) -> Route);

impl Route {
    /// The route of a path, as both the service (from the engine's parse) and the client
    /// model (from httparse's) read it.
    fn of(path: &[u8]) -> Route {
        match path {
            b"/plaintext" => return Route::Plaintext,
            b"/json" => return Route::Json,
            b"/stats" => return Route::Stats,
            b"/echo" => return Route::Echo,
            b"/defer" => return Route::Defer,
            b"/defer-now" => return Route::DeferNow,
            b"/pull" => return Route::Pull,
            b"/fail" => return Route::Fail,
            b"/rent-echo" => return Route::RentEcho,
            b"/close-head" => return Route::Close(Close::Head),
            b"/close-after" => return Route::Close(Close::After),
            b"/close-data" => return Route::Close(Close::Data),
            b"/close-end" => return Route::Close(Close::End),
            b"/close-resume" => return Route::Close(Close::Resume),
            b"/close-fill" => return Route::Close(Close::Fill),
            b"/upgrade" => return Route::Upgrade,
            b"/ws" => return Route::Ws,
            _ => {}
        }
        let sized: [SizedRoute; 6] = [
            (b"/body/", MAX_SIZE, |n| Route::Whole(Whole::Body, n)),
            (b"/with/", MAX_SIZE, |n| Route::Whole(Whole::With, n)),
            (b"/static/", MAX_SIZE, |n| Route::Whole(Whole::Static, n)),
            (b"/owned/bytes/", MAX_SIZE, |n| {
                Route::Owned(Owned::Bytes, n)
            }),
            // One small block holds these, so that only a dry pool refuses them.
            (b"/owned/shared/", SMALL_BLOCK, |n| {
                Route::Owned(Owned::Shared, n)
            }),
            (b"/owned/rent/", SMALL_BLOCK, |n| {
                Route::Owned(Owned::Rent, n)
            }),
        ];
        for (prefix, max, route) in sized {
            if let Some(digits) = path.strip_prefix(prefix) {
                let n = (!digits.is_empty() && digits.len() <= 5)
                    .then(|| {
                        digits.iter().try_fold(0usize, |n, &d| {
                            d.is_ascii_digit().then(|| n * 10 + usize::from(d - b'0'))
                        })
                    })
                    .flatten();
                return match n {
                    Some(n) if n <= max => route(n),
                    _ => Route::NotFound,
                };
            }
        }
        Route::NotFound
    }

    /// The status it answers a well-formed request with.
    fn status(self, method: &str, limits: &Limits) -> u16 {
        let get = matches!(method, "GET" | "HEAD");
        match self {
            Route::Plaintext | Route::Json | Route::Stats if get => 200,
            Route::Echo if method == "POST" => 200,
            Route::Plaintext | Route::Json | Route::Stats | Route::Echo => 405,
            Route::Fail => 500,
            Route::Upgrade => 426,
            Route::Whole(w, n) if n > w.limit(limits) => 500,
            Route::NotFound => 404,
            _ => 200,
        }
    }

    /// The body it answers a request with body `req` (not a HEAD) and `status`; `None` where
    /// it is not known.
    fn body(self, status: u16, req: &[u8]) -> Option<Vec<u8>> {
        let b: &[u8] = match (self, status) {
            (_, 405) => b"no",
            (_, 404) => b"Not Found",
            (_, 500) => return None,
            (Route::Plaintext | Route::Json | Route::Stats, _) => HELLO,
            (Route::Echo | Route::Close(Close::End) | Route::RentEcho, _) => req,
            (Route::Defer | Route::Close(Close::Resume), _) => b"later",
            (Route::DeferNow, _) => b"now",
            (Route::Pull | Route::Close(Close::Fill), _) => return Some(vec![b'p'; PULL_LEN]),
            (Route::Whole(w, n), _) => pattern(w.offset(), n),
            (Route::Owned(o, n), _) => pattern(o.offset(), n),
            (Route::Close(Close::Head | Close::After), _) => CLOSING,
            (Route::Close(Close::Data), _) => CLOSED_EARLY,
            (Route::Upgrade, _) => NO_UPGRADE,
            // Read no further than its head (see `requests`).
            (Route::Ws, _) => return None,
            (Route::Fail | Route::NotFound, _) => return None,
        };
        Some(b.to_vec())
    }

    /// Nothing is answered after its response.
    fn closes(self) -> bool {
        matches!(self, Route::Close(_))
    }
}

impl Whole {
    fn limit(self, limits: &Limits) -> usize {
        match self {
            Whole::Body | Whole::Static => limits.whole,
            Whole::With => limits.with,
        }
    }

    fn offset(self) -> usize {
        match self {
            Whole::Body => 0,
            Whole::With => 1,
            Whole::Static => 2,
        }
    }
}

impl Owned {
    fn offset(self) -> usize {
        match self {
            Owned::Bytes => 3,
            Owned::Shared => 4,
            Owned::Rent => 5,
        }
    }
}

/// `n` bytes of a fixed pseudo-random text from `offset`: each sized route reads from its own
/// offset, so a body sent by another route, or shifted, or cut and spliced, differs.
fn pattern(offset: usize, n: usize) -> &'static [u8] {
    static TEXT: OnceLock<Box<[u8]>> = OnceLock::new();
    let text = TEXT.get_or_init(|| {
        let mut x: u32 = 0x9e37_79b9;
        (0..MAX_SIZE + 8)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                b"abcdefghijklmnopqrstuvwxyz0123456789"[(x % 36) as usize]
            })
            .collect()
    });
    text.get(offset..offset + n).unwrap_or_default()
}

/// The service under test, one of every kind the API allows. Its routes (see [`Route`]):
/// * GET (or HEAD) `/plaintext`, `/json` (written in place) and `/stats` answer 200 with a
///   fixed body at once; other methods 405;
/// * `POST /echo` sends the body back as it arrives (of the request's length, or chunked, its
///   head held until the first data); other methods 405;
/// * `/defer` answers later: the script's answer event (or the end of the script) delivers it,
///   unless the connection closed first; `/defer-now` defers and answers at once in the same
///   call, which voids the token (an answer sent with it must not resume anything);
/// * `/pull` streams a body of [`PULL_LEN`] bytes pulled as the output drains;
/// * `/fail` misuses the exchange (sets `Content-Length` itself), which the engine answers 500;
/// * `/body/<n>`, `/with/<n>`, `/static/<n>`: `n` bytes of [`pattern`] given whole (`body`,
///   `body_with`, a `StaticResponse`), then a `pull` that must do nothing; over the whole-body
///   limit each must be refused `TooLarge` (the engine answers 500), within it accepted;
/// * `/owned/bytes/<n>`, `/owned/shared/<n>`, `/owned/rent/<n>`: `n` bytes handed over owned
///   (a `Bytes`; a slice of a value kept frozen in a pooled block; a block rented with
///   `Exchange::rent`);
/// * `/rent-echo` rents a block in `head`, keeps it in its state while the body (at most
///   [`RENT_LIMIT`] bytes, `read_body_limited`) is collected into it, and sends it back owned
///   from `end`: a connection that ends meanwhile must drop that state (`Conn::ended`);
/// * `/close-head`, `/close-after`, `/close-data`, `/close-end`, `/close-resume`,
///   `/close-fill` call `Exchange::close` from `head` (before and after the response),
///   `data`, `end`, `resume` and `fill`;
/// * `/upgrade` switches to [`UP_PROTOCOL`] (greeting, echo up to the first `!`, goodbye), or
///   answers 426 offering it where the request cannot switch;
/// * `/ws` is a WebSocket echo through `bufslab_server::ws` (its refusals are the adapter's);
/// * any other path 404.
///
/// A block it cannot rent (the pool is dry) it answers 503 and closes. Every call's outcome is
/// checked ([`Model::outcome`]).
struct Model {
    limits: Limits,
    /// The exchange deferred last, for the script to answer.
    pending: Option<Pending>,
    /// The value `/owned/shared/<n>` answers slices of, frozen in a pooled block.
    store: Option<PoolBytes>,
    /// Refusals for want of a block, each checked to have found the pool truly dry: the most
    /// 503s the client may see.
    dry: usize,
    /// The service called `Exchange::close`.
    asked_close: bool,
    /// `Service::aborted` calls.
    aborted: usize,
    /// What the upgraded connection's service did, for the checker.
    up: UpRecord,
}

/// What the service of the upgraded connection did.
#[derive(Default, Debug)]
struct UpRecord {
    /// The `101` was written whole.
    switched: bool,
    started: bool,
    /// Its token, for the script's wake-ups.
    token: Option<Deferred>,
    /// A write was refused for want of a block (on `/upgrade`, checked to be so): the service
    /// closed there.
    refused: bool,
    /// It closed at a `!`.
    bang: bool,
    /// It wrote its goodbye on the peer's end, or on the shutdown.
    eof: bool,
    bye: bool,
    /// `Shutdown` came.
    shutdown: bool,
    /// It called `Upgraded::close`: no event may follow.
    closed: bool,
    wakes_asked: usize,
    wakes: usize,
    /// `upgrade_ended` was called.
    ended: bool,
    /// The code `WsHandler::closed` was told.
    ws_closed: Option<CloseCode>,
    /// A frame the WebSocket adapter owed found the pool dry: it failed the connection.
    owed_refused: bool,
    /// The switch was to a WebSocket.
    ws: bool,
}

/// A deferred exchange's token and the answer the script delivers for it.
struct Pending {
    token: Deferred,
    answer: St,
    /// The exchange was answered at once in the call that deferred: the token is void.
    void: bool,
}

/// Where a request is between the model's calls.
#[derive(Default, Debug)]
enum St {
    #[default]
    Idle,
    /// Echoing the body; `started`: the response head is written; `close_end`: close from
    /// `end`.
    Echo { started: bool, close_end: bool },
    /// `/close-data`; `answered`: the response is written and the close asked.
    CloseData { answered: bool },
    /// Waiting for the deferred answer.
    Deferred,
    /// A deferred exchange's answer.
    Answer { close: bool },
    /// A pulled body with `left` bytes to go.
    Pull { left: usize, close: bool },
    /// `/rent-echo`: the body so far, in a rented block.
    RentEcho { buf: PoolBuf },
    /// Switched to [`UP_PROTOCOL`].
    Upgraded,
    /// A WebSocket.
    Ws(Box<WebSocket>),
}

/// What the model expects of one of its calls.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expected {
    /// Success (or `NoRoom` with the pool dry).
    Ok,
    /// The misuse it makes on purpose: a reserved header.
    Reserved,
    /// A whole body over the limit.
    TooLarge,
}

impl Model {
    fn new(limits: Limits) -> Model {
        Model {
            limits,
            pending: None,
            store: None,
            dry: 0,
            asked_close: false,
            aborted: 0,
            up: UpRecord::default(),
        }
    }

    /// Checks the outcome of one call that may need `need` bytes of output room at once
    /// against what the model expects of it; `true` when it succeeded.
    fn outcome(
        &mut self,
        ex: &Exchange<'_>,
        r: Result<(), ResponseError>,
        need: usize,
        expected: Expected,
        what: &str,
    ) -> bool {
        match (r, expected) {
            (Ok(()), Expected::Ok) => return true,
            (Err(ResponseError::NoRoom), Expected::Ok | Expected::Reserved) => {
                self.check_dry(ex, need, what);
            }
            (Err(ResponseError::ReservedHeader), Expected::Reserved)
            | (Err(ResponseError::TooLarge { .. }), Expected::TooLarge) => {}
            (r, _) => panic!("{what}: {r:?}, and the model expected otherwise"),
        }
        false
    }

    /// A call was refused `NoRoom`: only a dry pool may be why. Asks the pool, through the
    /// exchange as the engine's own writes do, for the block the call needed: a get that fails
    /// changes nothing, and one that succeeds shows the refusal had another cause (a full
    /// output queue, say).
    fn check_dry(&mut self, ex: &Exchange<'_>, need: usize, what: &str) {
        assert!(
            need <= self.limits.large,
            "{what}: NoRoom for room of {need} bytes, more than any block holds"
        );
        // The head's first lines go into a small block; a larger room into one of its own.
        let dry = ex.rent(SMALL_BLOCK).is_none() || (need > SMALL_BLOCK && ex.rent(need).is_none());
        assert!(dry, "{what}: NoRoom with a block of {need} bytes to be had");
        self.dry += 1;
    }

    /// No block to rent: the pool is dry (the get just failed). Answered 503, closing.
    fn no_block(&mut self, ex: &mut Exchange<'_>) {
        self.dry += 1;
        self.close(ex);
        let r = ex.respond(503).body(b"no block");
        self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "503");
    }

    fn close(&mut self, ex: &mut Exchange<'_>) {
        ex.close();
        self.asked_close = true;
    }

    fn whole(&mut self, ex: &mut Exchange<'_>, w: Whole, n: usize) {
        let body = pattern(w.offset(), n);
        let (r, need) = match w {
            Whole::Body => (ex.respond(200).body(body), SMALL_BLOCK),
            Whole::With => (
                ex.respond(200)
                    .body_with(n, |out| std::io::Write::write_all(out, body)),
                n + HEAD_END,
            ),
            Whole::Static => {
                let Ok(r) = StaticResponse::new(
                    200,
                    &[(KnownHeader::ContentType, b"application/octet-stream")],
                    body,
                ) else {
                    panic!("a valid static response");
                };
                // A small block: the whole response's one piece of room where it is small,
                // else the first of the pieces it goes out in (`send_static`).
                (ex.send_static(&r), SMALL_BLOCK)
            }
        };
        let expected = if n > w.limit(&self.limits) {
            Expected::TooLarge
        } else {
            Expected::Ok
        };
        if self.outcome(ex, r, need, expected, "whole body") {
            // Nothing to pull from a complete response.
            assert!(ex.pull().is_ok(), "pull on a complete response refused");
        }
    }

    fn owned(&mut self, ex: &mut Exchange<'_>, o: Owned, n: usize) {
        let body = pattern(o.offset(), n);
        let r = match o {
            Owned::Bytes => ex.respond(200).body_owned(Bytes::copy_from_slice(body)),
            Owned::Shared => {
                if self.store.is_none() {
                    let Some(mut b) = ex.rent(SMALL_BLOCK) else {
                        return self.no_block(ex);
                    };
                    let k = b.spare_capacity().min(SMALL_BLOCK);
                    b.put_slice(pattern(o.offset(), k));
                    self.store = Some(b.freeze());
                }
                match self.store.as_ref().filter(|s| s.len() >= n) {
                    Some(s) => ex.respond(200).body_owned(s.slice(..n)),
                    None => panic!("the store holds a small block"),
                }
            }
            Owned::Rent => {
                let Some(mut b) = ex.rent(n) else {
                    return self.no_block(ex);
                };
                if b.spare_capacity() < n {
                    panic!("a rented block smaller than asked");
                }
                b.put_slice(body);
                ex.respond(200).body_owned(b)
            }
        };
        self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "owned body");
    }

    /// Starts an echo: the body is written back as it arrives.
    fn echo(&mut self, ex: &mut Exchange<'_>, framing: BodyFraming, st: &mut St, close_end: bool) {
        ex.read_body();
        let started = match framing {
            // The head waits for the first data.
            BodyFraming::Chunked => false,
            BodyFraming::Length(n) => {
                let r = ex.respond(200).stream(n);
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "echo head");
                true
            }
            _ => {
                let r = ex.respond(200).body(b"");
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "empty echo");
                true
            }
        };
        *st = St::Echo { started, close_end };
    }

    fn defer(&mut self, ex: &mut Exchange<'_>, st: &mut St, close: bool) {
        match ex.defer() {
            Ok(token) => {
                *st = St::Deferred;
                self.pending = Some(Pending {
                    token,
                    answer: St::Answer { close },
                    void: false,
                });
            }
            Err(e) => panic!("defer refused: {e}"),
        }
    }
}

impl Service for Model {
    type State = St;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, st: &mut St) {
        let get = matches!(req.method(), Method::Get | Method::Head);
        let post = req.method() == Method::Post;
        match Route::of(req.path()) {
            Route::Plaintext | Route::Stats if get => {
                let r = ex.respond(200).body(HELLO);
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "plaintext");
            }
            // The same body, written in place.
            Route::Json if get => {
                let r = ex
                    .respond(200)
                    .body_with(64, |w| std::io::Write::write_all(w, HELLO));
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "json");
            }
            Route::Echo if post => self.echo(ex, req.framing(), st, false),
            Route::Plaintext | Route::Json | Route::Stats | Route::Echo => {
                let r = ex
                    .respond(405)
                    .header(KnownHeader::Allow, b"GET")
                    .body(b"no");
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "405");
            }
            Route::Defer => self.defer(ex, st, false),
            Route::Close(Close::Resume) => self.defer(ex, st, true),
            Route::DeferNow => {
                // Handing the work over "failed": answered at once, the token is void.
                let token = match ex.defer() {
                    Ok(t) => t,
                    Err(e) => panic!("defer refused: {e}"),
                };
                let r = ex.respond(200).body(b"now");
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "answer after defer");
                self.pending = Some(Pending {
                    token,
                    answer: St::Answer { close: false },
                    void: true,
                });
            }
            route @ (Route::Pull | Route::Close(Close::Fill)) => {
                *st = St::Pull {
                    left: PULL_LEN,
                    close: route == Route::Close(Close::Fill),
                };
                let r = ex
                    .respond(200)
                    .stream(PULL_LEN as u64)
                    .and_then(|()| ex.pull());
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "pull");
            }
            Route::Fail => {
                let r = ex
                    .respond(200)
                    .header(KnownHeader::ContentLength, b"1")
                    .body(b"x");
                self.outcome(ex, r, SMALL_BLOCK, Expected::Reserved, "fail");
            }
            Route::Whole(w, n) => self.whole(ex, w, n),
            Route::Owned(o, n) => self.owned(ex, o, n),
            Route::RentEcho => match ex.rent(RENT_LIMIT as usize) {
                Some(buf) => {
                    ex.read_body_limited(RENT_LIMIT);
                    *st = St::RentEcho { buf };
                }
                None => self.no_block(ex),
            },
            Route::Close(Close::Head) => {
                self.close(ex);
                let r = ex.respond(200).body(CLOSING);
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "close-head");
            }
            Route::Close(Close::After) => {
                let r = ex.respond(200).body(CLOSING);
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "close-after");
                self.close(ex);
            }
            Route::Close(Close::Data) => {
                ex.read_body();
                *st = St::CloseData { answered: false };
            }
            Route::Close(Close::End) => self.echo(ex, req.framing(), st, true),
            Route::Upgrade => match ex.switch_protocols(req, UP_PROTOCOL) {
                Ok(switch) => {
                    let r = switch.header_raw(b"x-echo-version", b"1").switch();
                    if self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "101") {
                        self.up.switched = true;
                        *st = St::Upgraded;
                    }
                }
                Err(_) => {
                    let r = ex.respond(426).offer_upgrade(UP_PROTOCOL).body(NO_UPGRADE);
                    self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "426");
                }
            },
            Route::Ws => {
                let cfg = WsConfig::default()
                    .with_limits(WS_LIMITS)
                    .with_buffer(WS_BUFFER);
                // A handshake refused has its response written by the adapter.
                if let Ok(ws) = WebSocket::accept(req, ex, cfg) {
                    self.up.switched = true;
                    self.up.ws = true;
                    *st = St::Ws(Box::new(ws));
                }
            }
            Route::NotFound => {
                let r = ex.respond(404).body(b"Not Found");
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "404");
            }
        }
    }

    fn data(&mut self, data: &[u8], ex: &mut Exchange<'_>, st: &mut St) {
        match st {
            St::Echo { started, .. } => {
                if !*started {
                    *started = true;
                    let r = ex.respond(200).chunked();
                    self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "chunked echo head");
                }
                // A piece is at most `write_room`: writing it never needs a block.
                let r = ex.write(data);
                self.outcome(ex, r, 0, Expected::Ok, "echo write");
            }
            St::CloseData { answered } => {
                assert!(
                    !*answered,
                    "data after a response completed with close() asked"
                );
                *answered = true;
                self.close(ex);
                let r = ex.respond(200).body(CLOSED_EARLY);
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "close-data");
            }
            St::RentEcho { buf } => {
                assert!(
                    buf.len() + data.len() <= RENT_LIMIT as usize,
                    "more body than read_body_limited allows"
                );
                let n = data.len().min(buf.spare_capacity());
                buf.put_slice(&data[..n]);
            }
            other => panic!("data for {other:?}"),
        }
    }

    fn end(&mut self, ex: &mut Exchange<'_>, st: &mut St) {
        match st {
            St::Echo { started, close_end } => {
                let mut ok = true;
                if !*started {
                    let r = ex.respond(200).chunked();
                    ok = self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "chunked echo head");
                }
                if ok {
                    let r = ex.finish();
                    // With no data the last chunk may need the room the head left.
                    if self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "echo finish") {
                        assert_eq!(ex.body_left(), Some(0), "echo complete, body left");
                    }
                }
                if *close_end {
                    self.close(ex);
                }
            }
            St::CloseData { answered } => {
                if !*answered {
                    *answered = true;
                    self.close(ex);
                    let r = ex.respond(200).body(CLOSED_EARLY);
                    self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "close-data at end");
                }
            }
            St::RentEcho { .. } => {
                let St::RentEcho { buf } = std::mem::take(st) else {
                    return;
                };
                let r = ex.respond(200).body_owned(buf);
                self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "rent-echo");
            }
            other => panic!("end for {other:?}"),
        }
    }

    fn resume(&mut self, ex: &mut Exchange<'_>, st: &mut St) {
        let St::Answer { close } = *st else {
            panic!("resumed with {st:?}");
        };
        let r = ex.respond(200).body(b"later");
        self.outcome(ex, r, SMALL_BLOCK, Expected::Ok, "deferred answer");
        if close {
            self.close(ex);
        }
    }

    fn fill(&mut self, ex: &mut Exchange<'_>, st: &mut St) {
        let St::Pull { left, close } = st else {
            panic!("filled without a pulled body: {st:?}");
        };
        if *close {
            self.close(ex);
        }
        // Odd pieces, so that parts end anywhere in a block.
        let n = (*left).min(ex.write_room()).min(1777);
        *left -= n;
        let r = ex.write(&[b'p'; 1777][..n]);
        self.outcome(ex, r, 0, Expected::Ok, "fill");
    }

    fn aborted(&mut self, st: &mut St) {
        self.aborted += 1;
        assert!(self.aborted == 1, "aborted twice");
        assert!(
            !matches!(st, St::Idle),
            "aborted with no exchange in flight"
        );
    }

    fn upgraded(&mut self, event: UpgradeEvent<'_>, up: &mut Upgraded<'_>, st: &mut St) {
        // What the engine promises every upgraded service, then the protocol's own.
        assert!(!self.up.closed && !up.is_closing(), "{event:?} after close");
        assert!(
            self.up.started || matches!(event, UpgradeEvent::Start),
            "{event:?} before Start"
        );
        match &event {
            UpgradeEvent::Start => {
                assert!(!self.up.started, "Start twice");
                self.up.started = true;
                self.up.token = Some(up.token());
            }
            UpgradeEvent::Data(_) => assert_eq!(up.queued(), 0, "Data with output queued"),
            UpgradeEvent::Wake => {
                assert!(
                    self.up.wakes < self.up.wakes_asked,
                    "Wake without a wake-up"
                );
                self.up.wakes += 1;
            }
            UpgradeEvent::Shutdown | UpgradeEvent::PeerClosed => {}
        }
        match st {
            St::Ws(ws) => {
                self.up.shutdown |= matches!(event, UpgradeEvent::Shutdown);
                let peer_closed = matches!(event, UpgradeEvent::PeerClosed);
                let told = self.up.ws_closed;
                ws.on_event(event, up, &mut WsEcho { rec: &mut self.up });
                // `1006` from anything but the peer's end: a frame the adapter owed (a pong, a
                // close) found no room, which only a dry pool may cause here (a `Data` event
                // comes with the output queue empty, and one receive block's echo cannot fill
                // it). The block of a message the adapter was gathering goes back as the
                // connection fails (before a close frame, which may then use it; after a
                // refused pong): at most that one is to be had now.
                if told.is_none() && self.up.ws_closed == Some(CloseCode::ABNORMAL) && !peer_closed
                {
                    let one = up.rent(SMALL_BLOCK);
                    assert!(
                        one.is_none() || up.rent(SMALL_BLOCK).is_none(),
                        "a frame the adapter owed was dropped with blocks to be had"
                    );
                    self.up.owed_refused = true;
                }
            }
            St::Upgraded => self.echo_event(event, up),
            other => panic!("{event:?} for {other:?}"),
        }
    }

    fn upgrade_ended(&mut self, st: &mut St) {
        assert!(!self.up.ended, "upgrade_ended twice");
        self.up.ended = true;
        match st {
            St::Ws(ws) => ws.ended(&mut WsEcho { rec: &mut self.up }),
            St::Upgraded => {}
            other => panic!("upgrade_ended for {other:?}"),
        }
    }
}

impl Model {
    /// `/upgrade`'s protocol: a greeting, the echo up to the first `!`, a goodbye.
    fn echo_event(&mut self, event: UpgradeEvent<'_>, up: &mut Upgraded<'_>) {
        match event {
            UpgradeEvent::Start => {
                self.up_write(up, UP_HELLO);
            }
            UpgradeEvent::Data(data) => {
                assert!(!data.is_empty(), "Data of no bytes");
                let (echo, bang) = match data.iter().position(|&b| b == b'!') {
                    Some(p) => (&data[..=p], true),
                    None => (&data[..], false),
                };
                if self.up_write(up, echo) && bang {
                    self.up.bang = true;
                    self.up_close(up);
                }
            }
            UpgradeEvent::PeerClosed => {
                self.up.eof = self.up_write(up, UP_EOF);
            }
            UpgradeEvent::Shutdown => {
                assert!(!self.up.shutdown, "Shutdown twice");
                self.up.shutdown = true;
                self.up.bye = self.up_write(up, UP_BYE);
                if !self.up.closed {
                    self.up_close(up);
                }
            }
            UpgradeEvent::Wake => {
                assert_eq!(up.queued(), 0, "Wake with output queued");
            }
        }
    }

    /// Writes `data` on the upgraded connection by one of the four ways `Upgraded` offers
    /// (chosen by its length): whole, in two pieces, as an owned `Bytes`, as a rented block.
    /// A refusal must come from a dry pool (checked); the service then closes. `true` when
    /// the bytes were queued.
    fn up_write(&mut self, up: &mut Upgraded<'_>, data: &[u8]) -> bool {
        assert!(
            data.len() <= up.write_room(),
            "a write of {} bytes, {} of room with nothing queued",
            data.len(),
            up.write_room()
        );
        let r = match data.len() % 4 {
            0 => up.write(data),
            1 => {
                let (a, b) = data.split_at(data.len() / 2);
                up.write_vectored(&[a, b])
            }
            2 => up.write_owned(Bytes::copy_from_slice(data)),
            _ => match up.rent(data.len()) {
                Some(mut b) => {
                    b.put_slice(data);
                    up.write_owned(b)
                }
                None => Err(WriteError::NoRoom),
            },
        };
        match r {
            Ok(()) => true,
            Err(WriteError::NoRoom) => {
                let need = data.len().clamp(SMALL_BLOCK, self.limits.large);
                assert!(
                    up.rent(SMALL_BLOCK).is_none() || up.rent(need).is_none(),
                    "write of {} bytes: NoRoom with blocks to be had",
                    data.len()
                );
                self.up.refused = true;
                self.up_close(up);
                false
            }
            Err(e) => panic!("write refused: {e}"),
        }
    }

    fn up_close(&mut self, up: &mut Upgraded<'_>) {
        up.close();
        self.up.closed = true;
        self.asked_close = true;
    }
}

/// Checks the bytes the server sent against the requests the peer sent: `dry` is how many
/// refusals for want of a block the service saw, each checked to have found the pool dry;
/// `up`, what the service of an upgraded connection did.
fn check(
    peer_sent: &[u8],
    mut wire: &[u8],
    cut_allowed: bool,
    dry: usize,
    limits: &Limits,
    up: &UpRecord,
) {
    let expected = requests(peer_sent, limits);
    let mut i = 0;
    let mut unavailable = 0;
    while !wire.is_empty() {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut resp = httparse::Response::new(&mut headers);
        let head_len = match resp.parse(wire) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if cut_allowed => return,
            other => panic!("malformed response {i}: {other:?} in {:?}", show(wire)),
        };
        let status = resp.code.unwrap_or(0);
        let exp = expected.get(i);
        let (mut cl, mut chunked, mut close) = (None, false, false);
        let (mut offers_upgrade, mut upgrade) = (false, None);
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                cl = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.parse::<usize>().ok());
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = h.value == b"chunked";
            } else if h.name.eq_ignore_ascii_case("connection") {
                let options = || h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii);
                close = options().any(|o| o == b"close");
                offers_upgrade = options().any(|o| o == b"upgrade");
            } else if h.name.eq_ignore_ascii_case("upgrade") {
                upgrade = Some(h.value);
            }
        }
        wire = &wire[head_len..];
        if status == 101 {
            let Some(at) = exp.and_then(|e| e.upgrade) else {
                panic!("response {i}: 101 to a request that cannot switch");
            };
            assert!(
                up.switched,
                "response {i}: a 101 the service did not finish"
            );
            let field = |name: &str| {
                resp.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| h.value)
            };
            assert_eq!(
                field("connection"),
                Some(&b"upgrade"[..]),
                "the 101's Connection"
            );
            // A request the model could not read (an `HTTP/1.2` one, say) was switched to
            // whichever protocol its route names: what follows is not the model's to check.
            let Some(start) = at.start else {
                return;
            };
            if at.ws {
                assert_eq!(upgrade, Some(&b"websocket"[..]), "the 101's Upgrade");
                assert!(
                    field("sec-websocket-accept").is_some(),
                    "no Sec-WebSocket-Accept"
                );
                check_ws_stream(&peer_sent[start..], wire, cut_allowed, up);
                return;
            }
            assert_eq!(upgrade, Some(UP_PROTOCOL), "the 101's Upgrade");
            assert_eq!(
                field("x-echo-version"),
                Some(&b"1"[..]),
                "the service's header"
            );
            check_stream(&peer_sent[start..], wire, cut_allowed, up);
            return;
        }
        if let Some(at) = exp.and_then(|e| e.upgrade) {
            // Not switched: refused for want of a block (a 503, below), or 426 because the
            // connection closes after this response (the server is shutting down).
            assert!(
                !up.switched || at.start.is_none(),
                "response {i}: switched, and answered {status}"
            );
            if status == 426 {
                assert!(
                    close || !at.sure,
                    "response {i}: a request that may switch refused, the connection kept"
                );
                return;
            }
        }
        if status == 426 && !exp.is_some_and(|e| e.http10) {
            // RFC 9110 §15.5.22 and §7.8: the protocols, marked hop-by-hop.
            assert_eq!(
                upgrade,
                Some(UP_PROTOCOL),
                "response {i}: a 426 without Upgrade"
            );
            assert!(
                offers_upgrade,
                "response {i}: Upgrade without Connection: upgrade"
            );
        }
        if (100..200).contains(&status) {
            assert!(
                !exp.is_some_and(|e| e.http10),
                "a 1xx to an HTTP/1.0 request"
            );
            continue;
        }
        let refused = status >= 400 && close && Some(status) != exp.and_then(|e| e.status);
        let body = if exp.is_some_and(|e| e.head_only) && !refused {
            Vec::new()
        } else if chunked {
            match dechunk(wire) {
                Some((data, used)) => {
                    wire = &wire[used..];
                    data
                }
                None if cut_allowed => return,
                None => panic!("malformed chunked response {i}: {:?}", show(wire)),
            }
        } else {
            let Some(n) = cl else {
                panic!("response {i} without framing")
            };
            if refused && exp.is_some_and(|e| e.head_only) && wire.is_empty() {
                Vec::new()
            } else if n > wire.len() {
                assert!(cut_allowed, "response {i} cut short: {:?}", show(wire));
                return;
            } else {
                let b = wire[..n].to_vec();
                wire = &wire[n..];
                b
            }
        };
        if refused {
            // A refusal the engine may make of any request (408, 413, or a framing the model
            // took for fine); a 500 only where the route may fail; a 503 only as often as the
            // pool was found dry; any other only to a request the model could not read.
            // Nothing follows.
            match status {
                400 | 408 | 413 | 414 | 417 | 431 | 501 | 505 => {}
                500 => assert!(
                    exp.is_some_and(|e| e.may_500),
                    "response {i}: 500 to a request its route answers"
                ),
                503 => {
                    unavailable += 1;
                    assert!(
                        unavailable <= dry,
                        "response {i}: 503 without the pool found dry"
                    );
                }
                // The model could not read this request: its status is the engine's to say.
                _ if exp.and_then(|e| e.status).is_none() => {}
                _ => panic!("response {i}: refused with {status}"),
            }
            assert!(wire.is_empty(), "bytes after a refusal: {:?}", show(wire));
            return;
        }
        let Some(e) = exp else {
            panic!("response {i} ({status}) to no request");
        };
        let Some(want) = e.status else {
            // The model could not frame this request; its response was well-formed.
            return;
        };
        assert_eq!(status, want, "response {i} out of order or misrouted");
        if let Some(b) = &e.body {
            assert!(
                &body == b,
                "body {i} differs: {:?}, wanted {:?}",
                show(&body),
                show(b)
            );
        }
        if close {
            assert!(wire.is_empty(), "bytes after Connection: close");
        }
        if e.closes {
            assert!(
                wire.is_empty(),
                "bytes after the response to a route that closes: {:?}",
                show(wire)
            );
        }
        i += 1;
    }
}

/// Checks what followed a `101`: `sent` is what the peer sent after the upgrade request's
/// head. The service greeted, echoed up to and including the first `!` (closing there), and
/// said goodbye on the peer's end or the shutdown; with nothing cut and no write refused, all
/// of that came, else a greeting, a prefix of the echo, and the goodbye (cut, a prefix of it).
fn check_stream(sent: &[u8], stream: &[u8], cut_allowed: bool, up: &UpRecord) {
    let echo = match sent.iter().position(|&b| b == b'!') {
        Some(p) => &sent[..=p],
        None => sent,
    };
    let tail: &[u8] = match (up.eof, up.bye) {
        (true, _) => UP_EOF,
        (_, true) => UP_BYE,
        _ => b"",
    };
    if !cut_allowed && !up.refused && !up.shutdown {
        assert!(
            up.bang || up.eof,
            "the upgraded service never heard the peer's end"
        );
        let whole = [UP_HELLO, echo, tail].concat();
        assert!(
            stream == whole,
            "upgraded stream {:?}, wanted {:?}",
            show(stream),
            show(&whole)
        );
        return;
    }
    let Some(rest) = stream.strip_prefix(UP_HELLO) else {
        assert!(
            (cut_allowed && UP_HELLO.starts_with(stream)) || (up.refused && stream.is_empty()),
            "upgraded stream without the greeting: {:?}",
            show(stream)
        );
        return;
    };
    // The echo is a prefix of `echo` (its longest common prefix with `rest` bounds it), the
    // goodbye what remains.
    let common = rest.iter().zip(echo).take_while(|(a, b)| a == b).count();
    let fits = (rest.len().saturating_sub(tail.len())..=common).any(|k| {
        let t = &rest[k..];
        if cut_allowed {
            tail.starts_with(t)
        } else {
            t == tail
        }
    });
    assert!(
        fits,
        "upgraded stream {:?} is not a prefix of the echo of {:?} and then {:?}",
        show(stream),
        show(echo),
        show(tail)
    );
}

/// The `/ws` handler: every message (or fragment) goes back as it came.
struct WsEcho<'m> {
    rec: &'m mut UpRecord,
}

impl WsHandler for WsEcho<'_> {
    fn message(&mut self, msg: Message<'_>, ws: &mut WsSender<'_, '_>) {
        // A refused echo (the pool is dry) ends the connection: going on would leave a
        // message out of the echo, or send the rest of one whose start is missing.
        if ws
            .fragment(msg.kind, msg.data, msg.first, msg.last)
            .is_err()
        {
            self.rec.refused = true;
            let _ = ws.close(CloseCode::INTERNAL_ERROR, "");
        }
    }

    fn closed(&mut self, code: CloseCode) {
        assert!(self.rec.ws_closed.is_none(), "closed twice");
        self.rec.ws_closed = Some(code);
    }
}

/// What a stream of WebSocket frames says, as a [`Decoder`] of one role reads it.
#[derive(Debug, Default)]
struct WsStream {
    /// Messages in order: kind, bytes, and whether the message was completed.
    messages: Vec<(MessageKind, Vec<u8>, bool)>,
    pings: Vec<Vec<u8>>,
    pongs: Vec<Vec<u8>>,
    /// The close frame's code (`Some(None)`: one without a code).
    close: Option<Option<u16>>,
    /// Bytes followed the close frame.
    after_close: bool,
    /// The code of the violation the decoder stopped at.
    error: Option<u16>,
}

/// `bytewise`: the bytes are offered one more at a time, so that every byte the decoder takes
/// before a violation is seen (a receive block may end anywhere).
fn ws_stream(bytes: &[u8], role: Role, limits: WsLimits, bytewise: bool) -> WsStream {
    let mut dec = Decoder::with_limits(role, limits);
    let mut buf = bytes.to_vec();
    let mut out = WsStream::default();
    let len = buf.len();
    let (mut at, mut end) = (0, if bytewise { 0 } else { len });
    loop {
        let step = match dec.decode(&mut buf[at..end.max(at)]) {
            Ok(step) => step,
            Err(e) => {
                out.error = Some(e.close_code().get());
                return out;
            }
        };
        at += step.consumed;
        match step.event {
            None if end < len => end += 1,
            None => return out,
            Some(Event::MessageStart(kind)) => out.messages.push((kind, Vec::new(), false)),
            Some(Event::Data(d)) => {
                if let Some(m) = out.messages.last_mut() {
                    m.1.extend_from_slice(d);
                }
            }
            Some(Event::MessageEnd) => {
                if let Some(m) = out.messages.last_mut() {
                    m.2 = true;
                }
            }
            Some(Event::Ping(p)) => out.pings.push(p.to_vec()),
            Some(Event::Pong(p)) => out.pongs.push(p.to_vec()),
            Some(Event::Close(frame)) => {
                out.close = Some(frame.map(|f| f.code.get()));
                out.after_close = at < len;
                return out;
            }
            Some(_) => {}
        }
    }
}

/// Checks what followed the `101` of a WebSocket: `sent` is what the peer sent after the
/// handshake's head. See the module documentation.
fn check_ws_stream(sent: &[u8], stream: &[u8], cut_allowed: bool, up: &UpRecord) {
    let want = ws_stream(sent, Role::Server, WS_LIMITS, true);
    let got = ws_stream(stream, Role::Client, WsLimits::default(), false);
    let both = || format!("sent {want:?}, got {got:?}");
    assert!(got.error.is_none(), "invalid server frames: {}", both());
    assert!(!got.after_close, "bytes after the close frame: {}", both());
    // Pongs answer the pings in order.
    assert!(
        want.pings.starts_with(&got.pongs),
        "pongs that answer no ping: {}",
        both()
    );
    // Messages come back in order, byte for byte (of one not completed, a prefix).
    for (i, (kind, data, complete)) in got.messages.iter().enumerate() {
        let next = want.messages.get(i).is_some_and(|(k, d, c)| {
            k == kind
                && (if *complete {
                    *c && d == data
                } else {
                    d.starts_with(data)
                })
        });
        assert!(next, "message {i} is not the peer's: {}", both());
    }
    // At most one close, with the code the violation, the peer's close, the shutdown or a
    // refused echo names.
    if let Some(code) = got.close {
        let named = match (want.error, want.close) {
            (Some(e), _) => code == Some(e),
            (None, Some(c)) => code == c,
            (None, None) => false,
        };
        let going_away = up.shutdown && code == Some(CloseCode::GOING_AWAY.get());
        let refused = up.refused && code == Some(CloseCode::INTERNAL_ERROR.get());
        assert!(named || going_away || refused, "close {code:?}: {}", both());
    }
    if up.owed_refused {
        // The connection was failed there: no close frame after it.
        assert!(
            got.close.is_none(),
            "a close frame after the failure: {}",
            both()
        );
    }
    if !cut_allowed && !up.refused && !up.shutdown && !up.owed_refused {
        let completed = |s: &WsStream| s.messages.iter().filter(|m| m.2).count();
        assert_eq!(
            completed(&got),
            completed(&want),
            "messages lost: {}",
            both()
        );
        assert_eq!(
            got.pongs.len(),
            want.pings.len(),
            "pings unanswered: {}",
            both()
        );
        let owed = want.error.is_some() || want.close.is_some();
        assert_eq!(got.close.is_some(), owed, "the close owed: {}", both());
        // The handler hears the code the violation or the peer's close named.
        let told = up.ws_closed.map(CloseCode::get);
        match (want.error, want.close) {
            (Some(e), _) => assert_eq!(told, Some(e), "closed() told: {}", both()),
            (None, Some(c)) => assert_eq!(
                told,
                Some(c.unwrap_or(CloseCode::NO_STATUS.get())),
                "closed() told: {}",
                both()
            ),
            (None, None) => {}
        }
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs every committed seed in `fuzz/seeds/<target>` through `run`.
    fn seeds_of(target: &str, run: fn(&[u8])) {
        let dir = format!("{}/fuzz/seeds/{target}", env!("CARGO_MANIFEST_DIR"));
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("seed directory") {
            let path = entry.expect("entry").path();
            eprintln!("seed {}", path.display());
            run(&std::fs::read(path).expect("seed"));
            n += 1;
        }
        assert!(n > 0);
    }

    /// Every committed seed of the fuzz target runs clean.
    #[test]
    fn seeds_run_clean() {
        seeds_of("conn", run);
    }

    /// Every committed seed of the TLS fuzz target runs clean.
    #[test]
    fn tls_seeds_run_clean() {
        seeds_of("conn_tls", run_tls);
    }

    /// Runs the scripts named in `FUZZ_REPLAY` (paths separated by `:`), with `FUZZ_TRACE` if
    /// set: a crash read without the fuzz toolchain. Those of the TLS target with
    /// `FUZZ_TLS=1`.
    #[test]
    fn replay() {
        let Some(paths) = std::env::var_os("FUZZ_REPLAY") else {
            return;
        };
        let tls = std::env::var_os("FUZZ_TLS").is_some();
        for path in std::env::split_paths(&paths) {
            eprintln!("replay {}", path.display());
            let script = std::fs::read(path).expect("script");
            if tls {
                run_tls(&script);
            } else {
                run(&script);
            }
        }
    }

    /// The sized routes read their size as both sides must, and refuse what is not one.
    #[test]
    fn routes() {
        assert_eq!(Route::of(b"/body/0"), Route::Whole(Whole::Body, 0));
        assert_eq!(Route::of(b"/with/40000"), Route::Whole(Whole::With, 40_000));
        assert_eq!(Route::of(b"/static/40001"), Route::NotFound);
        assert_eq!(Route::of(b"/body/"), Route::NotFound);
        assert_eq!(Route::of(b"/body/1x"), Route::NotFound);
        assert_eq!(Route::of(b"/body/123456"), Route::NotFound);
        assert_eq!(
            Route::of(b"/owned/rent/4096"),
            Route::Owned(Owned::Rent, 4096)
        );
        assert_eq!(Route::of(b"/owned/shared/4097"), Route::NotFound);
        assert_eq!(Route::of(b"/close-fill"), Route::Close(Close::Fill));
        assert_eq!(pattern(0, 10).len(), 10);
        assert_ne!(pattern(0, 100), pattern(1, 100));
    }
}
