//! `Config::min_body_rate`: a body that stops coming is answered `408` and the connection
//! closed at the first check it fails, long before the idle timeout; a body that comes slowly
//! but above the rate is read whole. Under each driver.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bufslab_http::Request;
use bufslab_server::{Config, Exchange, IoMode, MinBodyRate, Service, WorkerInfo};

#[path = "support/client.rs"]
mod client;

/// Reads the body and answers with its length.
struct Count;

impl Service for Count {
    type State = usize;

    fn head(&mut self, _: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut usize) {
        ex.read_body();
    }

    fn data(&mut self, data: &[u8], _: &mut Exchange<'_>, n: &mut usize) {
        *n += data.len();
    }

    fn end(&mut self, ex: &mut Exchange<'_>, n: &mut usize) {
        let _ = ex
            .respond(200)
            .body(itoa::Buffer::new().format(*n).as_bytes());
    }
}

#[test]
fn a_body_below_the_minimum_rate_is_cut_and_one_above_it_is_read() {
    for io in [IoMode::Epoll, IoMode::Uring] {
        let config = Config {
            // The idle timeout would take a minute: the rate's check comes first.
            idle_timeout: Duration::from_secs(60),
            min_body_rate: Some(MinBodyRate::new(1, Duration::from_millis(300))),
            ..client::config(io)
        };
        let Some(server) = client::start_with(config, |_: WorkerInfo| Count) else {
            continue;
        };
        let addr = server.local_addr();

        // Ten bytes of a thousand, then nothing.
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        c.write_all(b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n0123456789")
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).unwrap();
        assert!(got.starts_with("HTTP/1.1 408 "), "{io:?}: {got}");
        assert!(got.contains("\r\nConnection: close\r\n"), "{io:?}: {got}");
        drop(c);

        // A byte at a time, well above a byte per 300 ms: read whole.
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_nodelay(true).unwrap();
        c.write_all(
            b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 20\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
        for _ in 0..20 {
            c.write_all(b"x").unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut got = String::new();
        c.read_to_string(&mut got).unwrap();
        assert!(got.starts_with("HTTP/1.1 200 "), "{io:?}: {got}");
        assert!(got.ends_with("\r\n\r\n20"), "{io:?}: {got}");

        let stats = server.stop().unwrap().stats;
        assert_eq!(stats.slow_bodies, 1, "{io:?}");
        assert_eq!(stats.idle_timeouts, 0, "{io:?}");
    }
}
