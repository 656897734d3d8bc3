//! Protocol upgrades over raw TCP, under each driver: the `101`, the bytes sent behind the head
//! delivered first, pipelined bytes belonging to the new protocol, a close from either side,
//! the idle timeout, graceful shutdown, and the requests that are not switched (`h2c`, a body,
//! HTTP/1.0, an offer the service ignores) answered as ordinary requests.
//!
//! The protocol switched to is a line echo: every byte comes back; `close` in the input makes
//! the server say `bye` and close; the end of the client's stream makes it say `eof`; the
//! server's shutdown makes it say `shutdown`.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bufslab_http::Request;
use bufslab_server::{
    Config, Exchange, IoMode, Service, UpgradeError, UpgradeEvent, Upgraded, WorkerInfo,
    SMALL_BLOCK,
};

#[path = "support/client.rs"]
mod client;

use client::start_with;

struct Echo {
    ended: Arc<AtomicUsize>,
    /// The most bytes one `UpgradeEvent::Data` brought.
    largest: Arc<AtomicUsize>,
}

impl Service for Echo {
    type State = ();

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
        let protocol: &[u8] = match req.path() {
            b"/h2c" => b"h2c",
            b"/ignore" => {
                let _ = ex.respond(200).body(b"plain");
                return;
            }
            // What a client that did not offer the protocol is told.
            b"/required" => {
                let _ = ex.respond(426).offer_upgrade(b"echo, echo/2").body(b"");
                return;
            }
            b"/bad-offer" => {
                let _ = ex.respond(426).offer_upgrade(b"echo/").body(b"");
                return;
            }
            _ => b"echo",
        };
        let why = match ex.switch_protocols(req, protocol) {
            Ok(switch) => {
                let _ = switch.header_raw(b"x-echo", b"1").switch();
                return;
            }
            Err(UpgradeError::H2cRefused) => "h2c",
            Err(UpgradeError::HasBody) => "body",
            Err(UpgradeError::NotHttp11) => "http10",
            Err(UpgradeError::NotOffered) => "not-offered",
            Err(_) => "other",
        };
        let _ = ex.respond(200).body(why.as_bytes());
    }

    fn upgraded(&mut self, event: UpgradeEvent<'_>, up: &mut Upgraded<'_>, _: &mut ()) {
        match event {
            UpgradeEvent::Start => {}
            UpgradeEvent::Data(data) => {
                self.largest.fetch_max(data.len(), Ordering::SeqCst);
                assert!(data.len() <= up.write_room());
                if data.windows(5).any(|w| w == b"close") {
                    let _ = up.write(b"bye");
                    up.close();
                } else {
                    up.write(data).expect("room for an echo");
                }
            }
            UpgradeEvent::PeerClosed => {
                let _ = up.write(b"eof");
            }
            UpgradeEvent::Shutdown => {
                let _ = up.write(b"shutdown");
                up.close();
            }
            _ => up.close(),
        }
    }

    fn upgrade_ended(&mut self, _: &mut ()) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }
}

const UPGRADE: &[u8] =
    b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n";

const SWITCHED: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\nx-echo: 1\r\n\r\n";

struct Fixture {
    server: Option<bufslab_server::ServerHandle>,
    ended: Arc<AtomicUsize>,
    largest: Arc<AtomicUsize>,
}

fn start(io: IoMode, tune: impl FnOnce(&mut Config)) -> Option<Fixture> {
    let ended = Arc::new(AtomicUsize::new(0));
    let largest = Arc::new(AtomicUsize::new(0));
    let mut cfg = client::config(io);
    tune(&mut cfg);
    let (e, l) = (ended.clone(), largest.clone());
    let server = start_with(cfg, move |_: WorkerInfo| Echo {
        ended: e.clone(),
        largest: l.clone(),
    })?;
    Some(Fixture {
        server: Some(server),
        ended,
        largest,
    })
}

impl Fixture {
    fn connect(&self) -> TcpStream {
        let addr = self.server.as_ref().expect("running").local_addr();
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            let _ = s.stop();
        }
    }
}

/// Reads exactly `n` bytes.
fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// Reads to the end of the stream.
fn read_end(s: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    buf
}

fn under(io: IoMode, case: fn(IoMode)) {
    case(io);
}

fn bytes_behind_the_head_first(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    // The head and the first bytes of the new protocol in one write: nothing may be lost.
    let mut first = UPGRADE.to_vec();
    first.extend_from_slice(b"hello ");
    s.write_all(&first).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    assert_eq!(read_n(&mut s, 6), b"hello ");
    s.write_all(b"world").unwrap();
    assert_eq!(read_n(&mut s, 5), b"world");
}

fn pipelined_bytes_belong_to_the_new_protocol(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    // What looks like a second request behind the upgrade is the new protocol's.
    let next = b"GET /ignore HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut both = UPGRADE.to_vec();
    both.extend_from_slice(next);
    s.write_all(&both).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    assert_eq!(read_n(&mut s, next.len()), next);
}

fn first_request_then_upgrade(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    // An ordinary request, then the upgrade, pipelined: the first is answered, then the 101.
    let mut both = b"GET /ignore HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
    both.extend_from_slice(UPGRADE);
    both.extend_from_slice(b"ping");
    s.write_all(&both).unwrap();
    let plain = read_plain(&mut s);
    assert_eq!(plain.1, b"plain");
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    assert_eq!(read_n(&mut s, 4), b"ping");
}

fn server_closes(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    s.write_all(UPGRADE).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    s.write_all(b"abc").unwrap();
    assert_eq!(read_n(&mut s, 3), b"abc");
    s.write_all(b"close").unwrap();
    assert_eq!(read_end(&mut s), b"bye");
    drop(s);
    wait_for(|| f.ended.load(Ordering::SeqCst) == 1);
}

fn client_half_closes(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    s.write_all(UPGRADE).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    s.write_all(b"last").unwrap();
    assert_eq!(read_n(&mut s, 4), b"last");
    // Our side's end of stream: the server still writes its last bytes, then closes.
    s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(read_end(&mut s), b"eof");
    wait_for(|| f.ended.load(Ordering::SeqCst) == 1);
}

fn idle_timeout_closes(io: IoMode) {
    let Some(f) = start(io, |c| c.idle_timeout = Duration::from_millis(300)) else {
        return;
    };
    let mut s = f.connect();
    s.write_all(UPGRADE).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    // Traffic keeps it open past the timeout...
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(150));
        s.write_all(b"x").unwrap();
        assert_eq!(read_n(&mut s, 1), b"x");
    }
    // ...silence closes it.
    let t = Instant::now();
    assert_eq!(read_end(&mut s), b"");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    wait_for(|| f.ended.load(Ordering::SeqCst) == 1);
}

fn graceful_shutdown_tells_the_service(io: IoMode) {
    let Some(mut f) = start(io, |c| c.shutdown_grace = Duration::from_secs(5)) else {
        return;
    };
    let mut s = f.connect();
    s.write_all(UPGRADE).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    s.write_all(b"up").unwrap();
    assert_eq!(read_n(&mut s, 2), b"up");
    let server = f.server.take().expect("running");
    let stopping = std::thread::spawn(move || server.stop());
    assert_eq!(read_end(&mut s), b"shutdown");
    drop(s);
    let t = Instant::now();
    stopping.join().unwrap().unwrap();
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(f.ended.load(Ordering::SeqCst), 1);
}

fn refused_upgrades_are_ordinary_requests(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    let cases: [(&[u8], &[u8]); 5] = [
        (
            b"GET /h2c HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
            b"h2c",
        ),
        (
            b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\nContent-Length: 3\r\n\r\nabc",
            b"body",
        ),
        (
            b"GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\n\r\n",
            b"not-offered",
        ),
        (
            b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
            b"not-offered",
        ),
        (
            b"GET /ignore HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n",
            b"plain",
        ),
    ];
    // Each answered as an ordinary request, on the same kept-alive connection.
    for (req, why) in cases {
        s.write_all(req).unwrap();
        let (head, body) = read_plain(&mut s);
        assert!(
            head.starts_with(b"HTTP/1.1 200 "),
            "{}",
            String::from_utf8_lossy(&head)
        );
        assert_eq!(body, why);
    }
    // HTTP/1.0 has no upgrades; its connection closes after the answer.
    s.write_all(b"GET /echo HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n")
        .unwrap();
    let (_, body) = read_plain(&mut s);
    assert_eq!(body, b"http10");
    assert_eq!(f.ended.load(Ordering::SeqCst), 0);
}

/// `426 Upgrade Required` names the protocols (RFC 9110 §15.5.22) and marks the field
/// hop-by-hop (§7.8); HTTP/1.0 gets no offer, and an offer that is not a protocol list is a
/// misuse.
fn offers_an_upgrade(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let ask = |s: &mut TcpStream, req: &[u8]| {
        s.write_all(req).unwrap();
        String::from_utf8_lossy(&read_plain(s).0).into_owned()
    };
    let mut s = f.connect();
    let head = ask(&mut s, b"GET /required HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 426 "), "{head}");
    assert!(head.contains("\r\nUpgrade: echo, echo/2\r\n"), "{head}");
    assert!(head.contains("\r\nConnection: upgrade\r\n"), "{head}");
    // The connection goes on; the last answer closes it, and says both.
    let last = b"GET /required HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let head = ask(&mut s, last);
    assert!(
        head.contains("\r\nConnection: close, upgrade\r\n"),
        "{head}"
    );
    let mut s = f.connect();
    let head = ask(
        &mut s,
        b"GET /required HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    );
    assert!(head.starts_with("HTTP/1.1 426 "), "{head}");
    assert!(!head.contains("\r\nUpgrade:"), "{head}");
    assert!(head.contains("\r\nConnection: keep-alive\r\n"), "{head}");
    let head = ask(&mut s, b"GET /bad-offer HTTP/1.0\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 500 "), "{head}");
}

fn h2c_when_asked(io: IoMode) {
    let Some(f) = start(io, |c| c.upgrade_h2c = true) else {
        return;
    };
    let mut s = f.connect();
    s.write_all(b"GET /h2c HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n").unwrap();
    let want = b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\n";
    assert_eq!(read_n(&mut s, want.len()), want);
}

fn large_echo_under_backpressure(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    s.write_all(UPGRADE).unwrap();
    assert_eq!(read_n(&mut s, SWITCHED.len()), SWITCHED);
    let total = 8 << 20;
    let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
    let mut w = s.try_clone().unwrap();
    let sent = data.clone();
    // The client writes everything before reading: the server's output fills, it stops
    // reading, and TCP's windows hold the rest until the reader below catches up.
    let writer = std::thread::spawn(move || {
        for piece in sent.chunks(100_000) {
            w.write_all(piece).unwrap();
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    let back = read_n(&mut s, total);
    writer.join().unwrap();
    assert!(back == data, "echo differs");
}

/// The epoll driver reads into the core's block: once a read fills a small block, an upgraded
/// connection's reads go into large ones, so a message larger than a small block comes in one
/// read (and one `Data` event) instead of two. (The io_uring driver's receives take the
/// buffer ring's small blocks.)
fn reads_grow_once_a_small_block_fills(io: IoMode) {
    let Some(f) = start(io, |_| {}) else { return };
    let mut s = f.connect();
    grow_reads(&f, &mut s);
}

/// A connection slot that served an upgraded connection with large reads reads the next
/// connection's input into small blocks again: a head still arriving holds one small block.
fn a_new_connection_reads_into_small_blocks(io: IoMode) {
    let Some(f) = start(io, |c| c.max_conns = 1) else {
        return;
    };
    let mut s = f.connect();
    grow_reads(&f, &mut s);
    drop(s);
    wait_for(|| f.ended.load(Ordering::SeqCst) == 1);
    let mut s = f.connect();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    let server = f.server.as_ref().expect("running");
    wait_for(|| server.stats().pool.rented_blocks == 1);
    assert_eq!(server.stats().pool.rented_bytes, SMALL_BLOCK);
}

/// Bytes for the echo to send back: none of them spells `close`.
fn echo_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// Upgrades `s`, fills a small block with one message, and checks that the next, larger one
/// comes in one `Data` event.
fn grow_reads(f: &Fixture, s: &mut TcpStream) {
    s.write_all(UPGRADE).unwrap();
    assert_eq!(read_n(s, SWITCHED.len()), SWITCHED);
    let first = echo_bytes(SMALL_BLOCK);
    s.write_all(&first).unwrap();
    assert_eq!(read_n(s, SMALL_BLOCK), first);
    assert!(f.largest.load(Ordering::SeqCst) <= SMALL_BLOCK);
    // One write of 12 KiB: one segment on loopback, so one read of it all.
    let second = echo_bytes(3 * SMALL_BLOCK);
    s.write_all(&second).unwrap();
    assert_eq!(read_n(s, second.len()), second);
    let largest = f.largest.load(Ordering::SeqCst);
    assert!(
        largest > SMALL_BLOCK,
        "the largest Data event was {largest} bytes"
    );
}

/// Reads one response framed by Content-Length: its head and body.
fn read_plain(s: &mut TcpStream) -> (Vec<u8>, Vec<u8>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let len = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |v| v.trim().parse().unwrap());
    (head, read_n(s, len))
}

fn wait_for(cond: impl Fn() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < Duration::from_secs(5), "timed out");
        std::thread::sleep(Duration::from_millis(5));
    }
}

macro_rules! both_drivers {
    ($($name:ident),* $(,)?) => {
        mod epoll {
            $(#[test] fn $name() { super::under(bufslab_server::IoMode::Epoll, super::$name); })*
        }
        mod uring {
            $(#[test] fn $name() { super::under(bufslab_server::IoMode::Uring, super::$name); })*
        }
    };
}

both_drivers!(
    bytes_behind_the_head_first,
    pipelined_bytes_belong_to_the_new_protocol,
    first_request_then_upgrade,
    server_closes,
    client_half_closes,
    idle_timeout_closes,
    graceful_shutdown_tells_the_service,
    refused_upgrades_are_ordinary_requests,
    offers_an_upgrade,
    h2c_when_asked,
    large_echo_under_backpressure,
);

mod epoll_only {
    #[test]
    fn reads_grow_once_a_small_block_fills() {
        super::under(
            bufslab_server::IoMode::Epoll,
            super::reads_grow_once_a_small_block_fills,
        );
    }

    #[test]
    fn a_new_connection_reads_into_small_blocks() {
        super::under(
            bufslab_server::IoMode::Epoll,
            super::a_new_connection_reads_into_small_blocks,
        );
    }
}
