//! TechEmpower's plaintext and json tests on bufslab-server: `cargo run --release --example hello`.
use bufslab_http::{KnownHeader, Request};
use bufslab_server::{Config, Exchange, Server, Service, StaticResponse, WorkerInfo};

struct Hello {
    plaintext: StaticResponse,
}

impl Service for Hello {
    type State = ();

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
        let _ = match req.path() {
            b"/plaintext" => ex.send_static(&self.plaintext),
            b"/json" => ex
                .respond(200)
                .header(KnownHeader::ContentType, b"application/json")
                .body_with(64, |w| {
                    serde_json::to_writer(w, &serde_json::json!({"message": "Hello, World!"}))
                }),
            _ => ex.respond(404).body(b""),
        };
    }
}

fn hello(_: WorkerInfo) -> Hello {
    let text: &[(KnownHeader, &[u8])] = &[(KnownHeader::ContentType, b"text/plain")];
    let plaintext = StaticResponse::new(200, text, b"Hello, World!").expect("a valid response");
    Hello { plaintext }
}

fn main() -> Result<(), bufslab_server::ServerError> {
    let config = Config {
        server_name: Some("hello"),
        ..Config::default()
    };
    let server = Server::start(config, hello)?;
    println!("http://{}/plaintext", server.local_addr());
    server.join().map(|_| ())
}

#[test]
fn answers_plaintext_and_json() {
    use std::io::{Read, Write};
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        ..Config::default()
    };
    let server = Server::start(config, hello).unwrap();
    let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    c.write_all(b"GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\nGET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut got = String::new();
    c.read_to_string(&mut got).unwrap();
    assert!(
        got.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n")
    );
    assert!(
        got.contains("\r\n\r\nHello, World!HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    );
    assert!(
        got.ends_with("Connection: close\r\n\r\n{\"message\":\"Hello, World!\"}"),
        "{got}"
    );
    server.stop().unwrap();
}
