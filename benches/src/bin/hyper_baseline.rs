//! The hyper 1.x baseline for the wrk load harness (`benches/load/run.sh`, `benches/load/tls.sh`).
//!
//! `hyper_baseline [--addr ADDR | --port N] [--workers N] [--tls-cert FILE --tls-key FILE]`:
//! the server of [`bufslab_benches::HyperServer`] (its module says how it is tuned), on its
//! own; HTTPS over tokio-rustls with both TLS flags.
#![forbid(unsafe_code)]

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;
use std::thread;

use bufslab_benches::{tls_config, HyperServer, ServerArgs};

const USAGE: &str = "\
usage: hyper_baseline [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  --port N         shorthand for --addr 127.0.0.1:N
  --workers N      worker threads, each a current-thread tokio runtime with its own
                   SO_REUSEPORT listener (default: cores)
  --tls-cert FILE  serve HTTPS (tokio-rustls; rustls 0.23, ring, TLS 1.3, ALPN http/1.1)
                   with this PEM certificate chain, leaf first
  --tls-key FILE   ...and this PEM private key (both or neither)
  -h, --help       this text

Endpoints as server-demo's: GET /plaintext, GET /json, POST /echo (HEAD of the GET routes);
405 with Allow for a known path and the wrong method, 404 otherwise.
";

/// The command line: the peer servers' flags and the certificate and key for HTTPS.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    server: ServerArgs,
    tls: Option<(PathBuf, PathBuf)>,
}

fn parse(args: impl IntoIterator<Item = String>, workers: usize) -> Result<Option<Args>, String> {
    let (mut cert, mut key) = (None, None);
    let server = ServerArgs::parse_with(args, workers, |f| {
        match f.name() {
            "--tls-cert" => cert = Some(PathBuf::from(f.value()?)),
            "--tls-key" => key = Some(PathBuf::from(f.value()?)),
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    // `--help` wins over a flag missing its pair.
    let Some(server) = server else {
        return Ok(None);
    };
    let tls = match (cert, key) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => return Err("`--tls-cert` and `--tls-key` go together".to_owned()),
    };
    Ok(Some(Args { server, tls }))
}

fn main() -> ExitCode {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    bufslab_benches::serve_main("hyper_baseline", USAGE, |args| parse(args, cores), run)
}

fn run(args: &Args) -> io::Result<()> {
    let ServerArgs { addr, workers } = args.server;
    let (server, scheme) = match &args.tls {
        Some((cert, key)) => (
            HyperServer::start_tls(addr, workers, tls_config(cert, key)?)?,
            "https",
        ),
        None => (HyperServer::start(addr, workers)?, "http"),
    };
    println!(
        "hyper_baseline listening on {scheme}://{} with {workers} worker(s)",
        server.local_addr(),
    );
    server.wait()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(line: &str) -> Result<Option<Args>, String> {
        parse(line.split_whitespace().map(str::to_owned), 1)
    }

    #[test]
    fn tls_flags() {
        let args = parse_line("--port 0 --tls-cert c.pem --tls-key=k.pem")
            .unwrap()
            .unwrap();
        assert_eq!(args.server.addr.port(), 0);
        assert_eq!(args.tls, Some(("c.pem".into(), "k.pem".into())));
        assert_eq!(parse_line("--workers 2").unwrap().unwrap().tls, None);
        assert_eq!(parse_line("--tls-cert c.pem --help"), Ok(None));
    }

    #[test]
    fn tls_flags_go_together() {
        let both = Err("`--tls-cert` and `--tls-key` go together".to_owned());
        assert_eq!(parse_line("--tls-cert c.pem"), both);
        assert_eq!(parse_line("--tls-key k.pem"), both);
        assert_eq!(
            parse_line("--tls-key"),
            Err("flag `--tls-key` needs a value".into())
        );
        assert_eq!(parse_line("--tls"), Err("unknown flag `--tls`".into()));
    }
}
