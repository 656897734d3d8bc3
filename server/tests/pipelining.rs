//! Pipelined batches of random requests, each answered in a way its path names (a whole body,
//! one written in place, a streamed or chunked body pulled as the output drains, a deferred
//! answer), checked byte for byte and in order, under each driver.
//!
//! What it is after: a pipelined batch is served as far as the input goes before anything is
//! sent, into an output queue of a few blocks. Every response of every batch must come back
//! `200` with its exact body, on a connection that stays open: a batch whose answers do not
//! fit in the queue at once must wait for the queue to drain, never be cut short by a `503`
//! and a close.
//!
//! A run is a few hundred batches from one seed, printed at the start and in any failure.
//! `BUFSLAB_PROP_SEED=<seed>` replays one; `BUFSLAB_PROP_BATCHES=<n>` and
//! `BUFSLAB_PROP_DEPTH=<most requests per batch>` change the run's size and depth (a depth of
//! 1 serves no request pipelined behind another: what fails at depth 1 is no pipelining bug),
//! and `BUFSLAB_PROP_KINDS=stream,defer,...` the kinds drawn from.

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::mpsc;

use bufslab_http::Request;
use bufslab_server::{Deferred, Exchange, IoMode, Mailbox, Service, WorkerInfo};
use bytes::BufMut;

#[path = "support/client.rs"]
mod client;
#[path = "support/responses.rs"]
mod responses;

use client::start_under;
use responses::{Reply, Wire};

// ---- What a path asks for ----

/// How the service answers a request: the second segment of its path, `/r/<kind>/<size>/<seed>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    /// `Response::body` with the whole body.
    #[default]
    Body,
    /// `Response::body_with`: the body written in place through the `BodyWriter`.
    With,
    /// `Response::stream(size)`: what `write_room` says fits is written at once, the rest is
    /// pulled (`Exchange::pull`, `Service::fill`).
    Stream,
    /// `Response::chunked`: as `Stream`, ended by `Exchange::finish`.
    Chunked,
    /// `Exchange::defer`, answered from another thread through the worker's `Mailbox`; the
    /// whole body is written in `Service::resume`.
    Defer,
    /// `Response::body_owned`: a block rented from the engine's pool and filled (up to one
    /// block of the large class), else a `bytes::Bytes`, handed over whole.
    Owned,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Body,
        Kind::With,
        Kind::Stream,
        Kind::Chunked,
        Kind::Defer,
        Kind::Owned,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Body => "body",
            Kind::With => "with",
            Kind::Stream => "stream",
            Kind::Chunked => "chunked",
            Kind::Defer => "defer",
            Kind::Owned => "owned",
        }
    }

    fn from_name(s: &[u8]) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name().as_bytes() == s)
    }

    /// The largest body the test asks of this kind. A whole body may be up to
    /// `Config::whole_body_limit` (32 KiB by default) wherever it falls in a batch, and
    /// `body_with`'s as much as one large block holds besides the head's end (32 KiB less 160
    /// bytes); a streamed or owned one has no bound, and 64 KiB spans a few pulls or blocks.
    fn max_size(self) -> usize {
        match self {
            Kind::Body | Kind::Defer => 32 * 1024,
            Kind::With => 32 * 1024 - 160,
            Kind::Stream | Kind::Chunked | Kind::Owned => 64 * 1024,
        }
    }
}

// ---- Body bytes ----

/// Byte `i` of the body of seed `seed`: a function of both, so a body shifted, cut, or another
/// response's shows at once.
fn body_byte(seed: u64, i: usize) -> u8 {
    body_word(seed, i)[i & 7]
}

/// The 8 bytes of the body of seed `seed` around byte `i`.
fn body_word(seed: u64, i: usize) -> [u8; 8] {
    splitmix(seed ^ ((i as u64) >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes()
}

/// Bytes `from..from + out.len()` of the body of seed `seed`, a word at a time (a debug build
/// makes a few hundred MB of them per run, on each side).
fn body_bytes(seed: u64, from: usize, out: &mut [u8]) {
    let mut done = 0;
    while done < out.len() {
        let i = from + done;
        let n = (8 - (i & 7)).min(out.len() - done);
        out[done..done + n].copy_from_slice(&body_word(seed, i)[i & 7..(i & 7) + n]);
        done += n;
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ---- The service ----

/// One request's kind, size and seed, and how much of its body has been written: what the
/// service keeps between `head` and `fill` or `resume`, and what a deferred answer carries
/// back.
#[derive(Clone, Copy, Debug, Default)]
struct Job {
    kind: Kind,
    size: usize,
    seed: u64,
    sent: usize,
}

struct Svc {
    /// The thread that answers deferred exchanges.
    answerer: mpsc::Sender<(Deferred, Job)>,
    /// Where body bytes are generated before they are written.
    scratch: Vec<u8>,
}

impl Svc {
    fn make(info: WorkerInfo) -> Svc {
        let mailbox: Mailbox<Job> = info.mailbox().expect("the state is Job");
        let (answerer, jobs) = mpsc::channel::<(Deferred, Job)>();
        // Answers from a thread of its own, as a thread pool or a backend client would: the
        // answer arrives whenever that thread gets to it, the connection waiting meanwhile.
        // The thread ends when the service (and its sender) is dropped.
        std::thread::spawn(move || {
            for (token, job) in jobs {
                mailbox
                    .answer(token, job)
                    .expect("the mailbox holds one answer per connection");
            }
        });
        Svc {
            answerer,
            scratch: vec![0; 64 * 1024],
        }
    }

    /// Writes the next part of a streamed body: what the output has room for now.
    fn write_some(&mut self, ex: &mut Exchange<'_>, job: &mut Job) {
        let n = (job.size - job.sent).min(ex.write_room());
        if n == 0 {
            return;
        }
        let part = &mut self.scratch[..n];
        body_bytes(job.seed, job.sent, part);
        ex.write(part).expect("write_room said it fits");
        job.sent += n;
    }

    fn whole(&mut self, ex: &mut Exchange<'_>, job: &Job) {
        let body = &mut self.scratch[..job.size];
        body_bytes(job.seed, 0, body);
        // An error is the engine's to answer (a 500 or 503 in this response's place): what
        // the client gets is what the test checks.
        let _ = ex.respond(200).body(body);
    }
}

/// `/r/<kind>/<size>/<seed>`.
fn parse_path(path: &[u8]) -> Option<Job> {
    let rest = path.strip_prefix(b"/r/")?;
    let mut parts = rest.split(|&b| b == b'/');
    let kind = Kind::from_name(parts.next()?)?;
    let num = |p: Option<&[u8]>| std::str::from_utf8(p?).ok()?.parse::<u64>().ok();
    let size = usize::try_from(num(parts.next())?).ok()?;
    let seed = num(parts.next())?;
    (parts.next().is_none() && size <= kind.max_size()).then_some(Job {
        kind,
        size,
        seed,
        sent: 0,
    })
}

impl Service for Svc {
    type State = Job;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, job: &mut Job) {
        let Some(asked) = parse_path(req.path()) else {
            let _ = ex.respond(404).body(b"no such kind");
            return;
        };
        *job = asked;
        match job.kind {
            Kind::Body => self.whole(ex, job),
            Kind::With => {
                let (seed, size) = (job.seed, job.size);
                let _ = ex.respond(200).body_with(size, |w| {
                    // Through the `BodyWriter` in pieces, as a serializer would write.
                    let mut piece = [0u8; 512];
                    let mut at = 0;
                    while at < size {
                        let n = (size - at).min(piece.len());
                        body_bytes(seed, at, &mut piece[..n]);
                        w.write_all(&piece[..n])?;
                        at += n;
                    }
                    Ok::<(), std::io::Error>(())
                });
            }
            Kind::Stream | Kind::Chunked => {
                let started = if job.kind == Kind::Stream {
                    ex.respond(200).stream(job.size as u64)
                } else {
                    ex.respond(200).chunked()
                };
                if started.is_err() {
                    return;
                }
                self.write_some(ex, job);
                if job.sent < job.size {
                    let _ = ex.pull();
                } else if job.kind == Kind::Chunked {
                    let _ = ex.finish();
                }
            }
            Kind::Owned => {
                let mut body = vec![0u8; job.size];
                body_bytes(job.seed, 0, &mut body);
                let _ = match ex.rent(job.size.max(1)) {
                    Some(mut block) if job.size <= 32 * 1024 => {
                        block.put_slice(&body);
                        ex.respond(200).body_owned(block)
                    }
                    _ => ex.respond(200).body_owned(bytes::Bytes::from(body)),
                };
            }
            Kind::Defer => {
                if let Ok(token) = ex.defer() {
                    self.answerer
                        .send((token, *job))
                        .expect("the answering thread lives as long as the service");
                }
            }
        }
    }

    fn fill(&mut self, ex: &mut Exchange<'_>, job: &mut Job) {
        self.write_some(ex, job);
        if job.sent == job.size && job.kind == Kind::Chunked {
            let _ = ex.finish();
        }
    }

    fn resume(&mut self, ex: &mut Exchange<'_>, job: &mut Job) {
        let job = *job;
        self.whole(ex, &job);
    }
}

// ---- Random batches ----

/// xorshift64*: small, and the same everywhere, so a printed seed replays the same run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(splitmix(seed) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// In `1..=max`, as often in each power of two as in the next: small values are as well
    /// represented as large ones.
    fn log_uniform(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.leading_zeros();
        let k = self.below(bits as usize);
        (1usize << k).saturating_add(self.below(1 << k)).min(max)
    }
}

/// A body size in `0..=max`, biased towards the sizes where a response's bytes cross a block
/// boundary: multiples of 4 KiB, the 512 bytes of room the engine makes sure of per head, the
/// 1 KiB past which a whole body is copied piece by piece, give or take a head's length and
/// a chunk's framing.
fn body_size(rng: &mut Rng, max: usize) -> usize {
    match rng.below(8) {
        0 => 0,
        1 | 2 => rng.range(0, max),
        3 | 4 => rng.log_uniform(max),
        _ => {
            let mut anchors = vec![64, 512, 1024, 2048];
            anchors.extend((1..=max / 4096 + 1).map(|k| k * 4096));
            let anchor = anchors[rng.below(anchors.len())];
            let near = anchor + rng.range(0, 400);
            near.saturating_sub(rng.range(0, 400).max(1)).min(max)
        }
    }
}

/// One request of a batch, and what its answer must be.
#[derive(Clone, Debug)]
struct Asked {
    job: Job,
    /// Bytes of request body sent with it (unread by the service, skipped by the engine);
    /// `None`: a GET.
    post: Option<usize>,
}

impl Asked {
    fn wire(&self, out: &mut Vec<u8>) {
        let Job {
            kind, size, seed, ..
        } = self.job;
        let path = format!("/r/{}/{size}/{seed}", kind.name());
        match self.post {
            None => write!(out, "GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").unwrap(),
            Some(n) => {
                write!(
                    out,
                    "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Length: {n}\r\n\r\n"
                )
                .unwrap();
                out.extend((0..n).map(|i| b'a' + (i % 26) as u8));
            }
        }
    }

    fn describe(&self) -> String {
        let body = match self.post {
            None => String::new(),
            Some(n) => format!(" (POST with {n} bytes)"),
        };
        format!("{} {}{body}", self.job.kind.name(), self.job.size)
    }
}

/// A batch of `1..=max_depth` requests. Half the batches are of one kind and one size (the
/// sharpest test of how many answers of a kind fit before the output must drain), the others
/// mixed.
fn batch(rng: &mut Rng, max_depth: usize, kinds: &[Kind]) -> Vec<Asked> {
    let depth = if rng.one_in(2) {
        rng.range(1, max_depth)
    } else {
        rng.log_uniform(max_depth)
    };
    let uniform = rng.one_in(2).then(|| {
        let kind = kinds[rng.below(kinds.len())];
        (kind, body_size(rng, kind.max_size()))
    });
    (0..depth)
        .map(|_| {
            let (kind, size) = uniform.unwrap_or_else(|| {
                let kind = kinds[rng.below(kinds.len())];
                (kind, body_size(rng, kind.max_size()))
            });
            let seed = rng.next() >> 16;
            let post = rng.one_in(16).then(|| rng.range(0, 64));
            Asked {
                job: Job {
                    kind,
                    size,
                    seed,
                    sent: 0,
                },
                post,
            }
        })
        .collect()
}

/// The batch's bytes in writes of random sizes: all at once, in a few large pieces, or in
/// pieces down to a byte.
fn writes(rng: &mut Rng, bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let most = match rng.below(4) {
        0 => bytes.len().max(1),
        1 => 16,
        _ => rng.log_uniform(bytes.len().max(1)),
    };
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let n = rng.range(1, most).min(bytes.len() - at);
        pieces.push(at..at + n);
        at += n;
    }
    pieces
}

// ---- The run ----

fn env_num(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
    )
}

fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    splitmix(t ^ u64::from(std::process::id()))
}

/// Why a batch went wrong, as a sentence with what is needed to look into it.
fn failure(
    io: IoMode,
    seed: u64,
    n: usize,
    asked: &[Asked],
    at: usize,
    what: String,
    answers: &[Reply],
) -> String {
    let list: Vec<String> = asked.iter().map(Asked::describe).collect();
    let last = answers.last().map_or(String::new(), |r| {
        format!("\nthe answer before it:\n{}", r.head.trim_end())
    });
    format!(
        "{io:?}, seed {seed}, batch {n}: request {at} of {} ({}): {what}\n\
         {at} answers were right before it.{last}\n\
         the batch: [{}]\n\
         replay: BUFSLAB_PROP_SEED={seed} cargo test -p bufslab-server --test pipelining",
        asked.len(),
        asked[at].describe(),
        list.join(", "),
    )
}

/// Checks one answer; `Err` says what is wrong with it.
fn check(asked: &Asked, reply: &Reply) -> Result<(), String> {
    let head = reply.head.trim_end();
    if reply.status != 200 {
        return Err(format!(
            "status {} (body {:?})\n{head}",
            reply.status,
            String::from_utf8_lossy(&reply.body[..reply.body.len().min(200)])
        ));
    }
    if reply.says_close() {
        return Err(format!("the answer closes the connection\n{head}"));
    }
    let job = asked.job;
    if reply.chunked != (job.kind == Kind::Chunked) {
        return Err(format!("framing: chunked = {}\n{head}", reply.chunked));
    }
    if reply.body.len() != job.size {
        return Err(format!(
            "a body of {} bytes for {} asked\n{head}",
            reply.body.len(),
            job.size
        ));
    }
    let mut want = vec![0; job.size];
    body_bytes(job.seed, 0, &mut want);
    if reply.body != want {
        let i = (0..job.size).find(|&i| reply.body[i] != body_byte(job.seed, i));
        return Err(format!("the body differs from byte {i:?} on\n{head}"));
    }
    Ok(())
}

/// A connection's end: the client closes its side, and the server, having answered
/// everything, closes too with nothing more to say.
fn hang_up(wire: &mut Wire) -> Result<(), String> {
    wire.sock
        .shutdown(Shutdown::Write)
        .map_err(|e| format!("shutdown: {e}"))?;
    match wire.rest() {
        Ok(extra) if extra.is_empty() => Ok(()),
        Ok(extra) => Err(format!(
            "{} bytes nobody asked for: {:?}",
            extra.len(),
            String::from_utf8_lossy(&extra[..extra.len().min(300)])
        )),
        Err(cut) => Err(cut.to_string()),
    }
}

fn run(io: IoMode) {
    let seed = env_num("BUFSLAB_PROP_SEED").unwrap_or_else(fresh_seed);
    let batches = env_num("BUFSLAB_PROP_BATCHES").unwrap_or(300) as usize;
    let max_depth = env_num("BUFSLAB_PROP_DEPTH").unwrap_or(64).max(1) as usize;
    let kinds: Vec<Kind> = match std::env::var("BUFSLAB_PROP_KINDS") {
        Ok(names) => names
            .split(',')
            .map(|n| Kind::from_name(n.trim().as_bytes()).unwrap_or_else(|| panic!("kind {n:?}")))
            .collect(),
        Err(_) => Kind::ALL.to_vec(),
    };
    eprintln!("{io:?}: seed {seed} (BUFSLAB_PROP_SEED={seed} replays it), {batches} batches");
    let Some(server) = start_under(io, Svc::make) else {
        return;
    };
    let addr: SocketAddr = server.local_addr();
    let mut rng = Rng::new(seed);
    let connect = || Wire::new(TcpStream::connect(addr).unwrap());
    let mut wire = connect();
    let (mut requests, mut bytes) = (0usize, 0usize);
    for n in 0..batches {
        // Now and then a new connection, so that a connection's first exchange (served in
        // the room behind its head) comes up often, not once.
        if rng.one_in(8) {
            if let Err(e) = hang_up(&mut wire) {
                panic!("{io:?}, seed {seed}, before batch {n}: at the close: {e}");
            }
            wire = connect();
        }
        let asked = batch(&mut rng, max_depth, &kinds);
        let mut out = Vec::new();
        for a in &asked {
            a.wire(&mut out);
        }
        // A batch is a few KiB: the socket's buffers take it whole, so writing all of it
        // before reading cannot deadlock against a server that sends as it goes.
        for piece in writes(&mut rng, &out) {
            if let Err(e) = wire.sock.write_all(&out[piece]) {
                panic!("{io:?}, seed {seed}, batch {n}: write: {e}");
            }
        }
        let mut answers = Vec::with_capacity(asked.len());
        for (i, a) in asked.iter().enumerate() {
            let mut read_size = || rng.log_uniform(64 * 1024);
            let reply = match wire.reply(&mut read_size) {
                Ok(r) => r,
                Err(cut) => panic!(
                    "{}",
                    failure(io, seed, n, &asked, i, cut.to_string(), &answers)
                ),
            };
            if let Err(what) = check(a, &reply) {
                panic!("{}", failure(io, seed, n, &asked, i, what, &answers));
            }
            bytes += reply.body.len();
            answers.push(reply);
        }
        requests += asked.len();
    }
    if let Err(e) = hang_up(&mut wire) {
        panic!("{io:?}, seed {seed}, after the last batch: at the close: {e}");
    }
    let stats = server.stop().unwrap().stats;
    eprintln!("{io:?}: {requests} requests, {bytes} body bytes, all answered");
    assert_eq!(stats.service_errors, 0, "{io:?}, seed {seed}");
}

#[test]
fn pipelined_batches_under_epoll() {
    run(IoMode::Epoll);
}

#[test]
fn pipelined_batches_under_io_uring() {
    run(IoMode::Uring);
}
