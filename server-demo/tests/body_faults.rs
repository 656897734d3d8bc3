//! Malformed chunked bodies are never a silent close: while no byte of the request's response
//! has gone out, the client gets `400 Bad Request` with `Connection: close` instead of it;
//! once the response has started, the close is the only signal left, and `/stats` counts it.
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::*;

/// Each malformed body, as it follows the head, and what it breaks.
const MALFORMED: &[(&str, &[u8])] = &[
    ("size zz", b"zz\r\nhello\r\n0\r\n\r\n"),
    ("empty size line", b"\r\nhello\r\n0\r\n\r\n"),
    (
        "size with a space and no extension",
        b"5 \r\nhello\r\n0\r\n\r\n",
    ),
    ("data longer than its size", b"5\r\nhelloXX\r\n0\r\n\r\n"),
    ("data without its CRLF", b"5\r\nhello0\r\n\r\n"),
    ("bare LF line endings", b"5\nhello\n0\n\n"),
];

fn chunked_head(method_path: &str) -> Vec<u8> {
    format!("{method_path} HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n").into_bytes()
}

driver_test! {
/// The body fails before any of the response went out: 400 and close, for a route that
/// echoes the body and for routes that skip it (their prepared response is replaced), with
/// the request pipelined behind never answered.
fn malformed_body_before_the_response_gets_400_and_close() {
    let server = start(config());
    for route in ["POST /echo", "POST /nope", "GET /plaintext"] {
        for (what, body) in MALFORMED {
            let mut req = chunked_head(route);
            req.extend_from_slice(body);
            req.extend_from_slice(GET_PLAINTEXT);
            let mut c = Client::new(server.local_addr());
            c.send(&req);
            let r = c.response();
            assert_eq!(r.status, 400, "{route}, {what}");
            assert!(r.closes(), "{route}, {what}: Connection: close");
            assert_eq!(r.body, b"Bad Request");
            c.expect_closed();
        }
    }
    let stats = server.stats();
    assert_eq!(stats.bad_requests, 3 * MALFORMED.len() as u64);
    assert_eq!(stats.late_body_faults, 0);
}
}

/// Reads from `s` until `buf` ends with `end`.
fn read_until(s: &mut TcpStream, buf: &mut Vec<u8>, end: &[u8]) {
    let mut tmp = [0u8; 4096];
    while !buf.ends_with(end) {
        let n = s.read(&mut tmp).expect("read");
        assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(buf));
        buf.extend_from_slice(&tmp[..n]);
    }
}

/// Reads the rest of the stream (a reset counts as its end).
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut rest = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        match s.read(&mut tmp) {
            Ok(0) | Err(_) => return rest,
            Ok(n) => rest.extend_from_slice(&tmp[..n]),
        }
    }
}

driver_test! {
/// The body fails after the response started going out (the echo streams, or the 404 was
/// sent whole): the connection closes without ending the response or answering anew, and
/// `/stats` counts each.
fn malformed_body_after_the_response_started_closes_and_is_counted() {
    let server = start(config());
    let mut n = 0;
    for (route, started) in [
        ("POST /echo", &b"5\r\nhello\r\n"[..]),
        ("POST /nope", &b"Not Found"[..]),
    ] {
        for (what, body) in MALFORMED {
            let mut s = connect(server.local_addr());
            let mut head = chunked_head(route);
            head.extend_from_slice(b"5\r\nhello\r\n");
            s.write_all(&head).unwrap();
            let mut got = Vec::new();
            read_until(&mut s, &mut got, started);
            s.write_all(body).unwrap();
            // Data decoded before the fault may still be echoed; the response never ends
            // well, and no second response follows.
            let rest = read_to_close(&mut s);
            let has = |needle: &[u8]| rest.windows(needle.len()).any(|w| w == needle);
            assert!(
                !has(b"0\r\n\r\n") && !has(b"HTTP/"),
                "{route}, {what}: sent {:?} after the fault",
                String::from_utf8_lossy(&rest)
            );
            n += 1;
            wait_until("the late fault counted", || {
                server.stats().late_body_faults == n
            });
        }
    }
    assert_eq!(server.stats().bad_requests, 0);
}
}

driver_test! {
/// Responses to requests before the faulty one are kept; only its own is replaced.
fn earlier_pipelined_responses_stay_before_the_400() {
    let server = start(config());
    let mut req = GET_PLAINTEXT.to_vec();
    req.extend_from_slice(&chunked_head("POST /echo"));
    req.extend_from_slice(b"5\r\nhello\r\nzz\r\n");
    let mut c = Client::new(server.local_addr());
    c.send(&req);
    let r = c.response();
    assert_eq!((r.status, &r.body[..]), (200, HELLO));
    let r = c.response();
    assert_eq!(r.status, 400);
    assert!(r.closes());
    c.expect_closed();
    assert_eq!(server.stats().late_body_faults, 0);
}
}
