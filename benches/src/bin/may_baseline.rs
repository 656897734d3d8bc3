//! The second baseline of the load harness (`benches/load/run.sh`): may-minihttp, the
//! coroutine-based server behind TechEmpower's fastest Rust plaintext entries, serving the
//! endpoints the other two servers serve, set up as its own TechEmpower example is.
//!
//! `may_baseline [--addr ADDR] [--workers N]`: `--workers` is may's worker-thread count. Prints
//! `listening on http://ADDR` once bound. may-minihttp binds the address itself and does not
//! report the port it got, so port 0 is resolved first with a throwaway listener (the port is
//! free again for the moment between the two binds).
#![forbid(unsafe_code)]

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::num::NonZeroUsize;
use std::process::ExitCode;

use bytes::BufMut;
use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};
use serde::Serialize;

const USAGE: &str = "\
usage: may_baseline [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  --workers N      may worker threads (default 1)
  -h, --help       this text

Endpoints: GET /plaintext, GET /json; 404 otherwise (may-minihttp's own router style).
";

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

struct Service;

impl HttpService for Service {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        match req.path() {
            "/plaintext" => rsp.header("Content-Type: text/plain").body("Hello, World!"),
            "/json" => {
                rsp.header("Content-Type: application/json");
                let msg = Message {
                    message: "Hello, World!",
                };
                serde_json::to_writer(rsp.body_mut().writer(), &msg)?;
            }
            _ => {
                rsp.status_code(404, "Not Found");
            }
        }
        Ok(())
    }
}

struct Factory;

impl HttpServiceFactory for Factory {
    type Service = Service;

    fn new_service(&self, _: usize) -> Service {
        Service
    }
}

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
            "--workers" => workers = f.parse::<NonZeroUsize>("a positive number")?.get(),
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    Ok(parsed.map(|()| Args { addr, workers }))
}

fn run(args: &Args) -> io::Result<()> {
    let addr = TcpListener::bind(args.addr)?.local_addr()?;
    may::config().set_workers(args.workers);
    let server = Factory.start(addr)?;
    println!("listening on http://{addr}");
    server
        .join()
        .map_err(|_| io::Error::other("the server coroutine panicked"))
}

fn main() -> ExitCode {
    bufslab_benches::serve_main("may_baseline", USAGE, parse_args, run)
}
