//! Holds N idle keep-alive connections open on a server, for the RSS-per-connection figure of
//! the wrk load harness (`benches/load/run.sh`).
//!
//! `idle_conns [--addr ADDR] [--conns N] [--path PATH] [--hold-secs S] [--tls --ca FILE]`:
//! opens N connections one after another, sends one `GET PATH` on each and reads its whole
//! response (so every connection has served a request and is now idle in keep-alive), prints
//! one line starting with `ready`, then keeps them all open until stdin reaches end of file or
//! the process is killed, or, with `--hold-secs`, until those seconds pass or it is killed
//! (stdin unwatched, so a harness may start it with `</dev/null`). Exits 1 if any connection
//! fails or gets a non-200 answer.
//!
//! With `--tls` every connection is HTTPS: a full TLS 1.3 handshake (rustls with ring, no
//! session resumption, no ALPN, the server's certificate checked against `--ca` for
//! `--server-name`), then the one request, so each idle connection on the server holds the
//! state of an established TLS session (`benches/load/tls_idle.sh`).
//!
//! Opening them one at a time is deliberate: the server never sees more than one connection
//! (or handshake) in flight, so its accept batching, buffer pool high-water mark, handshake
//! limit and the like stay at their idle level and the RSS delta is the cost of the idle
//! connections alone.
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

const USAGE: &str = "\
usage: idle_conns [flags]

  --addr ADDR       server address (default 127.0.0.1:8080)
  --conns N         connections to open (default 10000)
  --path PATH       request target sent once on each (default /plaintext)
  --hold-secs S     hold S seconds or until killed, stdin unwatched (default 0: until stdin
                    closes or killed)
  --tls             HTTPS: a full TLS 1.3 handshake on each connection before its request
  --ca FILE         PEM certificates to trust for --tls (required with it)
  --server-name N   name the server's certificate is checked for, sent as SNI (default localhost)
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
    tls: bool,
    ca: Option<String>,
    server_name: String,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut out = Args {
        addr: ([127, 0, 0, 1], 8080).into(),
        conns: 10_000,
        path: "/plaintext".to_owned(),
        hold: None,
        tls: false,
        ca: None,
        server_name: "localhost".to_owned(),
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
            "--tls" => out.tls = true,
            "--ca" => out.ca = Some(f.value()?),
            "--server-name" => out.server_name = f.value()?,
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    if parsed.is_some() && out.tls != out.ca.is_some() {
        return Err("--tls and --ca FILE go together".to_owned());
    }
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
    let tls = match &args.ca {
        None => None,
        Some(ca) => match tls_client(ca, &args.server_name) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("idle_conns: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let started = Instant::now();
    let mut conns = Vec::with_capacity(args.conns);
    for i in 0..args.conns {
        match open_one(args.addr, request.as_bytes(), tls.as_ref()) {
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

/// Waits for `limit` to pass, or without one for stdin to close. A harness starts this with
/// stdin at `/dev/null` and `--hold-secs`: were stdin watched then, the connections would
/// close at once, before the server's memory is read.
fn hold(limit: Option<Duration>) {
    if let Some(d) = limit {
        thread::sleep(d);
        return;
    }
    // Anything typed is ignored; only end of file (or an error) ends the hold.
    let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
}

/// The client side of `--tls`: the configuration and the name every connection checks.
struct Tls {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

/// A TLS 1.3 client with ring trusting the certificates in `ca`, without session resumption
/// (every connection makes a full handshake, as a fresh client would).
fn tls_client(ca: &str, server_name: &str) -> Result<Tls, String> {
    let roots = bufslab_benches::root_store(ca.as_ref()).map_err(|e| format!("--ca {e}"))?;
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| format!("TLS configuration: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.resumption = rustls::client::Resumption::disabled();
    let name = ServerName::try_from(server_name.to_owned())
        .map_err(|e| format!("--server-name {server_name}: {e}"))?;
    Ok(Tls {
        config: Arc::new(config),
        name,
    })
}

/// One idle connection, kept open only to be dropped at the end.
enum Conn {
    Plain(#[allow(dead_code)] TcpStream),
    Tls(#[allow(dead_code)] Box<StreamOwned<ClientConnection, TcpStream>>),
}

fn open_one(addr: SocketAddr, request: &[u8], tls: Option<&Tls>) -> io::Result<Conn> {
    let mut s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    s.set_nodelay(true)?;
    let Some(tls) = tls else {
        s.write_all(request)?;
        read_response(&mut s)?;
        return Ok(Conn::Plain(s));
    };
    let conn = ClientConnection::new(tls.config.clone(), tls.name.clone())
        .map_err(|e| io::Error::other(format!("TLS: {e}")))?;
    let mut s = StreamOwned::new(conn, s);
    // The handshake first, so that a failing one is named as such.
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock)?;
    }
    s.write_all(request)?;
    s.flush()?;
    read_response(&mut s)?;
    Ok(Conn::Tls(Box::new(s)))
}

/// Reads one whole response framed by Content-Length and checks it is a 200.
fn read_response(s: &mut impl Read) -> io::Result<()> {
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
