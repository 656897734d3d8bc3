//! A peer WebSocket echo server for the WebSocket load harness (`benches/load/ws.sh`):
//! fastwebsockets 0.10 over a hyper 1.x upgrade, its echo_server example.
//!
//! `ws_fastwebsockets [--addr ADDR] [--workers N]`: the server of
//! [`bufslab_benches::WsEchoServer`] with [`WsPeer::FastWebSockets`] (its module says how it is
//! written), on its own.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use bufslab_benches::{ws_peer_main, WsPeer};

fn main() -> ExitCode {
    ws_peer_main("ws_fastwebsockets", WsPeer::FastWebSockets)
}
