//! Side-by-side benchmarks of the bufslab family. See `BENCHMARKS.md` at the workspace root.

use std::fmt::Display;

mod cli;
mod field_sum;
mod hyper_server;

pub use cli::{args_or_exit, parse_flags, serve_main, Flag};
pub use field_sum::{sum_bufslab, FieldSum};
pub use hyper_server::HyperServer;

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
    /// The head is not ASCII text.
    NotText,
    /// The status line is not `HTTP/1.1 200`; holds the status code as sent.
    Status(String),
    /// The head has no (valid) `Content-Length`.
    NoLength,
}

impl Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::NotText => write!(f, "response head is not text"),
            ResponseError::Status(s) => write!(f, "status {s}, expected 200"),
            ResponseError::NoLength => write!(f, "response without a Content-Length"),
        }
    }
}

impl std::error::Error for ResponseError {}

/// The whole length (head plus `Content-Length` body) of the `200` response that starts `buf`,
/// or `Ok(None)` while its head is incomplete.
///
/// # Errors
/// When the head is complete but not a `200` with a `Content-Length`.
pub fn response_len(buf: &[u8]) -> Result<Option<usize>, ResponseError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head_len = end + 4;
    let head = std::str::from_utf8(&buf[..head_len]).map_err(|_| ResponseError::NotText)?;
    let status = head.split(' ').nth(1).unwrap_or("");
    if !head.starts_with("HTTP/1.1 ") || status != "200" {
        return Err(ResponseError::Status(status.to_owned()));
    }
    let body_len = head
        .split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .ok_or(ResponseError::NoLength)?;
    Ok(Some(head_len + body_len))
}
