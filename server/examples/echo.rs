//! A streaming echo: `POST` any body (Content-Length or chunked) and it comes back as it
//! arrives, piece by piece, in constant memory. `cargo run --release --example echo`, then
//! `curl -T big.iso http://127.0.0.1:8080/ -o copy.iso`.
use bufslab_http::{BodyFraming, KnownHeader, Request};
use bufslab_server::{Config, Exchange, Server, Service, WorkerInfo};

struct Echo;

impl Service for Echo {
    type State = ();

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
        // Ask for the body first: a client waiting for `100 Continue` gets it.
        ex.read_body();
        let r = ex
            .respond(200)
            .header(KnownHeader::ContentType, b"application/octet-stream");
        let _ = match req.framing() {
            BodyFraming::Length(n) => r.stream(n),
            _ => r.chunked(),
        };
    }

    fn data(&mut self, data: &[u8], ex: &mut Exchange<'_>, _: &mut ()) {
        // Each piece fits the output: writing it back never blocks.
        let _ = ex.write(data);
    }

    fn end(&mut self, ex: &mut Exchange<'_>, _: &mut ()) {
        let _ = ex.finish();
    }
}

fn main() -> Result<(), bufslab_server::ServerError> {
    let server = Server::start(Config::default(), |_: WorkerInfo| Echo)?;
    println!("http://{}/", server.local_addr());
    server.join().map(|_| ())
}

#[test]
fn echoes_a_chunked_body_and_a_long_one() {
    use std::io::{Read, Write};
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        ..Config::default()
    };
    let server = Server::start(config, |_: WorkerInfo| Echo).unwrap();
    let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    c.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    )
    .unwrap();
    let body = vec![b'z'; 1 << 20];
    let head = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).unwrap();
    let reader = {
        let mut c = c.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            c.read_to_end(&mut got).unwrap();
            got
        })
    };
    c.write_all(&body).unwrap();
    let got = reader.join().unwrap();
    let text = String::from_utf8_lossy(&got[..200]);
    assert!(text.contains("Transfer-Encoding: chunked\r\n"), "{text}");
    assert!(
        text.contains("\r\n\r\n5\r\nhello\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n"),
        "{text}"
    );
    assert!(got.ends_with(&body[..1000]));
    let split = got.windows(4).rposition(|w| w == b"\r\n\r\n").unwrap();
    assert_eq!(
        got.len() - split - 4,
        body.len(),
        "the long body, byte for byte"
    );
    server.stop().unwrap();
}
