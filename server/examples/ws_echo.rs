//! A WebSocket echo server: every message goes back as it came, text or binary, whole or (for
//! messages over 16 KiB) fragment by fragment as it arrives, in constant memory and with no
//! allocation per message. Pings are answered, violations closed with their code.
//!
//! ```sh
//! cargo run --release -p bufslab-server --example ws_echo   # ws://127.0.0.1:8080/ws
//! python3 -m websockets ws://127.0.0.1:8080/ws
//! ```

use bufslab_http::Request;
use bufslab_server::ws::{Message, WebSocket, WsConfig, WsHandler, WsSender};
use bufslab_server::{Config, Exchange, Server, Service, UpgradeEvent, Upgraded, WorkerInfo};

struct Echo;

impl WsHandler for Echo {
    fn message(&mut self, msg: Message<'_>, ws: &mut WsSender<'_, '_>) {
        // Each piece is delivered only while the output is empty, so it fits.
        if ws
            .fragment(msg.kind, msg.data, msg.first, msg.last)
            .is_err()
        {
            let _ = ws.close(bufslab_server::ws::CloseCode::INTERNAL_ERROR, "");
        }
    }
}

impl Service for Echo {
    type State = Option<WebSocket>;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, ws: &mut Self::State) {
        if req.path() == b"/ws" {
            // Writes the 101, or the 400/405/426 of a bad handshake.
            *ws = WebSocket::accept(req, ex, WsConfig::default()).ok();
        } else {
            let _ = ex.respond(404).body(b"");
        }
    }

    fn upgraded(&mut self, ev: UpgradeEvent<'_>, up: &mut Upgraded<'_>, ws: &mut Self::State) {
        WebSocket::on_upgraded(ws, ev, up, self);
    }

    fn upgrade_ended(&mut self, ws: &mut Self::State) {
        WebSocket::on_ended(ws, self);
    }
}

/// `[PORT] [--addr IP:PORT] [--workers N] [--io auto|epoll|uring]`: the load harness
/// (`benches/load/ws.sh`) starts it with `--addr` and `--workers`, as it starts the peers, and
/// `--io` (server-demo's flag) picks the driver, for measuring each.
fn main() -> Result<(), bufslab_server::ServerError> {
    let mut config = Config::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => match args.next().and_then(|a| a.parse().ok()) {
                Some(addr) => config.addr = addr,
                None => usage(),
            },
            "--workers" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => config.workers = n,
                None => usage(),
            },
            "--io" => match args.next().and_then(|m| m.parse().ok()) {
                Some(io) => config.io = io,
                None => usage(),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            port => match port.parse() {
                Ok(port) => config.addr.set_port(port),
                Err(_) => usage(),
            },
        }
    }
    let server = Server::start(config, |_: WorkerInfo| Echo)?;
    let addr = server.local_addr();
    println!("listening on http://{addr}: the echo is at ws://{addr}/ws");
    server.join().map(|_| ())
}

const USAGE: &str = "usage: ws_echo [PORT] [--addr IP:PORT] [--workers N] [--io auto|epoll|uring]";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;

    #[test]
    fn echoes_a_masked_frame() {
        let config = Config {
            addr: "127.0.0.1:0".parse().unwrap(),
            workers: 1,
            io: bufslab_server::IoMode::Epoll,
            ..Config::default()
        };
        let server = Server::start(config, |_: WorkerInfo| Echo).unwrap();
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        s.write_all(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .unwrap();
        // "Hi", masked with 1, 2, 3, 4, right behind the head.
        s.write_all(&[0x81, 0x82, 1, 2, 3, 4, b'H' ^ 1, b'i' ^ 2])
            .unwrap();
        let want: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\
            Upgrade: websocket\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\x81\x02Hi";
        let mut got = vec![0u8; want.len()];
        s.read_exact(&mut got).unwrap();
        assert_eq!(got, want);
        drop(s);
        server.stop().unwrap();
    }
}
