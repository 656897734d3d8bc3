//! Holds N idle keep-alive connections open on a server, for the RSS-per-connection figure of
//! the wrk load harness (`benches/load/run.sh`).
//!
//! `idle_conns [--addr ADDR] [--conns N] [--path PATH] [--hold-secs S]`: opens N connections
//! one after another, sends one `GET PATH` on each and reads its whole response (so every
//! connection has served a request and is now idle in keep-alive), prints one line starting
//! with `ready`, then keeps them all open until stdin reaches end of file, the process is
//! killed, or `--hold-secs` pass. Exits 1 if any connection fails or gets a non-200 answer.
//!
//! Opening them one at a time is deliberate: the server never sees more than one connection
//! in flight, so its accept batching, buffer pool high-water mark and the like stay at their
//! idle level and the RSS delta is the cost of the idle connections alone.
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: idle_conns [flags]

  --addr ADDR       server address (default 127.0.0.1:8080)
  --conns N         connections to open (default 10000)
  --path PATH       request target sent once on each (default /plaintext)
  --hold-secs S     give up holding after S seconds (default 0: until stdin closes or killed)
  -h, --help        this text

Prints `ready: N connections idle after one request each` once every response is read, then
holds the connections open. Needs `ulimit -n` above N.
";

/// A response head larger than this is not one of the servers under test.
const MAX_RESPONSE: usize = 16 * 1024;

const IO_TIMEOUT: Duration = Duration::from_secs(10);

struct Args {
    addr: SocketAddr,
    conns: usize,
    path: String,
    hold: Option<Duration>,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut out = Args {
        addr: ([127, 0, 0, 1], 8080).into(),
        conns: 10_000,
        path: "/plaintext".to_owned(),
        hold: None,
    };
    let parsed = bufslab_benches::parse_flags(args, |f| {
        match f.name() {
            "--addr" => out.addr = f.parse("an address like 127.0.0.1:8080")?,
            "--conns" => out.conns = f.parse("a number")?,
            "--path" => {
                let v = f.value()?;
                if !v.starts_with('/') || v.contains(char::is_whitespace) {
                    return Err(f.bad(&v, "a path starting with /"));
                }
                out.path = v;
            }
            "--hold-secs" => {
                let secs: u64 = f.parse("a number of seconds")?;
                out.hold = (secs > 0).then(|| Duration::from_secs(secs));
            }
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    Ok(parsed.map(|()| out))
}

fn main() -> ExitCode {
    let args = match bufslab_benches::args_or_exit(
        "idle_conns",
        USAGE,
        parse_args(std::env::args().skip(1)),
    ) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let request = format!("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", args.path, args.addr);
    let started = Instant::now();
    let mut conns = Vec::with_capacity(args.conns);
    for i in 0..args.conns {
        match open_one(args.addr, request.as_bytes()) {
            Ok(c) => conns.push(c),
            Err(e) => {
                eprintln!("idle_conns: connection {} of {}: {e}", i + 1, args.conns);
                if e.raw_os_error() == Some(24) {
                    eprintln!(
                        "idle_conns: out of file descriptors: raise `ulimit -n` above {}",
                        args.conns
                    );
                }
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "ready: {} connections idle after one request each (opened in {:.2} s)",
        conns.len(),
        started.elapsed().as_secs_f64()
    );
    if io::stdout().flush().is_err() {
        return ExitCode::FAILURE;
    }
    hold(args.hold);
    drop(conns);
    ExitCode::SUCCESS
}

/// Waits for stdin to close or `limit` to pass, whichever comes first.
fn hold(limit: Option<Duration>) {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        // Anything typed is ignored; only end of file (or an error) ends the hold.
        let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
        let _ = tx.send(());
    });
    match limit {
        Some(d) => {
            let _ = rx.recv_timeout(d);
        }
        None => {
            let _ = rx.recv();
        }
    }
}

fn open_one(addr: SocketAddr, request: &[u8]) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    s.set_nodelay(true)?;
    s.write_all(request)?;
    read_response(&mut s)?;
    Ok(s)
}

/// Reads one whole response framed by Content-Length and checks it is a 200.
fn read_response(s: &mut TcpStream) -> io::Result<()> {
    let mut buf = [0u8; MAX_RESPONSE];
    let mut have = 0;
    let total = loop {
        if have == buf.len() {
            return Err(invalid("response head too large"));
        }
        let n = s.read(&mut buf[have..])?;
        if n == 0 {
            return Err(invalid("server closed the connection before answering"));
        }
        have += n;
        let parsed = bufslab_benches::response_len(&buf[..have])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if let Some(total) = parsed {
            break total;
        }
    };
    let mut body_left = total.saturating_sub(have);
    while body_left > 0 {
        let n = s.read(&mut buf[..body_left.min(MAX_RESPONSE)])?;
        if n == 0 {
            return Err(invalid("server closed the connection mid-body"));
        }
        body_left -= n;
    }
    Ok(())
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}
