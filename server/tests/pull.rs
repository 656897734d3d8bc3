//! A 1 GiB generated body streams in constant memory: the service's `fill` is called only as
//! the connection's output drains, so the pool never holds more than a block or two of it,
//! under each driver.

use std::io::{Read, Write};
use std::net::TcpStream;

use bufslab_http::Request;
use bufslab_server::{Exchange, IoMode, Service, WorkerInfo};

#[path = "support/client.rs"]
mod client;
use client::start_under;

const GIB: u64 = 1 << 30;

struct Gen;

impl Service for Gen {
    /// Bytes still to generate.
    type State = u64;

    fn head(&mut self, _: &Request<'_, '_>, ex: &mut Exchange<'_>, left: &mut u64) {
        *left = GIB;
        ex.respond(200).stream(GIB).unwrap();
        ex.pull().unwrap();
    }

    fn fill(&mut self, ex: &mut Exchange<'_>, left: &mut u64) {
        let piece = [b'g'; 64 * 1024];
        let n = (*left).min(ex.write_room() as u64) as usize;
        ex.write(&piece[..n.min(piece.len())]).unwrap();
        *left -= n.min(piece.len()) as u64;
    }
}

#[test]
fn a_gibibyte_streams_in_constant_memory() {
    for io in [IoMode::Epoll, IoMode::Uring] {
        let Some(server) = start_under(io, |_: WorkerInfo| Gen) else {
            continue;
        };
        let mut c = TcpStream::connect(server.local_addr()).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let (mut total, mut peak) = (0u64, 0);
        loop {
            let n = c.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            total += n as u64;
            peak = peak.max(server.stats().pool.rented_bytes);
        }
        let stats = server.stop().unwrap().stats;
        assert!(total > GIB, "{io:?}: {total} bytes");
        assert_eq!(stats.service_errors, 0);
        // A 32 KiB block being filled and one being sent, at most.
        assert!(peak <= 96 * 1024, "{io:?}: {peak} bytes rented at the peak");
    }
}
