//! Test helpers: start a server on port 0, and a tiny blocking HTTP/1.1 client over std
//! `TcpStream` that parses responses (Content-Length or chunked) and keeps pipelined leftovers.
#![allow(dead_code)]

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use server_demo::{Config, IoMode, Server, ServerError, ServerHandle};

pub mod tls;

/// Generous: tests wait on events, never on exact timings.
pub const TIMEOUT: Duration = Duration::from_secs(10);

thread_local! {
    /// The driver the test running on this thread is for (see [`under`]).
    static DRIVER: Cell<Option<IoMode>> = const { Cell::new(None) };
}

/// The one driver `SERVER_DEMO_IO` (`epoll` or `uring`) keeps, if set: the other's runs skip.
fn only_driver() -> Option<IoMode> {
    let io = std::env::var("SERVER_DEMO_IO").ok()?.parse().ok()?;
    (io != IoMode::Auto).then_some(io)
}

/// Why the kernel refuses io_uring to this process, or `None` where io_uring runs (asked once:
/// a server is started on it). Only a refusal skips: `EPERM` or `EACCES` (a seccomp profile, a
/// security module, `kernel.io_uring_disabled`) or `ENOSYS` (no io_uring in this kernel), as
/// [`bufslab_uring::Error`] classifies the errno. Any other failure to start or stop a server
/// on io_uring panics, so a broken driver fails its tests instead of skipping them.
pub fn uring_refused() -> Option<String> {
    static REFUSED: OnceLock<Option<String>> = OnceLock::new();
    REFUSED
        .get_or_init(|| {
            let probe = Server::start(Config {
                addr: "127.0.0.1:0".parse().unwrap(),
                io: IoMode::Uring,
                workers: 1,
                max_conns: 4,
                evict_interval: None,
                ..Config::default()
            });
            match probe {
                Ok(server) => {
                    assert_eq!(server.stats().driver, "uring");
                    if let Err(e) = server.stop() {
                        panic!("a server on io_uring did not stop cleanly: {e}");
                    }
                    None
                }
                Err(ServerError::Uring(e)) if e.is_kernel_refusal() => Some(e.to_string()),
                Err(e) => panic!("a server on io_uring did not start, and not for a refusal: {e}"),
            }
        })
        .clone()
}

/// Says why `test`'s io_uring run is skipped, where a passing test's output still shows
/// (libtest captures `println!` and `eprintln!`, not writes to the stderr handle). With
/// `BUFSLAB_REQUIRE_URING=1` (CI sets it where io_uring runs) the skip panics instead: there,
/// a refusal means the probe or the driver is wrong.
pub fn skip_uring(test: &str, why: &str) {
    assert!(
        std::env::var("BUFSLAB_REQUIRE_URING").as_deref() != Ok("1"),
        "{test} under io_uring would be skipped ({why}), but BUFSLAB_REQUIRE_URING=1 requires io_uring"
    );
    let _ = writeln!(io::stderr(), "skipped: {test} under io_uring: {why}");
}

/// The address in the release binary's first line (`... listening on http://ADDR ...`), read
/// from its stdout.
pub fn listening_addr(stdout: &mut impl io::BufRead) -> SocketAddr {
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the listening line");
    line.split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
}

/// Runs `test` with [`config`] naming the driver `io`; says why and returns at once where that
/// driver cannot run here (io_uring refused: [`skip_uring`]) or `SERVER_DEMO_IO` keeps only the
/// other.
pub fn under(io: IoMode, name: &str, test: impl FnOnce()) {
    if let Some(only) = only_driver().filter(|&only| only != io) {
        println!(
            "skipped: {name} under {}: SERVER_DEMO_IO={}",
            io.name(),
            only.name()
        );
        return;
    }
    if io == IoMode::Uring {
        if let Some(why) = uring_refused() {
            skip_uring(name, &why);
            return;
        }
    }
    DRIVER.with(|d| d.set(Some(io)));
    test();
    DRIVER.with(|d| d.set(None));
}

/// Runs `test` under each driver in turn on this thread, for a test that changes the whole
/// process (its heap profiler, its descriptor limit, its RSS) and so cannot run beside itself.
pub fn each_driver(name: &str, mut test: impl FnMut()) {
    for io in [IoMode::Epoll, IoMode::Uring] {
        under(io, name, &mut test);
    }
}

/// Declares a test that runs under each I/O driver: `name::epoll` and `name::uring`, each a
/// test of its own (see [`under`]).
#[allow(unused_macros)] // test files that run each driver in turn do not use it
macro_rules! driver_test {
    ($(#[$meta:meta])* fn $name:ident() $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body() $body

            #[test]
            fn epoll() {
                crate::common::under(server_demo::IoMode::Epoll, stringify!($name), body);
            }

            #[test]
            fn uring() {
                crate::common::under(server_demo::IoMode::Uring, stringify!($name), body);
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use driver_test;

/// A config for tests: port 0, two workers, 256 connection slots, no eviction timer, and the
/// I/O driver of the test running on this thread ([`under`]), else the one `SERVER_DEMO_IO`
/// names, else `auto`.
pub fn config() -> Config {
    Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 2,
        max_conns: 256,
        evict_interval: None,
        io: DRIVER
            .with(Cell::get)
            .or_else(only_driver)
            .unwrap_or_default(),
        ..Config::default()
    }
}

/// Starts a server; under a driver's test, checks that the server runs that driver.
pub fn start(c: Config) -> ServerHandle {
    let server = Server::start(c).expect("server starts");
    if let Some(io) = DRIVER.with(Cell::get) {
        assert_eq!(server.stats().driver, io.name(), "the test's driver");
    }
    server
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

/// Polls `cond` until it holds or `TIMEOUT` passes.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < TIMEOUT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub chunked: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// A connection plus the bytes received but not yet parsed: a TCP stream, or any other byte
/// stream (a TLS client's, say) through [`Client::over`].
pub struct Client<S = TcpStream> {
    pub stream: S,
    buf: Vec<u8>,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Client {
        Client::over(connect(addr))
    }

    pub fn from_stream(stream: TcpStream) -> Client {
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(TIMEOUT)).unwrap();
        Client::over(stream)
    }
}

impl<S: Read + Write> Client<S> {
    /// A client over `stream`, already connected (with its timeouts set).
    pub fn over(stream: S) -> Client<S> {
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    fn fill(&mut self) -> io::Result<usize> {
        let mut tmp = [0u8; 65536];
        let n = self.stream.read(&mut tmp)?;
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(n)
    }

    fn need(&mut self, n: usize) {
        while self.buf.len() < n {
            let got = self.fill().expect("read");
            assert!(got > 0, "connection closed mid-response");
        }
    }

    fn line(&mut self) -> String {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8(self.buf[..i].to_vec()).unwrap();
                self.buf.drain(..i + 2);
                return line;
            }
            let got = self.fill().expect("read");
            assert!(got > 0, "connection closed mid-line");
        }
    }

    /// Reads one response head (interim 1xx responses included: call again).
    pub fn head(&mut self) -> Response {
        let status_line = self.line();
        assert!(
            status_line.starts_with("HTTP/1.1 "),
            "status line: {status_line:?}"
        );
        let status = status_line[9..12].parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let l = self.line();
            if l.is_empty() {
                break;
            }
            let (n, v) = l.split_once(':').expect("header line");
            headers.push((n.to_string(), v.trim().to_string()));
        }
        let chunked = headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked");
        Response {
            status,
            headers,
            body: Vec::new(),
            chunked,
        }
    }

    /// Reads one complete response (skipping 100 Continue). `head_only` for HEAD requests.
    pub fn response_to(&mut self, head_only: bool) -> Response {
        let mut r = self.head();
        while r.status == 100 {
            r = self.head();
        }
        if head_only {
            return r;
        }
        if r.chunked {
            loop {
                let size = self.line();
                let size = usize::from_str_radix(size.split(';').next().unwrap(), 16).unwrap();
                if size == 0 {
                    assert_eq!(self.line(), "");
                    break;
                }
                self.need(size + 2);
                r.body.extend_from_slice(&self.buf[..size]);
                assert_eq!(&self.buf[size..size + 2], b"\r\n");
                self.buf.drain(..size + 2);
            }
        } else {
            let len: usize = r
                .header("content-length")
                .expect("content-length")
                .parse()
                .unwrap();
            self.need(len);
            r.body = self.buf.drain(..len).collect();
        }
        r
    }

    pub fn response(&mut self) -> Response {
        self.response_to(false)
    }

    /// Sends a request and reads its response.
    pub fn request(&mut self, req: &[u8]) -> Response {
        self.send(req);
        self.response()
    }

    /// Asserts the server closes: EOF (or a reset) with nothing more to read.
    pub fn expect_closed(&mut self) {
        assert!(
            self.buf.is_empty(),
            "unexpected bytes: {:?}",
            String::from_utf8_lossy(&self.buf)
        );
        let mut tmp = [0u8; 1024];
        match self.stream.read(&mut tmp) {
            Ok(0) => {}
            Ok(n) => panic!(
                "expected close, got {:?}",
                String::from_utf8_lossy(&tmp[..n])
            ),
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
                ),
                "expected close, got {e}"
            ),
        }
    }
}

pub const GET_PLAINTEXT: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n";
pub const GET_JSON: &[u8] = b"GET /json HTTP/1.1\r\nHost: t\r\n\r\n";
pub const HELLO: &[u8] = b"Hello, World!";
pub const HELLO_JSON: &[u8] = br#"{"message":"Hello, World!"}"#;

/// Deterministic test payload.
pub fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}
