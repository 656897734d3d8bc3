//! The TLS layer (`server/src/tls/layer.rs`) between a driver and the connection core, under
//! a real TLS client (rustls) whose records reach the server split at arbitrary points, read
//! as the epoll driver reads (into the layer's block) or handed over as the io_uring driver
//! hands them (a block the kernel filled), with the server's records read back in arbitrary
//! pieces, pool exhaustion, key updates from either side and the client's `close_notify` or
//! end of stream: `run_tls`, the `conn_tls` fuzz target.
//!
//! The script's first byte picks the session: TLS 1.2 or 1.3 (bit 0), the cipher suite
//! (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305: bits 1-2, modulo 3), and a record limit per
//! key (bit 7): 3 under TLS 1.3, where the server then updates its keys every record (two of
//! the three are kept for control records), 156 under TLS 1.2, which has no key update: a few
//! records before the margin the server keeps (see `last_response_due` in the layer), its
//! response says `Connection: close` and is the last. Each later byte is an operation:
//!
//! | byte | operation |
//! |---|---|
//! | `0x00..=0x3f` | the client writes `GET /<n>` (n from [`SIZES`] by the low 4 bits); bit 4: three of them in one write (one record); bit 5: also flushed to the socket now |
//! | `0x40..=0x5f` | the server reads up to `(op & 31) * 97 + 1` bytes into the layer's read block |
//! | `0x60..=0x7f` | the server is handed a pool block filled with up to `(op & 31) * 211 + 1` bytes |
//! | `0x80..=0xbf` | the server sends up to `(op & 63) * 53` bytes (0: all it has) |
//! | `0xc0..=0xc3` | the client updates its keys (TLS 1.3) |
//! | `0xc4..=0xc7` | the connection's deadline passes (the handshake's and a head's is the header deadline: a 408 where a head had begun) |
//! | `0xc8..=0xcf` | the client's pending records go to the socket |
//! | `0xd0..=0xd7` | every free small block of the pool is taken; `0xd8..=0xdf` gives them back |
//! | `0xe0..=0xef` | the client sends `close_notify` |
//! | `0xf0..=0xf7` | the client's stream ends |
//! | `0xf8..=0xff` | the server shuts down: an idle connection closes at once (with `close_notify` where the session is sound), a busy one after its exchange |
//!
//! The service answers `GET /<n>` with `n` bytes of a pattern. Checked: nothing panics;
//! every record the server sends opens in the client; the plaintext is the responses to the
//! requests in order, each whole and exact, every one of them unless a refusal for want of a
//! block (503) or a response saying `Connection: close` ended it, the client closed first, or
//! a deadline or the shutdown closed the connection (which may cut the response in progress);
//! nothing follows a `close_notify`; the connection ends once the client's stream does, and
//! every pool block comes back.

use std::collections::VecDeque;
use std::io::{IoSlice, Read, Write};
use std::sync::{Arc, OnceLock};

use bufslab::{PoolBuf, QueueFreeList};
use bufslab_http::{Config as HttpConfig, Parser, Request};
use bytes::BufMut;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use crate::config::{Config, SMALL_BLOCK};
use crate::conn::{Env, Want};
use crate::exchange::Exchange;
use crate::link::{Link, Wire};
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::tls::TlsConfig;

use super::{pattern, Worker, MAX_HEAD};

/// A self-signed certificate for `localhost` and its key, for this harness only.
const CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBuTCCAV+gAwIBAgIUd0jNT+N9uDsg62EBqQDJ/r5/QiUwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNzE2NTAyMFoYDzIxMjYxMTEz
MTY1MDIwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARAB/YtRnSkMcMOOIzuzFf/Qv7xqXnmydH14lf7wn5/HrbkcNcb9v1n
2CMWDmbritAEUL9hm1uPR8f7KlJ5towVo4GMMIGJMB0GA1UdDgQWBBR9SY4zvpSh
GX3MwdlA1jU+DZNf0jAfBgNVHSMEGDAWgBR9SY4zvpShGX3MwdlA1jU+DZNf0jAU
BgNVHREEDTALgglsb2NhbGhvc3QwDAYDVR0TAQH/BAIwADAOBgNVHQ8BAf8EBAMC
B4AwEwYDVR0lBAwwCgYIKwYBBQUHAwEwCgYIKoZIzj0EAwIDSAAwRQIgUo9QPlU1
w9FBIHFinhsLCNt6XlS42oHxULVhmupcaOwCIQC2Z+A63FamWOZPF96gnD11CHyC
kd6E/kDpVdWxdny21A==
-----END CERTIFICATE-----";
const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQge1ZNMZvYhrD6jtlg
ezq6hyM/ilwe3yO/Dx14c3KYc0mhRANCAARAB/YtRnSkMcMOOIzuzFf/Qv7xqXnm
ydH14lf7wn5/HrbkcNcb9v1n2CMWDmbritAEUL9hm1uPR8f7KlJ5towV
-----END PRIVATE KEY-----";

/// Response body sizes a request may ask for: empty, one byte, around a small block, around a
/// TLS record (16 KiB), up to the whole-body limit.
const SIZES: [usize; 16] = [
    0, 1, 5, 100, 1000, 4000, 4096, 5000, 8000, 12_000, 16_000, 16_384, 16_385, 20_000, 30_000,
    WHOLE_BODY,
];

/// `Config::whole_body_limit` with the default output queue: the largest body `body` takes.
const WHOLE_BODY: usize = 32 * 1024;

/// Most steps while finishing: a connection that neither ends nor progresses is a bug.
const FINISH_STEPS: usize = 100_000;

/// Answers `GET /<n>` with `n` bytes of the `conn` harness's pattern, anything else with 404.
struct Sized;

impl Service for Sized {
    type State = ();

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
        let n = std::str::from_utf8(req.path().get(1..).unwrap_or_default())
            .ok()
            .and_then(|s| s.parse::<usize>().ok());
        let _ = match n {
            Some(n) if n <= WHOLE_BODY => ex.respond(200).body(pattern(0, n)),
            _ => ex.respond(404).body(b""),
        };
    }
}

/// The harness certificate.
fn cert() -> CertificateDer<'static> {
    let Ok(cert) = CertificateDer::from_pem_slice(CERT.as_bytes()) else {
        panic!("the harness certificate parses");
    };
    cert
}

/// The server's TLS configuration: every version and suite (the script's first byte chooses
/// the client's offer).
fn server_config() -> &'static bufslab_tls::Config {
    static CONFIG: OnceLock<bufslab_tls::Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let Ok(key) = PrivateKeyDer::from_pem_slice(KEY.as_bytes()) else {
            panic!("the harness key parses");
        };
        match bufslab_tls::Config::with_single_cert(vec![cert()], key) {
            Ok(c) => c,
            Err(e) => panic!("the harness certificate serves: {e}"),
        }
    })
}

fn client_config(first: u8) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    if roots.add(cert()).is_err() {
        panic!("the harness certificate is a root");
    }
    let mut provider = rustls::crypto::ring::default_provider();
    let tls12 = first & 1 != 0;
    let suites = if tls12 {
        [
            rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        ]
    } else {
        [
            rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256,
            rustls::crypto::ring::cipher_suite::TLS13_AES_256_GCM_SHA384,
            rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        ]
    };
    provider.cipher_suites = vec![suites[usize::from(first >> 1 & 3) % 3]];
    let versions: &[&rustls::SupportedProtocolVersion] = if tls12 {
        &[&rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13]
    };
    let builder = match ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(versions)
    {
        Ok(b) => b,
        Err(e) => panic!("the client's versions: {e}"),
    };
    let mut config = builder.with_root_certificates(roots).with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// The client's side of the socket, and what went through it.
struct Peer {
    client: ClientConnection,
    tls12: bool,
    /// Bytes the client sent that the server has not read yet.
    sock_in: VecDeque<u8>,
    /// The client sent `close_notify`: it writes nothing more.
    notified: bool,
    /// ... before its handshake was done, in the clear: rustls's server may take that for a
    /// malformed record and answer with an alert, which then ends the connection.
    notified_early: bool,
    /// The client's stream ended.
    eof: bool,
    /// ... before the script's end: requests it had not sent by then go unanswered.
    ended_early: bool,
    /// A deadline or the shutdown closed the connection (or answered 408): requests may go
    /// unanswered.
    interrupted: bool,
    /// The sizes the client asked for, in order.
    asked: Vec<usize>,
    /// The plaintext the client read.
    plain: Vec<u8>,
    /// The server's `close_notify` arrived.
    closed_by_server: bool,
}

impl Peer {
    /// Moves the client's pending records to the socket.
    fn flush(&mut self) {
        if self.eof {
            return;
        }
        let mut out = Vec::new();
        while self.client.wants_write() {
            if let Err(e) = self.client.write_tls(&mut out) {
                panic!("the client's write_tls: {e}");
            }
        }
        self.sock_in.extend(out);
    }

    fn request(&mut self, op: u8) {
        if self.eof || self.notified {
            return;
        }
        let n = SIZES[usize::from(op & 15)];
        let times = if op & 0x10 != 0 { 3 } else { 1 };
        let mut req = Vec::new();
        for _ in 0..times {
            req.extend_from_slice(format!("GET /{n} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes());
            self.asked.push(n);
        }
        if let Err(e) = self.client.writer().write_all(&req) {
            panic!("the client's write: {e}");
        }
        if op & 0x20 != 0 {
            self.flush();
        }
    }

    /// The server's bytes arrive: every record must open.
    fn receive(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if let Err(e) = self.client.read_tls(&mut bytes) {
                panic!("the client's read_tls: {e}");
            }
            if let Err(e) = self.client.process_new_packets() {
                if self.notified_early {
                    return;
                }
                panic!("the server's records do not open in rustls: {e}");
            }
            let mut buf = [0u8; 4096];
            loop {
                match self.client.reader().read(&mut buf) {
                    Ok(0) => {
                        self.closed_by_server = true;
                        break;
                    }
                    Ok(n) => {
                        assert!(!self.closed_by_server, "plaintext after close_notify");
                        self.plain.extend_from_slice(&buf[..n]);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("the client's read: {e}"),
                }
            }
        }
        // The handshake's next flight, an answer to the server's key update.
        self.flush();
    }
}

type TlsEnv<'a> = Env<'a, QueueFreeList, Sized>;

/// The server's side: the connection as its driver sees it.
struct Server {
    link: Link<()>,
    /// The connection asked to close and was released (the core alone may close before its
    /// layer has sent `close_notify`: only the link's `Close` ends the connection).
    closed: bool,
    /// A block handed over that the layer could not take whole yet.
    leftover: Option<PoolBuf>,
}

impl Server {
    /// The connection's next want, as a driver asks for it: a close is carried out at once (the
    /// layer's blocks go back with the core's).
    fn want(&mut self, env: &mut TlsEnv<'_>) -> Want {
        if self.closed {
            return Want::Close(crate::conn::CloseReason::Done);
        }
        let w = self.link.next(env);
        if let Want::Close(_) = w {
            self.close(env);
        }
        w
    }

    /// The worker closes the connection without its core's word (a deadline, the shutdown),
    /// saying `close_notify` first where the session is sound, as both drivers do.
    fn farewell(&mut self, env: &TlsEnv<'_>, peer: &mut Peer) {
        let mut alert = [0u8; bufslab_tls::record::ALERT_RECORD_LEN];
        let n = self.link.farewell(&mut alert);
        self.close(env);
        peer.receive(&alert[..n]);
    }

    fn close(&mut self, env: &TlsEnv<'_>) {
        self.leftover = None;
        self.link.release(env.counters);
        self.closed = true;
    }

    /// The server reads up to `max` bytes of what the client sent, into the layer's read
    /// block (or discards them, when the core drains a closing connection).
    fn read(&mut self, env: &mut TlsEnv<'_>, peer: &mut Peer, max: usize) {
        if self.leftover.is_some() {
            return;
        }
        match self.want(env) {
            Want::Receive => {
                if peer.sock_in.is_empty() {
                    self.link.release_read_block();
                    return;
                }
                let Ok(space) = self.link.read_space(env) else {
                    return;
                };
                let n = space.len().min(max).min(peer.sock_in.len());
                for (d, s) in space.iter_mut().zip(peer.sock_in.drain(..n)) {
                    *d = s;
                }
                self.link.received(n);
            }
            Want::Discard => {
                let n = peer.sock_in.len().min(max);
                peer.sock_in.drain(..n);
                if n > 0 {
                    self.link.discarded(n);
                }
            }
            _ => {}
        }
    }

    /// The server is handed `block` (or, with none, the one it could not take before), as
    /// a completion-based driver hands over what the kernel received, or discards it as that
    /// driver does for a connection that drains.
    fn hand_over(&mut self, env: &mut TlsEnv<'_>, block: Option<PoolBuf>) {
        let Some(b) = self.leftover.take().or(block) else {
            return;
        };
        match self.want(env) {
            Want::Receive => self.leftover = self.link.receive_block(env, b),
            // A connection draining before its close: the block's bytes are discarded.
            Want::Discard => {
                self.link.discarded(b.len());
            }
            _ if !self.closed => self.leftover = Some(b),
            _ => {}
        }
    }

    /// The server sends up to `limit` bytes of its records (0: all of them) to the client.
    fn send(&mut self, env: &mut TlsEnv<'_>, peer: &mut Peer, limit: usize) {
        if self.want(env) != Want::Send {
            return;
        }
        let empty: &[u8] = &[];
        let mut slices = [IoSlice::new(empty); SEND_BLOCKS];
        let k = self.link.output(&mut slices);
        assert!(k > 0, "Send with nothing to send");
        let mut out = Vec::new();
        for s in &slices[..k] {
            out.extend_from_slice(s);
        }
        let n = if limit == 0 {
            out.len()
        } else {
            out.len().min(limit)
        };
        self.link.sent(n);
        peer.receive(&out[..n]);
    }
}

/// Runs the script `data` against a TLS connection: see the module documentation.
///
/// # Panics
/// When the layer or the core breaks one of the rules in the module documentation.
pub fn run_tls(data: &[u8]) {
    let Some((&first, ops)) = data.split_first() else {
        return;
    };
    let mut tls = TlsConfig::new(server_config().clone());
    let limit = if first & 1 != 0 { 156 } else { 3 };
    tls.record_limit = (first & 0x80 != 0).then_some(limit);
    let mut worker = Worker::new(
        Config {
            max_head: MAX_HEAD,
            // Sizes the large class for a whole record.
            tls: Some(tls.clone()),
            ..Config::default()
        },
        256 << 10,
    );
    assert_eq!(
        worker.cfg.whole_body_limit(),
        WHOLE_BODY,
        "the largest response fits"
    );
    let (cfg, pool) = (worker.cfg.clone(), worker.pool.clone());
    let http = HttpConfig::DEFAULT
        .with_max_head_bytes(MAX_HEAD)
        .with_max_headers(worker.slots.len());
    let mut server = Server {
        link: Link::new(Parser::new(http), 0, cfg.out_blocks),
        closed: false,
        leftover: None,
    };
    assert!(
        server.link.open(Some(&tls), &worker.shared.counters[0]),
        "the handshake starts"
    );
    let Ok(name) = ServerName::try_from("localhost") else {
        panic!("a server name");
    };
    let mut client = match ClientConnection::new(client_config(first), name) {
        Ok(c) => c,
        Err(e) => panic!("the client starts: {e}"),
    };
    client.set_buffer_limit(None);
    let mut peer = Peer {
        client,
        tls12: first & 1 != 0,
        sock_in: VecDeque::new(),
        notified: false,
        notified_early: false,
        eof: false,
        ended_early: false,
        interrupted: false,
        asked: Vec::new(),
        plain: Vec::new(),
        closed_by_server: false,
    };
    peer.flush();
    let mut service = Sized;
    let trace = std::env::var_os("FUZZ_TRACE").is_some();
    let mut hog: Vec<PoolBuf> = Vec::new();
    let mut hogged = false;
    {
        let mut env = worker.env(&mut service);
        for &op in ops {
            if server.closed {
                break;
            }
            match op {
                0x00..=0x3f => peer.request(op),
                0x40..=0x5f => server.read(&mut env, &mut peer, usize::from(op & 31) * 97 + 1),
                0x60..=0x7f => {
                    let max = usize::from(op & 31) * 211 + 1;
                    let mut block = None;
                    if server.leftover.is_none() && !peer.sock_in.is_empty() {
                        if let Ok(mut b) = pool.get(SMALL_BLOCK) {
                            let n = b.spare_capacity().min(max).min(peer.sock_in.len());
                            let bytes: Vec<u8> = peer.sock_in.drain(..n).collect();
                            b.put_slice(&bytes);
                            block = Some(b);
                        }
                    }
                    server.hand_over(&mut env, block);
                }
                0x80..=0xbf => server.send(&mut env, &mut peer, usize::from(op & 63) * 53),
                0xc0..=0xc3 => {
                    if !peer.tls12 && !peer.client.is_handshaking() && !peer.notified && !peer.eof {
                        if let Err(e) = peer.client.refresh_traffic_keys() {
                            panic!("the client's key update: {e}");
                        }
                    }
                }
                0xc4..=0xc7 => {
                    if !server.closed {
                        peer.interrupted = true;
                        let kind = server.link.timer_kind();
                        if !server.link.expire(&mut env, kind) {
                            server.farewell(&env, &mut peer);
                        }
                    }
                }
                0xc8..=0xcf => peer.flush(),
                0xd0..=0xd7 => {
                    hogged = true;
                    while let Ok(b) = pool.get(SMALL_BLOCK) {
                        hog.push(b);
                    }
                }
                0xd8..=0xdf => hog.clear(),
                0xe0..=0xef => {
                    if !peer.notified && !peer.eof {
                        peer.notified_early = peer.client.is_handshaking();
                        peer.client.send_close_notify();
                        peer.notified = true;
                        peer.flush();
                    }
                }
                0xf0..=0xf7 => {
                    peer.flush();
                    peer.eof = true;
                    peer.ended_early = true;
                }
                0xf8..=0xff => {
                    env.shutting_down = true;
                    if !server.closed && server.link.is_idle() {
                        peer.interrupted = true;
                        server.farewell(&env, &mut peer);
                    }
                }
            }
            // What a driver does after an event: carry out a close decided on.
            let w = server.want(&mut env);
            if trace {
                eprintln!(
                    "op {op:#x}: {w:?} in {} plain {} asked {}",
                    peer.sock_in.len(),
                    peer.plain.len(),
                    peer.asked.len()
                );
            }
        }
        hog.clear();
        // The client sends what it has, reads everything, then ends its stream.
        peer.flush();
        let mut steps = 0;
        while !server.closed {
            steps += 1;
            assert!(
                steps < FINISH_STEPS,
                "the connection neither ends nor progresses"
            );
            server.hand_over(&mut env, None);
            let w = server.want(&mut env);
            if trace && steps < 50 {
                eprintln!(
                    "finish: {w:?} in {} eof {} leftover {:?} {:?}",
                    peer.sock_in.len(),
                    peer.eof,
                    server.leftover.as_ref().map(|b| b.len()),
                    server.link
                );
            }
            match w {
                Want::Send => server.send(&mut env, &mut peer, 0),
                Want::Receive | Want::Discard if !peer.sock_in.is_empty() => {
                    server.read(&mut env, &mut peer, usize::MAX);
                }
                Want::Receive if !peer.eof => {
                    peer.flush();
                    peer.eof = peer.sock_in.is_empty();
                }
                // As a driver does on a read of 0: the core says how the connection ends.
                Want::Receive => match server.link.peer_eof(&mut env) {
                    Some(_) => server.close(&env),
                    None => panic!("a connection that is not upgraded goes on past its end"),
                },
                Want::Discard => {
                    server.link.peer_closed();
                    server.close(&env);
                }
                Want::HalfClose => {}
                Want::Pool => panic!(
                    "waits for the pool with every other block free: {:?}",
                    (0..3).map(|c| pool.class_stats(c)).collect::<Vec<_>>()
                ),
                Want::Wait => panic!("waits with nothing deferred"),
                Want::Close(_) => {}
            }
        }
        server.link.ended(&mut *env.service);
    }
    let held = server.link.blocks();
    worker.finish();
    assert_eq!(
        pool.stats().rented_blocks,
        0,
        "blocks left rented (the connection holds {held})"
    );
    check(&peer, hogged);
}

/// The plaintext the client read is the responses to its requests, in order, each exact; a
/// refusal for want of a block (where the pool was taken) may end it. All of them where
/// nothing was taken and the client ended its side only at the end.
fn check(peer: &Peer, hogged: bool) {
    let plain = &peer.plain;
    let (mut at, mut i) = (0, 0);
    // A response said `Connection: close`: the requests after it go unanswered.
    let mut closed = false;
    while at < plain.len() {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut resp = httparse::Response::new(&mut headers);
        // A deadline or the shutdown may close the connection in the middle of a response (one
        // waiting for its peer to read, say): what came of it must be a prefix.
        let cut = || assert!(peer.interrupted, "response {i} cut short");
        let head_len = match resp.parse(&plain[at..]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                cut();
                break;
            }
            Err(e) => panic!("response {i}: {e}"),
        };
        let code = resp.code.unwrap_or(0);
        let header = |name: &str| {
            resp.headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| h.value)
        };
        let len = header("content-length")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse::<usize>().ok());
        let Some(len) = len else {
            panic!("response {i} has no Content-Length");
        };
        let close = header("connection").is_some_and(|v| v.eq_ignore_ascii_case(b"close"));
        let end = (at + head_len + len).min(plain.len());
        let body = &plain[at + head_len..end];
        if end < at + head_len + len {
            cut();
        }
        at = end;
        match code {
            200 => {
                assert!(i < peer.asked.len(), "response {i} answers no request");
                assert_eq!(len, peer.asked[i], "response {i}'s length");
                assert!(pattern(0, len).starts_with(body), "response {i}'s body");
            }
            500 | 503 if hogged => assert!(close, "a refusal that does not close"),
            408 if peer.interrupted => assert!(close, "a 408 that does not close"),
            _ => panic!("response {i}: status {code}"),
        }
        if close {
            assert_eq!(at, plain.len(), "bytes after a response that closes");
            closed = true;
        }
        i += 1;
    }
    if !hogged && !peer.notified && !peer.ended_early && !peer.interrupted && !closed {
        assert_eq!(i, peer.asked.len(), "requests left unanswered");
    }
}
