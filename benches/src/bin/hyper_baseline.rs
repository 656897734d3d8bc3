//! The hyper 1.x baseline for the wrk load harness (`benches/load/run.sh`).
//!
//! `hyper_baseline [--addr ADDR | --port N] [--workers N]`: the server of
//! [`bufslab_benches::HyperServer`] (its module says how it is tuned), on its own.
#![forbid(unsafe_code)]

use std::io;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::thread;

use bufslab_benches::HyperServer;

const USAGE: &str = "\
usage: hyper_baseline [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  --port N         shorthand for --addr 127.0.0.1:N
  --workers N      worker threads, each a current-thread tokio runtime with its own
                   SO_REUSEPORT listener (default: cores)
  -h, --help       this text

Endpoints as server-demo's: GET /plaintext, GET /json, POST /echo (HEAD of the GET routes);
405 with Allow for a known path and the wrong method, 404 otherwise.
";

struct Args {
    addr: SocketAddr,
    workers: usize,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut addr: SocketAddr = ([127, 0, 0, 1], 8080).into();
    let mut workers = thread::available_parallelism().map_or(1, |n| n.get());
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
    bufslab_benches::serve_main("hyper_baseline", USAGE, parse_args, run)
}

fn run(args: &Args) -> io::Result<()> {
    let server = HyperServer::start(args.addr, args.workers)?;
    println!(
        "hyper_baseline listening on http://{} with {} worker(s)",
        server.local_addr(),
        args.workers
    );
    server.wait()
}
