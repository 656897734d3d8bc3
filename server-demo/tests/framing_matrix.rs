//! The request smuggling and framing matrix: one row per way a request can declare (or fake)
//! where its body ends, each with the RFC section that decides it and the outcome the server
//! must reach. Every row is sent with a valid `GET /plaintext` pipelined right behind it, so a
//! row either is framed exactly as expected (its echo is its body, and the next request is
//! answered) or is refused with a status and a close, and then the pipelined request is never
//! read: a server that disagreed with a strict front end about where a body ends would answer
//! it (or answer bytes of the body as a request).
//!
//! Rows run in parallel, one connection each, against one server; then all of them again over
//! HTTPS, where every close the server decides must also end the TLS stream cleanly
//! (`close_notify`), so that a client can tell a whole answer from a cut one.

mod common;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread;

use common::*;
use server_demo::Config;

/// What the server must do with a row (followed by `GET /plaintext`).
#[derive(Clone, Copy, Debug)]
enum Want {
    /// Framed as declared: a `200` whose body is exactly this, then the pipelined request
    /// answered on the same connection.
    Accept(&'static [u8]),
    /// Framed as declared, and what follows the body is not a request: a `200` with this body,
    /// then that status with `Connection: close`, then the close; `GET /plaintext` unanswered.
    AcceptThenReject(&'static [u8], u16),
    /// Refused before anything of a response went out: exactly one response with this status
    /// and `Connection: close`, then the close; `GET /plaintext` unanswered.
    Reject(u16),
    /// A body found malformed after its echo may have started: either a `400` with
    /// `Connection: close` (nothing had gone out yet), or an echo `200` that is cut short (no
    /// last chunk); then the close, and `GET /plaintext` unanswered.
    RejectMidBody,
}

use Want::*;

/// A `POST /echo` over HTTP/1.1 with `Host: t`, these header lines, the empty line, then the
/// body bytes (all as given, unchecked).
macro_rules! echo {
    ($fields:expr, $body:expr) => {
        concat!("POST /echo HTTP/1.1\r\nHost: t\r\n", $fields, "\r\n", $body).as_bytes()
    };
}

/// (RFC section and what the row does, request bytes, outcome)
const ROWS: &[(&str, &[u8], Want)] = &[
    // ---- baselines ----
    ("9112 §6.3 Content-Length body", echo!("Content-Length: 5\r\n", "hello"), Accept(b"hello")),
    ("9112 §7.1 chunked body", echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9112 §6.3 no framing: no body", echo!("", ""), Accept(b"")),
    // ---- Content-Length and Transfer-Encoding together (9112 §6.1, §6.3 point 3) ----
    ("9112 §6.1 CL then TE", echo!("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 TE then CL", echo!("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 CL 0 with TE", echo!("Content-Length: 0\r\nTransfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 CL with TE identity", echo!("Content-Length: 5\r\nTransfer-Encoding: identity\r\n", "hello"), Reject(400)),
    // ---- Transfer-Encoding in HTTP/1.0 (9112 §6.1: the framing is faulty) ----
    (
        "9112 §6.1 TE chunked in HTTP/1.0",
        b"POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        Reject(400),
    ),
    (
        "9112 §6.1 TE with CL in HTTP/1.0",
        b"POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello",
        Reject(400),
    ),
    // ---- Transfer-Encoding values (9112 §6.1, §7; 9110 §5.6.1) ----
    ("9112 §6.1 chunked, chunked", echo!("Transfer-Encoding: chunked, chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 chunked on two lines", echo!("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 gzip, chunked: 501", echo!("Transfer-Encoding: gzip, chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(501)),
    ("9112 §6.1 gzip then chunked on two lines: 501", echo!("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(501)),
    ("9112 §6.3 chunked, gzip: chunked not last", echo!("Transfer-Encoding: chunked, gzip\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.3 chunked then gzip on two lines", echo!("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.3 identity alone", echo!("Transfer-Encoding: identity\r\n", "hello"), Reject(400)),
    ("9112 §6.3 unknown coding alone", echo!("Transfer-Encoding: xchunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 chunked with a parameter", echo!("Transfer-Encoding: chunked;q=1\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 quoted chunked", echo!("Transfer-Encoding: \"chunked\"\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 empty Transfer-Encoding", echo!("Transfer-Encoding: \r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 only commas", echo!("Transfer-Encoding: , ,\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 chunked with a vertical tab", echo!("Transfer-Encoding: chunked\x0b\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §6.1 chunked with a form feed inside", echo!("Transfer-Encoding: chun\x0cked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9110 §5.6.2 coding names are case-insensitive: Chunked", echo!("Transfer-Encoding: Chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9110 §5.6.2 coding names are case-insensitive: CHUNKED", echo!("Transfer-Encoding: CHUNKED\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9110 §5.1 field names are case-insensitive", echo!("transfer-encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9110 §5.5 OWS around the value", echo!("Transfer-Encoding: \t chunked \t\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9110 §5.5 no space after the colon", echo!("Transfer-Encoding:chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9110 §5.6.1 empty list member before chunked", echo!("Transfer-Encoding: , chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9110 §5.6.1 empty list member after chunked", echo!("Transfer-Encoding: chunked, \r\n", "5\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    (
        "9110 §5.6.1 empty line then chunked combine to `, chunked`",
        echo!("Transfer-Encoding: \r\nTransfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"),
        Accept(b"hello"),
    ),
    (
        "9110 §5.6.1 chunked then an empty line combine to `chunked, `",
        echo!("Transfer-Encoding: chunked\r\nTransfer-Encoding: \r\n", "5\r\nhello\r\n0\r\n\r\n"),
        Accept(b"hello"),
    ),
    (
        "9110 §5.1 a name that is not Transfer-Encoding frames nothing",
        echo!("Transfer_Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"),
        AcceptThenReject(b"", 400),
    ),
    // ---- Content-Length values (9110 §8.6, 9112 §6.3 point 5) ----
    ("9110 §8.6 duplicate Content-Length, equal", echo!("Content-Length: 5\r\nContent-Length: 5\r\n", "hello"), Accept(b"hello")),
    ("9110 §8.6 duplicate Content-Length, unequal", echo!("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"), Reject(400)),
    ("9110 §8.6 list of equal values", echo!("Content-Length: 5, 5\r\n", "hello"), Accept(b"hello")),
    ("9110 §8.6 list of unequal values", echo!("Content-Length: 5, 6\r\n", "hello!"), Reject(400)),
    ("9110 §8.6 list with an empty member (rejecting is allowed)", echo!("Content-Length: 5,,5\r\n", "hello"), Reject(400)),
    ("9110 §8.6 list with a trailing comma", echo!("Content-Length: 5,\r\n", "hello"), Reject(400)),
    ("9110 §8.6 plus sign", echo!("Content-Length: +5\r\n", "hello"), Reject(400)),
    ("9110 §8.6 minus sign", echo!("Content-Length: -5\r\n", "hello"), Reject(400)),
    ("9110 §8.6 leading zeros are digits", echo!("Content-Length: 0005\r\n", "hello"), Accept(b"hello")),
    ("9110 §8.6 hex", echo!("Content-Length: 0x5\r\n", "hello"), Reject(400)),
    ("9110 §8.6 decimal point", echo!("Content-Length: 5.0\r\n", "hello"), Reject(400)),
    ("9110 §8.6 space inside", echo!("Content-Length: 5 5\r\n", "hello"), Reject(400)),
    ("9110 §8.6 empty", echo!("Content-Length: \r\n", "hello"), Reject(400)),
    ("9110 §8.6 beyond u64", echo!("Content-Length: 18446744073709551616\r\n", "hello"), Reject(400)),
    ("9110 §8.6 far beyond u64", echo!("Content-Length: 99999999999999999999999999\r\n", "hello"), Reject(400)),
    ("9110 §15.5.14 u64::MAX is valid but too large: 413", echo!("Content-Length: 18446744073709551615\r\n", "hello"), Reject(413)),
    (
        "9112 §6.3 the body ends at Content-Length; what follows is the next request",
        echo!("Content-Length: 3\r\n", "hello\r\n"),
        AcceptThenReject(b"hel", 400),
    ),
    // ---- field syntax around framing fields (9112 §5.1, §5.2, §2.2) ----
    ("9112 §5.1 space before the colon (CL)", echo!("Content-Length : 5\r\n", "hello"), Reject(400)),
    ("9112 §5.1 space before the colon (TE)", echo!("Transfer-Encoding : chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §5.1 tab before the colon", echo!("Transfer-Encoding\t: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §5.2 obs-fold continuing Content-Length", echo!("Content-Length: 5\r\n 5\r\n", "hello"), Reject(400)),
    ("9112 §5.2 obs-fold continuing Transfer-Encoding", echo!("Transfer-Encoding:\r\n chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §5.2 obs-fold hiding Transfer-Encoding", echo!("X: a\r\n\tTransfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §2.2 whitespace before the first field", b"POST /echo HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: t\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Reject(400)),
    ("9112 §2.2 bare CR inside Content-Length", echo!("Content-Length: 5\rX: y\r\n", "hello"), Reject(400)),
    ("9112 §2.2 bare CR ending the TE line", echo!("Transfer-Encoding: chunked\r", "\r\n5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §2.2 bare LF ending the CL line", echo!("Content-Length: 5\n", "hello"), Reject(400)),
    ("9112 §2.2 bare LF ending the TE line", echo!("Transfer-Encoding: chunked\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §2.2 bare LF ending the head", echo!("Content-Length: 5\r\n\n", "hello"), Reject(400)),
    ("9110 §5.5 NUL in the CL value", echo!("Content-Length: 5\0\r\n", "hello"), Reject(400)),
    ("9110 §5.5 NUL in the TE value", echo!("Transfer-Encoding: chunked\0\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9110 §5.5 control byte in the TE value", echo!("Transfer-Encoding: \x01chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9110 §5.5 DEL in the CL value", echo!("Content-Length: 5\x7f\r\n", "hello"), Reject(400)),
    ("9110 §5.1 NUL in a field name", echo!("Content\0Length: 5\r\n", "hello"), Reject(400)),
    ("9110 §5.1 control byte in a field name", echo!("Transfer-\x01Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9110 §5.1 vertical tab before a field name", echo!("\x0bContent-Length: 5\r\n", "hello"), Reject(400)),
    ("9110 §5.1 space inside a field name", echo!("Content Length: 5\r\n", "hello"), Reject(400)),
    // ---- chunk sizes (9112 §7.1) ----
    ("9112 §7.1 leading zeros in a chunk size", echo!("Transfer-Encoding: chunked\r\n", "0005\r\nhello\r\n000\r\n\r\n"), Accept(b"hello")),
    ("9112 §7.1 upper-case hex", echo!("Transfer-Encoding: chunked\r\n", "A\r\n0123456789\r\n0\r\n\r\n"), Accept(b"0123456789")),
    ("9112 §7.1 size overflowing u64", echo!("Transfer-Encoding: chunked\r\n", "10000000000000000\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 size overflowing u64 after zeros", echo!("Transfer-Encoding: chunked\r\n", "000fffffffffffffffff\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 size not hex", echo!("Transfer-Encoding: chunked\r\n", "zz\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 empty size line", echo!("Transfer-Encoding: chunked\r\n", "\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 size with a sign", echo!("Transfer-Encoding: chunked\r\n", "+5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 size with 0x", echo!("Transfer-Encoding: chunked\r\n", "0x5\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 whitespace after the size, no extension", echo!("Transfer-Encoding: chunked\r\n", "5 \r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 bare LF after the size", echo!("Transfer-Encoding: chunked\r\n", "5\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 bare CR after the size", echo!("Transfer-Encoding: chunked\r\n", "5\rhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1 bare LF after the last chunk", echo!("Transfer-Encoding: chunked\r\n", "0\n\r\n"), Reject(400)),
    ("9112 §7.1 bare LF ending the body", echo!("Transfer-Encoding: chunked\r\n", "0\r\n\n"), Reject(400)),
    ("9112 §7.1 data longer than its size", echo!("Transfer-Encoding: chunked\r\n", "3\r\nhello\r\n0\r\n\r\n"), RejectMidBody),
    ("9112 §7.1 data without its CRLF", echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello0\r\n\r\n"), RejectMidBody),
    ("9112 §7.1 data ended by a bare LF", echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello\n0\r\n\r\n"), RejectMidBody),
    ("9112 §7.1 second size line malformed", echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\nzz\r\n0\r\n\r\n"), RejectMidBody),
    // ---- chunk extensions (9112 §7.1.1) ----
    ("9112 §7.1.1 extension name only", echo!("Transfer-Encoding: chunked\r\n", "5;a\r\nhello\r\n0\r\n\r\n"), Accept(b"hello")),
    ("9112 §7.1.1 BWS and a quoted value", echo!("Transfer-Encoding: chunked\r\n", "2 ; a=\"x\"\r\nhe\r\n0\r\n\r\n"), Accept(b"he")),
    ("9112 §7.1.1 token value, quoted value with a quoted-pair", echo!("Transfer-Encoding: chunked\r\n", "2;a=b;c=\"d\\\"e\"\r\nhe\r\n0\r\n\r\n"), Accept(b"he")),
    ("9112 §7.1.1 extension on the last chunk", echo!("Transfer-Encoding: chunked\r\n", "2\r\nhe\r\n0;last=1\r\n\r\n"), Accept(b"he")),
    ("9112 §7.1.1 ; without a name", echo!("Transfer-Encoding: chunked\r\n", "2;\r\nhe\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 = without a name", echo!("Transfer-Encoding: chunked\r\n", "2;=x\r\nhe\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 = without a value", echo!("Transfer-Encoding: chunked\r\n", "2;a=\r\nhe\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 unterminated quoted-string", echo!("Transfer-Encoding: chunked\r\n", "2;a=\"x\r\nhe\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 two tokens as a value", echo!("Transfer-Encoding: chunked\r\n", "2;a=b c\r\nhe\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 delimiter in a name", echo!("Transfer-Encoding: chunked\r\n", "2;a@b\r\nhe\r\n0\r\n\r\n"), Reject(400)),
    (
        "9112 §7.1.1 a quoted-string that would swallow the line end",
        echo!("Transfer-Encoding: chunked\r\n", "5;a=\"abc\";b=\"def; ghi\r\nhello\r\n0\r\n\r\n"),
        Reject(400),
    ),
    ("9112 §7.1.1 control byte in an extension", echo!("Transfer-Encoding: chunked\r\n", "5;a=\x01\r\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 bare LF in an extension", echo!("Transfer-Encoding: chunked\r\n", "5;a\nhello\r\n0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.1 malformed extension on the last chunk", echo!("Transfer-Encoding: chunked\r\n", "0;=\r\n\r\n"), Reject(400)),
    // ---- trailers (9112 §7.1.2, 9110 §6.5.1: framing fields in trailers are not used) ----
    (
        "9110 §6.5.1 trailer Content-Length is ignored",
        echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n"),
        Accept(b"hello"),
    ),
    (
        "9110 §6.5.1 trailer Transfer-Encoding is ignored",
        echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Accept(b"hello"),
    ),
    (
        "9110 §6.5.1 trailer Host and Connection are ignored",
        echo!("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\nHost: evil\r\nConnection: close\r\n\r\n"),
        Accept(b"hello"),
    ),
    ("9112 §7.1.2 trailer obs-fold", echo!("Transfer-Encoding: chunked\r\n", "0\r\nX: a\r\n b\r\n\r\n"), Reject(400)),
    ("9112 §7.1.2 trailer without a colon", echo!("Transfer-Encoding: chunked\r\n", "0\r\nContent-Length 5\r\n\r\n"), Reject(400)),
    ("9112 §7.1.2 trailer with space before the colon", echo!("Transfer-Encoding: chunked\r\n", "0\r\nContent-Length : 5\r\n\r\n"), Reject(400)),
    ("9112 §7.1.2 trailer with NUL", echo!("Transfer-Encoding: chunked\r\n", "0\r\nX: a\0\r\n\r\n"), Reject(400)),
    ("9112 §7.1.2 trailer ended by a bare LF", echo!("Transfer-Encoding: chunked\r\n", "0\r\nX: a\n\r\n"), Reject(400)),
    // ---- request line and Host, where they decide framing or routing ----
    ("9112 §3.2.2 absolute-form routes by its path", b"GET http://t/plaintext HTTP/1.1\r\nHost: t\r\n\r\n", Accept(HELLO)),
    ("9112 §3.2.2 absolute-form echo", b"POST http://t:80/echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", Accept(b"hello")),
    ("9112 §2.3 HTTP/1.2 is processed as HTTP/1.1", b"POST /echo HTTP/1.2\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Accept(b"hello")),
    ("9110 §15.6.6 HTTP/2.0 in an HTTP/1 request line: 505", b"POST /echo HTTP/2.0\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", Reject(505)),
    ("9112 §3.2 Host port not digits", b"POST /echo HTTP/1.1\r\nHost: t:x\r\nContent-Length: 5\r\n\r\nhello", Reject(400)),
    ("9112 §3.2 two Host lines", b"POST /echo HTTP/1.1\r\nHost: t\r\nHost: u\r\nContent-Length: 5\r\n\r\nhello", Reject(400)),
    ("9112 §3.2 no Host", b"POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", Reject(400)),
];

/// Runs one row on its own connection `c`; `Err` says what went wrong.
fn run<S: Read + Write>(mut c: Client<S>, wire: &[u8], want: Want) -> Result<(), String> {
    let mut sent = wire.to_vec();
    sent.extend_from_slice(GET_PLAINTEXT);
    c.send(&sent);
    match want {
        Accept(body) => {
            let r = c.response();
            check(
                r.status == 200,
                format!("status {} instead of 200", r.status),
            )?;
            check(
                r.body == body,
                format!("body {:?}", String::from_utf8_lossy(&r.body)),
            )?;
            let next = c.response();
            check(
                next.status == 200 && next.body == HELLO,
                format!("pipelined request answered {} {:?}", next.status, next.body),
            )
        }
        AcceptThenReject(body, status) => {
            let r = c.response();
            check(
                r.status == 200,
                format!("status {} instead of 200", r.status),
            )?;
            check(
                r.body == body,
                format!("body {:?}", String::from_utf8_lossy(&r.body)),
            )?;
            // The client may already hold the next response's bytes: read it through the client.
            let next = c.response();
            check(
                next.status == status,
                format!("then {} instead of {status}", next.status),
            )?;
            check(next.closes(), format!("{status} without Connection: close"))?;
            c.expect_closed(); // panics (caught by the caller) on anything but a close
            Ok(())
        }
        Reject(status) => rejected(&mut c, status),
        RejectMidBody => {
            let mut all = Vec::new();
            c.stream
                .read_to_end(&mut all)
                .map_err(|e| format!("no close: {e}"))?;
            let text = String::from_utf8_lossy(&all);
            check(
                !text.contains("Hello, World!"),
                format!("pipelined request answered: {text:?}"),
            )?;
            if text.starts_with("HTTP/1.1 400 ") {
                check(
                    text.matches("HTTP/1.1 ").count() == 1
                        && text
                            .to_ascii_lowercase()
                            .contains("\r\nconnection: close\r\n"),
                    format!("400 without Connection: close, or more: {text:?}"),
                )
            } else {
                check(
                    text.starts_with("HTTP/1.1 200 ") && !text.ends_with("\r\n0\r\n\r\n"),
                    format!("neither a 400 nor a cut-short echo: {text:?}"),
                )
            }
        }
    }
}

/// One response with `status` and `Connection: close`, then the close: nothing else.
fn rejected<S: Read + Write>(c: &mut Client<S>, status: u16) -> Result<(), String> {
    let mut all = Vec::new();
    c.stream
        .read_to_end(&mut all)
        .map_err(|e| format!("no close: {e}"))?;
    let text = String::from_utf8_lossy(&all);
    check(!all.is_empty(), "closed without a response".to_string())?;
    check(
        text.starts_with(&format!("HTTP/1.1 {status} ")),
        format!("expected {status}, got {text:?}"),
    )?;
    check(
        text.matches("HTTP/1.1 ").count() == 1,
        format!("more than one response: {text:?}"),
    )?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("incomplete head: {text:?}"))?;
    let head = head.to_ascii_lowercase();
    check(
        head.contains("\r\nconnection: close"),
        format!("no Connection: close: {text:?}"),
    )?;
    let len: usize = head
        .split("\r\n")
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no Content-Length: {text:?}"))?;
    check(
        body.len() == len,
        format!("bytes after the response: {text:?}"),
    )
}

fn check(ok: bool, why: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why)
    }
}

/// Runs every row, each on its own connection from `connect`, and fails with every row that
/// went wrong.
fn matrix<S: Read + Write>(connect: impl Fn() -> Client<S> + Sync) {
    let connect = &connect;
    let failures: Vec<String> = thread::scope(|s| {
        let handles: Vec<_> = ROWS
            .iter()
            .map(|&(rule, wire, want)| {
                s.spawn(move || {
                    let outcome = catch_unwind(AssertUnwindSafe(|| run(connect(), wire, want)));
                    match outcome {
                        Ok(result) => result.err().map(|e| format!("{rule}: {e}")),
                        Err(p) => {
                            let msg = p
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|m| m.to_string()));
                            Some(format!("{rule}: panicked: {}", msg.unwrap_or_default()))
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("row thread"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

driver_test! {
fn every_row_is_framed_or_refused_as_the_rfcs_say() {
    let server = start(config());
    let addr: SocketAddr = server.local_addr();
    matrix(|| Client::new(addr));
}
}

driver_test! {
fn every_row_is_framed_or_refused_alike_over_https() {
    let pki = tls::pki();
    let server = start(Config {
        tls: Some(tls::tls_config(&pki)),
        ..config()
    });
    let addr = server.local_addr();
    matrix(|| tls::connect(&pki, addr));
}
}
