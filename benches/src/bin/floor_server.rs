//! The floor of the load harness (`benches/load/run.sh`): the least any server can do per
//! request with the syscalls server-demo makes (an edge-triggered epoll wait shared by the ready
//! connections, one `recv`, one `send`). It answers every request head in what it read with one
//! fixed `200` plaintext response, whatever the path: no parsing, routing, validation, date or
//! pool. Its CPU time per request is what is left when a server's own work is zero, so a
//! server's distance to it is that server's own work.
//!
//! `floor_server [--addr ADDR]`: one thread. Prints `listening on http://ADDR` once bound.
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::process::ExitCode;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

const USAGE: &str = "\
usage: floor_server [flags]

  --addr ADDR      listen address (default 127.0.0.1:8080; port 0: any free port)
  -h, --help       this text

Answers every request head with the same 200 text/plain response, on one thread.
";

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nServer: floor\r\nContent-Type: text/plain\r\n\
Content-Length: 13\r\nDate: Mon, 30 Nov 2026 00:00:00 GMT\r\n\r\nHello, World!";

/// Responses one send may carry: a 16-deep pipelined batch, with room to spare.
const MAX_BATCH: usize = 32;

const LISTENER: Token = Token(usize::MAX);

fn parse(args: impl Iterator<Item = String>) -> Result<Option<SocketAddr>, String> {
    let mut addr: SocketAddr = ([127, 0, 0, 1], 8080).into();
    let parsed = bufslab_benches::parse_flags(args, |f| {
        match f.name() {
            "--addr" => addr = f.parse("an address like 127.0.0.1:8080")?,
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    Ok(parsed.map(|()| addr))
}

fn main() -> ExitCode {
    bufslab_benches::serve_main("floor_server", USAGE, parse, |addr| serve(*addr))
}

fn serve(addr: SocketAddr) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let mut listener = TcpListener::bind(addr)?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    println!("listening on http://{}", listener.local_addr()?);
    let out = RESPONSE.repeat(MAX_BATCH);
    let mut conns: Vec<Option<TcpStream>> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let mut buf = [0u8; 4096];
    loop {
        if let Err(e) = poll.poll(&mut events, None) {
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        for ev in events.iter() {
            if ev.token() == LISTENER {
                accept_all(&poll, &listener, &mut conns)?;
                continue;
            }
            let slot = ev.token().0;
            let Some(Some(sock)) = conns.get_mut(slot) else {
                continue;
            };
            if !serve_conn(sock, &mut buf, &out) {
                if let Some(mut sock) = conns[slot].take() {
                    poll.registry().deregister(&mut sock)?;
                }
            }
        }
    }
}

fn accept_all(
    poll: &Poll,
    listener: &TcpListener,
    conns: &mut Vec<Option<TcpStream>>,
) -> io::Result<()> {
    loop {
        match listener.accept() {
            Ok((mut sock, _)) => {
                sock.set_nodelay(true)?;
                let slot = conns
                    .iter()
                    .position(Option::is_none)
                    .unwrap_or(conns.len());
                poll.registry()
                    .register(&mut sock, Token(slot), Interest::READABLE)?;
                if slot == conns.len() {
                    conns.push(Some(sock));
                } else {
                    conns[slot] = Some(sock);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Reads until the socket is drained (a short read drains it, as in server-demo) and answers
/// each head read with the fixed response; `false` once the connection is done.
fn serve_conn(sock: &mut TcpStream, buf: &mut [u8], out: &[u8]) -> bool {
    loop {
        let n = match sock.read(buf) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        };
        // A head never straddles reads under wrk: each read holds whole requests.
        let heads = memchr::memmem::find_iter(&buf[..n], b"\r\n\r\n").count();
        let reply = &out[..RESPONSE.len() * heads.min(MAX_BATCH)];
        // The reply is far below the socket's send buffer: one send takes it all.
        if !reply.is_empty() && sock.write(reply).is_err() {
            return false;
        }
        if n < buf.len() {
            return true;
        }
    }
}
