//! The response parser: table tests of the status line and of RFC 9112 §6.3 (one row per
//! rule, each citing its section) and resumability at every split point. Zero allocations are
//! checked with dhat in `tests/no_alloc.rs`.

mod common;

use bufslab_http::{
    parse_response, BodyDecoder, Config, Error, HeaderSlot, KnownHeader, Method, ResponseFraming,
    ResponseParser, Status, Version,
};
use common::{
    fed_response, mutated_response, valid_response, whole_response, ResponseOutcome,
    ResponseSummary, Rng,
};
use proptest::prelude::*;

fn parse(method: Method<'_>, buf: &[u8]) -> ResponseOutcome {
    whole_response(Config::DEFAULT, method, buf)
}

fn ok(method: Method<'_>, buf: &[u8]) -> ResponseSummary {
    match parse(method, buf) {
        Ok(Some(s)) => s,
        other => panic!(
            "expected Complete for {:?}, got {other:?}",
            String::from_utf8_lossy(buf)
        ),
    }
}

use ResponseFraming::{Chunked, CloseDelimited, Length, Tunnel};

/// RFC 9112 §6.3, in its order: (rule, request method, response head, framing or error).
type FramingRow = (
    &'static str,
    Method<'static>,
    &'static [u8],
    Result<ResponseFraming, Error>,
);

#[rustfmt::skip]
const FRAMING: &[FramingRow] = &[
    // ---- point 1: HEAD, 1xx, 204, 304 end at the empty line, whatever the fields say ----
    ("9112 §6.3.1 response to HEAD, with Content-Length", Method::Head, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 response to HEAD, chunked", Method::Head, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 response to HEAD, neither", Method::Head, b"HTTP/1.1 200 OK\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 response to HEAD, invalid Content-Length is not framing", Method::Head, b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 100 Continue", Method::Post, b"HTTP/1.1 100 Continue\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 101 Switching Protocols", Method::Get, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 103 Early Hints with Content-Length", Method::Get, b"HTTP/1.1 103 Early Hints\r\nContent-Length: 9\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 204 with Content-Length", Method::Get, b"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 204 chunked", Method::Get, b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 304 with the 200's Content-Length (9110 §8.6)", Method::Get, b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.1 304 with Content-Length and Transfer-Encoding", Method::Get, b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", Ok(ResponseFraming::None)),
    // ---- point 2: a 2xx to CONNECT is a tunnel ----
    ("9112 §6.3.2 200 to CONNECT", Method::Connect, b"HTTP/1.1 200 Connection Established\r\n\r\n", Ok(Tunnel)),
    ("9112 §6.3.2 / 9110 §9.3.6 200 to CONNECT ignores Content-Length", Method::Connect, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", Ok(Tunnel)),
    ("9112 §6.3.2 / 9110 §9.3.6 200 to CONNECT ignores an invalid Transfer-Encoding", Method::Connect, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", Ok(Tunnel)),
    ("9112 §6.3.2 299 to CONNECT", Method::Connect, b"HTTP/1.1 299 \r\n\r\n", Ok(Tunnel)),
    ("9112 §6.3.2 407 to CONNECT is framed as usual", Method::Connect, b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 3\r\n\r\n", Ok(Length(3))),
    ("9112 §6.3.2 204 to CONNECT has no body (point 1 first)", Method::Connect, b"HTTP/1.1 204 No Content\r\n\r\n", Ok(ResponseFraming::None)),
    ("9112 §6.3.2 200 to GET is not a tunnel", Method::Get, b"HTTP/1.1 200 OK\r\n\r\n", Ok(CloseDelimited)),
    // ---- point 3: Transfer-Encoding with Content-Length ----
    ("9112 §6.3.3 Transfer-Encoding and Content-Length: an error", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", Err(Error::ContentLengthWithTransferEncoding)),
    ("9112 §6.3.3 Content-Length after Transfer-Encoding", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", Err(Error::ContentLengthWithTransferEncoding)),
    ("9112 §6.3.3 not-chunked Transfer-Encoding and Content-Length", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\n", Err(Error::ContentLengthWithTransferEncoding)),
    // ---- point 4: Transfer-Encoding ----
    ("9112 §6.3.4 chunked", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Ok(Chunked)),
    ("9112 §6.3.4 / 6.1 codings are case-insensitive", Method::Get, b"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n", Ok(Chunked)),
    ("9112 §6.3.4 chunked last after another coding", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", Ok(Chunked)),
    ("9112 §6.3.4 / 9110 §5.3 chunked last across two lines", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", Ok(Chunked)),
    ("9112 §6.3.4 chunked not last: until close", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", Ok(CloseDelimited)),
    ("9112 §6.3.4 no chunked at all: until close", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", Ok(CloseDelimited)),
    ("9112 §6.1 chunked applied twice", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", Err(Error::InvalidTransferEncoding)),
    ("9112 §7 chunked with parameters", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", Err(Error::InvalidTransferEncoding)),
    ("9112 §7 chunked with parameters before a final chunked", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked ; a=b, chunked\r\n\r\n", Err(Error::InvalidTransferEncoding)),
    ("9112 §6.1 a coding that is not a token", Method::Get, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: \"x\", chunked\r\n\r\n", Err(Error::InvalidTransferEncoding)),
    ("9112 §6.1 Transfer-Encoding in HTTP/1.0: faulty framing", Method::Get, b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Err(Error::TransferEncodingInHttp10)),
    // ---- points 5 and 6: Content-Length ----
    ("9112 §6.3.6 Content-Length", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", Ok(Length(42))),
    ("9112 §6.3.6 Content-Length 0", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", Ok(Length(0))),
    ("9112 §6.3.6 Content-Length in HTTP/1.0", Method::Get, b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n", Ok(Length(3))),
    ("9110 §8.6 identical duplicates are one", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n", Ok(Length(5))),
    ("9110 §8.6 a list of identical values is one", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", Ok(Length(5))),
    ("9112 §6.3.5 duplicates that differ", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", Err(Error::InvalidContentLength)),
    ("9112 §6.3.5 a list that differs", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", Err(Error::InvalidContentLength)),
    ("9112 §6.3.5 not digits", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", Err(Error::InvalidContentLength)),
    ("9112 §6.3.5 negative", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", Err(Error::InvalidContentLength)),
    ("9112 §6.3.5 overflow", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n", Err(Error::InvalidContentLength)),
    ("9112 §6.3.5 empty", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", Err(Error::InvalidContentLength)),
    // ---- RFC 9110 §15: an invalid code is processed as a 5xx, so its fields frame it ----
    ("9110 §15 code 999 framed as a 5xx", Method::Get, b"HTTP/1.1 999 Library Error\r\nContent-Length: 3\r\n\r\n", Ok(Length(3))),
    ("9110 §15 code 600 chunked", Method::Get, b"HTTP/1.1 600 High\r\nTransfer-Encoding: chunked\r\n\r\n", Ok(Chunked)),
    ("9110 §15 code 099 has a body (not a 1xx)", Method::Get, b"HTTP/1.1 099 Low\r\nContent-Length: 2\r\n\r\n", Ok(Length(2))),
    ("9110 §15 code 000 until close", Method::Get, b"HTTP/1.1 000 Zero\r\n\r\n", Ok(CloseDelimited)),
    ("9110 §15 / 9112 §6.3.1 code 999 to HEAD has no body", Method::Head, b"HTTP/1.1 999 X\r\nContent-Length: 5\r\n\r\n", Ok(ResponseFraming::None)),
    ("9110 §15 code 604 to CONNECT is no tunnel", Method::Connect, b"HTTP/1.1 604 X\r\nContent-Length: 1\r\n\r\n", Ok(Length(1))),
    ("9110 §15 code 999 keeps its fields' rules", Method::Get, b"HTTP/1.1 999 X\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", Err(Error::InvalidContentLength)),
    // ---- point 8: otherwise, until the server closes ----
    ("9112 §6.3.8 neither field", Method::Get, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n", Ok(CloseDelimited)),
    ("9112 §6.3.8 neither field, HTTP/1.0", Method::Get, b"HTTP/1.0 200 OK\r\n\r\n", Ok(CloseDelimited)),
    ("9112 §6.3.8 neither field, 404 to POST", Method::Post, b"HTTP/1.1 404 Not Found\r\n\r\n", Ok(CloseDelimited)),
];

#[test]
fn rfc9112_6_3_framing_table() {
    for &(rule, method, input, want) in FRAMING {
        let got = parse(method, input).map(|s| s.map(|s| s.framing));
        assert_eq!(
            got,
            want.map(Some),
            "{rule}: {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// Status-line and field-line rejections: (rule, input, error). Every input is a complete
/// head unless the rule is about something else.
#[rustfmt::skip]
const REJECT: &[(&str, &[u8], Error)] = &[
    // ---- RFC 9112 §4 status line ----
    ("9112 §4 SP after the code is required", b"HTTP/1.1 200\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §4 SP after the code, also before fields", b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §4 tab after the code", b"HTTP/1.1 200\tOK\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §4 two digits", b"HTTP/1.1 20 OK\r\n\r\n", Error::InvalidStatusCode),
    ("9112 §4 four digits", b"HTTP/1.1 2000 OK\r\n\r\n", Error::InvalidStatusCode),
    ("9112 §4 a letter in the code", b"HTTP/1.1 2x0 OK\r\n\r\n", Error::InvalidStatusCode),
    ("9112 §4 two SP before the code", b"HTTP/1.1  200 OK\r\n\r\n", Error::InvalidStatusCode),
    ("9112 §4 NUL in the reason", b"HTTP/1.1 200 O\0K\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §4 DEL in the reason", b"HTTP/1.1 200 O\x7fK\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §4 a control byte in the reason", b"HTTP/1.1 200 O\x01K\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §2.2 bare CR after the reason", b"HTTP/1.1 200 OK\rX: y\r\n\r\n", Error::BareCr),
    ("9112 §2.2 bare LF after the reason", b"HTTP/1.1 200 OK\nX: y\r\n\r\n", Error::BareLf),
    ("9112 §2.2 five empty lines before the status line: not a slip but lost framing", b"\r\n\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", Error::InvalidStatusLine),
    ("9112 §2.2 a bare CR before the status line", b"\rHTTP/1.1 200 OK\r\n\r\n", Error::BareCr),
    ("9112 §2.2 a bare LF before the status line", b"\nHTTP/1.1 200 OK\r\n\r\n", Error::BareLf),
    ("9112 §2.2 whitespace is not an empty line", b" \r\nHTTP/1.1 200 OK\r\n\r\n", Error::InvalidVersion),
    // ---- RFC 9112 §2.3 version ----
    ("9112 §2.3 version is case-sensitive", b"http/1.1 200 OK\r\n\r\n", Error::InvalidVersion),
    ("9112 §2.3 malformed version", b"HTTP/1.x 200 OK\r\n\r\n", Error::InvalidVersion),
    ("9112 §2.3 two-digit minor version", b"HTTP/1.10 200 OK\r\n\r\n", Error::InvalidVersion),
    ("9110 §15.6.6 HTTP/2.0 status line", b"HTTP/2.0 200 OK\r\n\r\n", Error::UnsupportedVersion),
    ("9110 §15.6.6 HTTP/0.9 version", b"HTTP/0.9 200 OK\r\n\r\n", Error::UnsupportedVersion),
    // ---- RFC 9112 §5 / RFC 9110 §5 field lines: the request parser's rules ----
    ("9112 §5.1 whitespace between name and colon", b"HTTP/1.1 200 OK\r\nServer : a\r\n\r\n", Error::WhitespaceBeforeColon),
    ("9112 §5.2 obs-fold", b"HTTP/1.1 200 OK\r\nX: b\r\n  c\r\n\r\n", Error::ObsFold),
    ("9112 §2.2 whitespace before the first field", b"HTTP/1.1 200 OK\r\n X: b\r\n\r\n", Error::ObsFold),
    ("9110 §5.1 empty field name", b"HTTP/1.1 200 OK\r\n: b\r\n\r\n", Error::InvalidHeaderName),
    ("9110 §5.6.2 delimiter in a field name", b"HTTP/1.1 200 OK\r\nX(y): b\r\n\r\n", Error::InvalidHeaderName),
    ("9112 §5 field line without colon", b"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", Error::InvalidHeaderName),
    ("9110 §5.5 NUL in a field value", b"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", Error::InvalidHeaderValue),
    ("9110 §5.5 DEL in a field value", b"HTTP/1.1 200 OK\r\nX: a\x7fb\r\n\r\n", Error::InvalidHeaderValue),
    ("9112 §2.2 bare LF ending a field line", b"HTTP/1.1 200 OK\r\nX: a\n\r\n", Error::BareLf),
    ("9112 §2.2 bare CR in a field value", b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", Error::BareCr),
];

#[test]
fn rfc9112_4_rejection_table() {
    for &(rule, input, want) in REJECT {
        assert_eq!(
            parse(Method::Get, input),
            Err(want),
            "{rule}: {:?}",
            String::from_utf8_lossy(input)
        );
        // Byte by byte, the same verdict (and never a different one on a prefix).
        let cuts: Vec<usize> = (0..input.len()).collect();
        assert_eq!(
            fed_response(Config::DEFAULT, Method::Get, input, &cuts),
            Err(want),
            "{rule}"
        );
    }
    // The status-line errors are what a gateway answers 502 for.
    assert_eq!(Error::InvalidStatusLine.status(), 502);
    assert_eq!(Error::InvalidStatusCode.status(), 502);
}

#[test]
fn rfc9112_4_status_line_accepted_forms() {
    let s = ok(Method::Get, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(
        (s.version, s.status, &s.reason[..]),
        (Version::Http11, 200, &b"OK"[..])
    );
    // An empty reason phrase, after its SP.
    let s = ok(Method::Get, b"HTTP/1.1 404 \r\n\r\n");
    assert_eq!((s.status, &s.reason[..]), (404, &b""[..]));
    // SP, HTAB and obs-text inside the reason are kept as received.
    let s = ok(Method::Get, b"HTTP/1.0 500 Erreur\t interne \xe9\r\n\r\n");
    assert_eq!(s.reason, b"Erreur\t interne \xe9");
    assert_eq!(s.version, Version::Http10);
    // 9110 §6.2: a higher HTTP/1 minor version is processed as HTTP/1.1.
    let s = ok(Method::Get, b"HTTP/1.7 200 OK\r\n\r\n");
    assert_eq!(s.version, Version::Http11);
    // The extremes of 9110 §15.
    assert_eq!(ok(Method::Get, b"HTTP/1.1 100 \r\n\r\n").status, 100);
    assert_eq!(ok(Method::Get, b"HTTP/1.1 599 \r\n\r\n").status, 599);
    // Outside them, any three digits, reported as received (9110 §15: processed as a 5xx).
    for (head, code) in [
        (&b"HTTP/1.1 000 \r\n\r\n"[..], 0),
        (b"HTTP/1.1 099 Low\r\n\r\n", 99),
        (b"HTTP/1.1 600 High\r\n\r\n", 600),
        (b"HTTP/1.1 999 Library Error\r\n\r\n", 999),
    ] {
        assert_eq!(ok(Method::Get, head).status, code);
    }
    // Bare LF when configured (9112 §2.2 MAY).
    let cfg = Config::DEFAULT.with_allow_bare_lf(true);
    let s = whole_response(cfg, Method::Get, b"HTTP/1.1 200 OK\nX: y\n\n")
        .unwrap()
        .unwrap();
    assert_eq!((s.head_len, s.headers.len()), (22, 1));
}

#[test]
fn rfc9112_2_2_empty_lines_before_the_status_line_are_skipped() {
    // A stray CR LF after a 304 or a 100, as real servers send, then the next response: up
    // to four are skipped and count in the head's length; the reason is found after them.
    for n in 1..=4 {
        let mut wire = b"\r\n".repeat(n);
        wire.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        let s = ok(Method::Get, &wire);
        assert_eq!((s.status, &s.reason[..]), (200, &b"OK"[..]), "{n} lines");
        assert_eq!((s.head_len, s.framing), (wire.len(), Length(0)));
        // The same at every split.
        let cuts: Vec<usize> = (0..wire.len()).collect();
        assert_eq!(
            fed_response(Config::DEFAULT, Method::Get, &wire, &cuts),
            Ok(Some(s))
        );
    }
    // Bare LF empty lines only where bare LF is allowed.
    let cfg = Config::DEFAULT.with_allow_bare_lf(true);
    let s = whole_response(cfg, Method::Get, b"\n\r\nHTTP/1.1 204 No Content\n\n")
        .unwrap()
        .unwrap();
    assert_eq!((s.status, s.head_len), (204, 28));
    // Only empty lines so far: more is needed.
    assert_eq!(parse(Method::Get, b"\r\n\r\n"), Ok(None));
    assert_eq!(parse(Method::Get, b"\r\n\r"), Ok(None));
}

#[test]
fn rfc9110_fields_host_and_expect_mean_nothing_in_a_response() {
    // A request's Host and Expect rules do not apply: two Host lines, any Expect.
    let s = ok(
        Method::Get,
        b"HTTP/1.1 200 OK\r\nHost: a\r\nHost: b b\r\nExpect: later\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(s.headers.len(), 4);
    assert_eq!(s.framing, Length(0));
}

#[test]
fn rfc9112_9_3_persistence() {
    let rows: &[(Method<'_>, &[u8], bool)] = &[
        (
            Method::Get,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            true,
        ),
        (
            Method::Get,
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        (
            Method::Get,
            b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        (
            Method::Get,
            b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        (
            Method::Get,
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            true,
        ),
        (Method::Get, b"HTTP/1.1 204 No Content\r\n\r\n", true),
        (
            Method::Get,
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            true,
        ),
        // The body ends with the connection.
        (Method::Get, b"HTTP/1.1 200 OK\r\n\r\n", false),
        (
            Method::Get,
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n",
            false,
        ),
        // A tunnel, or another protocol.
        (Method::Connect, b"HTTP/1.1 200 OK\r\n\r\n", false),
        (
            Method::Get,
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n",
            false,
        ),
    ];
    for &(method, buf, keep) in rows {
        assert_eq!(
            ok(method, buf).keep_alive,
            keep,
            "{:?}",
            String::from_utf8_lossy(buf)
        );
    }
    let s = ok(
        Method::Get,
        b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n",
    );
    assert!(s.upgrade && !s.close);
}

#[test]
fn interim_then_final_then_pipelined_responses() {
    let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc\
                 HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n\
                 HTTP/1.1 204 No Content\r\n\r\n";
    let mut parser = ResponseParser::default();
    let mut slots = [HeaderSlot::EMPTY; 8];
    let mut at = 0;
    let mut seen = Vec::new();
    while at < wire.len() {
        let Status::Complete(r) = parser.parse(&wire[at..], Method::Post, &mut slots).unwrap()
        else {
            panic!("partial at {at}")
        };
        at += r.head_len();
        let mut body = BodyDecoder::for_response(r.framing(), parser.config());
        let mut data = Vec::new();
        loop {
            let step = body.decode(&wire[at..]).unwrap();
            data.extend_from_slice(step.data);
            at += step.consumed;
            if step.done {
                break;
            }
        }
        seen.push((r.status(), data));
    }
    assert_eq!(
        seen,
        [
            (100, b"".to_vec()),
            (200, b"abc".to_vec()),
            (200, b"xyz".to_vec()),
            (204, b"".to_vec())
        ]
    );
}

#[test]
fn close_delimited_body_is_everything() {
    let buf = b"HTTP/1.0 200 OK\r\n\r\nall the rest";
    let mut slots = [HeaderSlot::EMPTY; 4];
    let r = parse_response(buf, Method::Get, &mut slots)
        .unwrap()
        .complete()
        .unwrap();
    let mut body = BodyDecoder::for_response(r.framing(), &Config::DEFAULT);
    let step = body.decode(&buf[r.head_len()..]).unwrap();
    assert_eq!((step.data, step.done), (&b"all the rest"[..], false));
    assert_eq!(body.skip(b"more").unwrap(), (4, false));
    assert_eq!(r.get(KnownHeader::ContentLength), None);
}

#[test]
fn limits_apply_to_responses() {
    // The head limit counts the status line, as for requests; more than `n` bytes is 431.
    let cfg = Config::DEFAULT.with_max_head_bytes(40);
    let head = b"HTTP/1.1 200 OK\r\nX-Long: 0123456789abcdef\r\n\r\n";
    assert_eq!(whole_response(cfg, Method::Get, &head[..40]), Ok(None));
    assert_eq!(
        whole_response(cfg, Method::Get, &head[..41]),
        Err(Error::HeadTooLarge)
    );
    let mut slots = [HeaderSlot::EMPTY; 1];
    let two = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n";
    assert_eq!(
        parse_response(two, Method::Get, &mut slots).err(),
        Some(Error::TooManyHeaders)
    );
    // A full receive buffer with a head still incomplete.
    let mut p = ResponseParser::default();
    let mut slots = [HeaderSlot::EMPTY; 8];
    assert_eq!(
        p.parse_with_capacity(&head[..30], 30, Method::Get, &mut slots)
            .err(),
        Some(Error::HeadExceedsBuffer)
    );
    assert!(p
        .parse_with_capacity(&head[..30], 31, Method::Get, &mut slots)
        .unwrap()
        .is_partial());
}

/// Every head of the tables and of a generated corpus, split at every byte (two calls) and fed
/// one byte at a time, gives exactly the whole-buffer result.
#[test]
fn split_at_every_byte_matches_whole() {
    let mut inputs: Vec<(Method<'_>, Vec<u8>)> = FRAMING
        .iter()
        .map(|&(_, m, b, _)| (m, b.to_vec()))
        .chain(REJECT.iter().map(|&(_, b, _)| (Method::Get, b.to_vec())))
        .collect();
    let mut rng = Rng(0x7e57_0001);
    for _ in 0..200 {
        inputs.push((Method::Get, valid_response(&mut rng)));
        inputs.push((Method::Head, mutated_response(&mut rng)));
    }
    for (method, buf) in &inputs {
        let want = whole_response(Config::DEFAULT, *method, buf);
        for k in 0..=buf.len() {
            assert_eq!(
                fed_response(Config::DEFAULT, *method, buf, &[k]),
                want,
                "split at {k}: {:?}",
                String::from_utf8_lossy(buf)
            );
        }
        let every: Vec<usize> = (0..buf.len()).collect();
        assert_eq!(fed_response(Config::DEFAULT, *method, buf, &every), want);
    }
}

/// The resume offset skips the completed lines, the status line included.
#[test]
fn resume_offset_skips_completed_lines() {
    let buf = b"HTTP/1.1 200 OK\r\nServer: x\r\nX-Long: abc";
    let mut p = ResponseParser::default();
    let mut slots = [HeaderSlot::EMPTY; 8];
    assert!(p.parse(buf, Method::Get, &mut slots).unwrap().is_partial());
    assert_eq!(p.resume_offset(), buf.len() - b"X-Long: abc".len());
    let mut full = buf.to_vec();
    full.extend_from_slice(b"\r\n\r\n");
    let r = p
        .parse(&full, Method::Get, &mut slots)
        .unwrap()
        .complete()
        .unwrap();
    assert_eq!(r.header_count(), 2);
    assert_eq!(p.resume_offset(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Generated responses: every split point, strict and lenient, after any method.
    #[test]
    fn generated_response_split_anywhere_matches_whole(
        seed in any::<u64>(),
        lenient in any::<bool>(),
        method in prop::sample::select(vec![Method::Get, Method::Head, Method::Connect]),
    ) {
        let cfg = Config::DEFAULT.with_allow_bare_lf(lenient);
        let buf = valid_response(&mut Rng(seed | 1));
        let want = whole_response(cfg, method, &buf);
        prop_assert!(matches!(want, Ok(Some(_))), "{:?} {:?}", want, String::from_utf8_lossy(&buf));
        for k in 0..=buf.len() {
            prop_assert_eq!(&fed_response(cfg, method, &buf, &[k]), &want, "split at {}", k);
        }
        let mutated = mutated_response(&mut Rng(seed | 1));
        let want = whole_response(cfg, method, &mutated);
        let every: Vec<usize> = (0..mutated.len()).collect();
        prop_assert_eq!(&fed_response(cfg, method, &mutated, &every), &want);
    }
}
