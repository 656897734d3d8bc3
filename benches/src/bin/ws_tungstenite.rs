//! A peer WebSocket echo server for the WebSocket load harness (`benches/load/ws.sh`):
//! tokio-tungstenite 0.29, its README's echo server (accept_async, split, forward).
//!
//! `ws_tungstenite [--addr ADDR] [--workers N]`: the server of
//! [`bufslab_benches::WsEchoServer`] with [`WsPeer::Tungstenite`] (its module says how it is
//! written), on its own.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use bufslab_benches::{ws_peer_main, WsPeer};

fn main() -> ExitCode {
    ws_peer_main("ws_tungstenite", WsPeer::Tungstenite)
}
