//! The hyper 1.x baseline for the wrk load harness (`benches/load/run.sh`).
//!
//! `hyper_baseline [--addr ADDR | --port N] [--workers N]`: the server of
//! [`bufslab_benches::HyperServer`] (its module says how it is tuned), on its own.
#![forbid(unsafe_code)]

use std::io;
use std::process::ExitCode;
use std::thread;

use bufslab_benches::{HyperServer, ServerArgs};

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

fn main() -> ExitCode {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    bufslab_benches::serve_main(
        "hyper_baseline",
        USAGE,
        |args| ServerArgs::parse(args, cores),
        run,
    )
}

fn run(args: &ServerArgs) -> io::Result<()> {
    let server = HyperServer::start(args.addr, args.workers)?;
    println!(
        "hyper_baseline listening on http://{} with {} worker(s)",
        server.local_addr(),
        args.workers
    );
    server.wait()
}
