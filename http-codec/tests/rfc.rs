//! Table tests: one row per rule, each citing the RFC 9110 / 9112 (or other) section it checks.

mod common;

use bufslab_http::{
    parse_request, BodyFraming, Config, Error, HeaderName, HeaderSlot, KnownHeader, Method, Parser,
    Status, TargetForm, Version,
};
use common::{whole, Summary};

fn ok(buf: &[u8]) -> Summary {
    match whole(Config::DEFAULT, buf) {
        Ok(Some(s)) => s,
        other => panic!(
            "expected Complete for {:?}, got {other:?}",
            String::from_utf8_lossy(buf)
        ),
    }
}

/// Rejection table: (rule, input, expected error). The input is a complete head unless the
/// rule is about something else.
const REJECT: &[(&str, &[u8], Error)] = &[
    // ---- RFC 9112 §2.2 message parsing / line endings ----
    ("9112 §2.2 bare CR in request line", b"GET / HTTP/1.1\rHost: a\r\n\r\n", Error::BareCr),
    ("9112 §2.2 bare CR in field value", b"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", Error::BareCr),
    ("9112 §2.2 bare CR at line start", b"GET / HTTP/1.1\r\nHost: a\r\n\rX\r\n\r\n", Error::BareCr),
    ("9112 §2.2 bare CR before request line", b"\rGET / HTTP/1.1\r\n\r\n", Error::BareCr),
    ("9112 §2.2 bare LF rejected by default (request line)", b"GET / HTTP/1.1\nHost: a\r\n\r\n", Error::BareLf),
    ("9112 §2.2 bare LF rejected by default (field line)", b"GET / HTTP/1.1\r\nHost: a\n\r\n", Error::BareLf),
    ("9112 §2.2 bare LF rejected by default (end of head)", b"GET / HTTP/1.1\r\nHost: a\r\n\n", Error::BareLf),
    ("9112 §2.2 whitespace before the first field", b"GET / HTTP/1.1\r\n Host: a\r\n\r\n", Error::ObsFold),
    // ---- RFC 9112 §3 request line ----
    ("9112 §3 empty method", b" / HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidMethod),
    ("9110 §9.1 method must be a token", b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidMethod),
    ("9112 §3 two spaces after method", b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3 two spaces before version", b"GET /  HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidVersion),
    ("9112 §3 HTTP/0.9 request line without version", b"GET /\r\n\r\n", Error::InvalidRequestLine),
    ("9112 §3 trailing space after version", b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", Error::InvalidVersion),
    ("9112 §3 tab as separator", b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidMethod),
    ("9112 §3.2 / RFC 3986 §2 non-ASCII in target", b"GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2 DEL in target", b"GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2 NUL in target", b"GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2 target in no known form", b"GET example HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 absolute-form scheme must start with a letter", b"GET 1http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT needs authority-form", b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority needs a port", b"CONNECT example.com HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority port is digits", b"CONNECT example.com:x HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority: reg-name without `:`", b"CONNECT exam:le.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority: unclosed IP-literal", b"CONNECT [::1:443 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority: bad percent-encoding", b"CONNECT a%zz:443 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority: empty port", b"CONNECT a: HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority: empty host", b"CONNECT :443 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.3 CONNECT authority: userinfo", b"CONNECT u@a:443 HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 / 9110 §4.2.1 http URI without a host", b"GET http:///p HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 / 9110 §4.2.1 http URI without an authority", b"GET http:/p HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 / 9110 §4.2.4 userinfo in an http URI", b"GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 / 3986 §3.2.3 port not digits", b"GET http://a:b/ HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 / 3986 §3.2.2 invalid IP-literal", b"GET http://[zz]/ HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.4 asterisk-form only with OPTIONS", b"GET * HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.1 / 9110 §7.1 fragment in an origin-form target", b"GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.1 / 9110 §7.1 fragment after a query", b"GET /a?q=1#frag HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.1 / 9110 §7.1 empty fragment", b"GET /# HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2 / 9110 §7.1 a `#` as the whole target", b"GET # HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.2 / 3986 §4.3 fragment in an absolute-form target", b"GET http://a/p#f HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    ("9112 §3.2.4 / 9110 §7.1 fragment after the asterisk", b"OPTIONS *#f HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget),
    // ---- RFC 9112 §2.3 versions ----
    ("9112 §2.3 version is case-sensitive", b"GET / http/1.1\r\nHost: a\r\n\r\n", Error::InvalidVersion),
    ("9112 §2.3 malformed version", b"GET / HTTP/1.x\r\nHost: a\r\n\r\n", Error::InvalidVersion),
    ("9112 §2.3 two-digit minor version", b"GET / HTTP/1.10\r\nHost: a\r\n\r\n", Error::InvalidVersion),
    ("9110 §15.6.6 HTTP/3.0 request line: 505", b"GET / HTTP/3.0\r\nHost: a\r\n\r\n", Error::UnsupportedVersion),
    ("9110 §15.6.6 HTTP/2.0 request line: 505", b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", Error::UnsupportedVersion),
    ("9110 §15.6.6 HTTP/0.9 version: 505", b"GET / HTTP/0.9\r\nHost: a\r\n\r\n", Error::UnsupportedVersion),
    ("9113 §3.4 HTTP/2 connection preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", Error::Http2Preface),
    // ---- RFC 9112 §5 / RFC 9110 §5 field lines ----
    ("9112 §5.1 whitespace between name and colon", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", Error::WhitespaceBeforeColon),
    ("9112 §5.1 tab between name and colon", b"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", Error::WhitespaceBeforeColon),
    ("9112 §5.2 obs-fold", b"GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n  c\r\n\r\n", Error::ObsFold),
    ("9112 §5.2 obs-fold with tab", b"GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n\tc\r\n\r\n", Error::ObsFold),
    ("9110 §5.1 empty field name", b"GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", Error::InvalidHeaderName),
    ("9110 §5.6.2 delimiter in field name", b"GET / HTTP/1.1\r\nHost: a\r\nX(y): b\r\n\r\n", Error::InvalidHeaderName),
    ("9110 §5.6.2 slash in known-looking name", b"GET / HTTP/1.1\r\nHost: a\r\nContent/Length: 1\r\n\r\n", Error::InvalidHeaderName),
    ("9110 §5.6.2 non-ASCII in field name", b"GET / HTTP/1.1\r\nHost: a\r\nX\xc3\xa9: b\r\n\r\n", Error::InvalidHeaderName),
    ("9112 §5 field line without colon", b"GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", Error::InvalidHeaderName),
    ("9110 §5.5 NUL in field value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", Error::InvalidHeaderValue),
    ("9110 §5.5 control byte in field value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n", Error::InvalidHeaderValue),
    ("9110 §5.5 DEL in field value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n", Error::InvalidHeaderValue),
    ("9110 §5.5 LF inside a value is a bare LF", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\nb: c\r\n\r\n", Error::BareLf),
    // ---- RFC 9110 §8.6 / RFC 9112 §6.3 Content-Length ----
    ("9110 §8.6 Content-Length not digits", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 negative Content-Length", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 signed Content-Length", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 empty Content-Length", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 space inside Content-Length", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 hex Content-Length", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 Content-Length overflow", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551616\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 duplicate Content-Length disagree", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 Content-Length list disagrees", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\n", Error::InvalidContentLength),
    ("9110 §8.6 Content-Length list with empty member", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5,,5\r\n\r\n", Error::InvalidContentLength),
    // ---- RFC 9112 §6.1 Transfer-Encoding ----
    ("9112 §6.1 Content-Length with Transfer-Encoding", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", Error::ContentLengthWithTransferEncoding),
    ("9112 §6.1 Transfer-Encoding then Content-Length", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", Error::ContentLengthWithTransferEncoding),
    ("9112 §6.3 chunked not final", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.3 no chunked at all", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 chunked applied twice", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 chunked twice across lines", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 chunked then another line", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 empty Transfer-Encoding", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 malformed coding", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \"x\", chunked\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 chunked with parameters", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", Error::InvalidTransferEncoding),
    ("9112 §6.1 unknown coding before chunked: 501", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", Error::UnsupportedTransferCoding),
    ("9112 §6.1 Transfer-Encoding in HTTP/1.0", b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", Error::TransferEncodingInHttp10),
    // ---- RFC 9112 §3.2 Host ----
    ("9112 §3.2 HTTP/1.1 without Host", b"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", Error::MissingHost),
    ("9112 §3.2 two Host lines", b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", Error::MultipleHost),
    ("9112 §3.2 two Host lines in HTTP/1.0", b"GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", Error::MultipleHost),
    ("9112 §3.2 Host with a space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 Host with a path", b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 Host with userinfo", b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 Host with non-ASCII", b"GET / HTTP/1.1\r\nHost: \xc3\xa9\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 Host list", b"GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.3 Host port not digits", b"GET / HTTP/1.1\r\nHost: a:b\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.3 Host with two ports", b"GET / HTTP/1.1\r\nHost: a:80:90\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.3 Host port with a letter", b"GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.3 Host negative port", b"GET / HTTP/1.1\r\nHost: a:-1\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.2 Host IPv6 without brackets", b"GET / HTTP/1.1\r\nHost: ::1\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.2 Host unclosed IP-literal", b"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.2 Host invalid IP-literal", b"GET / HTTP/1.1\r\nHost: [zz]\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.2 Host brackets inside a reg-name", b"GET / HTTP/1.1\r\nHost: a[b]\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.2 Host closing bracket", b"GET / HTTP/1.1\r\nHost: a]b\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §2.1 Host bad percent-encoding", b"GET / HTTP/1.1\r\nHost: ex%zzmple\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §2.1 Host truncated percent-encoding", b"GET / HTTP/1.1\r\nHost: a%4\r\n\r\n", Error::InvalidHost),
    ("9112 §3.2 / 3986 §3.2.2 Host IP-literal then garbage", b"GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", Error::InvalidHost),
    // ---- RFC 9110 §10.1.1 Expect ----
    ("9110 §10.1.1 unknown expectation: 417", b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n", Error::UnsupportedExpectation),
];

#[test]
fn rejection_table() {
    for &(rule, input, want) in REJECT {
        let got = whole(Config::DEFAULT, input);
        assert_eq!(
            got,
            Err(want),
            "{rule}: {:?}",
            String::from_utf8_lossy(input)
        );
        // The status code is part of the contract.
        let status = match want {
            Error::UnsupportedVersion | Error::Http2Preface => 505,
            Error::UnsupportedTransferCoding => 501,
            Error::UnsupportedExpectation => 417,
            _ => 400,
        };
        assert_eq!(want.status(), status, "{rule}");
        assert!(!want.to_string().is_empty());
    }
}

// ---- limits (RFC 9112 §3: 414; RFC 6585 §5: 431) ----

#[test]
fn rfc9112_3_request_line_too_long_is_414() {
    let cfg = Config::DEFAULT.with_max_request_line(32);
    let long = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(40));
    assert_eq!(whole(cfg, long.as_bytes()), Err(Error::RequestLineTooLong));
    assert_eq!(Error::RequestLineTooLong.status(), 414);
    // Detected before the line is complete: no need to buffer the rest.
    assert_eq!(
        whole(cfg, &long.as_bytes()[..40]),
        Err(Error::RequestLineTooLong)
    );
    // Exactly at the limit is fine.
    let fits = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(32 - 14));
    assert!(whole(cfg, fits.as_bytes()).unwrap().is_some());
}

#[test]
fn rfc6585_5_head_too_large_is_431() {
    let cfg = Config::DEFAULT.with_max_head_bytes(64);
    let big = format!("GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n", "v".repeat(60));
    assert_eq!(whole(cfg, big.as_bytes()), Err(Error::HeadTooLarge));
    assert_eq!(Error::HeadTooLarge.status(), 431);
    // Partial input beyond the limit fails as soon as the limit is crossed.
    assert_eq!(whole(cfg, &big.as_bytes()[..65]), Err(Error::HeadTooLarge));
    assert_eq!(whole(cfg, &big.as_bytes()[..64]), Ok(None));
    // A head that fits, followed by lots of pipelined bytes, is fine.
    let mut pipelined = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec();
    pipelined.extend_from_slice(&[b'G'; 500]);
    assert!(whole(cfg, &pipelined).unwrap().is_some());
}

/// A request head of exactly `len` bytes (`len >= 32`): one field line takes up the rest.
fn head_of_len(len: usize) -> Vec<u8> {
    let base = b"GET / HTTP/1.1\r\nHost: a\r\nX: \r\n\r\n".len();
    let head = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n",
        "v".repeat(len - base)
    );
    assert_eq!(head.len(), len);
    head.into_bytes()
}

/// The exact boundary of `Config::with_max_head_bytes(n)`: a head of `n` bytes is accepted; `n`
/// bytes without the end of the head are still partial; `n + 1` are `HeadTooLarge` at once,
/// however they arrive.
#[test]
fn rfc6585_5_head_limit_is_more_than_n_bytes() {
    for n in [32usize, 64, 100, 1000, 16 * 1024] {
        let cfg = Config::DEFAULT.with_max_head_bytes(n);
        let exact = head_of_len(n);
        assert_eq!(
            whole(cfg, &exact).map(|s| s.map(|s| s.head_len)),
            Ok(Some(n)),
            "{n}"
        );
        let longer = head_of_len(n + 1);
        assert_eq!(whole(cfg, &longer), Err(Error::HeadTooLarge), "{n}");
        let big = head_of_len(n + 50);
        assert_eq!(
            whole(cfg, &big[..n]),
            Ok(None),
            "{n} bytes of a longer head"
        );
        assert_eq!(
            whole(cfg, &big[..n + 1]),
            Err(Error::HeadTooLarge),
            "{n} + 1 bytes"
        );
        // Fed one byte at a time, the verdict comes with byte n + 1, not before.
        let mut p = Parser::new(cfg);
        let mut slots = [HeaderSlot::EMPTY; 8];
        for k in 0..=n {
            assert_eq!(
                p.parse(&big[..k], &mut slots).map(|s| s.is_partial()),
                Ok(true)
            );
        }
        assert_eq!(
            p.parse(&big[..n + 1], &mut slots).err(),
            Some(Error::HeadTooLarge)
        );
    }
}

/// A read buffer the size of the head limit (a 16 KiB block with the default 16 KiB limit)
/// fills up while the head is still partial: `parse` cannot tell, and the next read into the
/// full buffer returns `Ok(0)`. `parse_with_capacity` ends that with `HeadExceedsBuffer` (431).
#[test]
fn rfc6585_5_a_full_read_buffer_is_not_partial_for_ever() {
    let capacity = 16 * 1024;
    assert_eq!(Config::DEFAULT.max_head_bytes(), capacity);
    let big = head_of_len(3 * capacity);
    let mut slots = [HeaderSlot::EMPTY; 8];
    // The trap itself.
    let mut p = Parser::default();
    assert!(p.parse(&big[..capacity], &mut slots).unwrap().is_partial());
    // A read loop over a fixed block: reads of 1000 bytes until the block is full.
    for read in [1000usize, 4096, capacity] {
        let mut p = Parser::default();
        let mut filled = 0;
        let verdict = loop {
            filled = (filled + read).min(capacity);
            match p.parse_with_capacity(&big[..filled], capacity, &mut slots) {
                Ok(s) if s.is_partial() => assert!(filled < capacity, "partial on a full buffer"),
                other => break other.map(|_| ()),
            }
        };
        assert_eq!((verdict, filled), (Err(Error::HeadExceedsBuffer), capacity));
        assert_eq!(Error::HeadExceedsBuffer.status(), 431);
        assert_eq!(p.resume_offset(), 0, "the error resets the parser");
    }
    // A head that fits exactly is complete, not an error, though it fills the buffer.
    let exact = head_of_len(capacity);
    let mut p = Parser::default();
    let r = p.parse_with_capacity(&exact, capacity, &mut slots).unwrap();
    assert_eq!(r.complete().map(|r| r.head_len()), Some(capacity));
    // With one byte of room more than the limit, `parse` reaches `HeadTooLarge` on its own,
    // and `parse_with_capacity` says the same.
    let mut p = Parser::default();
    assert_eq!(
        p.parse(&big[..capacity + 1], &mut slots).err(),
        Some(Error::HeadTooLarge)
    );
    assert_eq!(
        p.parse_with_capacity(&big[..capacity + 1], capacity + 1, &mut slots)
            .err(),
        Some(Error::HeadTooLarge)
    );
    // A smaller buffer than the limit: the same distinct error, well before the limit.
    let mut p = Parser::default();
    assert_eq!(
        p.parse_with_capacity(&big[..4096], 4096, &mut slots).err(),
        Some(Error::HeadExceedsBuffer)
    );
    // Room left: still partial.
    assert!(p
        .parse_with_capacity(&big[..4095], 4096, &mut slots)
        .unwrap()
        .is_partial());
}

#[test]
fn rfc6585_5_too_many_headers_is_431_never_truncated() {
    let buf = b"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    let mut slots = [HeaderSlot::EMPTY; 3];
    assert_eq!(
        parse_request(buf, &mut slots).err(),
        Some(Error::TooManyHeaders)
    );
    let mut slots = [HeaderSlot::EMPTY; 4];
    assert!(parse_request(buf, &mut slots).is_ok());
    // Config::max_headers applies even with more slots.
    let mut p = Parser::new(Config::DEFAULT.with_max_headers(2));
    let mut slots = [HeaderSlot::EMPTY; 64];
    assert_eq!(p.parse(buf, &mut slots).err(), Some(Error::TooManyHeaders));
    assert_eq!(Error::TooManyHeaders.status(), 431);
}

// ---- accepted forms ----

#[test]
fn rfc9112_3_basic_get_origin_form() {
    let s = ok(b"GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(s.method, b"GET");
    assert_eq!(s.target, b"/index.html?q=1");
    assert_eq!(s.form, TargetForm::Origin);
    assert_eq!(s.version, Version::Http11);
    assert_eq!(s.host.as_deref(), Some(&b"example.com"[..]));
    assert_eq!(s.framing, BodyFraming::None);
    assert!(s.keep_alive);
}

#[test]
fn rfc9112_2_2_leading_empty_lines_are_ignored() {
    let s = ok(b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(s.head_len, 4 + 16 + 9 + 2);
}

#[test]
fn rfc9112_2_2_bare_lf_accepted_when_configured() {
    let cfg = Config::DEFAULT.with_allow_bare_lf(true);
    let buf = b"\nGET / HTTP/1.1\nHost: a\r\nX: y\n\nbody";
    let s = whole(cfg, buf).unwrap().unwrap();
    assert_eq!(s.head_len, buf.len() - 4);
    assert_eq!(s.headers.len(), 2);
    assert_eq!(s.headers[1].2, b"y");
}

#[test]
fn rfc9112_3_2_target_forms() {
    let s = ok(b"GET http://example.com/a HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(s.form, TargetForm::Absolute);
    let s = ok(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    assert_eq!(s.form, TargetForm::Authority);
    let s = ok(b"CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n");
    assert_eq!(s.form, TargetForm::Authority);
    let s = ok(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(s.form, TargetForm::Asterisk);
    let s = ok(b"OPTIONS /x HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(s.form, TargetForm::Origin);
}

#[test]
fn rfc9110_9_methods_standard_and_extension() {
    let mut slots = [HeaderSlot::EMPTY; 4];
    for (text, m) in [
        (&b"GET"[..], Method::Get),
        (b"HEAD", Method::Head),
        (b"POST", Method::Post),
        (b"PUT", Method::Put),
        (b"DELETE", Method::Delete),
        (b"OPTIONS", Method::Options),
        (b"TRACE", Method::Trace),
        (b"PATCH", Method::Patch),
        (b"PURGE", Method::Extension(b"PURGE")),
        // §9.1: methods are case-sensitive.
        (b"get", Method::Extension(b"get")),
    ] {
        let buf = [text, b" / HTTP/1.1\r\nHost: a\r\n\r\n"].concat();
        let Ok(Status::Complete(r)) = parse_request(&buf, &mut slots) else {
            panic!("{m:?}")
        };
        assert_eq!(r.method(), m);
        assert_eq!(r.method().as_bytes(), text);
    }
}

#[test]
fn rfc9112_2_3_http10_needs_no_host() {
    let s = ok(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(s.version, Version::Http10);
    assert_eq!(s.host, None);
    assert!(
        !s.keep_alive,
        "9112 §9.3: HTTP/1.0 is not persistent by default"
    );
}

#[test]
fn rfc9110_5_1_names_are_case_insensitive_and_classified() {
    let buf = b"GET / HTTP/1.1\r\nhOsT: a\r\nCONTENT-length: 0\r\nX-Custom-Thing: v\r\nsec-ch-ua: \"x\"\r\n\r\n";
    let mut slots = [HeaderSlot::EMPTY; 8];
    let Ok(Status::Complete(r)) = parse_request(buf, &mut slots) else {
        panic!()
    };
    let names: Vec<HeaderName<'_>> = r.headers().map(|h| h.name).collect();
    assert_eq!(
        names,
        [
            HeaderName::Known(KnownHeader::Host),
            HeaderName::Known(KnownHeader::ContentLength),
            HeaderName::Other(b"X-Custom-Thing"),
            HeaderName::Known(KnownHeader::SecChUa),
        ]
    );
    assert_eq!(r.header(0).unwrap().raw_name, b"hOsT");
    assert_eq!(r.get(KnownHeader::ContentLength), Some(&b"0"[..]));
    assert_eq!(r.get_raw(b"x-custom-thing"), Some(&b"v"[..]));
    assert_eq!(r.framing(), BodyFraming::Length(0));
}

#[test]
fn rfc9110_5_5_values_ows_trimmed_tabs_and_obs_text_kept() {
    let s =
        ok(b"GET / HTTP/1.1\r\nHost: a\r\nA: \t x \t y \t\r\nB:\r\nC:   \r\nD: \x80\xff\r\n\r\n");
    assert_eq!(s.headers[1].2, b"x \t y");
    assert_eq!(s.headers[2].2, b"");
    assert_eq!(s.headers[3].2, b"");
    assert_eq!(s.headers[4].2, b"\x80\xff");
}

#[test]
fn rfc9112_6_3_framing() {
    assert_eq!(
        ok(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").framing,
        BodyFraming::None
    );
    assert_eq!(
        ok(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n").framing,
        BodyFraming::Length(42)
    );
    assert_eq!(
        ok(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 007\r\n\r\n").framing,
        BodyFraming::Length(7)
    );
    assert_eq!(
        ok(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551615\r\n\r\n").framing,
        BodyFraming::Length(u64::MAX)
    );
    // 9110 §8.6: identical duplicates (as lines or as a list) may be collapsed.
    assert_eq!(
        ok(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n").framing,
        BodyFraming::Length(5)
    );
    assert_eq!(
        ok(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 , 5\r\n\r\n").framing,
        BodyFraming::Length(5)
    );
    // 9112 §6.1: transfer codings are case-insensitive; empty list members are ignored.
    for te in [
        &b"chunked"[..],
        b"Chunked",
        b"CHUNKED",
        b" , chunked ,",
        b"chunked\r\nTransfer-Encoding: ",
    ] {
        let buf = [
            &b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "[..],
            te,
            b"\r\n\r\n",
        ]
        .concat();
        assert_eq!(ok(&buf).framing, BodyFraming::Chunked, "{te:?}");
    }
    // 9110 §5.6.1: two field lines combine to `, chunked`, whose empty element is ignored.
    let s = ok(
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    assert_eq!(s.framing, BodyFraming::Chunked);
    let s = ok(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,\r\nTransfer-Encoding: ,chunked\r\n\r\n");
    assert_eq!(s.framing, BodyFraming::Chunked);
}

#[test]
fn rfc9112_2_3_higher_http1_minor_version_is_http11() {
    // 9112 §2.3, 9110 §6.2: a higher minor version is processed as the highest the server
    // implements (and answered in HTTP/1.1); a different major version is not.
    for minor in b'2'..=b'9' {
        let buf = [&b"GET / HTTP/1."[..], &[minor], b"\r\nHost: a\r\n\r\n"].concat();
        let s = ok(&buf);
        assert_eq!(s.version, Version::Http11);
        assert!(s.keep_alive);
    }
    // As HTTP/1.1, it needs a Host.
    assert_eq!(
        whole(Config::DEFAULT, b"GET / HTTP/1.2\r\n\r\n"),
        Err(Error::MissingHost)
    );
    for v in [&b"HTTP/2.0"[..], b"HTTP/2.1", b"HTTP/0.9", b"HTTP/9.9"] {
        let buf = [&b"GET / "[..], v, b"\r\nHost: a\r\n\r\n"].concat();
        assert_eq!(whole(Config::DEFAULT, &buf), Err(Error::UnsupportedVersion));
    }
}

#[test]
fn rfc9112_3_2_2_absolute_form_routes_by_its_path() {
    let mut slots = [HeaderSlot::EMPTY; 8];
    type Row<'a> = (&'a [u8], &'a [u8], Option<&'a [u8]>, Option<&'a [u8]>);
    // (target, path, query, authority)
    let rows: &[Row<'_>] = &[
        (
            b"http://localhost:8080/plaintext",
            b"/plaintext",
            None,
            Some(b"localhost:8080"),
        ),
        (b"http://a/p?q=1", b"/p", Some(b"q=1"), Some(b"a")),
        (b"HTTP://a", b"/", None, Some(b"a")),
        (b"http://a?x", b"/", Some(b"x"), Some(b"a")),
        (
            b"https://[::1]:8443/s/t",
            b"/s/t",
            None,
            Some(b"[::1]:8443"),
        ),
        (b"http://a:/", b"/", None, Some(b"a:")),
        (b"/o?k", b"/o", Some(b"k"), None),
        (b"*", b"*", None, None),
    ];
    for &(target, path, query, authority) in rows {
        let method: &[u8] = if target == b"*" { b"OPTIONS" } else { b"GET" };
        let buf = [method, b" ", target, b" HTTP/1.1\r\nHost: other\r\n\r\n"].concat();
        let Ok(Status::Complete(r)) = parse_request(&buf, &mut slots) else {
            panic!("{}", target.escape_ascii())
        };
        assert_eq!(r.target(), target);
        assert_eq!(r.path(), path, "{}", target.escape_ascii());
        assert_eq!(r.query(), query, "{}", target.escape_ascii());
        assert_eq!(r.authority(), authority, "{}", target.escape_ascii());
        // The Host field is kept as received; the target's authority replaces it.
        assert_eq!(r.host(), Some(&b"other"[..]));
    }
    let buf = b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n";
    let r = parse_request(buf, &mut slots).unwrap().complete().unwrap();
    assert_eq!(r.authority(), Some(&b"example.com:443"[..]));
}

#[test]
fn rfc9112_9_3_persistence_and_rfc9110_7_6_1_connection_tokens() {
    assert!(!ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").keep_alive);
    assert!(!ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, CLOSE\r\n\r\n").keep_alive);
    assert!(ok(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
    let s = ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    assert!(s.upgrade && s.keep_alive);
    let s = ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: x-foo\r\nConnection: upgrade\r\n\r\n");
    assert!(s.upgrade);
}

#[test]
fn rfc9110_10_1_1_expect_100_continue() {
    let s = ok(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n");
    assert!(s.expect_continue);
    assert!(!ok(b"POST / HTTP/1.1\r\nHost: a\r\n\r\n").expect_continue);
}

#[test]
fn rfc9112_3_2_host_values() {
    for host in [
        &b""[..],
        b"a",
        b"example.com:8080",
        b"[::1]:80",
        b"xn--bcher-kva.example",
        b"a%20b",
        // 3986 §3.2.2 / §3.2.3: an IPv4 address, an empty port, IPv6 forms, IPvFuture.
        b"192.0.2.1:80",
        b"a:",
        b"[2001:db8::7]",
        b"[::ffff:192.0.2.1]:1",
        b"[v1.fe:x]",
        b"a-b.c_d~e!$&'()*+,;=",
    ] {
        let buf = [&b"GET / HTTP/1.1\r\nHost: "[..], host, b"\r\n\r\n"].concat();
        assert_eq!(ok(&buf).host.as_deref(), Some(host));
    }
}

/// A fragment is rejected as soon as its `#` arrives, not after the request line completes.
#[test]
fn rfc9110_7_1_fragment_rejected_at_its_first_byte() {
    let buf = b"GET /index.html#top HTTP/1.1\r\nHost: a\r\n\r\n";
    let hash = buf.iter().position(|&b| b == b'#').unwrap();
    for k in 0..=hash {
        assert_eq!(whole(Config::DEFAULT, &buf[..k]), Ok(None), "prefix {k}");
    }
    for k in hash + 1..=buf.len() {
        assert_eq!(
            whole(Config::DEFAULT, &buf[..k]),
            Err(Error::InvalidTarget),
            "prefix {k}"
        );
    }
    // Percent-encoded, it is a plain path byte.
    let s = ok(b"GET /a%23b HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(s.target, b"/a%23b");
}

#[test]
fn partial_heads_are_partial() {
    let full = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    for k in 0..full.len() {
        assert_eq!(whole(Config::DEFAULT, &full[..k]), Ok(None), "prefix {k}");
    }
}

/// The reference request bytes the codec benchmarks parse (one copy, kept with them in
/// `bufslab-benches`), so a fixture the parser rejects fails here and not only in a bench.
#[test]
fn fixtures_parse() {
    let fixtures: [(&[u8], usize, BodyFraming); 4] = [
        (
            include_bytes!("fixtures/techempower.http"),
            3,
            BodyFraming::None,
        ),
        (
            include_bytes!("fixtures/browser.http"),
            15,
            BodyFraming::None,
        ),
        (
            include_bytes!("fixtures/many_headers.http"),
            40,
            BodyFraming::None,
        ),
        (
            include_bytes!("fixtures/post_json.http"),
            5,
            BodyFraming::Length(65),
        ),
    ];
    for (buf, n, framing) in fixtures {
        let s = ok(buf);
        assert_eq!(s.headers.len(), n);
        assert_eq!(s.framing, framing);
    }
}
