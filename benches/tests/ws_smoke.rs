//! The WebSocket load harness in miniature: each peer echo server on port 0 driven by the load
//! generator for a fraction of a second, in process and as the binaries `ws.sh` runs, so a
//! peer or ws_load that stops echoing correctly fails the suite.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bufslab_benches::{run_load, LoadConfig, WsClient, WsEchoServer, WsPeer};

fn quick(addr: std::net::SocketAddr, size: usize, window: usize, text: bool) -> LoadConfig {
    LoadConfig {
        connections: 4,
        size,
        window,
        text,
        threads: 2,
        duration: Duration::from_millis(150),
        ..LoadConfig::new(addr)
    }
}

#[test]
fn every_peer_echoes_under_load_in_process() {
    for peer in WsPeer::ALL {
        let server = WsEchoServer::start(peer, ([127, 0, 0, 1], 0).into(), 1).expect("start");
        let addr = server.local_addr();
        // 32 B (7-bit length), 4 KiB (16-bit) and 70,000 B (64-bit), binary and text, one and
        // several in flight.
        for (size, window, text) in [(32, 1, false), (4096, 4, true), (70_000, 2, false)] {
            let report = run_load(&quick(addr, size, window, text))
                .unwrap_or_else(|e| panic!("{}: {size} B: {e}", peer.name()));
            assert!(report.messages > 0, "{}: {size} B: no echo", peer.name());
            assert!(report.latency(0.5) > Duration::ZERO);
        }
        server.stop().expect("stop");
    }
}

#[test]
fn the_blocking_client_echoes_and_closes() {
    for peer in WsPeer::ALL {
        let server = WsEchoServer::start(peer, ([127, 0, 0, 1], 0).into(), 1).expect("start");
        let mut client = WsClient::new(65536);
        client.connect(server.local_addr(), "/").expect("connect");
        for size in [0, 1, 125, 126, 65535, 65536] {
            let payload: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
            client
                .echo(&payload, size % 2 == 0)
                .unwrap_or_else(|e| panic!("{}: {size} B: {e}", peer.name()));
        }
        client.close().expect("close handshake");
        server.stop().expect("stop");
    }
}

/// Kills the server binary even when an assertion fails.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_binaries_print_their_port_and_echo() {
    for exe in [
        env!("CARGO_BIN_EXE_ws_tungstenite"),
        env!("CARGO_BIN_EXE_ws_fastwebsockets"),
    ] {
        let mut server = Server(
            Command::new(exe)
                .args(["--addr", "127.0.0.1:0", "--workers", "1"])
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn the server"),
        );
        let stdout = server.0.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read");
        // The line ws.sh reads the port from.
        let addr = line
            .split("listening on http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{exe}: no `listening on` line: {line:?}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ws_load"))
            .args(["--addr", addr, "--connections", "3", "--duration", "0.2"])
            .args(["--size", "4K", "--window", "2"])
            .output()
            .expect("run ws_load");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{exe}: ws_load failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("WSRESULT messages="), "{stdout}");
    }
}

#[test]
fn ws_load_refuses_bad_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_ws_load"))
        .args(["--size", "lots"])
        .output()
        .expect("run ws_load");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`lots` is not a size"), "{err}");
}
