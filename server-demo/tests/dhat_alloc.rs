//! Zero heap allocations on the request path after warm-up, counted by dhat over the whole
//! process (server threads and this test's client alike; the client below reads into stack
//! buffers and writes static bytes, so it allocates nothing either). dhat allows one profiler
//! per process: one test in this file.

use std::io::{Read, Write};
use std::net::TcpStream;

use server_demo::{Config, Server};

mod common;
use common::{each_driver, wait_until};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const PLAINTEXT: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n";
const JSON: &[u8] = b"GET /json HTTP/1.1\r\nHost: t\r\n\r\n";
const ECHO: &[u8] = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello";
const ROUNDS: usize = 500;
const PIPELINE: usize = 16;

/// Reads one response of unknown length (used in warm-up to learn the fixed sizes).
fn response_len(s: &mut TcpStream) -> usize {
    let mut buf = [0u8; 4096];
    let mut have = 0;
    loop {
        let n = s.read(&mut buf[have..]).unwrap();
        assert!(n > 0);
        have += n;
        let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = &buf[..end];
        let key = b"Content-Length: ";
        let at = head.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        let len: usize = head[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .fold(0, |acc, b| acc * 10 + usize::from(b - b'0'));
        let total = end + 4 + len;
        while have < total {
            have += s.read(&mut buf[have..]).unwrap();
        }
        assert_eq!(have, total, "one response at a time");
        return total;
    }
}

/// Sends `req` and reads exactly `len` bytes back into a stack buffer.
fn exchange(s: &mut TcpStream, req: &[u8], len: usize) {
    let mut buf = [0u8; 8192];
    s.write_all(req).unwrap();
    s.read_exact(&mut buf[..len]).unwrap();
    assert!(buf.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

#[test]
fn request_path_allocates_nothing_after_warm_up() {
    let _profiler = dhat::Profiler::builder().testing().build();
    each_driver("request_path_allocates_nothing_after_warm_up", || {
        // `common::config` has no eviction timer: `evict_idle` allocates bookkeeping, and the
        // binary runs it every 10 s, not per request.
        let cfg = Config {
            workers: 1,
            max_conns: 64,
            ..common::config()
        };
        let server = Server::start(cfg).unwrap();
        let addr = server.local_addr();

        // Warm-up: learn the (fixed) response sizes and let the caches fill.
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_nodelay(true).unwrap();
        c.write_all(PLAINTEXT).unwrap();
        let plaintext_len = response_len(&mut c);
        c.write_all(JSON).unwrap();
        let json_len = response_len(&mut c);
        c.write_all(ECHO).unwrap();
        let echo_len = response_len(&mut c);
        let batch: Vec<u8> = PLAINTEXT.repeat(PIPELINE);
        for _ in 0..20 {
            exchange(&mut c, PLAINTEXT, plaintext_len);
            exchange(&mut c, JSON, json_len);
            exchange(&mut c, ECHO, echo_len);
            exchange(&mut c, &batch, plaintext_len * PIPELINE);
        }
        // A second connection warms the accept and close paths.
        drop(TcpStream::connect(addr).unwrap());
        wait_until("one connection open", || {
            server.stats().connections_open == 1
        });

        // Steady state: keep-alive requests and pipelined batches.
        let before = dhat::HeapStats::get();
        for _ in 0..ROUNDS {
            exchange(&mut c, PLAINTEXT, plaintext_len);
            exchange(&mut c, JSON, json_len);
            exchange(&mut c, ECHO, echo_len);
            exchange(&mut c, &batch, plaintext_len * PIPELINE);
        }
        let after = dhat::HeapStats::get();
        let per_request = after.total_blocks - before.total_blocks;
        eprintln!(
            "dhat: {} keep-alive requests ({} plaintext, {} json, {} echo, {} pipelined batches of {}): {} allocations, {} bytes",
            ROUNDS * (3 + PIPELINE),
            ROUNDS,
            ROUNDS,
            ROUNDS,
            ROUNDS,
            PIPELINE,
            per_request,
            after.total_bytes - before.total_bytes
        );
        dhat::assert_eq!(per_request, 0);

        // A new connection: connect, one request, close. Slots, timer links and header slots are
        // preallocated, so accepting and closing allocate nothing either.
        const CONNS: u64 = 100;
        let before = dhat::HeapStats::get();
        for _ in 0..CONNS {
            let mut n = TcpStream::connect(addr).unwrap();
            exchange(&mut n, PLAINTEXT, plaintext_len);
            drop(n);
            wait_until("one connection open", || {
                server.stats().connections_open == 1
            });
        }
        let after = dhat::HeapStats::get();
        let per_conn = after.total_blocks - before.total_blocks;
        eprintln!(
            "dhat: {CONNS} new connections (connect, request, close): {per_conn} allocations"
        );
        dhat::assert_eq!(per_conn, 0);
        drop(c);
        server.stop().unwrap();
    });
}
