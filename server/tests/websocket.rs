//! WebSocket over an upgraded connection, under each driver: the handshake and its refusals,
//! and, with a real client (Python's `websockets` package, driven by `tests/ws/client.py`),
//! text and binary echo from 0 B to 16 MiB, fragmented messages, pings inside a fragmented
//! message, each protocol violation closed with its code (raw frames: that client sends none),
//! and the close handshake from either side.
//!
//! Where `python3 -c "import websockets"` fails, the client cases skip, saying so, unless
//! `BUFSLAB_REQUIRE_WEBSOCKETS=1` (then they fail).
#![cfg(feature = "ws")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bufslab_http::Request;
use bufslab_server::ws::{CloseCode, Message, WebSocket, WsConfig, WsHandler, WsSender};
use bufslab_server::{Exchange, IoMode, Service, UpgradeEvent, Upgraded, WorkerInfo};

#[path = "support/client.rs"]
mod client;

struct Echo;

impl WsHandler for Echo {
    fn message(&mut self, msg: Message<'_>, ws: &mut WsSender<'_, '_>) {
        if msg.text() == Some("please close") {
            let _ = ws.close(CloseCode::new(4001), "asked");
            return;
        }
        ws.fragment(msg.kind, msg.data, msg.first, msg.last)
            .expect("a delivery has room for its echo");
    }
}

impl Service for Echo {
    type State = Option<WebSocket>;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, ws: &mut Self::State) {
        *ws = WebSocket::accept(req, ex, WsConfig::default()).ok();
    }

    fn upgraded(&mut self, ev: UpgradeEvent<'_>, up: &mut Upgraded<'_>, ws: &mut Self::State) {
        WebSocket::on_upgraded(ws, ev, up, self);
    }

    fn upgrade_ended(&mut self, ws: &mut Self::State) {
        WebSocket::on_ended(ws, self);
    }
}

fn start(io: IoMode) -> Option<bufslab_server::ServerHandle> {
    client::start_under(io, |_: WorkerInfo| Echo)
}

/// Whether the Python client can run; `false` (said on stderr) skips, unless
/// `BUFSLAB_REQUIRE_WEBSOCKETS=1`.
fn have_websockets() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import websockets"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("BUFSLAB_REQUIRE_WEBSOCKETS").as_deref() != Ok("1"),
            "python3 -c 'import websockets' failed, but BUFSLAB_REQUIRE_WEBSOCKETS=1 requires it"
        );
        let _ = writeln!(
            std::io::stderr(),
            "websocket client cases skipped: python3 -c 'import websockets' failed (pip install websockets)"
        );
    }
    ok
}

fn python_case(io: IoMode, case: &str) {
    if !have_websockets() {
        return;
    }
    let Some(server) = start(io) else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ws/client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(server.local_addr().port().to_string())
        .arg(case)
        .output()
        .expect("python3 runs");
    server.stop().unwrap();
    assert!(
        out.status.success(),
        "{case} under {io:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

fn handshake(path_and_headers: &str) -> String {
    format!("GET {path_and_headers}\r\n\r\n")
}

fn answer(io: IoMode, req: &str) -> Option<String> {
    let server = start(io)?;
    let mut s = TcpStream::connect(server.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut got = vec![0u8; 4096];
    let n = s.read(&mut got).unwrap();
    drop(s);
    server.stop().unwrap();
    Some(String::from_utf8_lossy(&got[..n]).into_owned())
}

fn handshake_refusals(io: IoMode) {
    let base = "/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket";
    let cases = [
        (
            handshake(&format!(
                "{base}\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 8"
            )),
            "HTTP/1.1 426 ",
            &[
                "Sec-WebSocket-Version: 13",
                "\r\nUpgrade: websocket\r\n",
                "\r\nConnection: upgrade\r\n",
            ][..],
        ),
        (
            handshake(&format!(
                "{base}\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13"
            )),
            "HTTP/1.1 400 ",
            &[],
        ),
        (
            handshake(&format!("{base}\r\nSec-WebSocket-Version: 13")),
            "HTTP/1.1 400 ",
            &[],
        ),
        (
            handshake(&format!(
                "/ws HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13"
            )),
            "HTTP/1.1 400 ",
            &[],
        ),
        (
            format!("POST {base}\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"),
            "HTTP/1.1 405 ",
            &["Allow: GET"],
        ),
    ];
    for (req, status, headers) in cases {
        let Some(got) = answer(io, &req) else { return };
        assert!(got.starts_with(status), "{req:?} got {got:?}");
        for h in headers {
            assert!(got.contains(h), "{req:?} got {got:?}");
        }
        assert!(!got.contains("Sec-WebSocket-Accept"), "{got:?}");
    }
    // And the good one.
    let req = handshake(&format!(
        "{base}\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13"
    ));
    let Some(got) = answer(io, &req) else { return };
    assert_eq!(
        got,
        "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
    );
}

fn shutdown_says_going_away(io: IoMode) {
    let Some(server) = start(io) else { return };
    let mut s = TcpStream::connect(server.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let req = handshake(&format!(
        "/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13"
    ));
    s.write_all(req.as_bytes()).unwrap();
    let mut head = vec![0u8; 129];
    s.read_exact(&mut head).unwrap();
    assert!(
        head.ends_with(b"\r\n\r\n"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    let stopping = std::thread::spawn(move || server.stop());
    let mut close = Vec::new();
    s.read_to_end(&mut close).unwrap();
    assert_eq!(close, [0x88, 0x02, 0x03, 0xe9]); // 1001 Going Away
    drop(s);
    stopping.join().unwrap().unwrap();
}

macro_rules! both_drivers {
    (rust: $($name:ident),*; python: $($case:ident),* $(,)?) => {
        mod epoll {
            $(#[test] fn $name() { super::$name(bufslab_server::IoMode::Epoll); })*
            $(#[test] fn $case() { super::python_case(bufslab_server::IoMode::Epoll, stringify!($case)); })*
        }
        mod uring {
            $(#[test] fn $name() { super::$name(bufslab_server::IoMode::Uring); })*
            $(#[test] fn $case() { super::python_case(bufslab_server::IoMode::Uring, stringify!($case)); })*
        }
    };
}

both_drivers!(
    rust: handshake_refusals, shutdown_says_going_away;
    python: echo_sizes, fragmented, ping_in_fragmented_message, one_block, violations,
        close_from_client,
        close_from_server,
);
