//! The client of the fault soak (`benches/load/soak.sh`): drives a running server-demo on
//! loopback with a mix of good and hostile clients for a bounded time, checks every answer
//! byte for byte, and then checks that the server is back where it started.
//!
//! `soak_client --addr ADDR --pid PID [flags]` runs in three steps:
//!
//! 1. **baseline**: waits until the server answers, reads its open descriptors
//!    (`/proc/PID/fd`) and what the pool reports as rented while answering `/stats` itself;
//! 2. **warm-up** (`--warm-secs`) and **main** (the rest of `--secs`): every scenario below runs
//!    on its own threads until the phase's deadline; after each phase the client closes its
//!    connections and waits until the server holds none of them (`/stats`), then reads the
//!    server's RSS (`VmRSS` of `/proc/PID/status`); the figure after the warm-up is the "warm" one;
//! 3. **checks**: prints the per-scenario table and the checks table (also written as Markdown
//!    to `--out`), and exits 1 if a check failed.
//!
//! Every exchange falls in one of three bins. A *valid request* must get the right response:
//! status, framing and body compared byte for byte with what was sent (an echo) or what the
//! route returns. A *refusal by design* (a head over `--max-head`, a body over `--max-body`, a
//! head trickled slower than the header timeout) must get its status (431, 413, 408) and the
//! close. A *deliberate abort* (a reset mid-head, mid-body or mid-response, a client gone before
//! the answer) has no expected answer; what it must not do is leave anything behind, which the
//! end checks see. Connections the server refuses during a deliberate burst over its connection
//! slots are counted apart, and must match the server's own `connections_rejected` count.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError, RwLock};
use std::thread;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: soak_client --pid PID [flags]

  --addr ADDR               server address (default 127.0.0.1:8080)
  --pid PID                 the server's process id, for /proc/PID/fd and /proc/PID/status
  --secs S                  traffic time, warm-up included (default 600)
  --warm-secs S             warm-up before the warm RSS figure (default: secs / 10, 5 ..= 60)
  --workers N               the server's --workers (default 2)
  --max-conns N             the server's --max-conns, per worker (default 64)
  --max-head N              the server's --max-head (default 8192)
  --max-body N              the server's --max-body (default 1048576)
  --header-timeout-ms N     the server's --header-timeout-ms (default 2000)
  --idle-timeout-ms N       the server's --idle-timeout-ms (default 5000)
  --pool-burst-conns N      connections in each pool-exhausting burst (default 48)
  --seed N                  random seed (default 1)
  --out FILE                write the tables there as Markdown
  -h, --help                this text

Exits 0 when every check passes, 1 when one fails, 2 on a bad command line.
";

/// Longest a read or a write may block before the answer counts as missing.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Bodies at least this large are written from a second thread while the response is read,
/// as an echo answers while the body still arrives.
const WRITE_ASIDE: usize = 32 * 1024;

/// A response head larger than this is malformed.
const MAX_RESPONSE_HEAD: usize = 16 * 1024;

/// Failure descriptions kept for the report.
const MAX_FAILURES: usize = 40;

const PLAINTEXT: &[u8] = b"Hello, World!";
const JSON: &[u8] = br#"{"message":"Hello, World!"}"#;

#[derive(Clone, Debug)]
struct Args {
    addr: SocketAddr,
    pid: u32,
    secs: u64,
    warm_secs: Option<u64>,
    workers: usize,
    max_conns: usize,
    max_head: usize,
    max_body: usize,
    header_timeout: Duration,
    idle_timeout: Duration,
    pool_burst_conns: usize,
    seed: u64,
    out: Option<PathBuf>,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        addr: ([127, 0, 0, 1], 8080).into(),
        pid: 0,
        secs: 600,
        warm_secs: None,
        workers: 2,
        max_conns: 64,
        max_head: 8192,
        max_body: 1 << 20,
        header_timeout: Duration::from_millis(2000),
        idle_timeout: Duration::from_millis(5000),
        pool_burst_conns: 48,
        seed: 1,
        out: None,
    };
    let parsed = bufslab_benches::parse_flags(args, |f| {
        match f.name() {
            "--addr" => a.addr = f.parse("an address like 127.0.0.1:8080")?,
            "--pid" => a.pid = f.parse("a process id")?,
            "--secs" => a.secs = f.parse("a number of seconds")?,
            "--warm-secs" => a.warm_secs = Some(f.parse("a number of seconds")?),
            "--workers" => a.workers = f.parse("a number")?,
            "--max-conns" => a.max_conns = f.parse("a number")?,
            "--max-head" => a.max_head = f.parse("a number of bytes")?,
            "--max-body" => a.max_body = f.parse("a number of bytes")?,
            "--header-timeout-ms" => {
                a.header_timeout = Duration::from_millis(f.parse("milliseconds")?);
            }
            "--idle-timeout-ms" => a.idle_timeout = Duration::from_millis(f.parse("milliseconds")?),
            "--pool-burst-conns" => a.pool_burst_conns = f.parse("a number")?,
            "--seed" => a.seed = f.parse("a number")?,
            "--out" => a.out = Some(PathBuf::from(f.value()?)),
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    if parsed.is_none() {
        return Ok(None);
    }
    if a.pid == 0 {
        return Err("--pid is required".to_owned());
    }
    if !a.addr.ip().is_loopback() {
        return Err(format!("{} is not a loopback address", a.addr));
    }
    if a.secs < 10 || a.header_timeout < Duration::from_millis(200) {
        return Err("--secs must be at least 10 and the header timeout at least 200 ms".to_owned());
    }
    if a.max_body < 64 * 1024 {
        return Err("--max-body must be at least 65536".to_owned());
    }
    Ok(Some(a))
}

fn main() -> ExitCode {
    let args = match bufslab_benches::args_or_exit(
        "soak_client",
        USAGE,
        parse_args(std::env::args().skip(1)),
    ) {
        Ok(a) => a,
        Err(code) => return code,
    };
    // However the server behaves, the client ends: every read and write is bounded by
    // IO_TIMEOUT, and this watchdog bounds the whole.
    let hard_limit = Duration::from_secs(args.secs + 300);
    thread::spawn(move || {
        thread::sleep(hard_limit);
        eprintln!("soak_client: still running {hard_limit:?} after the start; giving up");
        std::process::exit(1);
    });
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak_client: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random numbers: xorshift64*, enough to vary sizes and split points reproducibly.

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi.saturating_sub(lo) as u64 + 1)) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&self.next().to_le_bytes());
        }
        v.truncate(n);
        v
    }

    /// An echo body size: mostly small, often over one 4 KiB block, now and then up to `max`.
    fn body_len(&mut self, max: usize) -> usize {
        match self.next() % 10 {
            0..=3 => self.range(0, 512),
            4..=6 => self.range(513, 8192),
            7 | 8 => self.range(8193, 128 * 1024),
            _ => self.range(128 * 1024, max),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tally.

#[derive(Default)]
struct Tally {
    right: u64,
    wrong: u64,
    missing: u64,
    /// Outcomes with no answer to check (resets, refused slots), by name.
    other: BTreeMap<&'static str, u64>,
}

/// What kind of exchanges a scenario makes, for the checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Valid,
    Refusal,
    Abort,
}

#[derive(Default)]
struct Book {
    tallies: Mutex<BTreeMap<&'static str, Tally>>,
    failures: Mutex<Vec<String>>,
    failure_count: AtomicU64,
}

impl Book {
    fn with(&self, sc: &'static str, f: impl FnOnce(&mut Tally)) {
        let mut t = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
        f(t.entry(sc).or_default());
    }

    fn right(&self, sc: &'static str) {
        self.with(sc, |t| t.right += 1);
    }

    fn other(&self, sc: &'static str, what: &'static str) {
        self.with(sc, |t| *t.other.entry(what).or_default() += 1);
    }

    fn fail(&self, sc: &'static str, fail: &Fail, context: &str) {
        let missing = fail.is_missing();
        self.with(sc, |t| {
            if missing {
                t.missing += 1;
            } else {
                t.wrong += 1;
            }
        });
        self.note(format!(
            "{sc}: {} ({fail}) {context}",
            if missing { "missing" } else { "wrong" }
        ));
    }

    fn note(&self, line: String) {
        self.failure_count.fetch_add(1, Relaxed);
        let mut f = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if f.len() < MAX_FAILURES {
            eprintln!("soak_client: {line}");
            f.push(line);
        }
    }
}

/// Why an exchange did not give the expected answer.
#[derive(Debug)]
enum Fail {
    /// The connection ended before the response was whole; `got` bytes of it had come.
    Eof { got: u64 },
    /// Reset by the server before the response was whole.
    Reset { got: u64 },
    /// Nothing more for `IO_TIMEOUT`.
    Timeout,
    /// Another socket error (connect, write).
    Io(String),
    /// A response came, but not the right one.
    Wrong(String),
}

impl Fail {
    fn is_missing(&self) -> bool {
        !matches!(self, Fail::Wrong(_))
    }

    /// Nothing of a response came: the connection was closed or reset at once.
    fn nothing_came(&self) -> bool {
        matches!(self, Fail::Eof { got: 0 } | Fail::Reset { got: 0 })
    }
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Eof { got } => write!(f, "closed after {got} bytes of the response"),
            Fail::Reset { got } => write!(f, "reset after {got} bytes of the response"),
            Fail::Timeout => write!(f, "no answer in {IO_TIMEOUT:?}"),
            Fail::Io(e) => write!(f, "{e}"),
            Fail::Wrong(e) => write!(f, "{e}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One client connection and its response reader.

struct Head {
    version: String,
    status: u16,
    /// Field names lower-cased.
    fields: Vec<(String, String)>,
}

impl Head {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn closes(&self) -> bool {
        self.field("connection")
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")))
    }

    fn chunked(&self) -> bool {
        self.field("transfer-encoding")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("chunked"))
    }
}

struct Response {
    head: Head,
    body: Vec<u8>,
}

struct Peer {
    s: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    /// Bytes received since the current response began.
    got: u64,
}

impl Peer {
    fn new(s: TcpStream) -> Peer {
        Peer {
            s,
            buf: Vec::with_capacity(64 * 1024),
            pos: 0,
            got: 0,
        }
    }

    fn connect(addr: SocketAddr) -> io::Result<Peer> {
        Peer::connect_with(addr, None)
    }

    /// `rcvbuf`: a receive buffer this small (set before connecting, so the window stays
    /// small) keeps what the server sends in the server's own blocks.
    fn connect_with(addr: SocketAddr, rcvbuf: Option<usize>) -> io::Result<Peer> {
        let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        if let Some(n) = rcvbuf {
            sock.set_recv_buffer_size(n)?;
        }
        sock.connect_timeout(&addr.into(), IO_TIMEOUT)?;
        let s = TcpStream::from(sock);
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        s.set_write_timeout(Some(IO_TIMEOUT))?;
        s.set_nodelay(true)?;
        Ok(Peer::new(s))
    }

    fn avail(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Reads what the socket has into the buffer.
    fn fill(&mut self) -> Result<(), Fail> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos >= 32 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let old = self.buf.len();
        self.buf.resize(old + 64 * 1024, 0);
        let r = self.s.read(&mut self.buf[old..]);
        let n = *r.as_ref().unwrap_or(&0);
        self.buf.truncate(old + n);
        match r {
            Ok(0) => Err(Fail::Eof { got: self.got }),
            Ok(n) => {
                self.got += n as u64;
                Ok(())
            }
            Err(e) => Err(self.io_fail(&e)),
        }
    }

    fn io_fail(&self, e: &io::Error) -> Fail {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Fail::Timeout,
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
                Fail::Reset { got: self.got }
            }
            _ => Fail::Io(e.to_string()),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], Fail> {
        while self.avail().len() < n {
            self.fill()?;
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..start + n])
    }

    /// One line without its CR LF.
    fn line(&mut self) -> Result<String, Fail> {
        loop {
            if let Some(i) = self.avail().windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.avail()[..i]).into_owned();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.avail().len() > MAX_RESPONSE_HEAD {
                return Err(Fail::Wrong("a response line over 16 KiB".to_owned()));
            }
            self.fill()?;
        }
    }

    fn head(&mut self) -> Result<Head, Fail> {
        self.got = self.avail().len() as u64;
        let status_line = self.line()?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default().to_owned();
        let status = parts
            .next()
            .and_then(|s| s.parse::<u16>().ok())
            .filter(|_| version.starts_with("HTTP/1."))
            .ok_or_else(|| Fail::Wrong(format!("bad status line {status_line:?}")))?;
        let mut fields = Vec::new();
        loop {
            let line = self.line()?;
            if line.is_empty() {
                break;
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| Fail::Wrong(format!("bad field line {line:?}")))?;
            fields.push((name.to_ascii_lowercase(), value.trim().to_owned()));
            if fields.len() > 100 {
                return Err(Fail::Wrong("over 100 response fields".to_owned()));
            }
        }
        Ok(Head {
            version,
            status,
            fields,
        })
    }

    /// A chunked body, appended to `out` as it comes (so a cut-short one shows what came).
    fn chunked_body(&mut self, out: &mut Vec<u8>) -> Result<(), Fail> {
        loop {
            let line = self.line()?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| Fail::Wrong(format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                // Trailer fields until the empty line.
                while !self.line()?.is_empty() {}
                return Ok(());
            }
            out.extend_from_slice(self.take(size)?);
            if self.take(2)? != b"\r\n" {
                return Err(Fail::Wrong("chunk data not followed by CR LF".to_owned()));
            }
        }
    }

    fn body(&mut self, head: &Head, head_only: bool) -> Result<Vec<u8>, Fail> {
        let mut body = Vec::new();
        if head_only || head.status < 200 || head.status == 204 || head.status == 304 {
            return Ok(body);
        }
        if head.chunked() {
            self.chunked_body(&mut body)?;
        } else {
            let len = head
                .field("content-length")
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| Fail::Wrong("no Content-Length and not chunked".to_owned()))?;
            body.extend_from_slice(self.take(len)?);
        }
        Ok(body)
    }

    fn response(&mut self, head_only: bool) -> Result<Response, Fail> {
        let head = self.head()?;
        let body = self.body(&head, head_only)?;
        Ok(Response { head, body })
    }

    /// After a response that said `Connection: close`: the server must close, sending nothing
    /// more.
    fn expect_close(&mut self) -> Result<(), Fail> {
        if !self.avail().is_empty() {
            return Err(Fail::Wrong(
                "bytes after a Connection: close response".to_owned(),
            ));
        }
        self.got = 0;
        match self.fill() {
            Err(Fail::Eof { .. } | Fail::Reset { .. }) => Ok(()),
            Err(Fail::Timeout) => Err(Fail::Wrong(
                "the connection stayed open after Connection: close".to_owned(),
            )),
            Err(e) => Err(e),
            Ok(()) => Err(Fail::Wrong(
                "bytes after a Connection: close response".to_owned(),
            )),
        }
    }

    /// Writes `head` and `body` and reads the response; a large body is written from a second
    /// thread meanwhile, since the server echoes it before it has all of it.
    fn send_read(&mut self, head: &[u8], body: &[u8], head_only: bool) -> Result<Response, Fail> {
        if body.len() < WRITE_ASIDE {
            let mut all = Vec::with_capacity(head.len() + body.len());
            all.extend_from_slice(head);
            all.extend_from_slice(body);
            self.s.write_all(&all).map_err(|e| self.io_fail(&e))?;
            return self.response(head_only);
        }
        let mut w = self.s.try_clone().map_err(|e| Fail::Io(e.to_string()))?;
        thread::scope(|sc| {
            let writer = sc.spawn(move || w.write_all(head).and_then(|()| w.write_all(body)));
            let r = self.response(head_only);
            if r.is_err() {
                // Unblock a writer the server no longer reads from.
                let _ = self.s.shutdown(Shutdown::Both);
            }
            let _ = writer.join();
            r
        })
    }

    /// Closes with a reset (`SO_LINGER` 0) instead of a FIN.
    fn reset(self) {
        let _ = socket2::SockRef::from(&self.s).set_linger(Some(Duration::ZERO));
        drop(self);
    }
}

// ---------------------------------------------------------------------------------------------
// Requests and what they must get.

/// What a valid request must get back.
#[derive(Clone)]
enum Expect {
    Plaintext,
    Json,
    NotFound,
    NotAllowed,
    Echo { body: Vec<u8>, chunked: bool },
}

/// A valid request.
struct Request {
    head: Vec<u8>,
    body: Vec<u8>,
    expect: Expect,
    head_only: bool,
    /// The response must say `Connection: close`, and the server close after it.
    close: bool,
    /// `Expect: 100-continue`: the body goes only after a `100 Continue`.
    continue_100: bool,
}

impl Request {
    fn get(path: &str, expect: Expect) -> Request {
        Request {
            head: format!("GET {path} HTTP/1.1\r\nHost: soak\r\n\r\n").into_bytes(),
            body: Vec::new(),
            expect,
            head_only: false,
            close: false,
            continue_100: false,
        }
    }

    fn echo(body: Vec<u8>, continue_100: bool) -> Request {
        let expect = if continue_100 {
            "Expect: 100-continue\r\n"
        } else {
            ""
        };
        Request {
            head: format!(
                "POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Type: application/octet-stream\r\n\
                 {expect}Content-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes(),
            expect: Expect::Echo {
                body: body.clone(),
                chunked: false,
            },
            body,
            head_only: false,
            close: false,
            continue_100,
        }
    }

    /// A chunked echo of `data`: random chunk sizes, now and then a chunk extension, upper-case
    /// hex or a trailer field.
    fn echo_chunked(rng: &mut Rng, data: Vec<u8>) -> Request {
        let mut body = Vec::with_capacity(data.len() + data.len() / 64 + 64);
        let mut at = 0;
        while at < data.len() {
            let n = rng.range(1, 16 * 1024).min(data.len() - at);
            if rng.percent(50) {
                let _ = write!(SliceWriter(&mut body), "{n:X}");
            } else {
                let _ = write!(SliceWriter(&mut body), "{n:x}");
            }
            if rng.percent(10) {
                body.extend_from_slice(b";ext=1");
            }
            body.extend_from_slice(b"\r\n");
            body.extend_from_slice(&data[at..at + n]);
            body.extend_from_slice(b"\r\n");
            at += n;
        }
        body.extend_from_slice(b"0\r\n");
        if rng.percent(10) {
            body.extend_from_slice(b"X-Trailer: t\r\n");
        }
        body.extend_from_slice(b"\r\n");
        Request {
            head: b"POST /echo HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec(),
            body,
            expect: Expect::Echo {
                body: data,
                chunked: true,
            },
            head_only: false,
            close: false,
            continue_100: false,
        }
    }

    /// One of the small requests: the GET routes, HEAD, 404, 405, a small echo.
    fn small(rng: &mut Rng) -> Request {
        match rng.next() % 10 {
            0..=2 => Request::get("/plaintext", Expect::Plaintext),
            3 | 4 => Request::get("/json", Expect::Json),
            5 => Request {
                head: b"HEAD /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n".to_vec(),
                head_only: true,
                ..Request::get("/plaintext", Expect::Plaintext)
            },
            6 => Request::get("/no/such/path", Expect::NotFound),
            7 => Request {
                head: b"DELETE /json HTTP/1.1\r\nHost: soak\r\n\r\n".to_vec(),
                ..Request::get("/json", Expect::NotAllowed)
            },
            _ => {
                let n = rng.range(0, 2048);
                Request::echo(rng.bytes(n), false)
            }
        }
    }

    /// A `GET /plaintext` whose head outgrows one 4 KiB block but not `max_head` (a large
    /// cookie, as browsers send).
    fn large_head(rng: &mut Rng, max_head: usize) -> Request {
        let base = "GET /plaintext HTTP/1.1\r\nHost: soak\r\nCookie: c=\r\n\r\n".len();
        let n = rng.range(4200, max_head.max(4400) - 100) - base;
        let cookie: String = (0..n)
            .map(|_| char::from(b'a' + (rng.next() % 26) as u8))
            .collect();
        Request {
            head: format!("GET /plaintext HTTP/1.1\r\nHost: soak\r\nCookie: c={cookie}\r\n\r\n")
                .into_bytes(),
            ..Request::get("/plaintext", Expect::Plaintext)
        }
    }

    /// Adds `Connection: close` to the head.
    fn closing(mut self) -> Request {
        let end = self.head.len() - 2;
        self.head
            .splice(end..end, b"Connection: close\r\n".iter().copied());
        self.close = true;
        self
    }

    /// Checks a response against what this request must get.
    fn check(&self, r: &Response) -> Result<(), String> {
        let h = &r.head;
        if h.version != "HTTP/1.1" {
            return Err(format!("version {}", h.version));
        }
        let status = match self.expect {
            Expect::Plaintext | Expect::Json | Expect::Echo { .. } => 200,
            Expect::NotFound => 404,
            Expect::NotAllowed => 405,
        };
        if h.status != status {
            return Err(format!("status {}, expected {status}", h.status));
        }
        if h.closes() != self.close {
            return Err(format!(
                "Connection: close {} (expected {})",
                h.closes(),
                self.close
            ));
        }
        if matches!(self.expect, Expect::NotAllowed) && h.field("allow").is_none() {
            return Err("405 without Allow".to_owned());
        }
        let want: &[u8] = match &self.expect {
            Expect::Plaintext => PLAINTEXT,
            Expect::Json => JSON,
            Expect::Echo { body, chunked } => {
                if h.chunked() != *chunked {
                    return Err(format!(
                        "chunked response {} for chunked request {chunked}",
                        h.chunked()
                    ));
                }
                body
            }
            Expect::NotFound | Expect::NotAllowed => return Ok(()),
        };
        if self.head_only {
            let len = h.field("content-length").unwrap_or_default();
            if len != want.len().to_string() || !r.body.is_empty() {
                return Err(format!(
                    "HEAD: Content-Length {len:?}, {} body bytes",
                    r.body.len()
                ));
            }
            return Ok(());
        }
        if r.body != want {
            let at = r.body.iter().zip(want).position(|(a, b)| a != b);
            return Err(format!(
                "body of {} bytes differs from the {} expected (first difference at {:?})",
                r.body.len(),
                want.len(),
                at
            ));
        }
        Ok(())
    }
}

/// `write!` into a `Vec<u8>`.
struct SliceWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The shared context of a run.

/// A `/stats` snapshot, the fields the checks use.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    connections_open: u64,
    connections_rejected: u64,
    pool_waits: u64,
    rented_blocks: u64,
    requests: u64,
    header_timeouts: u64,
    pool_allocated: u64,
}

#[derive(Default)]
struct Bursts {
    pool: u64,
    pool_exhausted: u64,
    pool_waits: u64,
    slot: u64,
    slot_served: u64,
    slot_refused: u64,
    slot_refused_server: u64,
}

struct Ctx {
    args: Args,
    /// New connections take it shared while connecting; a burst over the connection slots
    /// takes it whole, so only the burst's connections are refused.
    gate: RwLock<()>,
    book: Book,
    bursts: Mutex<Bursts>,
    /// `/stats` connections the server refused (during a slot burst).
    stats_refused: AtomicU64,
}

impl Ctx {
    /// A new connection for a scenario; a failed connect counts as a missing answer.
    fn open(&self, sc: &'static str) -> Option<Peer> {
        self.open_with(sc, None)
    }

    fn open_with(&self, sc: &'static str, rcvbuf: Option<usize>) -> Option<Peer> {
        let peer = {
            let _g = self.gate.read().unwrap_or_else(PoisonError::into_inner);
            Peer::connect_with(self.args.addr, rcvbuf)
        };
        match peer {
            Ok(p) => Some(p),
            Err(e) => {
                self.book.fail(sc, &Fail::Io(format!("connect: {e}")), "");
                thread::sleep(Duration::from_millis(100));
                None
            }
        }
    }

    /// Sends a valid request and checks its answer; false when the connection is done.
    fn exchange(&self, sc: &'static str, peer: &mut Peer, req: &Request) -> bool {
        let r = if req.continue_100 {
            self.continued(peer, req)
        } else {
            peer.send_read(&req.head, &req.body, req.head_only)
        };
        let r = r.and_then(|r| req.check(&r).map(|()| r).map_err(Fail::Wrong));
        let r = r.and_then(|_| {
            if req.close {
                peer.expect_close()
            } else {
                Ok(())
            }
        });
        match r {
            Ok(()) => {
                self.book.right(sc);
                !req.close
            }
            Err(f) => {
                let head =
                    String::from_utf8_lossy(&req.head[..req.head.len().min(60)]).into_owned();
                self.book.fail(
                    sc,
                    &f,
                    &format!("for {head:?}, body {} bytes", req.body.len()),
                );
                false
            }
        }
    }

    /// `Expect: 100-continue`: the head, the `100 Continue`, then the body and the answer.
    fn continued(&self, peer: &mut Peer, req: &Request) -> Result<Response, Fail> {
        peer.s.write_all(&req.head).map_err(|e| peer.io_fail(&e))?;
        let head = peer.head()?;
        if head.status == 100 {
            return peer.send_read(&[], &req.body, req.head_only);
        }
        // With no body to wait for, the final answer may come at once (RFC 9110 §10.1.1).
        if req.body.is_empty() && head.status >= 200 {
            let body = peer.body(&head, req.head_only)?;
            return Ok(Response { head, body });
        }
        Err(Fail::Wrong(format!(
            "status {} instead of 100 Continue",
            head.status
        )))
    }

    /// `/stats` on a connection of its own (retried if a full server refuses it).
    fn stats(&self) -> Result<Stats, String> {
        let mut last = String::new();
        for _ in 0..50 {
            match self.stats_once() {
                Ok(s) => return Ok(s),
                Err((refused, e)) => {
                    if refused {
                        self.stats_refused.fetch_add(1, Relaxed);
                    }
                    last = e;
                    thread::sleep(Duration::from_millis(100));
                }
            }
        }
        Err(format!("GET /stats failed: {last}"))
    }

    fn stats_once(&self) -> Result<Stats, (bool, String)> {
        let mut p = Peer::connect(self.args.addr).map_err(|e| (false, e.to_string()))?;
        let r = p
            .send_read(
                b"GET /stats HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n",
                &[],
                false,
            )
            .map_err(|f| (f.nothing_came(), f.to_string()))?;
        if r.head.status != 200 {
            return Err((false, format!("/stats answered {}", r.head.status)));
        }
        let v: serde_json::Value =
            serde_json::from_slice(&r.body).map_err(|e| (false, e.to_string()))?;
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        let pool = |k: &str| {
            v.get("pool")
                .and_then(|p| p.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        Ok(Stats {
            connections_open: n("connections_open"),
            connections_rejected: n("connections_rejected"),
            pool_waits: n("pool_waits"),
            requests: n("requests"),
            header_timeouts: n("header_timeouts"),
            rented_blocks: pool("rented_blocks"),
            pool_allocated: pool("allocated_bytes"),
        })
    }

    /// Waits until the server holds no connection but the `/stats` one asking, and no more
    /// blocks than `rented_idle`; returns the last snapshot and whether it got there.
    fn quiesce(&self, rented_idle: u64) -> Result<(Stats, bool), String> {
        let a = &self.args;
        let limit = Instant::now() + a.idle_timeout.max(a.header_timeout) + Duration::from_secs(10);
        loop {
            let s = self.stats()?;
            if s.connections_open <= 1 && s.rented_blocks <= rented_idle {
                return Ok((s, true));
            }
            if Instant::now() >= limit {
                return Ok((s, false));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The scenarios. Each runs until `until`, starting nothing it cannot finish by then (give or
// take one exchange).

const KEEP_ALIVE: &str = "keep-alive (GET, HEAD, 404, 405, echo CL, 100-continue)";
const PIPELINED: &str = "pipelined 16 deep";
const CHUNKED: &str = "echo chunked";
const CHURN: &str = "churn (new connection per request)";
const SLOW_OK: &str = "slow head within the header timeout";
const SLOW_BODY: &str = "slow body within the idle timeout";
const SLOW_408: &str = "slow head past the header timeout (408)";
const RESET: &str = "reset mid-head / mid-body / mid-response";
const GONE: &str = "gone before the answer (FIN)";
const HEAD_431: &str = "head over --max-head (431)";
const BODY_413: &str = "body over --max-body (413)";
const POOL_BURST: &str = "burst exhausting the pool";
const SLOT_BURST: &str = "burst over the connection slots";

fn kind_of(sc: &str) -> Kind {
    match sc {
        SLOW_408 | HEAD_431 | BODY_413 => Kind::Refusal,
        RESET | GONE => Kind::Abort,
        _ => Kind::Valid,
    }
}

fn keep_alive(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(KEEP_ALIVE) else {
            continue;
        };
        for _ in 0..rng.range(1, 200) {
            if Instant::now() >= until {
                break;
            }
            let req = if rng.percent(40) {
                let n = rng.body_len(ctx.args.max_body);
                Request::echo(rng.bytes(n), rng.percent(10))
            } else if rng.percent(3) {
                Request::large_head(rng, ctx.args.max_head)
            } else {
                Request::small(rng)
            };
            if !ctx.exchange(KEEP_ALIVE, &mut peer, &req) {
                break;
            }
        }
    }
}

fn pipelined(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(PIPELINED) else {
            continue;
        };
        'batches: for _ in 0..rng.range(1, 100) {
            if Instant::now() >= until {
                break;
            }
            let batch: Vec<Request> = (0..16).map(|_| Request::small(rng)).collect();
            let mut bytes = Vec::new();
            for r in &batch {
                bytes.extend_from_slice(&r.head);
                bytes.extend_from_slice(&r.body);
            }
            if let Err(e) = peer.s.write_all(&bytes) {
                ctx.book
                    .fail(PIPELINED, &peer.io_fail(&e), "writing a batch");
                break;
            }
            for (i, req) in batch.iter().enumerate() {
                let r = peer
                    .response(req.head_only)
                    .and_then(|r| req.check(&r).map_err(Fail::Wrong));
                match r {
                    Ok(()) => ctx.book.right(PIPELINED),
                    Err(f) => {
                        ctx.book.fail(PIPELINED, &f, &format!("response {i} of 16"));
                        for _ in i + 1..16 {
                            ctx.book
                                .fail(PIPELINED, &Fail::Eof { got: 0 }, "after a failed one");
                        }
                        break 'batches;
                    }
                }
            }
        }
    }
}

fn chunked(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(CHUNKED) else {
            continue;
        };
        for _ in 0..rng.range(1, 50) {
            if Instant::now() >= until {
                break;
            }
            let n = rng.body_len(ctx.args.max_body);
            let data = rng.bytes(n);
            let req = Request::echo_chunked(rng, data);
            if !ctx.exchange(CHUNKED, &mut peer, &req) {
                break;
            }
        }
    }
}

fn churn(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(CHURN) else {
            continue;
        };
        match rng.next() % 10 {
            // The client closes after its one answer.
            0..=3 => {
                let req = Request::small(rng);
                ctx.exchange(CHURN, &mut peer, &req);
            }
            4..=6 => {
                let req = Request::small(rng).closing();
                ctx.exchange(CHURN, &mut peer, &req);
            }
            7 | 8 => {
                // HTTP/1.0 without keep-alive: answered in HTTP/1.1 and closed.
                let req = Request {
                    head: b"GET /plaintext HTTP/1.0\r\n\r\n".to_vec(),
                    close: true,
                    ..Request::get("/plaintext", Expect::Plaintext)
                };
                ctx.exchange(CHURN, &mut peer, &req);
            }
            _ => {
                // Sends a request and goes away (FIN) without reading the answer.
                let n = rng.range(0, 64 * 1024);
                let req = Request::echo(rng.bytes(n), false);
                let _ = peer.s.write_all(&req.head);
                let _ = peer.s.write_all(&req.body);
                ctx.book.other(GONE, "requests");
            }
        }
    }
}

/// Heads trickled well within the header timeout, and bodies with pauses well within the idle
/// timeout: both must be served.
fn slow_within(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    let a = &ctx.args;
    while Instant::now() + a.header_timeout.max(a.idle_timeout) < until {
        let Some(mut peer) = ctx.open(SLOW_OK) else {
            continue;
        };
        if rng.percent(50) {
            let req = Request::small(rng);
            let pieces = 6;
            let gap = a.header_timeout / 2 / pieces;
            let step = req.head.len().div_ceil(pieces as usize);
            let mut ok = true;
            for piece in req.head.chunks(step) {
                ok &= peer.s.write_all(piece).is_ok();
                thread::sleep(gap);
            }
            let r = if ok {
                peer.send_read(&[], &req.body, req.head_only)
            } else {
                Err(Fail::Io("write failed while trickling the head".to_owned()))
            };
            match r.and_then(|r| req.check(&r).map_err(Fail::Wrong)) {
                Ok(()) => ctx.book.right(SLOW_OK),
                Err(f) => ctx.book.fail(SLOW_OK, &f, "trickled head"),
            }
            // The connection must be as good as new afterwards.
            ctx.exchange(SLOW_OK, &mut peer, &Request::get("/json", Expect::Json));
        } else {
            let n = rng.range(1, 24 * 1024);
            let req = Request::echo(rng.bytes(n), false);
            let pieces = 5;
            let gap = a.idle_timeout / 4 / pieces;
            let step = n.div_ceil(pieces as usize);
            let mut ok = peer.s.write_all(&req.head).is_ok();
            for piece in req.body.chunks(step) {
                thread::sleep(gap);
                ok &= peer.s.write_all(piece).is_ok();
            }
            let r = if ok {
                peer.response(false)
            } else {
                Err(Fail::Io("write failed while trickling the body".to_owned()))
            };
            match r.and_then(|r| req.check(&r).map_err(Fail::Wrong)) {
                Ok(()) => ctx.book.right(SLOW_BODY),
                Err(f) => ctx
                    .book
                    .fail(SLOW_BODY, &f, &format!("trickled body of {n} bytes")),
            }
        }
    }
}

/// A head trickled one byte per quarter of the header timeout, never finished: the server
/// must answer 408 with `Connection: close` and close.
fn slow_past(ctx: &Ctx, until: Instant) {
    let a = &ctx.args;
    let head = b"GET /plaintext HTTP/1.1\r\nHost: soak\r\nX-Slow: ";
    while Instant::now() + a.header_timeout * 3 < until {
        let Some(mut peer) = ctx.open(SLOW_408) else {
            continue;
        };
        let step = a.header_timeout / 4;
        let _ = peer.s.set_read_timeout(Some(step));
        let give_up = Instant::now() + a.header_timeout * 3;
        let mut sent = 0;
        let answer = loop {
            let byte = head.get(sent).copied().unwrap_or(b'a');
            if peer.s.write_all(&[byte]).is_err() {
                break None;
            }
            sent += 1;
            match peer.fill() {
                Ok(()) => break Some(()),
                Err(Fail::Timeout) if Instant::now() < give_up => {}
                Err(Fail::Timeout) => {
                    break Some(());
                }
                Err(_) => break None,
            }
        };
        let _ = peer.s.set_read_timeout(Some(IO_TIMEOUT));
        let r = match answer {
            // Something came (or nothing for three header timeouts): it must be the 408.
            Some(()) => peer.response(false),
            None => Err(Fail::Eof { got: peer.got }),
        };
        let r = r.and_then(|r| {
            if r.head.status == 408 && r.head.closes() {
                peer.expect_close()
            } else {
                Err(Fail::Wrong(format!(
                    "status {} close {} instead of 408 and close",
                    r.head.status,
                    r.head.closes()
                )))
            }
        });
        match r {
            Ok(()) => ctx.book.right(SLOW_408),
            Err(f) => ctx
                .book
                .fail(SLOW_408, &f, &format!("after {sent} head bytes")),
        }
    }
}

/// Clients that reset (`SO_LINGER` 0) mid-head, mid-body (by length or chunked) or while
/// their answer is on its way.
fn resets(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(RESET) else {
            continue;
        };
        let pause = Duration::from_millis(rng.range(0, 20) as u64);
        match rng.next() % 4 {
            0 => {
                let req = Request::small(rng);
                let cut = rng.range(1, req.head.len() - 1);
                let _ = peer.s.write_all(&req.head[..cut]);
                thread::sleep(pause);
                peer.reset();
                ctx.book.other(RESET, "mid-head");
            }
            1 => {
                let n = rng.range(2, ctx.args.max_body);
                let req = Request::echo(rng.bytes(n), false);
                let cut = rng.range(1, (n - 1).min(48 * 1024));
                let _ = peer.s.write_all(&req.head);
                let _ = peer.s.write_all(&req.body[..cut]);
                thread::sleep(pause);
                peer.reset();
                ctx.book.other(RESET, "mid-body (length)");
            }
            2 => {
                let n = rng.range(2, 256 * 1024);
                let data = rng.bytes(n);
                let req = Request::echo_chunked(rng, data);
                let cut = rng.range(1, (req.body.len() - 6).min(48 * 1024));
                let _ = peer.s.write_all(&req.head);
                let _ = peer.s.write_all(&req.body[..cut]);
                thread::sleep(pause);
                peer.reset();
                ctx.book.other(RESET, "mid-body (chunked)");
            }
            _ => {
                // A large echo: read a little of the answer, then reset.
                let n = rng.range(64 * 1024, ctx.args.max_body);
                let req = Request::echo(rng.bytes(n), false);
                let mut w = match peer.s.try_clone() {
                    Ok(w) => w,
                    Err(_) => continue,
                };
                let want = rng.range(1, 32 * 1024) as u64;
                thread::scope(|sc| {
                    let (head, body) = (&req.head, &req.body);
                    let writer = sc.spawn(move || {
                        let _ = w.write_all(head).and_then(|()| w.write_all(body));
                    });
                    while peer.got < want && peer.fill().is_ok() {}
                    let _ = socket2::SockRef::from(&peer.s).set_linger(Some(Duration::ZERO));
                    let _ = peer.s.shutdown(Shutdown::Both);
                    let _ = writer.join();
                });
                peer.reset();
                ctx.book.other(RESET, "mid-response");
            }
        }
    }
}

/// Heads over `--max-head` (one long field, or too many fields) must get 431; bodies over
/// `--max-body` 413 (by Content-Length, up front) or, chunked, a 413 if nothing was sent yet,
/// else a cut-short echo (the documented limit: no 413 can follow a 200).
fn oversized(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    let a = &ctx.args;
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(HEAD_431) else {
            continue;
        };
        let (sc, head, body, want) = match rng.next() % 4 {
            0 => {
                let pad = "a".repeat(a.max_head + rng.range(1, 4096));
                let head = format!("GET /plaintext HTTP/1.1\r\nHost: soak\r\nX-Pad: {pad}\r\n\r\n");
                (HEAD_431, head.into_bytes(), Vec::new(), 431)
            }
            1 => {
                let mut head = b"GET /plaintext HTTP/1.1\r\nHost: soak\r\n".to_vec();
                for i in 0..rng.range(101, 140) {
                    let _ = write!(SliceWriter(&mut head), "X-F{i}: {i}\r\n");
                }
                head.extend_from_slice(b"\r\n");
                (HEAD_431, head, Vec::new(), 431)
            }
            2 => {
                let n = a.max_body + rng.range(1, 1 << 20);
                let head =
                    format!("POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Length: {n}\r\n\r\n");
                let sent = rng.range(0, 64 * 1024);
                (BODY_413, head.into_bytes(), rng.bytes(sent), 413)
            }
            _ => {
                over_limit_chunked(ctx, rng, peer);
                continue;
            }
        };
        let r = peer.send_read(&head, &body, false).and_then(|r| {
            if r.head.status == want && r.head.closes() {
                peer.expect_close()
            } else {
                Err(Fail::Wrong(format!(
                    "status {} close {} instead of {want} and close",
                    r.head.status,
                    r.head.closes()
                )))
            }
        });
        match r {
            Ok(()) => ctx.book.right(sc),
            Err(f) => ctx
                .book
                .fail(sc, &f, &format!("head of {} bytes", head.len())),
        }
    }
}

fn over_limit_chunked(ctx: &Ctx, rng: &mut Rng, mut peer: Peer) {
    let n = ctx.args.max_body + rng.range(1, 64 * 1024);
    let data = rng.bytes(n);
    let req = Request::echo_chunked(rng, data);
    let Ok(mut w) = peer.s.try_clone() else {
        return;
    };
    let r = thread::scope(|sc| {
        let (head, body) = (&req.head, &req.body);
        let writer = sc.spawn(move || {
            let _ = w.write_all(head).and_then(|()| w.write_all(body));
        });
        let r = match peer.head() {
            Ok(h) if h.status == 413 && h.closes() => peer.expect_close().map(|()| "413"),
            Ok(h) if h.status == 200 && h.chunked() => {
                let mut got = Vec::new();
                match peer.chunked_body(&mut got) {
                    Err(Fail::Eof { .. } | Fail::Reset { .. }) if got.len() <= n => {
                        Ok("200 cut short")
                    }
                    Ok(()) => Err(Fail::Wrong(format!(
                        "a chunked body of {n} bytes over --max-body was echoed whole ({})",
                        got.len()
                    ))),
                    Err(e) => Err(e),
                }
            }
            Ok(h) => Err(Fail::Wrong(format!(
                "status {} for an over-limit chunked body",
                h.status
            ))),
            Err(e) => Err(e),
        };
        let _ = peer.s.shutdown(Shutdown::Both);
        let _ = writer.join();
        r
    });
    match r {
        Ok(how) => {
            ctx.book.right(BODY_413);
            ctx.book.other(
                BODY_413,
                if how == "413" {
                    "chunked: 413"
                } else {
                    "chunked: cut short"
                },
            );
        }
        Err(f) => ctx
            .book
            .fail(BODY_413, &f, &format!("chunked body of {n} bytes")),
    }
}

/// Enough simultaneous large echoes, none read for a while, to empty the pool: every one must
/// still be answered in full once the clients read.
fn pool_burst(ctx: &Ctx, seed: u64) {
    let a = &ctx.args;
    let before = ctx.stats();
    // Within the header timeout of the held heads, with room to spare.
    let release = Instant::now() + a.header_timeout / 4;
    thread::scope(|sc| {
        for i in 0..a.pool_burst_conns {
            sc.spawn(move || {
                let mut rng = Rng::new(seed ^ ((i as u64 + 1) << 32));
                if i % 4 != 3 {
                    return held_head(ctx, &mut rng, release);
                }
                // The others pipeline hundreds of small requests or send one large echo,
                // whose answers wait in the server's blocks until the client reads.
                let reqs: Vec<Request> = if i % 8 == 7 {
                    let n = rng.range(128 * 1024, (512 * 1024).min(a.max_body));
                    vec![Request::echo(rng.bytes(n), false)]
                } else {
                    (0..rng.range(300, 600))
                        .map(|_| Request::small(&mut rng))
                        .collect()
                };
                let mut bytes = Vec::new();
                for r in &reqs {
                    bytes.extend_from_slice(&r.head);
                    bytes.extend_from_slice(&r.body);
                }
                let Some(mut peer) = ctx.open_with(POOL_BURST, Some(4096)) else {
                    return;
                };
                let Ok(mut w) = peer.s.try_clone() else {
                    return;
                };
                thread::scope(|inner| {
                    let bytes = &bytes;
                    let writer = inner.spawn(move || {
                        let _ = w.write_all(bytes);
                    });
                    thread::sleep(release.saturating_duration_since(Instant::now()));
                    for (k, req) in reqs.iter().enumerate() {
                        let r = peer
                            .response(req.head_only)
                            .and_then(|r| req.check(&r).map_err(Fail::Wrong));
                        if let Err(f) = r {
                            let what = format!("response {k} of {}", reqs.len());
                            ctx.book.fail(POOL_BURST, &f, &what);
                            let _ = peer.s.shutdown(Shutdown::Both);
                            break;
                        }
                        ctx.book.right(POOL_BURST);
                    }
                    let _ = writer.join();
                });
            });
        }
    });
    let after = ctx.stats();
    let mut b = ctx.bursts.lock().unwrap_or_else(PoisonError::into_inner);
    b.pool += 1;
    if let (Ok(x), Ok(y)) = (before, after) {
        let waits = y.pool_waits.saturating_sub(x.pool_waits);
        b.pool_waits += waits;
        b.pool_exhausted += u64::from(waits > 0);
    }
}

/// A valid head over one 4 KiB block, held incomplete until `release`: until then the server
/// keeps it in a large block, and enough of them at once leave the pool without one.
fn held_head(ctx: &Ctx, rng: &mut Rng, release: Instant) {
    let req = Request::large_head(rng, ctx.args.max_head);
    let cut = req.head.len() - rng.range(8, 64);
    let Some(mut peer) = ctx.open(POOL_BURST) else {
        return;
    };
    let r = peer
        .s
        .write_all(&req.head[..cut])
        .map_err(|e| peer.io_fail(&e))
        .and_then(|()| {
            thread::sleep(release.saturating_duration_since(Instant::now()));
            peer.send_read(&req.head[cut..], &[], false)
        })
        .and_then(|r| req.check(&r).map_err(Fail::Wrong));
    match r {
        Ok(()) => ctx.book.right(POOL_BURST),
        Err(f) => ctx.book.fail(
            POOL_BURST,
            &f,
            &format!("head of {} bytes held at {cut}", req.head.len()),
        ),
    }
}

/// More connections at once than the server has slots, each with one request: those it
/// accepts must be answered; the rest it closes at once, and it must count each one.
fn slot_burst(ctx: &Ctx) -> Result<(), String> {
    let a = &ctx.args;
    let _g = ctx.gate.write().unwrap_or_else(PoisonError::into_inner);
    // Let connections opened just before the gate closed reach their slots.
    thread::sleep(Duration::from_millis(100));
    let refused_before = ctx.stats_refused.load(Relaxed);
    let before = ctx.stats()?;
    let n = a.workers * a.max_conns + 64;
    let req = Request::get("/plaintext", Expect::Plaintext);
    let mut peers = Vec::with_capacity(n);
    for _ in 0..n {
        match Peer::connect(a.addr) {
            Ok(mut p) => {
                // A refused connection may be closed before or after the request arrives.
                let _ = p.s.write_all(&req.head);
                peers.push(p);
            }
            Err(e) => ctx
                .book
                .fail(SLOT_BURST, &Fail::Io(format!("connect: {e}")), ""),
        }
    }
    let (mut served, mut refused) = (0, 0);
    for p in &mut peers {
        match p
            .response(false)
            .and_then(|r| req.check(&r).map_err(Fail::Wrong))
        {
            Ok(()) => {
                served += 1;
                ctx.book.right(SLOT_BURST);
            }
            Err(f) if f.nothing_came() => {
                refused += 1;
                ctx.book.other(SLOT_BURST, "refused at once (slots full)");
            }
            Err(f) => ctx.book.fail(SLOT_BURST, &f, "burst connection"),
        }
    }
    drop(peers);
    // Reopen the gate only once the server has let go of the burst, so no other scenario
    // meets full slots.
    let limit = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let s = ctx.stats()?;
        if s.connections_open < (a.max_conns / 2) as u64 || Instant::now() >= limit {
            break s;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let stats_refused = ctx.stats_refused.load(Relaxed) - refused_before;
    let mut b = ctx.bursts.lock().unwrap_or_else(PoisonError::into_inner);
    b.slot += 1;
    b.slot_served += served;
    b.slot_refused += refused;
    b.slot_refused_server +=
        (after.connections_rejected - before.connections_rejected).saturating_sub(stats_refused);
    Ok(())
}

/// Runs the bursts at their times within a phase.
fn bursts(ctx: &Ctx, seed: u64, start: Instant, until: Instant) {
    let span = until.saturating_duration_since(start);
    let mut next_pool = start + span.mul_f64(0.3);
    let mut next_slot = start + span.mul_f64(0.6);
    let mut n = 0;
    loop {
        let now = Instant::now();
        let next = next_pool.min(next_slot);
        if next + Duration::from_secs(1) > until {
            break;
        }
        thread::sleep(next.saturating_duration_since(now));
        if next == next_pool {
            n += 1;
            pool_burst(ctx, seed.wrapping_add(n));
            next_pool = Instant::now() + Duration::from_secs(30);
        } else {
            if let Err(e) = slot_burst(ctx) {
                ctx.book.note(format!("slot burst: {e}"));
            }
            next_slot = Instant::now() + Duration::from_secs(45);
        }
    }
}

fn phase(ctx: &Ctx, seed: u64, secs: u64) {
    let start = Instant::now();
    let until = start + Duration::from_secs(secs);
    thread::scope(|sc| {
        let rng = |i: u64| Rng::new(seed.wrapping_mul(1000).wrapping_add(i));
        let (mut r1, mut r2, mut r3, mut r4, mut r5, mut r6, mut r7, mut r8) = (
            rng(1),
            rng(2),
            rng(3),
            rng(4),
            rng(5),
            rng(6),
            rng(7),
            rng(8),
        );
        sc.spawn(move || keep_alive(ctx, &mut r1, until));
        sc.spawn(move || keep_alive(ctx, &mut r2, until));
        sc.spawn(move || pipelined(ctx, &mut r3, until));
        sc.spawn(move || chunked(ctx, &mut r4, until));
        sc.spawn(move || churn(ctx, &mut r5, until));
        sc.spawn(move || slow_within(ctx, &mut r6, until));
        sc.spawn(move || slow_past(ctx, until));
        sc.spawn(move || resets(ctx, &mut r7, until));
        sc.spawn(move || oversized(ctx, &mut r8, until));
        sc.spawn(move || bursts(ctx, seed, start, until));
    });
}

// ---------------------------------------------------------------------------------------------
// The server's process.

fn fds(pid: u32) -> Result<usize, String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(Iterator::count)
        .map_err(|e| format!("/proc/{pid}/fd: {e}"))
}

fn rss_kib(pid: u32) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no VmRSS in /proc/{pid}/status"))
}

/// Waits up to `wait` for the server's descriptors to come down to `target`; the last count.
fn fds_settled(pid: u32, target: usize, wait: Duration) -> Result<usize, String> {
    let limit = Instant::now() + wait;
    loop {
        let n = fds(pid)?;
        if n <= target || Instant::now() >= limit {
            return Ok(n);
        }
        thread::sleep(Duration::from_millis(100));
    }
}

// ---------------------------------------------------------------------------------------------
// The run and its report.

/// The server after a phase, once it let go of the phase's connections.
struct Reading {
    /// Taken once the descriptors settled; it counts its own connection and block.
    stats: Stats,
    /// Whether the server got back to no connection and no block before the time limit.
    quiet: bool,
    fds: usize,
    rss: u64,
}

fn settle(
    ctx: &Ctx,
    rented_idle: u64,
    fd_base: usize,
    fd_wait: Duration,
) -> Result<Reading, String> {
    let pid = ctx.args.pid;
    let (_, quiet) = ctx.quiesce(rented_idle)?;
    let fds = fds_settled(pid, fd_base, fd_wait)?;
    let stats = ctx.stats()?;
    let rss = rss_kib(pid)?;
    Ok(Reading {
        stats,
        quiet,
        fds,
        rss,
    })
}

fn describe(r: &Result<Reading, String>) -> String {
    match r {
        Ok(r) => format!(
            "{} fds, RSS {} KiB, pool slabs {} KiB, {} block(s) rented, {} connection(s) open (the /stats one included; settled: {})",
            r.fds,
            r.rss,
            r.stats.pool_allocated / 1024,
            r.stats.rented_blocks,
            r.stats.connections_open,
            r.quiet
        ),
        Err(e) => format!("the server could not be read: {e}"),
    }
}

struct Check {
    what: String,
    measured: String,
    limit: String,
    pass: bool,
}

fn run(args: Args) -> Result<bool, String> {
    let pid = args.pid;
    let warm_secs = args
        .warm_secs
        .unwrap_or((args.secs / 10).clamp(5, 60))
        .min(args.secs / 2);
    let main_secs = args.secs - warm_secs;
    let ctx = Ctx {
        args: args.clone(),
        gate: RwLock::new(()),
        book: Book::default(),
        bursts: Mutex::new(Bursts::default()),
        stats_refused: AtomicU64::new(0),
    };

    // 1. Baseline.
    let start = ctx.stats()?;
    thread::sleep(Duration::from_millis(300));
    let fd_base = fds(pid)?;
    let rss_start = rss_kib(pid)?;
    let rented_idle = ctx.stats()?.rented_blocks;
    println!(
        "soak: baseline: {fd_base} fds, RSS {rss_start} KiB, pool slabs {} KiB, /stats sees {rented_idle} block(s) rented (its own)",
        start.pool_allocated / 1024
    );

    // 2. Warm-up, then the main phase. A server that stopped answering fails the checks
    // that need it; the tables are written all the same.
    println!("soak: warm-up, {warm_secs} s");
    phase(&ctx, args.seed, warm_secs);
    let warm = settle(&ctx, rented_idle, fd_base, Duration::from_secs(5));
    println!("soak: after the warm-up: {}", describe(&warm));
    println!("soak: main phase, {main_secs} s");
    phase(&ctx, args.seed.wrapping_add(1), main_secs);
    let end = settle(&ctx, rented_idle, fd_base, Duration::from_secs(10));
    println!("soak: at the end: {}", describe(&end));

    // The server must still answer, as on the first day.
    let alive = Peer::connect(args.addr)
        .map_err(|e| Fail::Io(e.to_string()))
        .and_then(|mut p| {
            let req = Request::get("/plaintext", Expect::Plaintext);
            p.send_read(&req.head, &[], false)
                .and_then(|r| req.check(&r).map_err(Fail::Wrong))
        });

    // 3. The tables.
    let tallies = ctx
        .book
        .tallies
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let bursts = ctx.bursts.lock().unwrap_or_else(PoisonError::into_inner);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| scenario | kind | exchanges | right | wrong | missing | not checked (by design) |\n\
         |---|---|---:|---:|---:|---:|---|"
    );
    let (mut valid, mut valid_bad, mut refusals, mut refusals_bad, mut total) = (0, 0, 0, 0, 0);
    let order = [
        KEEP_ALIVE, PIPELINED, CHUNKED, CHURN, SLOW_OK, SLOW_BODY, POOL_BURST, SLOT_BURST,
        SLOW_408, HEAD_431, BODY_413, RESET, GONE,
    ];
    for sc in order {
        let t = tallies.get(sc);
        let (right, wrong, missing) = t.map_or((0, 0, 0), |t| (t.right, t.wrong, t.missing));
        let others = t.map_or(String::new(), |t| {
            t.other
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("; ")
        });
        let unchecked: u64 = t.map_or(0, |t| t.other.values().sum());
        // Chunked over-limit outcomes are also counted right; they are listed for the detail.
        let unchecked = if sc == BODY_413 { 0 } else { unchecked };
        let exchanges = right + wrong + missing + unchecked;
        total += exchanges;
        let kind = match kind_of(sc) {
            Kind::Valid => {
                valid += right + wrong + missing;
                valid_bad += wrong + missing;
                "valid"
            }
            Kind::Refusal => {
                refusals += right + wrong + missing;
                refusals_bad += wrong + missing;
                "refusal"
            }
            Kind::Abort => "abort",
        };
        let _ = writeln!(
            md,
            "| {sc} | {kind} | {exchanges} | {right} | {wrong} | {missing} | {} |",
            if others.is_empty() { "–" } else { &others }
        );
    }
    let _ = writeln!(md, "| **all** | | **{total}** | | | | |");

    let rss_change = match (&warm, &end) {
        (Ok(w), Ok(e)) => Some((e.rss as f64 - w.rss as f64) / w.rss.max(1) as f64 * 100.0),
        _ => None,
    };
    let unreadable = |r: &Result<Reading, String>| match r {
        Ok(_) => String::new(),
        Err(e) => e.clone(),
    };
    let ends = end.as_ref().ok();
    let end_stats = ends.map(|e| e.stats).unwrap_or_default();
    let unexplained = bursts
        .slot_refused
        .saturating_sub(bursts.slot_refused_server);
    let checks = [
        Check {
            what: "wrong or missing answers to valid requests".to_owned(),
            measured: format!("{valid_bad} of {valid}"),
            limit: "0".to_owned(),
            pass: valid_bad == 0 && valid > 0,
        },
        Check {
            what: "refusals by design (408, 413, 431) not answered as designed".to_owned(),
            measured: format!("{refusals_bad} of {refusals}"),
            limit: "0".to_owned(),
            pass: refusals_bad == 0 && refusals > 0,
        },
        Check {
            what: "slot-burst refusals: seen by the client / counted by the server".to_owned(),
            measured: format!(
                "{} / {} in {} bursts ({} burst connections served)",
                bursts.slot_refused, bursts.slot_refused_server, bursts.slot, bursts.slot_served
            ),
            limit: "equal, > 0".to_owned(),
            pass: unexplained == 0
                && bursts.slot_refused == bursts.slot_refused_server
                && bursts.slot_refused > 0,
        },
        Check {
            what: "pool bursts that exhausted the pool (pool waits)".to_owned(),
            measured: format!(
                "{} of {} (+{} waits)",
                bursts.pool_exhausted, bursts.pool, bursts.pool_waits
            ),
            limit: "> 0".to_owned(),
            pass: bursts.pool_exhausted > 0,
        },
        Check {
            what: "pool blocks rented after the run (`/stats`, less the block of the /stats answer itself)"
                .to_owned(),
            measured: ends.map_or(unreadable(&end), |e| {
                let n = e.stats.rented_blocks;
                format!("{} ({n} − {rented_idle})", n.saturating_sub(rented_idle))
            }),
            limit: "0".to_owned(),
            pass: ends.is_some_and(|e| e.stats.rented_blocks <= rented_idle),
        },
        Check {
            what: "connections open after the run (`/stats`, less the /stats one)".to_owned(),
            measured: ends.map_or(unreadable(&end), |e| {
                e.stats.connections_open.saturating_sub(1).to_string()
            }),
            limit: "0".to_owned(),
            pass: ends.is_some_and(|e| e.stats.connections_open <= 1),
        },
        Check {
            what: "open fds (`/proc/PID/fd`): start / warm / end".to_owned(),
            measured: format!(
                "{fd_base} / {} / {}",
                warm.as_ref().map_or("–".to_owned(), |w| w.fds.to_string()),
                ends.map_or(unreadable(&end), |e| e.fds.to_string())
            ),
            limit: format!("end = {fd_base}"),
            pass: ends.is_some_and(|e| e.fds == fd_base),
        },
        Check {
            what: "RSS (`VmRSS`): start / warm / end".to_owned(),
            measured: match (&warm, &end, rss_change) {
                (Ok(w), Ok(e), Some(change)) => format!(
                    "{rss_start} / {} / {} KiB ({change:+.1} % from warm; pool slabs {} / {} / {} KiB)",
                    w.rss,
                    e.rss,
                    start.pool_allocated / 1024,
                    w.stats.pool_allocated / 1024,
                    e.stats.pool_allocated / 1024
                ),
                _ => format!("{}{}", unreadable(&warm), unreadable(&end)),
            },
            limit: "end within ±10 % of warm".to_owned(),
            pass: rss_change.is_some_and(|c| c.abs() <= 10.0),
        },
        Check {
            what: "server still answering (`GET /plaintext` after the run)".to_owned(),
            measured: match &alive {
                Ok(()) => "200 Hello, World!".to_owned(),
                Err(f) => f.to_string(),
            },
            limit: "200".to_owned(),
            pass: alive.is_ok(),
        },
    ];
    if ends.is_some() {
        let _ =
            writeln!(
            md,
            "\nServer counters over the run (`/stats`): {} requests answered, {} header timeouts, \
             {} connections refused at full slots, {} pool waits.",
            end_stats.requests.saturating_sub(start.requests),
            end_stats.header_timeouts.saturating_sub(start.header_timeouts),
            end_stats
                .connections_rejected
                .saturating_sub(start.connections_rejected),
            end_stats.pool_waits.saturating_sub(start.pool_waits)
        );
    }
    let failures = ctx
        .book
        .failures
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if !failures.is_empty() {
        let _ = writeln!(
            md,
            "\nFailures ({} in all, the first {} listed):\n",
            ctx.book.failure_count.load(Relaxed),
            failures.len()
        );
        for f in failures.iter() {
            let _ = writeln!(md, "* {f}");
        }
    }
    let _ = writeln!(
        md,
        "\n| check | measured | limit | result |\n|---|---|---|---|"
    );
    for c in &checks {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            c.what,
            c.measured,
            c.limit,
            if c.pass { "pass" } else { "**FAIL**" }
        );
    }
    print!("\n{md}");
    if let Some(path) = &args.out {
        std::fs::write(path, &md).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let pass = checks.iter().all(|c| c.pass);
    println!("\nsoak: {}", if pass { "PASS" } else { "FAIL" });
    Ok(pass)
}
