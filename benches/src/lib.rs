//! Side-by-side benchmarks of the bufslab family. See `BENCHMARKS.md` at the workspace root.

use std::fmt::Display;

use bufslab_http::{parse_response, HeaderSlot, Method, ResponseFraming, Status};

mod cli;
mod contenders;
mod field_sum;
mod hyper_server;
mod server_framing;
mod tls_roots;
mod workers;
mod ws_echo;
mod ws_load;
mod ws_peer_main;

pub use cli::{args_or_exit, parse_flags, serve_main, Flag, ServerArgs};
pub use contenders::{backends, fixtures, Contenders};
pub use field_sum::{sum_bufslab, FieldSum};
pub use hyper_server::{tls_config, HyperServer};
pub use server_framing::{decide_framing, ServerFraming};
pub use tls_roots::root_store;
pub use ws_echo::{WsEchoServer, WsPeer};
pub use ws_load::{run_load, LoadConfig, LoadError, LoadReport, WsClient};
pub use ws_peer_main::ws_peer_main;

/// The codec fixtures, the project's reference request bytes (`http-codec/tests/fixtures/`):
/// name and bytes, one request head each (`post_json` with its body after it).
pub const FIXTURES: [(&str, &[u8]); 4] = [
    (
        "techempower",
        include_bytes!("../../http-codec/tests/fixtures/techempower.http"),
    ),
    (
        "browser",
        include_bytes!("../../http-codec/tests/fixtures/browser.http"),
    ),
    (
        "many_headers",
        include_bytes!("../../http-codec/tests/fixtures/many_headers.http"),
    ),
    (
        "post_json",
        include_bytes!("../../http-codec/tests/fixtures/post_json.http"),
    ),
];

/// Why a response is not the `200` with a `Content-Length` that the benches' clients expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseError {
    /// The head is not a valid HTTP/1.1 response head.
    Invalid(bufslab_http::Error),
    /// The status is not `200`; holds the status code.
    Status(u16),
    /// The body is not framed by a `Content-Length`.
    NoLength,
}

impl Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::Invalid(e) => write!(f, "invalid response head: {e}"),
            ResponseError::Status(s) => write!(f, "status {s}, expected 200"),
            ResponseError::NoLength => write!(f, "response without a Content-Length"),
        }
    }
}

impl std::error::Error for ResponseError {}

/// The whole length (head plus `Content-Length` body) of the `200` response to a GET that
/// starts `buf`, or `Ok(None)` while its head is incomplete. Parsed by bufslab-http's
/// response parser, as strict as its request parser.
///
/// # Errors
/// When the head is invalid, or complete but not a `200` with a `Content-Length`.
///
/// # Examples
///
/// ```
/// use bufslab_benches::{response_len, ResponseError};
///
/// let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1";
/// assert_eq!(response_len(ok), Ok(Some(40)));
/// assert_eq!(response_len(&ok[..20]), Ok(None));
/// let missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
/// assert_eq!(response_len(missing), Err(ResponseError::Status(404)));
/// ```
pub fn response_len(buf: &[u8]) -> Result<Option<usize>, ResponseError> {
    let mut slots = [HeaderSlot::EMPTY; 32];
    let r = match parse_response(buf, Method::Get, &mut slots) {
        Ok(Status::Complete(r)) => r,
        Ok(Status::Partial) => return Ok(None),
        Err(e) => return Err(ResponseError::Invalid(e)),
    };
    if r.status() != 200 {
        return Err(ResponseError::Status(r.status()));
    }
    match r.framing() {
        ResponseFraming::Length(n) => usize::try_from(n)
            .ok()
            .and_then(|n| r.head_len().checked_add(n))
            .map(Some)
            .ok_or(ResponseError::NoLength),
        _ => Err(ResponseError::NoLength),
    }
}
