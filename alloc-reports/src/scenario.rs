//! The scenarios: what each one sends, what it expects back, and how it counts.

use std::fmt;

use server_demo::Strategy;

use crate::client::{fnv1a, Response, FNV_START};

/// Allocations a new connection may cost (connect, one request, close), enforced by the
/// test. Measured at 0: the server preallocates its connection slots, timer links and
/// header slots, and mio registers a socket with `epoll_ctl` alone. The bound is that
/// measurement, so the first allocation anyone adds to the accept or close path fails CI.
pub const ALLOCS_PER_CONNECTION_BOUND: f64 = 0.0;

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
    /// Every scenario, in report order: the HTTP ones, then the WebSocket ones.
    pub const ALL: [Scenario; 16] = {
        let mut all = [Scenario::Plaintext; 16];
        let mut i = 0;
        while i < Scenario::HTTP.len() {
            all[i] = Scenario::HTTP[i];
            i += 1;
        }
        while i < all.len() {
            all[i] = Scenario::WEBSOCKET[i - Scenario::HTTP.len()];
            i += 1;
        }
        all
    };

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
        }
    }

    /// How the scenario uses connections.
    #[must_use]
    pub fn shape(self) -> Shape {
        match self {
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
        match self {
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
        match self {
            Scenario::Plaintext
            | Scenario::PlaintextQueue
            | Scenario::PlaintextStack
            | Scenario::ConnectClose
            | Scenario::WsEcho32
            | Scenario::WsEcho4k
            | Scenario::WsEcho64k
            | Scenario::WsText32
            | Scenario::WsText4k
            | Scenario::WsText64k => PLAINTEXT.to_vec(),
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
        match self {
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
    fn http_and_websocket_make_all() {
        let mut both = Scenario::HTTP.to_vec();
        both.extend(Scenario::WEBSOCKET);
        assert_eq!(both, Scenario::ALL);
        assert!(Scenario::HTTP
            .iter()
            .all(|s| s.websocket_payload().is_none()));
        assert!(Scenario::WEBSOCKET
            .iter()
            .all(|s| s.websocket_payload().is_some()));
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
