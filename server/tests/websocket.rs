//! WebSocket over an upgraded connection, under each driver: the handshake and its refusals,
//! and, with a real client (Python's `websockets` package, driven by `tests/ws/client.py`),
//! text and binary echo from 0 B to 16 MiB, fragmented messages, pings inside a fragmented
//! message, each protocol violation closed with its code (raw frames: that client sends none),
//! and the close handshake from either side; the client cases again over TLS (`wss://`, a
//! certificate made at run time), where the upgraded connection runs through the TLS layer.
//!
//! Where `python3 -c "import websockets"` fails, the client cases skip, saying so, unless
//! `BUFSLAB_REQUIRE_WEBSOCKETS=1` (then they fail).
#![cfg(feature = "ws")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use bufslab_http::Request;
use bufslab_server::ws::{CloseCode, Message, WebSocket, WsConfig, WsHandler, WsSender};
use bufslab_server::{Exchange, IoMode, Service, TlsConfig, UpgradeEvent, Upgraded, WorkerInfo};

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

/// A directory holding `cert.pem`, a self-signed certificate for `localhost` (the client's CA
/// too), and `key.pem`: made once per test run.
fn pki() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bufslab-server-wss-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        std::fs::write(dir.join("cert.pem"), cert.cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), cert.key_pair.serialize_pem()).unwrap();
        dir
    })
}

/// The echo service over TLS.
fn start_tls(io: IoMode) -> Option<bufslab_server::ServerHandle> {
    let dir = pki();
    let tls = TlsConfig::from_pem_files(&dir.join("cert.pem"), &dir.join("key.pem"))
        .expect("the test certificate loads");
    let config = bufslab_server::Config {
        tls: Some(tls),
        ..client::config(io)
    };
    client::start_with(config, |_: WorkerInfo| Echo)
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

/// Runs `case` of `tests/ws/client.py` against the echo service, over TLS where `tls`.
fn python_case(io: IoMode, case: &str, tls: bool) {
    if !have_websockets() {
        return;
    }
    let Some(server) = (if tls { start_tls(io) } else { start(io) }) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ws/client.py");
    let mut client = Command::new("python3");
    client
        .arg(script)
        .arg(server.local_addr().port().to_string())
        .arg(case);
    if tls {
        client.env("WS_CA", pki().join("cert.pem"));
    }
    let out = client.output().expect("python3 runs");
    server.stop().unwrap();
    assert!(
        out.status.success(),
        "{case} under {io:?}, tls {tls}:\n{}\n{}",
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
        both_drivers!(@driver epoll, Epoll, $($name),*; $($case),*);
        both_drivers!(@driver uring, Uring, $($name),*; $($case),*);
    };
    (@driver $m:ident, $io:ident, $($name:ident),*; $($case:ident),*) => {
        mod $m {
            use bufslab_server::IoMode;
            $(#[test] fn $name() { super::$name(IoMode::$io); })*
            $(#[test] fn $case() { super::python_case(IoMode::$io, stringify!($case), false); })*
            /// The same client cases over TLS.
            mod tls {
                use bufslab_server::IoMode;
                $(#[test] fn $case() { super::super::python_case(IoMode::$io, stringify!($case), true); })*
            }
        }
    };
}

both_drivers!(
    rust: handshake_refusals, shutdown_says_going_away;
    python: echo_sizes, fragmented, ping_in_fragmented_message, one_block, violations,
        close_from_client,
        close_from_server,
);
