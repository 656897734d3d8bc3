//! Zero heap allocations per WebSocket message in steady state, under each driver: a service
//! echoing text and binary messages of 32 B, 4 KiB and 64 KiB (the last two over several
//! receive blocks, the 64 KiB one over the gathering buffer, so echoed in fragments) through
//! `bufslab_server::ws`. Counted by dhat over the whole process: the server's threads and this
//! test's client, whose frames are built and whose reads land in buffers made before counting.
//! The same for whole upgraded connections: connect, handshake, one message, close handshake.
//! dhat allows one profiler per process: one test in this file.
#![cfg(feature = "ws")]

use std::io::{Read, Write};
use std::net::TcpStream;

use bufslab_http::Request;
use bufslab_server::ws::{Message, WebSocket, WsConfig, WsHandler, WsSender};
use bufslab_server::{Exchange, IoMode, Service, UpgradeEvent, Upgraded, WorkerInfo};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[path = "support/client.rs"]
mod client;

struct Echo;

impl WsHandler for Echo {
    fn message(&mut self, msg: Message<'_>, ws: &mut WsSender<'_, '_>) {
        ws.fragment(msg.kind, msg.data, msg.first, msg.last)
            .expect("room for the echo");
    }
}

impl Service for Echo {
    type State = Option<WebSocket>;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, ws: &mut Self::State) {
        *ws = WebSocket::accept(req, ex, WsConfig::default()).ok();
    }

    fn upgraded(&mut self, ev: UpgradeEvent<'_>, up: &mut Upgraded<'_>, ws: &mut Self::State) {
        if let Some(ws) = ws {
            ws.on_event(ev, up, self);
        }
    }
}

const HANDSHAKE: &[u8] =
    b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/// A masked client frame of `len` payload bytes with opcode `op`.
fn frame(op: u8, len: usize) -> Vec<u8> {
    let mut f = vec![0x80 | op];
    match len {
        0..=125 => f.push(0x80 | len as u8),
        126..=65535 => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    let key = [0x12, 0x34, 0x56, 0x78];
    f.extend_from_slice(&key);
    // ASCII, so valid as text too.
    f.extend((0..len).map(|i| (b'a' + (i % 26) as u8) ^ key[i % 4]));
    f
}

/// Reads one echoed message (its frames up to FIN) into `buf`; returns the payload length.
fn read_message(s: &mut TcpStream, buf: &mut [u8]) -> usize {
    let mut total = 0;
    loop {
        let mut h = [0u8; 10];
        s.read_exact(&mut h[..2]).unwrap();
        assert_eq!(h[1] & 0x80, 0, "server frames are unmasked");
        let len = match h[1] & 0x7f {
            126 => {
                s.read_exact(&mut h[2..4]).unwrap();
                usize::from(u16::from_be_bytes([h[2], h[3]]))
            }
            127 => {
                s.read_exact(&mut h[2..10]).unwrap();
                u64::from_be_bytes(h[2..10].try_into().unwrap()) as usize
            }
            n => usize::from(n),
        };
        s.read_exact(&mut buf[total..total + len]).unwrap();
        total += len;
        if h[0] & 0x80 != 0 {
            return total;
        }
    }
}

#[test]
fn websocket_echo_allocates_nothing_per_message() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let sizes = [32, 4 << 10, 64 << 10];
    let frames: Vec<(usize, Vec<u8>)> = sizes
        .iter()
        .flat_map(|&n| [(n, frame(0x1, n)), (n, frame(0x2, n))])
        .collect();
    let mut buf = vec![0u8; 128 << 10];
    for io in [IoMode::Epoll, IoMode::Uring] {
        let Some(server) = client::start_under(io, |_: WorkerInfo| Echo) else {
            continue;
        };
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        s.set_nodelay(true).unwrap();
        s.write_all(HANDSHAKE).unwrap();
        let mut head = [0u8; 129];
        s.read_exact(&mut head).unwrap();
        assert!(head.starts_with(b"HTTP/1.1 101 "));
        let round = |s: &mut TcpStream, buf: &mut [u8]| {
            for (n, f) in &frames {
                s.write_all(f).unwrap();
                assert_eq!(read_message(s, buf), *n);
            }
        };
        for _ in 0..50 {
            round(&mut s, &mut buf);
        }
        const ROUNDS: usize = 200;
        let before = dhat::HeapStats::get();
        for _ in 0..ROUNDS {
            round(&mut s, &mut buf);
        }
        let after = dhat::HeapStats::get();
        let messages = ROUNDS * frames.len();
        let allocs = after.total_blocks - before.total_blocks;
        let _ = writeln!(
            std::io::stderr(),
            "{io:?}: {allocs} heap allocations in {messages} echoed messages (32 B, 4 KiB, 64 KiB; text and binary)"
        );
        assert_eq!(allocs, 0, "{io:?}: heap allocations in {messages} messages");
        drop(s);
        // Per upgrade: a connection, its handshake, a message and the close handshake.
        let addr = server.local_addr();
        let close = frame(0x8, 0);
        let mut upgrade = |buf: &mut [u8]| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(HANDSHAKE).unwrap();
            s.read_exact(&mut head).unwrap();
            let (n, f) = &frames[0];
            s.write_all(f).unwrap();
            assert_eq!(read_message(&mut s, buf), *n);
            s.write_all(&close).unwrap();
            // The server's close, then the end of the stream.
            assert_eq!(read_message(&mut s, buf), 0);
            assert_eq!(s.read(buf).unwrap(), 0);
        };
        for _ in 0..20 {
            upgrade(&mut buf);
        }
        const UPGRADES: usize = 100;
        let before = dhat::HeapStats::get();
        for _ in 0..UPGRADES {
            upgrade(&mut buf);
        }
        let allocs = dhat::HeapStats::get().total_blocks - before.total_blocks;
        let _ = writeln!(
            std::io::stderr(),
            "{io:?}: {allocs} heap allocations in {UPGRADES} upgraded connections"
        );
        assert_eq!(allocs, 0, "{io:?}: heap allocations in {UPGRADES} upgrades");
        let stats = server.stop().unwrap().stats;
        assert_eq!(stats.pool.rented_blocks, 0, "{io:?}: blocks still rented");
    }
}
