//! The scenarios: what each one sends, what it expects back, and how it counts.

use std::fmt;

use server_demo::Strategy;

use crate::client::{fnv1a, Response, FNV_START};

/// Allocations a new connection may cost (connect, one request, close), enforced by the
/// test. Measured at 0: the server preallocates its connection slots, timer links and
/// header slots, and mio registers a socket with `epoll_ctl` alone. The bound is that
/// measurement, so the first allocation anyone adds to the accept or close path fails CI.
pub const ALLOCS_PER_CONNECTION_BOUND: f64 = 0.0;

/// Allocations server-demo's binary may make per new HTTPS connection with a full TLS 1.3
/// handshake (`https-full-handshake-*`: connect, handshake, `GET /plaintext`, close_notify and
/// close; a rustls client offering one suite, X25519, no ALPN, keeping no session), counted by
/// the preloaded counter and enforced by `tests/process_subjects.rs`. Measured at 99.000 under
/// both drivers and with each of the three suites (rustls's handshake, the ticket the server
/// sends, and the connection's TLS state, which its close frees; the steady state after it
/// allocates nothing). The bound is that measurement, so one more allocation in the handshake
/// or in opening or closing a TLS connection fails CI; if one is wanted, raise the bound here
/// and say why.
pub const ALLOCS_PER_FULL_HANDSHAKE_BOUND: f64 = 99.0;

/// The same per new HTTPS connection with a resumed handshake (`https-resumed-handshake-*`:
/// the client presenting the ticket the server sent on its previous connection, PSK with
/// X25519). Measured at 108.000 under both drivers and with each suite; the bound is that
/// measurement, as for [`ALLOCS_PER_FULL_HANDSHAKE_BOUND`].
pub const ALLOCS_PER_RESUMED_HANDSHAKE_BOUND: f64 = 108.0;

/// Length of the body of the `echo-1k` request.
pub const ECHO_BODY: usize = 1024;

/// Length of the body of the `echo-chunked-64k` request.
pub const ECHO_CHUNKED_BODY: usize = 64 * 1024;

/// Size of each chunk of the chunked request.
const CHUNK: usize = 8 * 1024;

/// Requests per write in `pipelined-16`.
pub const PIPELINE: usize = 16;

/// How a scenario uses its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One keep-alive connection for the whole run: steady state must allocate nothing.
    KeepAlive,
    /// A new connection per request, closed after it: also counts per new connection.
    PerConnection,
}

/// One measured workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Keep-alive `GET /plaintext`, one request per write.
    Plaintext,
    /// Keep-alive `GET /json`.
    Json,
    /// Keep-alive `GET /plaintext`, 16 per write.
    Pipelined,
    /// Keep-alive `POST /echo` with a 1 KiB `Content-Length` body.
    EchoLength,
    /// Keep-alive `POST /echo` with a 64 KiB chunked body, echoed chunked.
    EchoChunked,
    /// Keep-alive `GET /missing`: a 404 that keeps the connection.
    NotFound,
    /// Connect, `GET /plaintext`, close.
    ConnectClose,
    /// Connect, a request without a valid header line: 400, and the server closes.
    Malformed,
    /// [`Scenario::Plaintext`] on a pool with the queue free list.
    PlaintextQueue,
    /// [`Scenario::Plaintext`] on a pool with the stack free list.
    PlaintextStack,
    /// One upgraded WebSocket connection: a masked 32-byte binary message, echoed.
    WsEcho32,
    /// The same with 4 KiB messages.
    WsEcho4k,
    /// The same with 64 KiB messages.
    WsEcho64k,
    /// [`Scenario::WsEcho32`] with text messages (printable ASCII, so valid UTF-8): the
    /// server's UTF-8 check is on the measured path.
    WsText32,
    /// The same with 4 KiB text messages.
    WsText4k,
    /// The same with 64 KiB text messages.
    WsText64k,
    /// An exchange over HTTPS (TLS 1.3), the client offering one cipher suite only.
    Https(Https),
}

/// A TLS 1.3 cipher suite, the only one the client offers, so every server negotiates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlsSuite {
    /// `TLS_AES_128_GCM_SHA256`.
    Aes128Gcm,
    /// `TLS_AES_256_GCM_SHA384`.
    Aes256Gcm,
    /// `TLS_CHACHA20_POLY1305_SHA256`.
    Chacha20Poly1305,
}

impl TlsSuite {
    /// The three suites of TLS 1.3 that every server here has.
    pub const ALL: [TlsSuite; 3] = [
        TlsSuite::Aes128Gcm,
        TlsSuite::Aes256Gcm,
        TlsSuite::Chacha20Poly1305,
    ];

    /// Its IANA name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TlsSuite::Aes128Gcm => "TLS_AES_128_GCM_SHA256",
            TlsSuite::Aes256Gcm => "TLS_AES_256_GCM_SHA384",
            TlsSuite::Chacha20Poly1305 => "TLS_CHACHA20_POLY1305_SHA256",
        }
    }
}

/// What an HTTPS scenario does over its connections: a keep-alive exchange of an HTTP scenario
/// on one connection opened (and its handshake done) before warm-up, or a handshake per
/// request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpsExchange {
    /// [`Scenario::Plaintext`] over TLS.
    Plaintext,
    /// [`Scenario::Json`] over TLS.
    Json,
    /// [`Scenario::Pipelined`] over TLS: 16 requests in one write, so in one record.
    Pipelined,
    /// [`Scenario::EchoLength`] over TLS.
    EchoLength,
    /// [`Scenario::EchoChunked`] over TLS: 64 KiB each way, in records of up to 16 KiB.
    EchoChunked,
    /// [`Scenario::ConnectClose`] over TLS, each connection a full handshake (the client keeps
    /// no session).
    FullHandshake,
    /// [`Scenario::ConnectClose`] over TLS, each connection resumed with the ticket the
    /// server sent on the previous one (PSK with X25519).
    ResumedHandshake,
}

impl HttpsExchange {
    /// Every exchange, in report order.
    pub const ALL: [HttpsExchange; 7] = [
        HttpsExchange::Plaintext,
        HttpsExchange::Json,
        HttpsExchange::Pipelined,
        HttpsExchange::EchoLength,
        HttpsExchange::EchoChunked,
        HttpsExchange::FullHandshake,
        HttpsExchange::ResumedHandshake,
    ];

    /// The HTTP scenario whose requests, responses and shape it has.
    #[must_use]
    pub fn http(self) -> Scenario {
        match self {
            HttpsExchange::Plaintext => Scenario::Plaintext,
            HttpsExchange::Json => Scenario::Json,
            HttpsExchange::Pipelined => Scenario::Pipelined,
            HttpsExchange::EchoLength => Scenario::EchoLength,
            HttpsExchange::EchoChunked => Scenario::EchoChunked,
            HttpsExchange::FullHandshake | HttpsExchange::ResumedHandshake => {
                Scenario::ConnectClose
            }
        }
    }

    /// Whether each of its connections must resume a session: `Some(false)` for full
    /// handshakes, `Some(true)` for resumed ones, `None` for a keep-alive exchange (one
    /// full handshake before warm-up).
    #[must_use]
    pub fn resumed(self) -> Option<bool> {
        match self {
            HttpsExchange::FullHandshake => Some(false),
            HttpsExchange::ResumedHandshake => Some(true),
            _ => None,
        }
    }
}

/// An HTTPS scenario: an exchange and the one suite the client offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Https {
    /// What it does.
    pub exchange: HttpsExchange,
    /// The suite negotiated.
    pub suite: TlsSuite,
}

/// The HTTPS scenarios' names, by exchange (as [`HttpsExchange::ALL`]) and suite (as
/// [`TlsSuite::ALL`]).
const HTTPS_NAMES: [[&str; 3]; 7] = [
    [
        "https-plaintext-aes128",
        "https-plaintext-aes256",
        "https-plaintext-chacha20",
    ],
    [
        "https-json-aes128",
        "https-json-aes256",
        "https-json-chacha20",
    ],
    [
        "https-pipelined-16-aes128",
        "https-pipelined-16-aes256",
        "https-pipelined-16-chacha20",
    ],
    [
        "https-echo-1k-aes128",
        "https-echo-1k-aes256",
        "https-echo-1k-chacha20",
    ],
    [
        "https-echo-chunked-64k-aes128",
        "https-echo-chunked-64k-aes256",
        "https-echo-chunked-64k-chacha20",
    ],
    [
        "https-full-handshake-aes128",
        "https-full-handshake-aes256",
        "https-full-handshake-chacha20",
    ],
    [
        "https-resumed-handshake-aes128",
        "https-resumed-handshake-aes256",
        "https-resumed-handshake-chacha20",
    ],
];

/// The HTTPS scenarios' descriptions, as [`HTTPS_NAMES`].
const HTTPS_DESCRIPTIONS: [[&str; 3]; 7] = [
    [
        "HTTPS keep-alive GET /plaintext, TLS_AES_128_GCM_SHA256",
        "HTTPS keep-alive GET /plaintext, TLS_AES_256_GCM_SHA384",
        "HTTPS keep-alive GET /plaintext, TLS_CHACHA20_POLY1305_SHA256",
    ],
    [
        "HTTPS keep-alive GET /json, TLS_AES_128_GCM_SHA256",
        "HTTPS keep-alive GET /json, TLS_AES_256_GCM_SHA384",
        "HTTPS keep-alive GET /json, TLS_CHACHA20_POLY1305_SHA256",
    ],
    [
        "HTTPS GET /plaintext, 16 pipelined per write, TLS_AES_128_GCM_SHA256",
        "HTTPS GET /plaintext, 16 pipelined per write, TLS_AES_256_GCM_SHA384",
        "HTTPS GET /plaintext, 16 pipelined per write, TLS_CHACHA20_POLY1305_SHA256",
    ],
    [
        "HTTPS keep-alive POST /echo, 1 KiB body, TLS_AES_128_GCM_SHA256",
        "HTTPS keep-alive POST /echo, 1 KiB body, TLS_AES_256_GCM_SHA384",
        "HTTPS keep-alive POST /echo, 1 KiB body, TLS_CHACHA20_POLY1305_SHA256",
    ],
    [
        "HTTPS keep-alive POST /echo, 64 KiB chunked body, TLS_AES_128_GCM_SHA256",
        "HTTPS keep-alive POST /echo, 64 KiB chunked body, TLS_AES_256_GCM_SHA384",
        "HTTPS keep-alive POST /echo, 64 KiB chunked body, TLS_CHACHA20_POLY1305_SHA256",
    ],
    [
        "HTTPS connect, full handshake, GET /plaintext, close, TLS_AES_128_GCM_SHA256",
        "HTTPS connect, full handshake, GET /plaintext, close, TLS_AES_256_GCM_SHA384",
        "HTTPS connect, full handshake, GET /plaintext, close, TLS_CHACHA20_POLY1305_SHA256",
    ],
    [
        "HTTPS connect, resumed handshake, GET /plaintext, close, TLS_AES_128_GCM_SHA256",
        "HTTPS connect, resumed handshake, GET /plaintext, close, TLS_AES_256_GCM_SHA384",
        "HTTPS connect, resumed handshake, GET /plaintext, close, TLS_CHACHA20_POLY1305_SHA256",
    ],
];

impl Https {
    /// Its row in [`HTTPS_NAMES`] and [`HTTPS_DESCRIPTIONS`].
    fn index(self) -> (usize, usize) {
        let exchange = HttpsExchange::ALL
            .iter()
            .position(|&e| e == self.exchange)
            .unwrap_or(0);
        let suite = TlsSuite::ALL
            .iter()
            .position(|&s| s == self.suite)
            .unwrap_or(0);
        (exchange, suite)
    }
}

/// A scenario name that is not one of [`Scenario::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownScenario(pub String);

impl fmt::Display for UnknownScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown scenario `{}` (known:", self.0)?;
        for s in Scenario::ALL {
            write!(f, " {}", s.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownScenario {}

impl Scenario {
    /// Every scenario, in report order: the HTTP ones, the HTTPS ones, then the WebSocket
    /// ones.
    pub const ALL: [Scenario; 37] = {
        let mut all = [Scenario::Plaintext; 37];
        let (http, https) = (Scenario::HTTP.len(), Scenario::HTTPS.len());
        let mut i = 0;
        while i < http {
            all[i] = Scenario::HTTP[i];
            i += 1;
        }
        while i < http + https {
            all[i] = Scenario::HTTPS[i - http];
            i += 1;
        }
        while i < all.len() {
            all[i] = Scenario::WEBSOCKET[i - http - https];
            i += 1;
        }
        all
    };

    /// The HTTPS scenarios: each [`HttpsExchange`] with each [`TlsSuite`], exchange by
    /// exchange.
    pub const HTTPS: [Scenario; 21] = {
        let mut all = [Scenario::Plaintext; 21];
        let mut i = 0;
        while i < all.len() {
            all[i] = Scenario::Https(Https {
                exchange: HttpsExchange::ALL[i / TlsSuite::ALL.len()],
                suite: TlsSuite::ALL[i % TlsSuite::ALL.len()],
            });
            i += 1;
        }
        all
    };

    /// Its TLS side, for an HTTPS scenario; `None` for the others.
    #[must_use]
    pub fn https(self) -> Option<Https> {
        match self {
            Scenario::Https(h) => Some(h),
            _ => None,
        }
    }

    /// The plain HTTP scenario it runs: itself, or for an HTTPS one the HTTP scenario whose
    /// requests it sends ([`HttpsExchange::http`]).
    #[must_use]
    pub fn http(self) -> Scenario {
        self.https().map_or(self, |h| h.exchange.http())
    }

    /// Whether it is one of [`Scenario::HTTP`]: plain HTTP, neither TLS nor WebSocket.
    #[must_use]
    pub fn is_http(self) -> bool {
        self.https().is_none() && self.websocket_payload().is_none()
    }

    /// The HTTP scenarios: every one but the WebSocket echoes.
    pub const HTTP: [Scenario; 10] = [
        Scenario::Plaintext,
        Scenario::Json,
        Scenario::Pipelined,
        Scenario::EchoLength,
        Scenario::EchoChunked,
        Scenario::NotFound,
        Scenario::ConnectClose,
        Scenario::Malformed,
        Scenario::PlaintextQueue,
        Scenario::PlaintextStack,
    ];

    /// The WebSocket echo scenarios: a request is one message and its echo, on a connection
    /// upgraded before warm-up.
    pub const WEBSOCKET: [Scenario; 6] = [
        Scenario::WsEcho32,
        Scenario::WsEcho4k,
        Scenario::WsEcho64k,
        Scenario::WsText32,
        Scenario::WsText4k,
        Scenario::WsText64k,
    ];

    /// The payload length of a WebSocket echo scenario; `None` for an HTTP one.
    #[must_use]
    pub fn websocket_payload(self) -> Option<usize> {
        match self {
            Scenario::WsEcho32 | Scenario::WsText32 => Some(32),
            Scenario::WsEcho4k | Scenario::WsText4k => Some(4 * 1024),
            Scenario::WsEcho64k | Scenario::WsText64k => Some(64 * 1024),
            _ => None,
        }
    }

    /// Whether a WebSocket scenario's messages are text (else binary).
    #[must_use]
    pub fn websocket_text(self) -> bool {
        matches!(
            self,
            Scenario::WsText32 | Scenario::WsText4k | Scenario::WsText64k
        )
    }

    /// The name used by `--scenario`, the report and the profile's file name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Plaintext => "plaintext",
            Scenario::Json => "json",
            Scenario::Pipelined => "pipelined-16",
            Scenario::EchoLength => "echo-1k",
            Scenario::EchoChunked => "echo-chunked-64k",
            Scenario::NotFound => "not-found",
            Scenario::ConnectClose => "connect-close",
            Scenario::Malformed => "malformed-400",
            Scenario::PlaintextQueue => "plaintext-queue",
            Scenario::PlaintextStack => "plaintext-stack",
            Scenario::WsEcho32 => "ws-echo-32",
            Scenario::WsEcho4k => "ws-echo-4k",
            Scenario::WsEcho64k => "ws-echo-64k",
            Scenario::WsText32 => "ws-text-32",
            Scenario::WsText4k => "ws-text-4k",
            Scenario::WsText64k => "ws-text-64k",
            Scenario::Https(h) => {
                let (e, s) = h.index();
                HTTPS_NAMES[e][s]
            }
        }
    }

    /// Looks a scenario up by [`name`](Self::name).
    ///
    /// # Errors
    /// [`UnknownScenario`] for any other name.
    pub fn from_name(name: &str) -> Result<Scenario, UnknownScenario> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| UnknownScenario(name.to_owned()))
    }

    /// One line on what the scenario does.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Scenario::Plaintext => "keep-alive GET /plaintext",
            Scenario::Json => "keep-alive GET /json",
            Scenario::Pipelined => "GET /plaintext, 16 pipelined per write",
            Scenario::EchoLength => "keep-alive POST /echo, 1 KiB Content-Length body",
            Scenario::EchoChunked => "keep-alive POST /echo, 64 KiB chunked body",
            Scenario::NotFound => "keep-alive GET /missing (404)",
            Scenario::ConnectClose => "connect, GET /plaintext, close",
            Scenario::Malformed => "connect, malformed head (400, server closes)",
            Scenario::PlaintextQueue => "keep-alive GET /plaintext, queue free list",
            Scenario::PlaintextStack => "keep-alive GET /plaintext, stack free list",
            Scenario::WsEcho32 => "WebSocket, masked 32 B binary message echoed",
            Scenario::WsEcho4k => "WebSocket, masked 4 KiB binary message echoed",
            Scenario::WsEcho64k => "WebSocket, masked 64 KiB binary message echoed",
            Scenario::WsText32 => "WebSocket, masked 32 B text message echoed",
            Scenario::WsText4k => "WebSocket, masked 4 KiB text message echoed",
            Scenario::WsText64k => "WebSocket, masked 64 KiB text message echoed",
            Scenario::Https(h) => {
                let (e, s) = h.index();
                HTTPS_DESCRIPTIONS[e][s]
            }
        }
    }

    /// How the scenario uses connections.
    #[must_use]
    pub fn shape(self) -> Shape {
        match self.http() {
            Scenario::ConnectClose | Scenario::Malformed => Shape::PerConnection,
            _ => Shape::KeepAlive,
        }
    }

    /// The pool free list this scenario asks of the server: `Some` only for the A/B pair,
    /// which only a server built on bufslab can honour; `None`: the server's default.
    #[must_use]
    pub fn strategy(self) -> Option<Strategy> {
        match self {
            Scenario::PlaintextQueue => Some(Strategy::Queue),
            Scenario::PlaintextStack => Some(Strategy::Stack),
            _ => None,
        }
    }

    /// Measured requests when `--requests` is not given: enough that one allocation in a
    /// thousand requests would show, few enough that the whole report takes well under a
    /// minute on two cores.
    #[must_use]
    pub fn default_requests(self) -> u64 {
        if let Some(h) = self.https() {
            // A fifth of the HTTP scenario's: the client's rustls encrypts and decrypts every
            // request, and there are 21 of them. One allocation in a thousand still shows.
            return match h.exchange {
                HttpsExchange::FullHandshake | HttpsExchange::ResumedHandshake => 1_000,
                _ => h.exchange.http().default_requests() / 5,
            };
        }
        match self {
            Scenario::Pipelined => 160_000,
            // 64 KiB each way per request.
            Scenario::EchoChunked | Scenario::WsEcho64k | Scenario::WsText64k => 10_000,
            // Every cycle is a TCP handshake and teardown, and leaves a TIME_WAIT socket.
            Scenario::ConnectClose | Scenario::Malformed => 1_000,
            _ => 100_000,
        }
    }

    /// Requests sent per write: a pipelined batch counts as that many requests.
    #[must_use]
    pub fn per_write(self) -> u64 {
        match self.http() {
            Scenario::Pipelined => PIPELINE as u64,
            _ => 1,
        }
    }

    /// The bytes of one write: one request, or a pipelined batch; for a WebSocket scenario,
    /// the message's payload (the client frames and masks it). Built once, before the
    /// measured window.
    #[must_use]
    pub fn request(self) -> Vec<u8> {
        if let Some(len) = self.websocket_payload() {
            return if self.websocket_text() {
                text(len)
            } else {
                body(len)
            };
        }
        const PLAINTEXT: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n";
        match self.http() {
            Scenario::Plaintext
            | Scenario::PlaintextQueue
            | Scenario::PlaintextStack
            | Scenario::ConnectClose
            | Scenario::WsEcho32
            | Scenario::WsEcho4k
            | Scenario::WsEcho64k
            | Scenario::WsText32
            | Scenario::WsText4k
            | Scenario::WsText64k
            | Scenario::Https(_) => PLAINTEXT.to_vec(),
            Scenario::Json => b"GET /json HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
            Scenario::Pipelined => PLAINTEXT.repeat(PIPELINE),
            Scenario::NotFound => b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
            Scenario::Malformed => b"GET /plaintext HTTP/1.1\r\nHost localhost\r\n\r\n".to_vec(),
            Scenario::EchoLength => {
                let mut r = format!(
                    "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: {ECHO_BODY}\r\n\r\n"
                )
                .into_bytes();
                r.extend(body(ECHO_BODY));
                r
            }
            Scenario::EchoChunked => {
                let mut r =
                    b"POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                        .to_vec();
                for chunk in body(ECHO_CHUNKED_BODY).chunks(CHUNK) {
                    r.extend(format!("{:x}\r\n", chunk.len()).into_bytes());
                    r.extend(chunk);
                    r.extend(b"\r\n");
                }
                r.extend(b"0\r\n\r\n");
                r
            }
        }
    }

    /// What every response of this scenario must look like.
    #[must_use]
    pub fn expected(self) -> Expected {
        let echo = |len: usize| Expected {
            status: 200,
            body_len: Some(len as u64),
            body_hash: Some(fnv1a(FNV_START, &body(len))),
            close: false,
        };
        match self.http() {
            Scenario::EchoLength => echo(ECHO_BODY),
            Scenario::EchoChunked => echo(ECHO_CHUNKED_BODY),
            Scenario::NotFound => Expected {
                status: 404,
                body_len: None,
                body_hash: None,
                close: false,
            },
            Scenario::Malformed => Expected {
                status: 400,
                body_len: None,
                body_hash: None,
                close: true,
            },
            _ => Expected {
                status: 200,
                body_len: None,
                body_hash: None,
                close: false,
            },
        }
    }
}

/// The body the echo scenarios send: a byte pattern that does not repeat on a block
/// boundary, so a misplaced copy changes the hash.
fn body(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// The text messages' payload: printable ASCII (valid UTF-8, as a text message must be), in a
/// pattern of 89 (a prime) that does not repeat on a block boundary either.
fn text(len: usize) -> Vec<u8> {
    (0..len).map(|i| b' ' + (i % 89) as u8).collect()
}

/// What a response must be for the scenario to count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    /// Status code.
    pub status: u16,
    /// Body length, when the scenario knows it.
    pub body_len: Option<u64>,
    /// Body hash, when the scenario knows it (echoes).
    pub body_hash: Option<u64>,
    /// Whether the server must close after it.
    pub close: bool,
}

impl Expected {
    /// Whether `r` is what the scenario expects.
    #[must_use]
    pub fn matches(&self, r: &Response) -> bool {
        r.status == self.status
            && r.close == self.close
            && self.body_len.map_or(true, |n| n == r.body_len)
            && self.body_hash.map_or(true, |h| h == r.body_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::from_name(s.name()), Ok(s));
        }
        assert!(Scenario::from_name("nope").is_err());
    }

    #[test]
    fn http_https_and_websocket_make_all() {
        let mut every = Scenario::HTTP.to_vec();
        every.extend(Scenario::HTTPS);
        every.extend(Scenario::WEBSOCKET);
        assert_eq!(every, Scenario::ALL);
        assert!(Scenario::HTTP.iter().all(|s| s.is_http()));
        assert!(Scenario::ALL
            .iter()
            .filter(|s| !Scenario::HTTP.contains(s))
            .all(|s| !s.is_http()));
        assert!(Scenario::HTTP
            .iter()
            .all(|s| s.websocket_payload().is_none()));
        assert!(Scenario::WEBSOCKET
            .iter()
            .all(|s| s.websocket_payload().is_some()));
    }

    #[test]
    fn https_scenarios_are_their_http_ones_over_tls() {
        let mut names: Vec<&str> = Scenario::HTTPS.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Scenario::HTTPS.len());
        for exchange in HttpsExchange::ALL {
            for suite in TlsSuite::ALL {
                let s = Scenario::Https(Https { exchange, suite });
                assert!(Scenario::HTTPS.contains(&s));
                let http = exchange.http();
                assert!(s.name().starts_with("https-"));
                assert!(s.description().ends_with(suite.name()), "{}", s.name());
                assert_eq!(s.http(), http);
                assert_eq!(s.request(), http.request());
                assert_eq!(s.expected(), http.expected());
                assert_eq!(s.per_write(), http.per_write());
                assert_eq!(s.shape(), http.shape());
                assert_eq!(s.strategy(), None);
                assert_eq!(
                    exchange.resumed().is_some(),
                    s.shape() == Shape::PerConnection
                );
            }
        }
        assert_eq!(
            Scenario::from_name("https-echo-chunked-64k-chacha20"),
            Ok(Scenario::Https(Https {
                exchange: HttpsExchange::EchoChunked,
                suite: TlsSuite::Chacha20Poly1305
            }))
        );
    }

    #[test]
    fn text_messages_are_utf8() {
        for s in Scenario::WEBSOCKET {
            let payload = s.request();
            assert_eq!(Some(payload.len()), s.websocket_payload());
            // (32 B of the binary pattern happen to be ASCII too; 4 KiB and 64 KiB are not.)
            assert!(!s.websocket_text() || std::str::from_utf8(&payload).is_ok());
        }
    }

    #[test]
    fn chunked_request_is_framed() {
        let r = Scenario::EchoChunked.request();
        assert!(r.ends_with(b"\r\n0\r\n\r\n"));
        assert_eq!(
            r.windows(6).filter(|w| w == b"2000\r\n").count(),
            ECHO_CHUNKED_BODY / CHUNK
        );
    }
}
