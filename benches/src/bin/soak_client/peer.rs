//! One client connection and its response reader.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};

use crate::stream::Stream;
use std::thread;
use std::time::Duration;

use bufslab_http::{Config, HeaderSlot, Method, ResponseParser, Status};

/// Longest a read or a write may block before the answer counts as missing.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Bodies at least this large are written from a second thread while the response is read,
/// as an echo answers while the body still arrives.
const WRITE_ASIDE: usize = 32 * 1024;

/// A response head larger than this is malformed.
const MAX_RESPONSE_HEAD: usize = 16 * 1024;

/// More response fields than this are malformed.
const MAX_RESPONSE_FIELDS: usize = 100;

/// How response heads are read: the codec's strict rules, with the limits above.
const RESPONSE_HEAD: Config = Config::DEFAULT
    .with_max_head_bytes(MAX_RESPONSE_HEAD)
    .with_max_headers(MAX_RESPONSE_FIELDS);

/// Why an exchange did not give the expected answer.
#[derive(Debug)]
pub enum Fail {
    /// The connection ended before the response was whole; `got` bytes of it had come.
    Eof { got: u64 },
    /// Reset by the server before the response was whole.
    Reset { got: u64 },
    /// Nothing more for `IO_TIMEOUT`.
    Timeout,
    /// Another socket error (connect, write).
    Io(String),
    /// A response came, but not the right one.
    Wrong(String),
}

impl Fail {
    pub fn is_missing(&self) -> bool {
        !matches!(self, Fail::Wrong(_))
    }

    /// Nothing of a response came: the connection was closed or reset at once.
    pub fn nothing_came(&self) -> bool {
        matches!(self, Fail::Eof { got: 0 } | Fail::Reset { got: 0 })
    }
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Eof { got } => write!(f, "closed after {got} bytes of the response"),
            Fail::Reset { got } => write!(f, "reset after {got} bytes of the response"),
            Fail::Timeout => write!(f, "no answer in {IO_TIMEOUT:?}"),
            Fail::Io(e) => write!(f, "{e}"),
            Fail::Wrong(e) => write!(f, "{e}"),
        }
    }
}

pub struct Head {
    pub version: String,
    pub status: u16,
    /// Field names lower-cased.
    pub fields: Vec<(String, String)>,
}

impl Head {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn closes(&self) -> bool {
        self.field("connection")
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")))
    }

    pub fn chunked(&self) -> bool {
        self.field("transfer-encoding")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("chunked"))
    }
}

pub struct Response {
    pub head: Head,
    pub body: Vec<u8>,
}

pub struct Peer {
    pub s: Stream,
    pub buf: Vec<u8>,
    pub pos: usize,
    /// Bytes received since the current response began.
    pub got: u64,
}

impl Peer {
    pub fn new(s: Stream) -> Peer {
        Peer {
            s,
            buf: Vec::with_capacity(64 * 1024),
            pos: 0,
            got: 0,
        }
    }

    pub fn connect(addr: SocketAddr) -> io::Result<Peer> {
        Peer::connect_with(addr, None)
    }

    /// `rcvbuf`: a receive buffer this small (set before connecting, so the window stays
    /// small) keeps what the server sends in the server's own blocks. With TLS, the handshake
    /// runs here.
    pub fn connect_with(addr: SocketAddr, rcvbuf: Option<usize>) -> io::Result<Peer> {
        let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        if let Some(n) = rcvbuf {
            sock.set_recv_buffer_size(n)?;
        }
        sock.connect_timeout(&addr.into(), IO_TIMEOUT)?;
        let s = TcpStream::from(sock);
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        s.set_write_timeout(Some(IO_TIMEOUT))?;
        s.set_nodelay(true)?;
        Ok(Peer::new(Stream::connect(s, addr)?))
    }

    fn avail(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Reads what the socket has into the buffer.
    pub fn fill(&mut self) -> Result<(), Fail> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos >= 32 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let old = self.buf.len();
        self.buf.resize(old + 64 * 1024, 0);
        let r = self.s.read(&mut self.buf[old..]);
        let n = *r.as_ref().unwrap_or(&0);
        self.buf.truncate(old + n);
        match r {
            Ok(0) => Err(Fail::Eof { got: self.got }),
            Ok(n) => {
                self.got += n as u64;
                Ok(())
            }
            Err(e) => Err(self.io_fail(&e)),
        }
    }

    pub fn io_fail(&self, e: &io::Error) -> Fail {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Fail::Timeout,
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
                Fail::Reset { got: self.got }
            }
            _ => Fail::Io(e.to_string()),
        }
    }

    pub fn take(&mut self, n: usize) -> Result<&[u8], Fail> {
        while self.avail().len() < n {
            self.fill()?;
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..start + n])
    }

    /// One line without its CR LF.
    pub fn line(&mut self) -> Result<String, Fail> {
        loop {
            if let Some(i) = self.avail().windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.avail()[..i]).into_owned();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.avail().len() > MAX_RESPONSE_HEAD {
                return Err(Fail::Wrong("a response line over 16 KiB".to_owned()));
            }
            self.fill()?;
        }
    }

    /// One response head, read with the codec's response parser. Its framing is left to
    /// [`body`](Self::body), which knows whether the request was a HEAD.
    pub fn head(&mut self) -> Result<Head, Fail> {
        self.got = self.avail().len() as u64;
        let mut parser = ResponseParser::new(RESPONSE_HEAD);
        let mut slots = [HeaderSlot::EMPTY; MAX_RESPONSE_FIELDS];
        loop {
            match parser.parse(self.avail(), Method::Get, &mut slots) {
                Ok(Status::Complete(r)) => {
                    let head = Head {
                        // As received: the parser reads HTTP/1.2 to 1.9 as HTTP/1.1.
                        version: String::from_utf8_lossy(&self.avail()[..8]).into_owned(),
                        status: r.status(),
                        fields: r
                            .headers()
                            .map(|h| {
                                let name = String::from_utf8_lossy(h.raw_name);
                                (name.to_ascii_lowercase(), lossy(h.value))
                            })
                            .collect(),
                    };
                    self.pos += r.head_len();
                    return Ok(head);
                }
                Ok(Status::Partial) => self.fill()?,
                Err(e) => {
                    let got = self.avail();
                    let shown = &got[..got.len().min(200)];
                    return Err(Fail::Wrong(format!(
                        "bad response head ({e}): {:?}",
                        lossy(shown)
                    )));
                }
            }
        }
    }

    /// A chunked body, appended to `out` as it comes (so a cut-short one shows what came).
    pub fn chunked_body(&mut self, out: &mut Vec<u8>) -> Result<(), Fail> {
        loop {
            let line = self.line()?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| Fail::Wrong(format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                // Trailer fields until the empty line.
                while !self.line()?.is_empty() {}
                return Ok(());
            }
            out.extend_from_slice(self.take(size)?);
            if self.take(2)? != b"\r\n" {
                return Err(Fail::Wrong("chunk data not followed by CR LF".to_owned()));
            }
        }
    }

    pub fn body(&mut self, head: &Head, head_only: bool) -> Result<Vec<u8>, Fail> {
        let mut body = Vec::new();
        if head_only || head.status < 200 || head.status == 204 || head.status == 304 {
            return Ok(body);
        }
        if head.chunked() {
            self.chunked_body(&mut body)?;
        } else {
            let len = head
                .field("content-length")
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| Fail::Wrong("no Content-Length and not chunked".to_owned()))?;
            body.extend_from_slice(self.take(len)?);
        }
        Ok(body)
    }

    pub fn response(&mut self, head_only: bool) -> Result<Response, Fail> {
        let head = self.head()?;
        let body = self.body(&head, head_only)?;
        Ok(Response { head, body })
    }

    /// After a response that said `Connection: close`: the server must close, sending nothing
    /// more.
    pub fn expect_close(&mut self) -> Result<(), Fail> {
        if !self.avail().is_empty() {
            return Err(Fail::Wrong(
                "bytes after a Connection: close response".to_owned(),
            ));
        }
        self.got = 0;
        match self.fill() {
            Err(Fail::Eof { .. } | Fail::Reset { .. }) => Ok(()),
            Err(Fail::Timeout) => Err(Fail::Wrong(
                "the connection stayed open after Connection: close".to_owned(),
            )),
            Err(e) => Err(e),
            Ok(()) => Err(Fail::Wrong(
                "bytes after a Connection: close response".to_owned(),
            )),
        }
    }

    /// After a refusal `r`: it must be `status` with `Connection: close`, and the server close.
    pub fn refused(&mut self, r: &Response, status: u16) -> Result<(), Fail> {
        if r.head.status == status && r.head.closes() {
            return self.expect_close();
        }
        Err(Fail::Wrong(format!(
            "status {} close {} instead of {status} and close",
            r.head.status,
            r.head.closes()
        )))
    }

    /// Writes `head` and `body` and reads the response; a large body is written from a second
    /// thread meanwhile, since the server echoes it before it has all of it.
    pub fn send_read(
        &mut self,
        head: &[u8],
        body: &[u8],
        head_only: bool,
    ) -> Result<Response, Fail> {
        if body.len() < WRITE_ASIDE {
            let mut all = Vec::with_capacity(head.len() + body.len());
            all.extend_from_slice(head);
            all.extend_from_slice(body);
            self.s.write_all(&all).map_err(|e| self.io_fail(&e))?;
            return self.response(head_only);
        }
        let mut w = self.s.try_clone().map_err(|e| Fail::Io(e.to_string()))?;
        thread::scope(|sc| {
            let writer = sc.spawn(move || w.write_all(head).and_then(|()| w.write_all(body)));
            let r = self.response(head_only);
            if r.is_err() {
                // Unblock a writer the server no longer reads from.
                let _ = self.s.shutdown(Shutdown::Both);
            }
            let _ = writer.join();
            r
        })
    }

    /// Closes with a reset (`SO_LINGER` 0) instead of a FIN.
    pub fn reset(self) {
        let _ = socket2::SockRef::from(self.s.tcp()).set_linger(Some(Duration::ZERO));
        drop(self);
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A connected `Peer` whose server side writes `bytes` and closes.
#[cfg(test)]
pub fn peer_reading(bytes: Vec<u8>) -> Peer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local address");
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.write_all(&bytes).expect("write");
    });
    let peer = Peer::connect(addr).expect("connect");
    server.join().expect("server thread");
    peer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_length_chunked_head_only_and_refusal_responses() {
        let mut p = peer_reading(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello\
              HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: 1\r\n\r\n\
              HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n\
              HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                .to_vec(),
        );
        let r = p.response(false).expect("length");
        assert_eq!((r.head.status, r.body.as_slice()), (200, &b"hello"[..]));
        let r = p.response(false).expect("chunked");
        assert!(r.head.chunked());
        assert_eq!(r.body, b"abc0123456789");
        let r = p.response(true).expect("head only");
        assert_eq!(
            (r.head.field("content-length"), r.body.len()),
            (Some("13"), 0)
        );
        let r = p.response(false).expect("408");
        assert!(r.head.closes());
        assert!(p.refused(&r, 408).is_ok(), "408, close, then the end");
    }

    #[test]
    fn a_cut_short_body_is_missing_with_what_came() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
        let mut bytes = head.to_vec();
        bytes.extend_from_slice(b"abc");
        let mut p = peer_reading(bytes);
        match p.response(false) {
            Err(f @ Fail::Eof { got }) => {
                assert_eq!(got, head.len() as u64 + 3);
                assert!(f.is_missing() && !f.nothing_came());
            }
            other => panic!("expected the end of input, got {:?}", other.map(|r| r.body)),
        }
    }

    #[test]
    fn heads_over_the_limits_are_wrong() {
        let head = |fields: usize, value: usize| {
            let mut h = b"HTTP/1.1 200 OK\r\n".to_vec();
            for i in 0..fields {
                h.extend_from_slice(format!("X-{i}: {}\r\n", "v".repeat(value)).as_bytes());
            }
            h.extend_from_slice(b"Content-Length: 0\r\n\r\n");
            h
        };
        let r = peer_reading(head(MAX_RESPONSE_FIELDS - 1, 1)).response(false);
        assert_eq!(
            r.expect("100 fields").head.fields.len(),
            MAX_RESPONSE_FIELDS
        );
        let r = peer_reading(head(MAX_RESPONSE_FIELDS, 1)).response(false);
        assert!(matches!(r, Err(Fail::Wrong(_))), "101 fields");
        let r = peer_reading(head(1, MAX_RESPONSE_HEAD)).response(false);
        assert!(matches!(r, Err(Fail::Wrong(_))), "a head over 16 KiB");
        // The version as received, though the parser reads it as HTTP/1.1.
        let r = peer_reading(b"HTTP/1.5 204 No Content\r\n\r\n".to_vec()).response(false);
        assert_eq!(r.expect("HTTP/1.5").head.version, "HTTP/1.5");
    }

    #[test]
    fn a_close_with_nothing_sent_is_told_apart() {
        let mut p = peer_reading(Vec::new());
        let f = p.response(false).err().expect("nothing came");
        assert!(f.nothing_came() && f.is_missing());
    }

    #[test]
    fn wrong_answers_are_wrong_not_missing() {
        let mut p = peer_reading(b"HTTP/1.1 abc\r\n\r\n".to_vec());
        assert!(matches!(p.response(false), Err(Fail::Wrong(_))));

        let mut p = peer_reading(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_vec(),
        );
        let r = p.response(false).expect("response");
        assert!(matches!(p.refused(&r, 431), Err(Fail::Wrong(_))));

        let mut p = peer_reading(
            b"HTTP/1.1 431 Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\nextra"
                .to_vec(),
        );
        let r = p.response(false).expect("response");
        assert!(
            matches!(p.refused(&r, 431), Err(Fail::Wrong(_))),
            "bytes after the close"
        );
    }
}
