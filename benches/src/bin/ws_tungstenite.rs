//! A peer WebSocket echo server for the WebSocket load harness (`benches/load/ws.sh`):
//! tokio-tungstenite 0.29, its README's echo server (accept_async, split, forward).
//!
//! `ws_tungstenite [--addr ADDR] [--workers N]`: the server of
//! [`bufslab_benches::WsEchoServer`] with [`WsPeer::Tungstenite`] (its module says how it is
//! written), on its own.
#![forbid(unsafe_code)]

use std::io;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;

use bufslab_benches::{WsEchoServer, WsPeer};

const USAGE: &str = "\
usage: ws_tungstenite [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  --port N         shorthand for --addr 127.0.0.1:N
  --workers N      worker threads, each a current-thread tokio runtime with its own
                   SO_REUSEPORT listener (default 1)
  -h, --help       this text

Accepts a WebSocket upgrade on any path and echoes every text and binary message; answers
pings, and close frames with a close frame.
";

struct Args {
    addr: SocketAddr,
    workers: usize,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut addr: SocketAddr = ([127, 0, 0, 1], 8080).into();
    let mut workers = 1;
    let parsed = bufslab_benches::parse_flags(args, |f| {
        match f.name() {
            "--addr" => addr = f.parse("an address like 127.0.0.1:8080")?,
            "--port" => addr = ([127, 0, 0, 1], f.parse::<u16>("a port number")?).into(),
            "--workers" => workers = f.parse::<NonZeroUsize>("a positive number")?.get(),
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    Ok(parsed.map(|()| Args { addr, workers }))
}

fn main() -> ExitCode {
    bufslab_benches::serve_main("ws_tungstenite", USAGE, parse_args, run)
}

fn run(args: &Args) -> io::Result<()> {
    let server = WsEchoServer::start(WsPeer::Tungstenite, args.addr, args.workers)?;
    println!(
        "ws_tungstenite listening on http://{} with {} worker(s)",
        server.local_addr(),
        args.workers
    );
    server.wait()
}
