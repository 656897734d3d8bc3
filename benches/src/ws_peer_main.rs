//! The command line of the peer WebSocket echo servers (`ws_tungstenite`,
//! `ws_fastwebsockets`): the same flags and the same listening line for each, so that the load
//! harness (`benches/load/ws.sh`) starts them all alike.

use std::io;
use std::process::ExitCode;

use crate::{ServerArgs, WsEchoServer, WsPeer};

/// `main` of the binary `program`, serving `peer`'s echo: `[--addr ADDR] [--port N]
/// [--workers N]`, then `<program> listening on http://ADDR with N worker(s)`.
pub fn ws_peer_main(program: &str, peer: WsPeer) -> ExitCode {
    let usage = format!(
        "\
usage: {program} [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  --port N         shorthand for --addr 127.0.0.1:N
  --workers N      worker threads, each a current-thread tokio runtime with its own
                   SO_REUSEPORT listener (default 1)
  -h, --help       this text

Accepts a WebSocket upgrade on any path and echoes every text and binary message; answers
pings, and close frames with a close frame.
"
    );
    let run = |args: &ServerArgs| -> io::Result<()> {
        let server = WsEchoServer::start(peer, args.addr, args.workers)?;
        println!(
            "{program} listening on http://{} with {} worker(s)",
            server.local_addr(),
            args.workers
        );
        server.wait()
    };
    crate::serve_main(program, &usage, |args| ServerArgs::parse(args, 1), run)
}
