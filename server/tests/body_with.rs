//! Bodies written in place with `Response::body_with`, and what the engine answers when a
//! service's body cannot be written: `500` for a body writer that fails, and for a whole body
//! over `Config::whole_body_limit` (`ResponseError::TooLarge`, not a `503` that would blame the
//! pool). Under each driver.

use std::io::{Read, Write};
use std::net::TcpStream;

use bufslab_http::{KnownHeader, Request};
use bufslab_server::{Exchange, IoMode, ResponseError, Service, WorkerInfo};

#[path = "support/client.rs"]
mod client;
use client::start_under;

struct Bodies;

impl Service for Bodies {
    type State = ();

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, (): &mut ()) {
        let value = serde_json::json!({ "message": "Hello, World!" });
        let _ = match req.path() {
            b"/json" => ex
                .respond(200)
                .header(KnownHeader::ContentType, b"application/json")
                .body_with(64, |w| serde_json::to_writer(w, &value)),
            // The JSON is 27 bytes: it does not fit in 16.
            b"/small" => ex
                .respond(200)
                .body_with(16, |w| serde_json::to_writer(w, &value)),
            // Over the whole-body limit (32 KiB): refused, whatever the pool holds.
            b"/huge" => {
                let r = ex.respond(200).body(&vec![b'x'; 4 << 20]);
                assert_eq!(
                    r,
                    Err(ResponseError::TooLarge {
                        len: 4 << 20,
                        limit: 32 * 1024
                    })
                );
                r
            }
            _ => ex.respond(404).body(b""),
        };
    }
}

/// One request on a connection that the client closes after it; the whole response.
fn get(addr: std::net::SocketAddr, method: &str, path: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    c.read_to_end(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn bodies_written_in_place_and_the_answers_to_failed_ones() {
    for io in [IoMode::Epoll, IoMode::Uring] {
        let Some(server) = start_under(io, |_: WorkerInfo| Bodies) else {
            continue;
        };
        let addr = server.local_addr();

        let r = get(addr, "GET", "/json");
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{io:?}: {r}");
        assert!(
            r.contains("\r\nContent-Type: application/json\r\n"),
            "{io:?}: {r}"
        );
        assert!(r.contains("\r\nContent-Length: 27\r\n"), "{io:?}: {r}");
        assert!(r.contains("\r\nConnection: close\r\n"), "{io:?}: {r}");
        assert!(
            r.ends_with("\r\n\r\n{\"message\":\"Hello, World!\"}"),
            "{io:?}: {r}"
        );

        // HEAD: a GET's headers, its length included, and no body.
        let r = get(addr, "HEAD", "/json");
        assert!(r.contains("\r\nContent-Length: 27\r\n"), "{io:?}: {r}");
        assert!(r.ends_with("\r\n\r\n"), "{io:?}: {r}");

        let r = get(addr, "GET", "/small");
        assert!(r.starts_with("HTTP/1.1 500 "), "{io:?}: {r}");
        assert!(!r.contains("message"), "{io:?}: {r}");

        let r = get(addr, "GET", "/huge");
        assert!(
            r.starts_with("HTTP/1.1 500 "),
            "{io:?}: {}",
            &r[..r.len().min(200)]
        );
        assert!(r.len() < 1024, "{io:?}: {} bytes", r.len());

        let stats = server.stop().unwrap().stats;
        assert_eq!(stats.service_errors, 2, "{io:?}");
    }
}
