//! A key-value store: `PUT /k/<key>` stores the body (Content-Length or chunked, up to 32 KiB),
//! `GET /k/<key>` returns it, `DELETE /k/<key>` forgets it. Values live in blocks rented from
//! the engine's own pool ([`Exchange::rent`]), so they count against its bound and show in its
//! statistics, and a GET hands the stored value to the response by reference
//! ([`Response::body_owned`](bufslab_server::Response::body_owned)): its bytes are never copied
//! in user space. The table is sized at start-up: in steady state a request allocates nothing
//! (the test below counts with dhat). Each worker keeps its own table (thread-per-core: a key
//! lives on the worker its connection landed on), so run it with one worker for one table:
//! `cargo run --release --example kv`, then `curl -T file localhost:8080/k/a`.
use std::collections::HashMap;

use bufslab::{PoolBuf, PoolBytes};
use bufslab_http::{BodyFraming, KnownHeader, Method, Request};
use bufslab_server::{Config, Exchange, Server, Service, WorkerInfo};
use bytes::BufMut;

#[cfg(test)]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Longest key, in bytes.
const KEY_MAX: usize = 64;
/// Largest value: one block of the pool's large class (32 KiB with the default `max_head`).
const VALUE_MAX: usize = 32 * 1024;

/// A key, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    len: u8,
    bytes: [u8; KEY_MAX],
}

impl Default for Key {
    fn default() -> Key {
        Key {
            len: 0,
            bytes: [0; KEY_MAX],
        }
    }
}

impl Key {
    fn new(s: &[u8]) -> Option<Key> {
        let mut k = Key {
            len: u8::try_from(s.len()).ok()?,
            bytes: [0; KEY_MAX],
        };
        k.bytes.get_mut(..s.len())?.copy_from_slice(s);
        Some(k)
    }
}

/// A `PUT` on its way in: its key, and the block its value goes into. Should the connection
/// end before the body does, the engine drops it, and the block goes back to the pool.
#[derive(Default)]
struct Put {
    key: Key,
    value: Option<PoolBuf>,
}

struct Kv {
    /// Values frozen in pooled blocks: a GET sends a clone of the view (one atomic increment).
    table: HashMap<Key, PoolBytes>,
}

impl Service for Kv {
    type State = Put;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, put: &mut Put) {
        let Some(key) = req.path().strip_prefix(b"/k/").and_then(Key::new) else {
            let _ = ex.respond(404).body(b"");
            return;
        };
        let _ = match req.method() {
            Method::Get | Method::Head => match self.table.get(&key) {
                Some(v) => ex
                    .respond(200)
                    .header(KnownHeader::ContentType, b"application/octet-stream")
                    .body_owned(v.clone()),
                None => ex.respond(404).body(b""),
            },
            Method::Put => {
                // A block the size of the value when it is announced, else the largest.
                let len = match req.framing() {
                    BodyFraming::Length(n) => usize::try_from(n).unwrap_or(usize::MAX),
                    _ => VALUE_MAX,
                };
                if len > VALUE_MAX {
                    // Answered before the body is read; the engine then skips or closes.
                    let _ = ex.respond(413).body(b"");
                    return;
                }
                match ex.rent(len.max(1)) {
                    Some(block) => {
                        *put = Put {
                            key,
                            value: Some(block),
                        };
                        // A chunked body past the value's limit gets a 413 from the engine.
                        ex.read_body_limited(VALUE_MAX as u64);
                        Ok(())
                    }
                    None => ex.respond(503).body(b"no room"),
                }
            }
            Method::Delete => match self.table.remove(&key) {
                Some(_) => ex.respond(204).body(b""),
                None => ex.respond(404).body(b""),
            },
            _ => ex
                .respond(405)
                .header(KnownHeader::Allow, b"GET, HEAD, PUT, DELETE")
                .body(b""),
        };
    }

    fn data(&mut self, data: &[u8], _: &mut Exchange<'_>, put: &mut Put) {
        if let Some(v) = &mut put.value {
            // The block was rented for the announced length, or the largest a value may be
            // (the engine's limit): it always has room.
            let n = data.len().min(v.spare_capacity());
            v.put_slice(&data[..n]);
        }
    }

    fn end(&mut self, ex: &mut Exchange<'_>, put: &mut Put) {
        let Some(v) = put.value.take() else {
            let _ = ex.respond(500).body(b"");
            return;
        };
        // A table sized at start-up: a new key past its capacity would allocate.
        let _ = if self.table.len() < self.table.capacity() || self.table.contains_key(&put.key) {
            self.table.insert(put.key, v.freeze());
            ex.respond(204).body(b"")
        } else {
            ex.respond(507).body(b"table full")
        };
    }
}

fn kv(_: WorkerInfo) -> Kv {
    Kv {
        table: HashMap::with_capacity(10_000),
    }
}

fn main() -> Result<(), bufslab_server::ServerError> {
    let config = Config {
        workers: 1,
        ..Config::default()
    };
    let server = Server::start(config, kv)?;
    println!("http://{}/k/<key>", server.local_addr());
    server.join().map(|_| ())
}

#[cfg(test)]
#[path = "../tests/support/client.rs"]
mod client;

/// dhat counts every thread of the process: the tests take turns.
#[cfg(test)]
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn steady_state_allocates_nothing() {
    use client::{exchange, response_len};
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        ..Config::default()
    };
    let server = Server::start(config, kv).unwrap();
    let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    let script: [(&[u8], u16); 6] = [
        (b"PUT /k/one HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst", 204),
        (b"PUT /k/two HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nsec\r\n3\r\nond\r\n0\r\n\r\n", 204),
        (b"GET /k/one HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        (b"GET /k/two HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        (b"DELETE /k/two HTTP/1.1\r\nHost: x\r\n\r\n", 204),
        (b"GET /k/two HTTP/1.1\r\nHost: x\r\n\r\n", 404),
    ];
    let mut lens = [0; 6];
    for _ in 0..20 {
        for ((req, _), len) in script.iter().zip(&mut lens) {
            *len = response_len(&mut c, req);
        }
    }
    let before = dhat::HeapStats::get();
    for _ in 0..300 {
        for ((req, status), len) in script.iter().zip(&lens) {
            assert_eq!(exchange(&mut c, req, *len), *status);
        }
    }
    let after = dhat::HeapStats::get();
    assert_eq!(
        after.total_blocks - before.total_blocks,
        0,
        "allocations in 1 800 requests"
    );
    drop(c);
    server.stop().unwrap();
}

/// Reads one response from `c` (buffered in `buf`): its status, `Connection: close` or not, and
/// its body (Content-Length framed, as every response of this store is).
#[cfg(test)]
fn read_response(c: &mut std::net::TcpStream, buf: &mut Vec<u8>) -> (u16, bool, Vec<u8>) {
    use std::io::Read;
    let mut chunk = [0u8; 64 * 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).unwrap().to_owned();
            let status: u16 = head[9..12].parse().unwrap();
            let len: usize = head
                .split("\r\n")
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .map_or(0, |v| v.parse().unwrap());
            let total = end + 4 + len;
            while buf.len() < total {
                let n = c.read(&mut chunk).unwrap();
                assert!(n > 0, "closed mid-response: {head}");
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..total].to_vec();
            buf.drain(..total);
            return (status, head.contains("\r\nConnection: close"), body);
        }
        let n = c.read(&mut chunk).unwrap();
        assert!(n > 0, "closed before a response");
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn pipelined_gets_of_every_value_size_are_all_answered() {
    use std::io::Write;
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Every block boundary and its neighbours, and a sweep between them.
    let mut sizes: Vec<usize> = (1..=VALUE_MAX).step_by(1021).collect();
    for k in 1..=VALUE_MAX / 1024 {
        sizes.extend([k * 1024 - 1, k * 1024, k * 1024 + 1]);
    }
    sizes.extend([1, 2, 700, 3000, 4000, VALUE_MAX]);
    sizes.retain(|&n| (1..=VALUE_MAX).contains(&n));
    sizes.sort_unstable();
    sizes.dedup();
    for io in [bufslab_server::IoMode::Epoll, bufslab_server::IoMode::Uring] {
        let Some(server) = client::start_under(io, kv) else {
            continue;
        };
        let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
        let mut buf = Vec::new();
        for &size in &sizes {
            let value: Vec<u8> = (0..size)
                .map(|i| b'a' + (i * 7 + size) as u8 % 26)
                .collect();
            let mut put = format!("PUT /k/v HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n")
                .into_bytes();
            put.extend_from_slice(&value);
            c.write_all(&put).unwrap();
            assert_eq!(
                read_response(&mut c, &mut buf).0,
                204,
                "{io:?}: PUT of {size}"
            );
            // 64 GETs in one write.
            let gets = "GET /k/v HTTP/1.1\r\nHost: x\r\n\r\n".repeat(64);
            c.write_all(gets.as_bytes()).unwrap();
            for i in 0..64 {
                let (status, close, body) = read_response(&mut c, &mut buf);
                assert_eq!(status, 200, "{io:?}: GET {i} of a {size}-byte value");
                assert!(
                    !close,
                    "{io:?}: GET {i} of a {size}-byte value closed the connection"
                );
                assert!(
                    body == value,
                    "{io:?}: GET {i} of a {size}-byte value: wrong body"
                );
            }
        }
        let stats = server.stop().unwrap().stats;
        assert_eq!(stats.service_errors, 0, "{io:?}");
    }
}
