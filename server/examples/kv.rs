//! A key-value store: `PUT /k/<key>` stores the body (Content-Length or chunked, up to 4 KiB),
//! `GET /k/<key>` returns it, `DELETE /k/<key>` forgets it. Values live in pooled blocks, the
//! table is sized at start-up: in steady state a request allocates nothing (the test below
//! counts with dhat). Each worker keeps its own table (thread-per-core: a key lives on the
//! worker its connection landed on), so run it with one worker for one table:
//! `cargo run --release --example kv`, then `curl -T file localhost:8080/k/a`.
use std::collections::HashMap;

use bufslab::{Pool, PoolBuf};
use bufslab_http::{KnownHeader, Method, Request};
use bufslab_server::{Config, Exchange, Server, Service, WorkerInfo};
use bytes::BufMut;

#[cfg(test)]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Longest key, in bytes.
const KEY_MAX: usize = 64;
/// Largest value: one pooled block.
const VALUE_MAX: usize = 4096;

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

/// A `PUT` on its way in: its key, and the block its value goes into.
#[derive(Default)]
struct Put {
    key: Key,
    value: Option<PoolBuf>,
}

struct Kv {
    table: HashMap<Key, PoolBuf>,
    values: Pool,
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
                    .body(v),
                None => ex.respond(404).body(b""),
            },
            Method::Put => match self.values.get(VALUE_MAX) {
                Ok(block) => {
                    *put = Put {
                        key,
                        value: Some(block),
                    };
                    ex.read_body();
                    Ok(())
                }
                Err(_) => ex.respond(503).body(b"no room"),
            },
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
        match &mut put.value {
            Some(v) if v.spare_capacity() >= data.len() => v.put_slice(data),
            // Too large: forget it, and answer 413 at the end.
            _ => put.value = None,
        }
    }

    fn end(&mut self, ex: &mut Exchange<'_>, put: &mut Put) {
        let _ = match put.value.take() {
            Some(v) => {
                // A table sized at start-up: a new key past its capacity would allocate.
                if self.table.len() < self.table.capacity() || self.table.contains_key(&put.key) {
                    self.table.insert(put.key, v);
                    ex.respond(204).body(b"")
                } else {
                    ex.respond(507).body(b"table full")
                }
            }
            None => ex.respond(413).body(b""),
        };
    }
}

fn kv(_: WorkerInfo) -> Kv {
    Kv {
        table: HashMap::with_capacity(10_000),
        values: Pool::new(),
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

#[test]
fn steady_state_allocates_nothing() {
    use client::{exchange, response_len};
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
