//! `server-demo` end to end, in process, over loopback: blocking std `TcpStream` clients
//! (`TCP_NODELAY`) against `server_demo::Server` answering `GET /plaintext`.
//!
//! - `round_trip`: one kept-alive connection, one request and its response.
//! - `concurrent_connections/N`: N kept-alive connections opened before timing; per iteration
//!   one request is written on each, then all N responses are read (throughput per request).
//! - `accept_burst/{accept_many,accept_one}/256`: per iteration 256 new connections, each
//!   sending one `Connection: close` request, timed until all 256 are answered; the server
//!   accepts up to 64 connections per readiness event (`Config::accept_batch`'s default) or
//!   one.
//!
//! Run: `cargo bench -p bufslab-benches --bench e2e`.
//!
//! The server runs one worker: the figures come from a 2-core machine, where one core serves
//! and the other runs this client thread; a second worker would only compete with the client
//! for a core. The client's own cost (syscalls, response framing) is in every figure; the
//! ratios between contenders are what to read.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use server_demo::{Config, Server, ServerHandle};

const REQUEST: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: bench\r\n\r\n";
/// The server closes first, so the TIME_WAIT sockets of the burst are on its side and the
/// client's ephemeral ports are free again at once.
const REQUEST_CLOSE: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";
const BODY: &[u8] = b"Hello, World!";

const CONCURRENCY: [usize; 6] = [2, 4, 8, 16, 32, 64];
const BURST: usize = 256;

/// A stuck server fails the bench (and `cargo test`) instead of hanging it.
const TIMEOUT: Duration = Duration::from_secs(10);

fn start(accept_batch: usize) -> ServerHandle {
    Server::start(Config {
        addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        workers: 1,
        accept_batch,
        evict_interval: None,
        ..Config::default()
    })
    .expect("server starts on loopback")
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect to the bench server");
    s.set_nodelay(true).expect("TCP_NODELAY");
    s.set_read_timeout(Some(TIMEOUT)).expect("read timeout");
    s.set_write_timeout(Some(TIMEOUT)).expect("write timeout");
    s
}

fn send(s: &mut TcpStream, request: &[u8]) {
    s.write_all(request).expect("write request");
}

/// Reads responses into one scratch buffer. Every connection has at most one request in
/// flight and its response is read whole before the next connection is read, so nothing is
/// ever left over to keep per connection.
struct Reader {
    buf: Vec<u8>,
}

impl Reader {
    fn new() -> Reader {
        Reader { buf: vec![0; 4096] }
    }

    /// Reads one whole `200` response to `GET /plaintext` from `s`: up to the end of the head,
    /// then `Content-Length` bytes of body.
    fn response(&mut self, s: &mut TcpStream) {
        let mut filled = 0;
        let mut total = None;
        loop {
            let n = s.read(&mut self.buf[filled..]).expect("read response");
            assert!(n > 0, "server closed before the whole response");
            filled += n;
            if total.is_none() {
                total = bufslab_benches::response_len(&self.buf[..filled])
                    .expect("a 200 with a Content-Length");
            }
            if let Some(total) = total {
                if filled >= total {
                    assert_eq!(filled, total, "bytes after the response");
                    assert!(self.buf[..total].ends_with(BODY), "unexpected body");
                    return;
                }
            }
            assert!(filled < self.buf.len(), "response larger than 4 KiB");
        }
    }
}

fn keep_alive(c: &mut Criterion) {
    let server = start(Config::default().accept_batch);
    let addr = server.local_addr();
    let mut reader = Reader::new();

    let mut conn = connect(addr);
    c.bench_function("round_trip", |b| {
        b.iter(|| {
            send(&mut conn, REQUEST);
            reader.response(&mut conn);
        })
    });
    drop(conn);

    let mut g = c.benchmark_group("concurrent_connections");
    for n in CONCURRENCY {
        let mut conns: Vec<TcpStream> = (0..n).map(|_| connect(addr)).collect();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                for s in &mut conns {
                    send(s, REQUEST);
                }
                for s in &mut conns {
                    reader.response(s);
                }
            })
        });
    }
    g.finish();

    server.stop().expect("server stops cleanly");
}

fn accept_burst(c: &mut Criterion) {
    let mut g = c.benchmark_group("accept_burst");
    // An iteration is hundreds of connections (milliseconds): few, equal-sized samples.
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(BURST as u64));
    let mut reader = Reader::new();
    let mut conns: Vec<TcpStream> = Vec::with_capacity(BURST);
    for (name, accept_batch) in [
        ("accept_many", Config::default().accept_batch),
        ("accept_one", 1),
    ] {
        let server = start(accept_batch);
        let addr = server.local_addr();
        g.bench_function(BenchmarkId::new(name, BURST), |b| {
            b.iter_custom(|iters| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    // All connects first: the listener's backlog fills while the worker accepts.
                    for _ in 0..BURST {
                        conns.push(connect(addr));
                    }
                    for s in &mut conns {
                        send(s, REQUEST_CLOSE);
                    }
                    for s in &mut conns {
                        reader.response(s);
                    }
                    elapsed += start.elapsed();
                    // Wait for each server-side close before dropping, so the server closed
                    // first (see `REQUEST_CLOSE`); untimed.
                    for mut s in conns.drain(..) {
                        let mut byte = [0u8; 1];
                        assert_eq!(s.read(&mut byte).expect("read EOF"), 0, "close expected");
                    }
                }
                elapsed
            })
        });
        server.stop().expect("server stops cleanly");
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .noise_threshold(0.05)
}

criterion_group! {
    name = benches;
    config = config();
    targets = keep_alive, accept_burst
}
criterion_main!(benches);
