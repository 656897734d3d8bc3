//! HTTP/1.1 behaviour over real TCP: keep-alive, pipelining, HTTP/1.0, HEAD, echo by
//! Content-Length and chunked (1 MiB included), 100-continue, split delivery, error statuses.

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::*;
use server_demo::Strategy;

driver_test! {
fn keep_alive_reuses_one_connection() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    for i in 0..20 {
        let (req, body, ctype) = if i % 2 == 0 {
            (GET_PLAINTEXT, HELLO, "text/plain")
        } else {
            (GET_JSON, HELLO_JSON, "application/json")
        };
        let r = c.request(req);
        assert_eq!(r.status, 200);
        assert_eq!(r.body, body);
        assert_eq!(r.header("content-type"), Some(ctype));
        assert_eq!(r.header("server"), Some("server-demo"));
        assert_eq!(r.header("date").map(str::len), Some(29));
        assert_eq!(r.header("content-length"), Some(&*body.len().to_string()));
        assert!(!r.closes());
    }
    let s = server.stats();
    assert_eq!(s.connections_accepted, 1);
    assert_eq!(s.requests, 20);
}
}

driver_test! {
fn pipelining_16_answers_in_order_in_one_batch() {
    pipelining_16(Strategy::Queue);
}
}

driver_test! {
/// The whole exchange again over the pool's other free list.
fn pipelining_16_with_the_stack_strategy() {
    pipelining_16(Strategy::Stack);
}
}

fn pipelining_16(strategy: Strategy) {
    let mut cfg = config();
    cfg.pool.strategy = strategy;
    let server = start(cfg);
    let mut c = Client::new(server.local_addr());
    let mut batch = Vec::new();
    let kinds: Vec<usize> = (0..16).map(|i| i % 4).collect();
    for &k in &kinds {
        batch.extend_from_slice(match k {
            0 => GET_PLAINTEXT,
            1 => GET_JSON,
            2 => b"GET /missing HTTP/1.1\r\nHost: t\r\n\r\n",
            _ => b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
        });
    }
    c.send(&batch);
    for &k in &kinds {
        let r = c.response();
        match k {
            0 => assert_eq!((r.status, &r.body[..]), (200, HELLO)),
            1 => assert_eq!((r.status, &r.body[..]), (200, HELLO_JSON)),
            2 => assert_eq!(r.status, 404),
            _ => assert_eq!((r.status, &r.body[..]), (200, &b"abc"[..])),
        }
    }
    // Still open and usable.
    assert_eq!(c.request(GET_PLAINTEXT).status, 200);
}

driver_test! {
fn http10_closes_unless_keep_alive() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    let r = c.request(b"GET /plaintext HTTP/1.0\r\n\r\n");
    assert_eq!((r.status, &r.body[..]), (200, HELLO));
    assert!(r.closes());
    c.expect_closed();

    let mut c = Client::new(server.local_addr());
    for _ in 0..3 {
        let r = c.request(b"GET /json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assert_eq!((r.status, &r.body[..]), (200, HELLO_JSON));
        assert_eq!(r.header("connection"), Some("keep-alive"));
    }
}
}

driver_test! {
fn connection_close_is_honoured() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    // The request after `Connection: close` is never served.
    c.send(b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /json HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response();
    assert_eq!(r.status, 200);
    assert!(r.closes());
    c.expect_closed();
}
}

driver_test! {
fn head_has_get_headers_and_no_body() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    for (path, len) in [("/plaintext", 13), ("/json", 27)] {
        c.send(format!("HEAD {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        let r = c.response_to(true);
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-length"), Some(&*len.to_string()));
        // The next response starts right after the head: no body bytes were sent.
        let r = c.request(GET_PLAINTEXT);
        assert_eq!(r.body, HELLO);
    }
}
}

driver_test! {
fn echo_content_length_small_and_1mib() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    let r = c.request(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world");
    assert_eq!((r.status, &r.body[..]), (200, &b"hello world"[..]));
    let r = c.request(b"POST /echo HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!((r.status, r.body.len()), (200, 0));

    // 1 MiB: the server streams it back while it arrives, so write from another thread.
    let body = payload(1 << 20);
    let mut w = c.stream.try_clone().unwrap();
    let sent = body.clone();
    let writer = std::thread::spawn(move || {
        w.write_all(
            format!(
                "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
                sent.len()
            )
            .as_bytes(),
        )
        .unwrap();
        for part in sent.chunks(7919) {
            w.write_all(part).unwrap();
        }
    });
    let r = c.response();
    writer.join().unwrap();
    assert_eq!(r.status, 200);
    assert!(r.body == body, "1 MiB echo differs");
    assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
    // Streaming, not buffering: nothing near 1 MiB was ever out of the pool at once.
    assert!(server.stats().pool.peak_out_bytes < 1 << 20);
}
}

driver_test! {
fn echo_chunked_small_and_1mib() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    let r = c.request(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: y\r\n\r\n",
    );
    assert_eq!(r.status, 200);
    assert!(r.chunked);
    assert_eq!(r.body, b"hello world");

    let body = payload(1 << 20);
    let mut w = c.stream.try_clone().unwrap();
    let sent = body.clone();
    let writer = std::thread::spawn(move || {
        w.write_all(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
            .unwrap();
        let mut sizes = [1usize, 100, 4096, 65536, 3].iter().cycle();
        let mut rest = &sent[..];
        while !rest.is_empty() {
            let n = (*sizes.next().unwrap()).min(rest.len());
            w.write_all(format!("{n:x}\r\n").as_bytes()).unwrap();
            w.write_all(&rest[..n]).unwrap();
            w.write_all(b"\r\n").unwrap();
            rest = &rest[n..];
        }
        w.write_all(b"0\r\n\r\n").unwrap();
    });
    let r = c.response();
    writer.join().unwrap();
    assert_eq!(r.status, 200);
    assert!(r.body == body, "1 MiB chunked echo differs");
    assert_eq!(c.request(GET_JSON).body, HELLO_JSON);
}
}

driver_test! {
fn expect_100_continue() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    let interim = c.head();
    assert_eq!(interim.status, 100);
    c.send(b"ping");
    let r = c.response();
    assert_eq!((r.status, &r.body[..]), (200, &b"ping"[..]));
    // A route that does not want the body: final answer, and the connection closes, since
    // the client may or may not send the body now.
    c.send(
        b"POST /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n",
    );
    let r = c.response();
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    assert!(r.closes());
    c.expect_closed();
}
}

driver_test! {
fn split_at_every_byte() {
    let server = start(config());
    let wire: &[u8] = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nPOST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nxyzGET /json HTTP/1.1\r\nHost: t\r\n\r\n";
    let mut c = Client::new(server.local_addr());
    for b in wire {
        c.send(std::slice::from_ref(b));
        // Give the server a chance to see each byte on its own.
        std::thread::sleep(Duration::from_micros(300));
    }
    assert_eq!(c.response().body, b"hello");
    assert_eq!(c.response().body, b"xyz");
    assert_eq!(c.response().body, HELLO_JSON);
}
}

driver_test! {
fn large_head_moves_to_the_large_class() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    let big = "a".repeat(10_000);
    let r =
        c.request(format!("GET /plaintext HTTP/1.1\r\nHost: t\r\nX-Big: {big}\r\n\r\n").as_bytes());
    assert_eq!((r.status, &r.body[..]), (200, HELLO));
}
}

driver_test! {
fn method_not_allowed_and_not_found() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    let r = c.request(b"GET /echo HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    let r = c.request(b"DELETE /json HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    let r = c.request(b"GET /nope?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(r.status, 404);
    assert!(!r.closes());
    // A body on a request we do not read is skipped, and the connection stays usable.
    let r = c.request(
        b"PUT /nope HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    );
    assert_eq!(r.status, 404);
    assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
    let r = c.request(b"GET /stats HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let text = String::from_utf8(r.body).unwrap();
    assert!(
        text.contains("\"requests\":") && text.contains("\"rented_blocks\":"),
        "{text}"
    );
}
}

driver_test! {
fn each_error_status_closes_and_serves_nothing_after() {
    let mut cfg = config();
    cfg.max_body = 1000;
    let server = start(cfg);
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000));
    let big_header = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n",
        "b".repeat(20_000)
    );
    let cases: Vec<(u16, Vec<u8>)> = vec![
        (
            400,
            b"GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n".to_vec(),
        ),
        (400, b"GET / HTTP/1.1\r\n\r\n".to_vec()), // no Host
        (400, b"\x16\x03\x01\x02\x00garbage\r\n\r\n".to_vec()),
        (
            413,
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n".to_vec(),
        ),
        // A chunked body over the limit before any of the echo went out.
        (
            413,
            format!(
                "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n{}\r\n0\r\n\r\n",
                "c".repeat(2000)
            )
            .into_bytes(),
        ),
        (414, long_target.into_bytes()),
        (431, big_header.into_bytes()),
        (
            417,
            b"GET / HTTP/1.1\r\nHost: t\r\nExpect: later\r\n\r\n".to_vec(),
        ),
        (
            501,
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n".to_vec(),
        ),
        (505, b"GET / HTTP/2.1\r\nHost: t\r\n\r\n".to_vec()),
    ];
    for (status, mut req) in cases {
        // A valid request pipelined behind the bad one must never be answered.
        req.extend_from_slice(GET_PLAINTEXT);
        let mut c = Client::new(server.local_addr());
        c.send(&req);
        let r = c.response();
        assert_eq!(
            r.status,
            status,
            "for {:?}",
            String::from_utf8_lossy(&req[..40.min(req.len())])
        );
        assert!(r.closes(), "{status} must say Connection: close");
        c.expect_closed();
    }
    assert!(server.stats().bad_requests >= 10);
}
}

driver_test! {
fn half_closed_client_still_gets_its_response() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    c.send(GET_PLAINTEXT);
    c.stream.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(c.response().body, HELLO);
    c.expect_closed();
}
}

driver_test! {
fn responses_are_read_back_whole_by_a_slow_reader() {
    // Backpressure: pipelined requests whose answers overflow a small client receive buffer
    // and the server's output queue; the server must stop and resume, never drop or reorder.
    const N: usize = 20_000;
    let server = start(config());
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&server.local_addr().into()).unwrap();
    let mut c = Client::from_stream(sock.into());
    // Written from another thread: with the server held up, the requests back up too.
    let mut w = c.stream.try_clone().unwrap();
    let writer = std::thread::spawn(move || w.write_all(&GET_JSON.repeat(N)).unwrap());
    std::thread::sleep(Duration::from_millis(50));
    // The reader has not read yet, so the server cannot have answered everything.
    assert!(
        server.stats().requests < N as u64,
        "no backpressure: every response fit the buffers"
    );
    for _ in 0..N {
        assert_eq!(c.response().body, HELLO_JSON);
    }
    writer.join().unwrap();
    let mut rest = [0u8; 1];
    c.stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    assert!(c.stream.read(&mut rest).is_err(), "no extra bytes");
}
}

driver_test! {
fn absolute_form_targets_route_by_their_path() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    let r =
        c.request(b"GET http://localhost:8080/plaintext HTTP/1.1\r\nHost: localhost:8080\r\n\r\n");
    assert_eq!((r.status, &r.body[..]), (200, HELLO));
    let r = c.request(b"GET http://localhost/json?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!((r.status, &r.body[..]), (200, HELLO_JSON));
    let r = c.request(b"GET http://localhost/nope HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!(r.status, 404);
}
}

driver_test! {
fn no_1xx_goes_to_an_http10_client() {
    let server = start(config());
    let mut c = Client::new(server.local_addr());
    // Head and body in one write: a `100 Continue` would come before the 200.
    c.send(b"POST /echo HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello");
    let r = c.head();
    assert_eq!(r.status, 200, "the first response is the final one");
    assert!(r.closes());
    // An HTTP/1.1 client still gets its 100.
    let mut c = Client::new(server.local_addr());
    c.send(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello",
    );
    assert_eq!(c.head().status, 100);
    assert_eq!(c.response().body, b"hello");
}
}
