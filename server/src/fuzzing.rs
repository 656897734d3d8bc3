//! Drives one connection core from a script of events, and checks what it sends with a client's
//! eyes. Built for the fuzz target in `server/fuzz` (feature `fuzzing`) and for the unit
//! tests that replay its seeds.
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
//! | `0xc8..=0xcf` | the answer to the exchange the service deferred last arrives |
//! | `0xd0..=0xd7` | other connections take every free block of the pool |
//! | `0xd8..=0xdf` | they give them back |
//! | `0xe0..=0xef` | the peer ends its stream |
//! | `0xf0..=0xf7` | the server starts shutting down |
//! | `0xf8..=0xff` | the socket fails: the driver closes the connection |
//!
//! After the script the peer reads everything and then ends its stream, so the exchange runs
//! to its end. Checked, by panicking:
//! * the core never asks to send once it said to half-close, and says nothing once closed;
//! * what it sent parses as a sequence of well-formed responses (`httparse`, bodies framed by
//!   Content-Length or chunked), one per request in request order: each has the status its
//!   request's route gives (or an error status with `Connection: close`, after which nothing
//!   follows), `/echo` returns the body sent, HEAD gets no body, no 1xx goes to HTTP/1.0;
//! * a response is cut short only where the connection was closed under it;
//! * when the connection has ended, every pool block is back (`rented_blocks == 0`).
//!
//! With `FUZZ_TRACE` set in the environment, each event and the bytes sent are printed (to
//! read a crash: `FUZZ_TRACE=1 cargo +nightly fuzz run conn <artifact>`).

use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::atomic::AtomicBool;

use bufslab::{Pool, PoolBuf, QueueFreeList};
use bufslab_http::{Config as HttpConfig, DateCache, HeaderSlot, Parser};
use bytes::BufMut;

use bufslab_http::{BodyFraming, KnownHeader, Method, Request};

use crate::config::{Config, PoolConfig, SMALL_BLOCK};
use crate::conn::{CloseReason, Conn, Env, Want};
use crate::deferred::Deferred;
use crate::exchange::{Ctx, Exchange};
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::shared::Shared;
use crate::stats::WorkerCounters;

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
    let cfg = Config {
        max_head: MAX_HEAD,
        pool: PoolConfig {
            blocks_per_slab: 4,
            prealloc_slabs: 1,
            max_bytes: 128 << 10,
            local_capacity: 4,
            ..PoolConfig::default()
        },
        ..Config::default()
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
    let cache = pool.local_cache();
    let date = DateCache::from_unix(784_111_777);
    let mut slots = vec![HeaderSlot::EMPTY; 100];
    let mut slots_owner = None;
    let http = HttpConfig::DEFAULT
        .with_max_head_bytes(MAX_HEAD)
        .with_max_headers(slots.len());
    let mut conn: Conn<EchoState> = Conn::new(Parser::new(http), 0, cfg.out_blocks);
    let mut service = Model { pending: None };
    conn.open();
    let mut h = Harness::default();
    let trace = std::env::var_os("FUZZ_TRACE").is_some();
    {
        let mut env = Env {
            slot: 0,
            slots: &mut slots,
            slots_owner: &mut slots_owner,
            cache: &cache,
            ctx: Ctx {
                blocks: &cache,
                date: &date,
                server_name: Some(b"fuzz"),
                shared: &shared,
                whole_body: cfg.whole_body_limit(),
                body_with_max: cfg.whole_body_limit(),
            },
            counters: &shared.counters[0],
            max_body: MAX_BODY,
            large_block: cfg.large_block(),
            head_gate: cfg.head_gate(),
            min_body_bytes: 0,
            shutting_down: false,
            service: &mut service,
        };
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
                0xc0..=0xc7 => {
                    let kind = conn.timer_kind();
                    // Closing mid-exchange cuts the response in progress.
                    let pending = !conn.is_idle();
                    if !conn.expire(&mut env, kind) {
                        h.cut_allowed |= pending;
                    }
                }
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
            if trace {
                eprintln!(
                    "op {op:#x} in {} left {:?} wire {} closed {}",
                    h.sock_in.len(),
                    h.leftover.as_ref().map(|b| b.len()),
                    h.wire.len(),
                    conn.is_closed()
                );
            }
        }
        hog.clear();
        h.finish(&mut conn, &mut env);
    }
    drop(cache);
    h.leftover = None;
    assert_eq!(pool.stats().rented_blocks, 0, "blocks left rented");
    let late = shared.snapshot().late_body_faults > 0;
    if trace {
        eprintln!("sent:\n{}", String::from_utf8_lossy(&h.wire));
    }
    check(&h.peer_sent, &h.wire, h.cut_allowed || late);
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
}

impl Harness {
    fn peer_send(&mut self, bytes: &[u8]) {
        if !self.peer_eof {
            self.sock_in.extend(bytes);
            self.peer_sent.extend_from_slice(bytes);
        }
    }

    /// The answer to the deferred exchange arrives, as a worker takes it from its mailbox.
    fn answer(&mut self, conn: &mut Conn<EchoState>, env: &mut Env<'_, QueueFreeList, Model>) {
        if let Some(to) = env.service.pending.take() {
            // A connection that closed since drops it; one that waits runs on.
            if conn.resume(to, EchoState::Answer) {
                self.step(conn, env);
            }
        }
    }

    /// What the driver does after an event: act on the decisions that need no event.
    fn step(&mut self, conn: &mut Conn<EchoState>, env: &mut Env<'_, QueueFreeList, Model>) {
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

    fn read(
        &mut self,
        conn: &mut Conn<EchoState>,
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
                        // A request the peer abandoned gets no whole response.
                        self.cut_allowed |= conn.peer_closed() == CloseReason::PeerAborted;
                    } else {
                        conn.release_read_block();
                    }
                    return;
                }
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
        conn: &mut Conn<EchoState>,
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
        self.leftover = conn.receive_block(env, buf);
    }

    fn send(
        &mut self,
        conn: &mut Conn<EchoState>,
        env: &mut Env<'_, QueueFreeList, Model>,
        limit: usize,
    ) {
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

    /// The peer reads everything and then ends its stream; the connection must end.
    fn finish(&mut self, conn: &mut Conn<EchoState>, env: &mut Env<'_, QueueFreeList, Model>) {
        self.peer_eof = true;
        for _ in 0..FINISH_STEPS {
            if conn.is_closed() {
                return;
            }
            if let Some(b) = self.leftover.take() {
                self.leftover = conn.receive_block(env, b);
            }
            match conn.next(env) {
                Want::Send => self.send(conn, env, 0),
                Want::Receive | Want::Discard => self.read(conn, env, usize::MAX, false),
                Want::HalfClose => self.write_shut = true,
                Want::Pool => panic!("waits for the pool with every other block free"),
                Want::Wait => self.answer(conn, env),
                Want::Close(_) => return,
            }
        }
        panic!("the connection neither ends nor progresses");
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
    /// The body an `/echo` returns.
    echo: Option<Vec<u8>>,
}

/// Reads the requests in `input` as a client would have written them, with httparse (a parser
/// independent of the one under test) and a plain chunked reader. Stops at the first request
/// it cannot frame.
fn requests(mut input: &[u8]) -> Vec<Expect> {
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
                        echo: None,
                    });
                }
                return out;
            }
        };
        let method = req.method.unwrap_or("");
        let path = req.path.unwrap_or("");
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
        let status = route_status(method, path);
        let mut e = Expect {
            head_only: method == "HEAD",
            http10,
            status: Some(status),
            echo: None,
        };
        input = &input[head_len..];
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
                match path_of(path) {
                    "/echo" if status == 200 => e.echo = Some(data),
                    "/pull" if !e.head_only => e.echo = Some(vec![b'p'; PULL_LEN]),
                    "/defer" if !e.head_only => e.echo = Some(b"later".to_vec()),
                    _ => {}
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

/// The service under test, a service of every kind the API allows:
/// * GET (or HEAD) `/plaintext`, `/json` and `/stats` answer 200 with a fixed body at once;
/// * `POST /echo` sends the body back as it arrives (of the request's length, or chunked, its
///   head held until the first data);
/// * `/defer` answers later: the script's answer event (or the end of the script) delivers it,
///   unless the connection closed first;
/// * `/pull` streams a body of [`PULL_LEN`] bytes pulled as the output drains;
/// * `/fail` misuses the exchange (sets `Content-Length` itself), which the engine answers 500;
/// * other methods on the first four paths 405; any other path 404.
struct Model {
    /// The exchange deferred last, for the script to answer.
    pending: Option<Deferred>,
}

/// Bytes of the `/pull` body.
const PULL_LEN: usize = 5000;

/// Where a request is between the model's calls.
#[derive(Default, PartialEq)]
enum EchoState {
    #[default]
    Idle,
    ChunkedPending,
    Streaming,
    /// A deferred exchange's answer.
    Answer,
    /// A pulled body with this many bytes to go.
    Pull(usize),
}

impl Service for Model {
    type State = EchoState;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, st: &mut EchoState) {
        let get = matches!(req.method(), Method::Get | Method::Head);
        let _ = match (req.path(), get, req.method() == Method::Post) {
            (b"/plaintext" | b"/stats", true, _) => ex.respond(200).body(b"Hello, World!"),
            // The same body, written in place.
            (b"/json", true, _) => ex
                .respond(200)
                .body_with(64, |w| std::io::Write::write_all(w, b"Hello, World!")),
            (b"/defer", ..) => ex.defer().map(|d| self.pending = Some(d)),
            (b"/pull", ..) => {
                *st = EchoState::Pull(PULL_LEN);
                ex.respond(200)
                    .stream(PULL_LEN as u64)
                    .and_then(|()| ex.pull())
            }
            (b"/fail", ..) => ex
                .respond(200)
                .header(KnownHeader::ContentLength, b"1")
                .body(b"x"),
            (b"/echo", _, true) => {
                ex.read_body();
                match req.framing() {
                    BodyFraming::Chunked => {
                        *st = EchoState::ChunkedPending;
                        Ok(())
                    }
                    BodyFraming::Length(n) => {
                        *st = EchoState::Streaming;
                        ex.respond(200).stream(n)
                    }
                    _ => ex.respond(200).body(b""),
                }
            }
            (b"/plaintext" | b"/json" | b"/stats" | b"/echo", _, _) => ex
                .respond(405)
                .header(KnownHeader::Allow, b"GET")
                .body(b"no"),
            _ => ex.respond(404).body(b"Not Found"),
        };
    }

    fn data(&mut self, data: &[u8], ex: &mut Exchange<'_>, st: &mut EchoState) {
        if *st == EchoState::ChunkedPending {
            *st = EchoState::Streaming;
            let _ = ex.respond(200).chunked();
        }
        let _ = ex.write(data);
    }

    fn end(&mut self, ex: &mut Exchange<'_>, st: &mut EchoState) {
        if *st == EchoState::ChunkedPending {
            let _ = ex.respond(200).chunked();
        }
        let _ = ex.finish();
    }

    fn resume(&mut self, ex: &mut Exchange<'_>, st: &mut EchoState) {
        assert!(*st == EchoState::Answer, "resumed with another state");
        let _ = ex.respond(200).body(b"later");
    }

    fn fill(&mut self, ex: &mut Exchange<'_>, st: &mut EchoState) {
        let EchoState::Pull(left) = st else {
            panic!("filled without a pulled body");
        };
        // Odd pieces, so that parts end anywhere in a block.
        let n = (*left).min(ex.write_room()).min(1777);
        let _ = ex.write(&[b'p'; 1777][..n]);
        *left -= n;
    }
}

/// The status the server's routes give a well-formed request.
fn route_status(method: &str, target: &str) -> u16 {
    if method == "OPTIONS" && target == "*" {
        return 200;
    }
    match path_of(target) {
        "/defer" | "/pull" => return 200,
        "/fail" => return 500,
        _ => {}
    }
    let get = matches!(method, "GET" | "HEAD");
    match path_of(target) {
        "/plaintext" | "/json" | "/stats" if get => 200,
        "/echo" if method == "POST" => 200,
        "/plaintext" | "/json" | "/stats" | "/echo" => 405,
        _ => 404,
    }
}

/// Checks the bytes the server sent against the requests the peer sent.
fn check(peer_sent: &[u8], mut wire: &[u8], cut_allowed: bool) {
    let expected = requests(peer_sent);
    let mut i = 0;
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
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                cl = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.parse::<usize>().ok());
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = h.value == b"chunked";
            } else if h.name.eq_ignore_ascii_case("connection") {
                close = h.value == b"close";
            }
        }
        wire = &wire[head_len..];
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
            // Any request may be refused (408, 413, or a framing the model took for fine),
            // and nothing follows.
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
        if let Some(echo) = &e.echo {
            assert_eq!(&body, echo, "echo {i} differs");
        }
        if close {
            assert!(wire.is_empty(), "bytes after Connection: close");
        }
        i += 1;
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed seed of the fuzz target runs clean.
    #[test]
    fn seeds_run_clean() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/conn");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("seed directory") {
            let path = entry.expect("entry").path();
            eprintln!("seed {}", path.display());
            run(&std::fs::read(path).expect("seed"));
            n += 1;
        }
        assert!(n > 0);
    }
}
