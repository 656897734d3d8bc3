//! The WebSocket load generator behind `ws_load` and the WebSocket load harness
//! (`benches/load/ws.sh`), and the blocking one-connection client ([`WsClient`]) that
//! alloc-reports' WebSocket scenarios drive a server with.
//!
//! Frames are written and decoded with bufslab-ws, over non-blocking std sockets polled with
//! mio: one event loop per client thread, each owning a share of the connections. Every message
//! is masked with a fresh key, as a browser masks, and every echoed byte is compared with what
//! was sent; the first difference fails the run.
//!
//! # Examples
//!
//! ```no_run
//! use std::time::Duration;
//! use bufslab_benches::{run_load, LoadConfig, WsEchoServer, WsPeer};
//!
//! let server = WsEchoServer::start(WsPeer::Tungstenite, ([127, 0, 0, 1], 0).into(), 1)?;
//! let config = LoadConfig {
//!     duration: Duration::from_millis(200),
//!     ..LoadConfig::new(server.local_addr())
//! };
//! let report = run_load(&config)?;
//! println!("{} messages/s", report.messages_per_sec());
//! server.stop()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;
use std::fmt::{self, Display};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use bufslab_ws::{
    accept_key, apply_mask, encode_control, Decoder, Event, FrameHeader, MessageKind, OpCode, Role,
    MAX_HEADER_LEN,
};
use mio::{Events, Interest, Poll, Token};

/// Longest accepted handshake response head.
const MAX_RESPONSE_HEAD: usize = 8 * 1024;

/// How long a connection waits for its last echoes and the server's close once the run is
/// over, and for a handshake.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Bytes per read: a 64 KiB echo in few calls.
const READ_BUF: usize = 256 * 1024;

/// Payloads are windows of this repeating alphabet, shifted by the message's number, so a
/// stale, reordered or corrupted echo differs from the one expected, and the bytes are valid
/// UTF-8 for text messages.
const ALPHABET: usize = 26;

/// What one run of the load generator does.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// The server.
    pub addr: SocketAddr,
    /// The request target of the upgrade request.
    pub path: String,
    /// Connections, opened and upgraded before the clock starts.
    pub connections: usize,
    /// Payload bytes per message.
    pub size: usize,
    /// Messages in flight per connection: sent, their echo not yet complete.
    pub window: usize,
    /// How long messages are sent; echoes complete in this time are counted.
    pub duration: Duration,
    /// Client threads, each with its own event loop and a share of the connections.
    pub threads: usize,
    /// Text messages instead of binary.
    pub text: bool,
}

impl LoadConfig {
    /// The defaults against `addr`: 64 connections, 32-byte binary messages, one in flight per
    /// connection, 5 seconds, one thread, path `/`.
    #[must_use]
    pub fn new(addr: SocketAddr) -> LoadConfig {
        LoadConfig {
            addr,
            path: "/".to_owned(),
            connections: 64,
            size: 32,
            window: 1,
            duration: Duration::from_secs(5),
            threads: 1,
            text: false,
        }
    }
}

/// Why a run or a client failed.
#[derive(Debug)]
pub enum LoadError {
    /// A socket call failed; what was being done, and the error.
    Io(&'static str, io::Error),
    /// The server refused or botched the upgrade.
    Handshake(String),
    /// The server's frames broke RFC 6455.
    Protocol(bufslab_ws::Error),
    /// An echo differed from what was sent: connection, message number, byte offset.
    Mismatch {
        /// The connection's index.
        connection: usize,
        /// The message's number on that connection, from 0.
        message: u64,
        /// The first byte that differs, or the length where the echo was too long or short.
        offset: usize,
    },
    /// The server closed the connection, or sent a close frame, while echoes were due.
    Closed(usize),
    /// The last echoes or the server's close did not come within the drain timeout.
    Timeout,
    /// A configuration that cannot run (no connections, window 0...).
    Config(&'static str),
}

impl Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(what, e) => write!(f, "{what}: {e}"),
            LoadError::Handshake(why) => write!(f, "WebSocket handshake: {why}"),
            LoadError::Protocol(e) => write!(f, "invalid frames from the server: {e}"),
            LoadError::Mismatch {
                connection,
                message,
                offset,
            } => write!(
                f,
                "connection {connection}: the echo of message {message} differs at byte {offset}"
            ),
            LoadError::Closed(c) => {
                write!(f, "connection {c}: the server closed while echoes were due")
            }
            LoadError::Timeout => write!(
                f,
                "echoes or close frames still missing {DRAIN_TIMEOUT:?} after the run"
            ),
            LoadError::Config(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io(_, e) => Some(e),
            LoadError::Protocol(e) => Some(e),
            _ => None,
        }
    }
}

impl From<bufslab_ws::Error> for LoadError {
    fn from(e: bufslab_ws::Error) -> LoadError {
        LoadError::Protocol(e)
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// Messages whose echo completed within the run's duration.
    pub messages: u64,
    /// From the moment every connection was upgraded to the end of the sending time.
    pub elapsed: Duration,
    /// CPU time of the client threads (user and system, from `/proc/thread-self/schedstat`;
    /// `None` where that file is missing), over the whole run with its handshakes.
    pub client_cpu: Option<Duration>,
    latency: Histogram,
}

impl LoadReport {
    /// Completed echoes per second.
    #[must_use]
    pub fn messages_per_sec(&self) -> f64 {
        self.messages as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The latency (from the first byte of a message written to the last byte of its echo
    /// read) at quantile `q` (0.5 for the median), within 1/64 of the true value.
    #[must_use]
    pub fn latency(&self, q: f64) -> Duration {
        Duration::from_nanos(self.latency.quantile(q))
    }

    /// The client's share of one CPU over the run, in percent.
    #[must_use]
    pub fn client_cpu_percent(&self) -> Option<f64> {
        self.client_cpu
            .map(|c| 100.0 * c.as_secs_f64() / self.elapsed.as_secs_f64().max(1e-9))
    }
}

/// A log-linear latency histogram in nanoseconds: 64 buckets per power of two, so any value is
/// known within 1/64 (about 1.6 %), in a fixed 30 KiB, with no allocation per sample.
#[derive(Clone, Debug)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Histogram {
    const SUB: usize = 64;

    fn new() -> Histogram {
        Histogram {
            counts: vec![0; (64 - 6 + 1) * Self::SUB],
            total: 0,
        }
    }

    fn index(v: u64) -> usize {
        if v < Self::SUB as u64 {
            return v as usize;
        }
        let top = 63 - v.leading_zeros() as usize;
        let sub = (v >> (top - 6)) as usize & (Self::SUB - 1);
        (top - 5) * Self::SUB + sub
    }

    /// The middle of bucket `i`.
    fn value(i: usize) -> u64 {
        if i < Self::SUB {
            return i as u64;
        }
        let top = i / Self::SUB + 5;
        let low = ((Self::SUB + i % Self::SUB) as u64) << (top - 6);
        low + ((1u64 << (top - 6)) >> 1)
    }

    fn record(&mut self, v: Duration) {
        let ns = u64::try_from(v.as_nanos()).unwrap_or(u64::MAX);
        self.counts[Self::index(ns)] += 1;
        self.total += 1;
    }

    fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i);
            }
        }
        0
    }
}

/// The expected payload of message `n`: `size` bytes of the alphabet shifted by `n`.
fn payload(pattern: &[u8], n: u64, size: usize) -> &[u8] {
    let shift = (n % ALPHABET as u64) as usize;
    &pattern[shift..shift + size]
}

fn pattern(size: usize) -> Vec<u8> {
    (0..size + ALPHABET)
        .map(|i| b'a' + (i % ALPHABET) as u8)
        .collect()
}

/// xorshift64*: a fresh masking key per frame, cheap enough to leave the client's cost
/// unchanged. The key only has to be unpredictable to scripts in a browser; here any varying
/// key gives the server the same work.
struct KeyGen(u64);

impl KeyGen {
    fn next(&mut self) -> [u8; 4] {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let b = (v >> 32).to_le_bytes();
        [b[0], b[1], b[2], b[3]]
    }
}

/// Appends a masked frame of `payload` to `out`.
fn push_frame(out: &mut Vec<u8>, opcode: OpCode, payload: &[u8], key: [u8; 4]) {
    let header = FrameHeader::new(opcode, payload.len() as u64).with_mask(key);
    let at = out.len();
    out.resize(at + MAX_HEADER_LEN, 0);
    // A data or control frame under 125 bytes with room for the longest header: writing
    // cannot fail.
    let n = header.write(&mut out[at..]).unwrap_or(0);
    out.truncate(at + n);
    let start = out.len();
    out.extend_from_slice(payload);
    apply_mask(&mut out[start..], key, 0);
}

/// The standard base64 of 16 bytes, for `Sec-WebSocket-Key`.
fn base64_16(bytes: [u8; 16]) -> [u8; 24] {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = [b'='; 24];
    for (i, chunk) in bytes.chunks(3).enumerate() {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for j in 0..=chunk.len() {
            out[i * 4 + j] = ABC[(v >> (18 - 6 * j)) as usize & 63];
        }
    }
    out
}

/// Connects and upgrades: returns the blocking stream and any bytes that came after the
/// response head.
fn handshake(addr: SocketAddr, path: &str, seed: u64) -> Result<(TcpStream, Vec<u8>), LoadError> {
    let mut stream = TcpStream::connect(addr).map_err(|e| LoadError::Io("connect", e))?;
    stream
        .set_nodelay(true)
        .map_err(|e| LoadError::Io("TCP_NODELAY", e))?;
    stream
        .set_read_timeout(Some(DRAIN_TIMEOUT))
        .map_err(|e| LoadError::Io("read timeout", e))?;
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&seed.to_le_bytes());
    raw[8..].copy_from_slice(&(!seed).rotate_left(17).to_le_bytes());
    let key = base64_16(raw);
    let key = std::str::from_utf8(&key).map_err(|_| LoadError::Config("base64 is ASCII"))?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| LoadError::Io("write the upgrade request", e))?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let head_len = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_RESPONSE_HEAD {
            return Err(LoadError::Handshake("response head too long".into()));
        }
        let n = stream
            .read(&mut chunk)
            .map_err(|e| LoadError::Io("read the upgrade response", e))?;
        if n == 0 {
            return Err(LoadError::Handshake(
                "the server closed before answering".into(),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_len]);
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    if !status.starts_with("HTTP/1.1 101") {
        return Err(LoadError::Handshake(format!("status line `{status}`")));
    }
    let want = accept_key(key.as_bytes());
    let accepted = lines.any(|l| {
        l.split_once(':').is_some_and(|(name, value)| {
            name.eq_ignore_ascii_case("sec-websocket-accept") && value.trim().as_bytes() == want
        })
    });
    if !accepted {
        return Err(LoadError::Handshake(
            "no or a wrong Sec-WebSocket-Accept".into(),
        ));
    }
    let rest = buf[head_len..].to_vec();
    Ok((stream, rest))
}

/// Runs the load: every connection opened and upgraded, then `config.duration` of echoes, then
/// the last echoes awaited and every connection closed with a close handshake.
///
/// # Errors
/// The first failure of any connection: connect, handshake, a protocol error, an echo that
/// differs from what was sent, an early close, or a drain that times out.
pub fn run_load(config: &LoadConfig) -> Result<LoadReport, LoadError> {
    if config.connections == 0 || config.window == 0 || config.threads == 0 {
        return Err(LoadError::Config(
            "connections, window and threads must be at least 1",
        ));
    }
    let threads = config.threads.min(config.connections);
    let barrier = Arc::new(Barrier::new(threads + 1));
    let mut handles = Vec::with_capacity(threads);
    for t in 0..threads {
        // Connection i goes to thread i % threads.
        let ids: Vec<usize> = (t..config.connections).step_by(threads).collect();
        let config = config.clone();
        let barrier = Arc::clone(&barrier);
        let handle = thread::Builder::new()
            .name(format!("ws-load-{t}"))
            .spawn(move || client_thread(&config, &ids, &barrier))
            .map_err(|e| LoadError::Io("spawn a client thread", e))?;
        handles.push(handle);
    }
    // Everyone meets here even when a handshake failed (the thread then reports it), so the
    // clock starts once every connection is upgraded.
    barrier.wait();
    let start = Instant::now();
    let mut report = LoadReport {
        messages: 0,
        elapsed: config.duration,
        client_cpu: Some(Duration::ZERO),
        latency: Histogram::new(),
    };
    let mut first_error = None;
    for h in handles {
        match h.join() {
            Ok(Ok(part)) => {
                report.messages += part.messages;
                report.latency.merge(&part.latency);
                report.client_cpu = match (report.client_cpu, part.cpu) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(_) => {
                first_error.get_or_insert(LoadError::Config("a client thread panicked"));
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    report.elapsed = config.duration.min(start.elapsed());
    Ok(report)
}

struct ThreadReport {
    messages: u64,
    latency: Histogram,
    cpu: Option<Duration>,
}

/// CPU time of the calling thread so far (its first field: nanoseconds on a CPU).
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// One connection of the event loop.
struct Conn {
    id: usize,
    stream: mio::net::TcpStream,
    dec: Decoder,
    /// Bytes queued for the socket, written from `out_at`.
    out: Vec<u8>,
    out_at: usize,
    /// When each message in flight was sent, oldest first.
    in_flight: VecDeque<Instant>,
    /// Messages sent, and messages whose echo completed.
    sent: u64,
    echoed: u64,
    /// Bytes of the current echo so far.
    echo_at: usize,
    close_sent: bool,
    done: bool,
}

struct Shared<'a> {
    config: &'a LoadConfig,
    pattern: &'a [u8],
    keys: KeyGen,
    deadline: Instant,
    latency: Histogram,
    counted: u64,
}

impl Conn {
    fn opcode(text: bool) -> OpCode {
        if text {
            OpCode::Text
        } else {
            OpCode::Binary
        }
    }

    /// Queues messages up to the window, or the close frame once the run is over and every
    /// echo is in.
    fn fill(&mut self, sh: &mut Shared<'_>, now: Instant) {
        if self.out_at == self.out.len() {
            self.out.clear();
            self.out_at = 0;
        }
        if now < sh.deadline {
            while self.in_flight.len() < sh.config.window {
                let p = payload(sh.pattern, self.sent, sh.config.size);
                push_frame(
                    &mut self.out,
                    Self::opcode(sh.config.text),
                    p,
                    sh.keys.next(),
                );
                self.in_flight.push_back(now);
                self.sent += 1;
            }
        } else if self.in_flight.is_empty() && !self.close_sent {
            // 1000, normal closure.
            push_frame(&mut self.out, OpCode::Close, &[0x03, 0xe8], sh.keys.next());
            self.close_sent = true;
        }
    }

    /// Writes what is queued until done or the socket is full.
    fn flush(&mut self) -> Result<(), LoadError> {
        while self.out_at < self.out.len() {
            match self.stream.write(&self.out[self.out_at..]) {
                Ok(0) => return Err(LoadError::Closed(self.id)),
                Ok(n) => self.out_at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(LoadError::Io("write", e)),
            }
        }
        Ok(())
    }

    /// Decodes `buf` (bytes just read), checking every echo byte for byte.
    fn decode(&mut self, buf: &mut [u8], sh: &mut Shared<'_>) -> Result<(), LoadError> {
        let mut at = 0;
        // Until the decoder has nothing more to say: `MessageEnd` can come after the last
        // byte was consumed, from an empty rest.
        while !self.done {
            let step = self.dec.decode(&mut buf[at..])?;
            at += step.consumed;
            let Some(event) = step.event else { break };
            match event {
                Event::Frame(_) | Event::Pong(_) => {}
                Event::MessageStart(kind) => {
                    let want = if sh.config.text {
                        MessageKind::Text
                    } else {
                        MessageKind::Binary
                    };
                    if kind != want || self.in_flight.is_empty() {
                        return Err(self.mismatch(0));
                    }
                }
                Event::Data(bytes) => {
                    let want = payload(sh.pattern, self.echoed, sh.config.size);
                    let end = self.echo_at + bytes.len();
                    let Some(want) = want.get(self.echo_at..end) else {
                        return Err(self.mismatch(sh.config.size));
                    };
                    if want != bytes {
                        let off = want.iter().zip(bytes).take_while(|(a, b)| a == b).count();
                        return Err(self.mismatch(self.echo_at + off));
                    }
                    self.echo_at = end;
                }
                Event::MessageEnd => {
                    if self.echo_at != sh.config.size {
                        return Err(self.mismatch(self.echo_at));
                    }
                    let now = Instant::now();
                    if let Some(sent) = self.in_flight.pop_front() {
                        if now <= sh.deadline {
                            sh.latency.record(now - sent);
                            sh.counted += 1;
                        }
                    }
                    self.echoed += 1;
                    self.echo_at = 0;
                    self.fill(sh, now);
                }
                Event::Ping(p) => {
                    let mut pong = [0u8; MAX_HEADER_LEN + 125];
                    let key = sh.keys.next();
                    let n = encode_control(&mut pong, OpCode::Pong, p, Some(key))
                        .map_err(|_| LoadError::Config("a ping payload over 125 bytes"))?;
                    self.out.extend_from_slice(&pong[..n]);
                }
                Event::Close(_) => {
                    if !self.close_sent || !self.in_flight.is_empty() {
                        return Err(LoadError::Closed(self.id));
                    }
                    self.done = true;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn mismatch(&self, offset: usize) -> LoadError {
        LoadError::Mismatch {
            connection: self.id,
            message: self.echoed,
            offset,
        }
    }
}

/// A client thread's connections, upgraded and registered, with any bytes that came right
/// after each handshake response.
struct Connected {
    poll: Poll,
    conns: Vec<Conn>,
    early: Vec<Vec<u8>>,
}

fn connect_all(config: &LoadConfig, ids: &[usize]) -> Result<Connected, LoadError> {
    let poll = Poll::new().map_err(|e| LoadError::Io("epoll", e))?;
    let mut conns = Vec::with_capacity(ids.len());
    let mut early = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        let (stream, rest) = handshake(config.addr, &config.path, id as u64 + 1)?;
        stream
            .set_nonblocking(true)
            .map_err(|e| LoadError::Io("O_NONBLOCK", e))?;
        let mut stream = mio::net::TcpStream::from_std(stream);
        poll.registry()
            .register(
                &mut stream,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )
            .map_err(|e| LoadError::Io("epoll_ctl", e))?;
        conns.push(Conn {
            id,
            stream,
            dec: Decoder::new(Role::Client),
            out: Vec::with_capacity(config.window * (config.size + MAX_HEADER_LEN) + 256),
            out_at: 0,
            in_flight: VecDeque::with_capacity(config.window),
            sent: 0,
            echoed: 0,
            echo_at: 0,
            close_sent: false,
            done: false,
        });
        early.push(rest);
    }
    Ok(Connected { poll, conns, early })
}

fn client_thread(
    config: &LoadConfig,
    ids: &[usize],
    barrier: &Barrier,
) -> Result<ThreadReport, LoadError> {
    let ready = connect_all(config, ids);
    barrier.wait();
    let Connected {
        mut poll,
        mut conns,
        early,
    } = ready?;
    let pattern = pattern(config.size);
    let start = Instant::now();
    let mut sh = Shared {
        config,
        pattern: &pattern,
        keys: KeyGen(0x9e37_79b9_7f4a_7c15 ^ ids.first().copied().unwrap_or(0) as u64),
        deadline: start + config.duration,
        latency: Histogram::new(),
        counted: 0,
    };
    let mut buf = vec![0u8; READ_BUF];
    for (c, mut rest) in conns.iter_mut().zip(early) {
        if !rest.is_empty() {
            c.decode(&mut rest, &mut sh)?;
        }
        c.fill(&mut sh, start);
        c.flush()?;
    }
    let mut events = Events::with_capacity(1024);
    let mut open = conns.len();
    let mut ended = false;
    let give_up = sh.deadline + DRAIN_TIMEOUT;
    while open > 0 {
        let now = Instant::now();
        if now >= give_up {
            return Err(LoadError::Timeout);
        }
        // Wake at the deadline to queue the close frames of idle connections.
        let wait = if ended {
            give_up - now
        } else {
            sh.deadline.saturating_duration_since(now)
        };
        poll.poll(&mut events, Some(wait))
            .map_err(|e| LoadError::Io("epoll_wait", e))?;
        if !ended && Instant::now() >= sh.deadline {
            ended = true;
            for c in conns.iter_mut().filter(|c| !c.done) {
                c.fill(&mut sh, Instant::now());
                c.flush()?;
            }
        }
        for ev in &events {
            let Some(c) = conns.get_mut(ev.token().0) else {
                continue;
            };
            if c.done {
                continue;
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                // Edge-triggered: read until the socket is empty.
                loop {
                    match c.stream.read(&mut buf) {
                        Ok(0) => {
                            if !c.done {
                                return Err(LoadError::Closed(c.id));
                            }
                            break;
                        }
                        Ok(n) => {
                            c.decode(&mut buf[..n], &mut sh)?;
                            // A short read emptied the socket's queue, and on Linux any byte
                            // arriving later raises a new edge: the read that would only say
                            // EAGAIN is saved, one syscall per echo.
                            if c.done || n < buf.len() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(LoadError::Io("read", e)),
                    }
                }
            }
            if c.done {
                let _ = c.stream.shutdown(Shutdown::Both);
                open -= 1;
                continue;
            }
            c.flush()?;
        }
    }
    Ok(ThreadReport {
        messages: sh.counted,
        latency: sh.latency,
        cpu: thread_cpu(),
    })
}

/// A blocking client on one upgraded connection, for measuring a server one echo at a time:
/// the buffers are allocated by [`WsClient::new`]; [`WsClient::connect`] allocates a few
/// hundred bytes for the handshake, and nothing is allocated afterwards.
#[derive(Debug)]
pub struct WsClient {
    stream: Option<TcpStream>,
    dec: Decoder,
    out: Vec<u8>,
    buf: Vec<u8>,
    /// Received bytes not decoded yet: `buf[at..len]`.
    at: usize,
    len: usize,
    keys: u64,
}

impl WsClient {
    /// A client, not connected yet, for messages of up to `max_size` bytes.
    #[must_use]
    pub fn new(max_size: usize) -> WsClient {
        WsClient {
            stream: None,
            dec: Decoder::new(Role::Client),
            out: Vec::with_capacity(max_size + MAX_HEADER_LEN),
            buf: vec![0u8; READ_BUF],
            at: 0,
            len: 0,
            keys: 0x2545_f491_4f6c_dd1d,
        }
    }

    /// Connects to `addr` and upgrades on `path`, replacing any earlier connection.
    ///
    /// # Errors
    /// When the connection or the upgrade fails.
    pub fn connect(&mut self, addr: SocketAddr, path: &str) -> Result<(), LoadError> {
        let (stream, rest) = handshake(addr, path, 0x5eed)?;
        if rest.len() > self.buf.len() {
            return Err(LoadError::Handshake(
                "more bytes after the response than the buffer holds".into(),
            ));
        }
        self.buf[..rest.len()].copy_from_slice(&rest);
        self.stream = Some(stream);
        self.dec = Decoder::new(Role::Client);
        self.at = 0;
        self.len = rest.len();
        Ok(())
    }

    fn stream(&mut self) -> Result<&mut TcpStream, LoadError> {
        self.stream
            .as_mut()
            .ok_or(LoadError::Config("the client is not connected"))
    }

    fn key(&mut self) -> [u8; 4] {
        let mut k = KeyGen(self.keys);
        let key = k.next();
        self.keys = k.0;
        key
    }

    /// Reads the next bytes into the buffer, all of whose bytes were decoded; `false` at the
    /// end of the stream.
    fn refill(&mut self) -> Result<bool, LoadError> {
        self.at = 0;
        self.len = 0;
        let Some(stream) = self.stream.as_mut() else {
            return Err(LoadError::Config("the client is not connected"));
        };
        self.len = stream
            .read(&mut self.buf)
            .map_err(|e| LoadError::Io("read", e))?;
        Ok(self.len > 0)
    }

    /// Sends `payload` as one masked message (text when `text`) and reads its echo, checking
    /// it byte for byte.
    ///
    /// # Errors
    /// A socket error, a protocol error, a close, or an echo that differs.
    pub fn echo(&mut self, payload: &[u8], text: bool) -> Result<(), LoadError> {
        self.out.clear();
        let key = self.key();
        push_frame(&mut self.out, Conn::opcode(text), payload, key);
        let out = std::mem::take(&mut self.out);
        let written = self
            .stream()
            .and_then(|s| s.write_all(&out).map_err(|e| LoadError::Io("write", e)));
        self.out = out;
        written?;
        let mut got = 0;
        loop {
            let step = self.dec.decode(&mut self.buf[self.at..self.len])?;
            self.at += step.consumed;
            let Some(event) = step.event else {
                if self.refill()? {
                    continue;
                }
                return Err(LoadError::Closed(0));
            };
            let mismatch = |offset| LoadError::Mismatch {
                connection: 0,
                message: 0,
                offset,
            };
            match event {
                Event::Data(bytes) => {
                    let end = got + bytes.len();
                    if payload.get(got..end) != Some(bytes) {
                        return Err(mismatch(got));
                    }
                    got = end;
                }
                Event::MessageEnd => {
                    return if got == payload.len() {
                        Ok(())
                    } else {
                        Err(mismatch(got))
                    };
                }
                Event::Close(_) => return Err(LoadError::Closed(0)),
                _ => {}
            }
        }
    }

    /// Sends a close frame and waits for the server's, then for the end of the stream; the
    /// client can connect again afterwards.
    ///
    /// # Errors
    /// A socket or protocol error before the server's close frame.
    pub fn close(&mut self) -> Result<(), LoadError> {
        self.out.clear();
        let key = self.key();
        push_frame(&mut self.out, OpCode::Close, &[0x03, 0xe8], key);
        let out = std::mem::take(&mut self.out);
        let written = self
            .stream()
            .and_then(|s| s.write_all(&out).map_err(|e| LoadError::Io("write", e)));
        self.out = out;
        let result = written.and_then(|()| self.await_close());
        self.stream = None;
        result
    }

    fn await_close(&mut self) -> Result<(), LoadError> {
        loop {
            let step = self.dec.decode(&mut self.buf[self.at..self.len])?;
            self.at += step.consumed;
            let Some(event) = step.event else {
                if self.refill()? {
                    continue;
                }
                return Ok(());
            };
            if let Event::Close(_) = event {
                // The server closes the TCP connection after its close frame (RFC 6455 §7.1.1);
                // reading to the end makes that part of this call.
                let mut rest = [0u8; 64];
                if let Some(s) = self.stream.as_mut() {
                    while matches!(s.read(&mut rest), Ok(n) if n > 0) {}
                }
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_the_rfc_example_nonce() {
        assert_eq!(
            &base64_16(*b"the sample nonce"),
            b"dGhlIHNhbXBsZSBub25jZQ=="
        );
    }

    #[test]
    fn histogram_buckets_are_within_a_64th() {
        for v in [
            0u64,
            1,
            63,
            64,
            100,
            1000,
            12_345,
            1 << 20,
            987_654_321,
            u64::MAX / 3,
        ] {
            let mid = Histogram::value(Histogram::index(v));
            let err = mid.abs_diff(v) as f64;
            assert!(err <= (v as f64 / 64.0).max(0.5), "{v} -> {mid}");
        }
        let mut h = Histogram::new();
        for us in 1..=100 {
            h.record(Duration::from_micros(us));
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 - 50_000.0).abs() < 50_000.0 / 60.0, "{p50}");
    }
}
