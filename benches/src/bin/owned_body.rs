//! A value of `--size` bytes kept in a block of the engine's pool, answered two ways on one
//! server so that their cost per request can be compared side by side (callgrind's
//! instructions per request, BENCHMARKS.md): `GET /owned` hands the value to the response by
//! reference (`Response::body_owned`, sent vectored: the bytes are never copied in user space),
//! `GET /copied` copies it into the output blocks (`Response::body`).
//!
//! `owned_body [--addr ADDR] [--size BYTES] [--io epoll|uring]`: one worker. Prints
//! `listening on http://ADDR` once bound.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use bufslab::PoolBytes;
use bufslab_http::{KnownHeader, Request};
use bufslab_server::{Config, Exchange, IoMode, Server, Service, WorkerInfo};
use bytes::BufMut;

const USAGE: &str = "\
usage: owned_body [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  --size BYTES     the value's length (default 16384; at most 32768)
  --io MODE        epoll or uring (default epoll)
  -h, --help       this text

GET /owned sends the value by reference, GET /copied copies it into the output.
";

struct Values {
    size: usize,
    /// Rented from the engine's pool at the first request, then frozen.
    value: Option<PoolBytes>,
}

impl Service for Values {
    type State = ();

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, (): &mut ()) {
        let size = self.size;
        let Some(value) = self.value.as_ref().cloned().or_else(|| {
            let mut b = ex.rent(size)?;
            b.put_bytes(b'v', size);
            Some(self.value.insert(b.freeze()).clone())
        }) else {
            let _ = ex.respond(503).body(b"");
            return;
        };
        let r = ex
            .respond(200)
            .header(KnownHeader::ContentType, b"application/octet-stream");
        let _ = match req.path() {
            b"/owned" => r.body_owned(value),
            b"/copied" => r.body(&value),
            _ => ex.respond(404).body(b""),
        };
    }
}

fn main() -> ExitCode {
    let mut config = Config {
        workers: 1,
        io: IoMode::Epoll,
        ..Config::default()
    };
    let mut size = 16 * 1024;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = match flag.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => args.next(),
        };
        let parsed = match (flag.as_str(), value) {
            ("--addr", Some(v)) => v.parse().map(|a| config.addr = a).is_ok(),
            ("--size", Some(v)) => v.parse().map(|n| size = n).is_ok(),
            ("--io", Some(v)) => v.parse().map(|io| config.io = io).is_ok(),
            _ => false,
        };
        if !parsed {
            eprint!("owned_body: bad flag {flag}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if size == 0 || size > config.whole_body_limit() {
        eprintln!(
            "owned_body: --size must be 1 ..= {}",
            config.whole_body_limit()
        );
        return ExitCode::from(2);
    }
    let server = match Server::start(config, move |_: WorkerInfo| Values { size, value: None }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("owned_body: {e}");
            return ExitCode::from(2);
        }
    };
    println!("listening on http://{}", server.local_addr());
    match server.join() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("owned_body: {e}");
            ExitCode::FAILURE
        }
    }
}
