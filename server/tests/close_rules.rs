//! `Exchange::close` from each of the service's calls: the response it is called for goes out
//! whole, then the connection closes, and nothing pipelined behind that request is answered.
//! Under each driver.
//!
//! Each case sends its request and a pipelined `GET /after` in one write, then reads: exactly
//! one response, then the end of the stream.

use std::io::Write;
use std::net::TcpStream;
use std::sync::mpsc;

use bufslab_http::Request;
use bufslab_server::{Deferred, Exchange, IoMode, Mailbox, Service, WorkerInfo};

#[path = "support/client.rs"]
mod client;
#[path = "support/responses.rs"]
mod responses;

use client::start_under;
use responses::{Cut, Wire};

/// Which call closes: what the request's path names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Where {
    #[default]
    Head,
    Data,
    End,
    Resume,
    Fill,
}

struct Closer {
    /// The thread that answers deferred exchanges.
    answerer: mpsc::Sender<Deferred>,
}

impl Closer {
    fn make(info: WorkerInfo) -> Closer {
        let mailbox: Mailbox<Where> = info.mailbox().expect("the state is Where");
        let (answerer, tokens) = mpsc::channel::<Deferred>();
        // Answers from a thread of its own, as a thread pool would; it ends with the service.
        std::thread::spawn(move || {
            for token in tokens {
                mailbox
                    .answer(token, Where::Resume)
                    .expect("one answer per connection");
            }
        });
        Closer { answerer }
    }
}

/// The body of the response to `/<name>`: the name itself.
fn answer(ex: &mut Exchange<'_>, name: &[u8]) {
    let _ = ex.respond(200).body(name);
}

impl Service for Closer {
    type State = Where;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, at: &mut Where) {
        match req.path() {
            b"/head" => {
                ex.close();
                answer(ex, b"head");
            }
            b"/data" => {
                *at = Where::Data;
                ex.read_body();
            }
            b"/end" => {
                *at = Where::End;
                ex.read_body();
            }
            b"/resume" => {
                if let Ok(token) = ex.defer() {
                    self.answerer.send(token).expect("the answerer lives");
                }
            }
            b"/fill" => {
                *at = Where::Fill;
                // The head goes out before `fill` is called: its close cannot be announced
                // in the head, only done.
                if ex.respond(200).stream(4).is_ok() {
                    let _ = ex.pull();
                }
            }
            b"/after" => answer(ex, b"after"),
            _ => {
                let _ = ex.respond(404).body(b"");
            }
        }
    }

    fn data(&mut self, _: &[u8], ex: &mut Exchange<'_>, at: &mut Where) {
        if *at == Where::Data {
            ex.close();
        }
    }

    fn end(&mut self, ex: &mut Exchange<'_>, at: &mut Where) {
        match at {
            Where::Data => answer(ex, b"data"),
            Where::End => {
                ex.close();
                answer(ex, b"end");
            }
            _ => {}
        }
    }

    fn resume(&mut self, ex: &mut Exchange<'_>, _: &mut Where) {
        ex.close();
        answer(ex, b"resume");
    }

    fn fill(&mut self, ex: &mut Exchange<'_>, _: &mut Where) {
        ex.close();
        let _ = ex.write(b"fill");
    }
}

/// Sends `request` and a pipelined `GET /after` in one write, under each driver: the answer
/// to `request` must be a `200` with `body`, saying `Connection: close` when `announced`, and
/// be the last thing on the connection.
fn closes_after(request: &str, body: &str, announced: bool) {
    let mut failures = Vec::new();
    for io in [IoMode::Epoll, IoMode::Uring] {
        let Some(server) = start_under(io, Closer::make) else {
            continue;
        };
        if let Err(e) = one(server.local_addr(), request, body, announced) {
            failures.push(format!("{io:?}: {e}"));
        }
        server.stop().unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn one(
    addr: std::net::SocketAddr,
    request: &str,
    body: &str,
    announced: bool,
) -> Result<(), String> {
    let mut wire = Wire::new(TcpStream::connect(addr).unwrap());
    let both = format!("{request}GET /after HTTP/1.1\r\nHost: t\r\n\r\n");
    wire.sock.write_all(both.as_bytes()).unwrap();
    let mut whole = || 64 * 1024;
    let first = wire
        .reply(&mut whole)
        .map_err(|cut| format!("no answer to the request: {cut}"))?;
    let head = first.head.trim_end();
    if first.status != 200 || first.body != body.as_bytes() {
        return Err(format!(
            "{head}\n\n{:?}: not the answer",
            String::from_utf8_lossy(&first.body)
        ));
    }
    if announced && !first.says_close() {
        return Err(format!(
            "{head}\n\nthe answer does not say Connection: close"
        ));
    }
    match wire.reply(&mut whole) {
        Err(Cut::Eof { partial }) if partial.is_empty() => Ok(()),
        Ok(second) => Err(format!(
            "the pipelined GET /after was answered too ({} {:?}); the first answer was\n{head}",
            second.status,
            String::from_utf8_lossy(&second.body)
        )),
        Err(cut) => Err(format!("after the answer: {cut}")),
    }
}

#[test]
fn close_from_head() {
    closes_after("GET /head HTTP/1.1\r\nHost: t\r\n\r\n", "head", true);
}

#[test]
fn close_from_data() {
    closes_after(
        "POST /data HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
        "data",
        true,
    );
}

#[test]
fn close_from_end() {
    closes_after(
        "POST /end HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
        "end",
        true,
    );
}

/// `end` of a request without a body runs within the head's turn: the other path into `end`.
#[test]
fn close_from_end_without_a_body() {
    closes_after("GET /end HTTP/1.1\r\nHost: t\r\n\r\n", "end", true);
}

#[test]
fn close_from_resume() {
    closes_after("GET /resume HTTP/1.1\r\nHost: t\r\n\r\n", "resume", true);
}

/// The head went out before `fill` ran: the close is done, not announced.
#[test]
fn close_from_fill() {
    closes_after("GET /fill HTTP/1.1\r\nHost: t\r\n\r\n", "fill", false);
}
