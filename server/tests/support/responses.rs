//! Reads HTTP/1.1 responses off a client socket, one at a time, with an independent parser
//! (httparse): status, headers, and the body framed by Content-Length or chunked. A checker
//! that shares no code with the engine's encoder, so it cannot agree with the engine's
//! mistakes.
#![allow(dead_code)]

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::Duration;

/// How long a read may wait for the server before the client gives up on it. A guard against
/// a server that neither answers nor closes, so that the test reports it instead of hanging;
/// not a bound on how fast the server is (the idle timeout the tests run under is longer).
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// One response as it came over the wire.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    /// The status line and headers as text, for failure messages.
    pub head: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub chunked: bool,
    pub body: Vec<u8>,
}

impl Reply {
    /// The value of the first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| &v[..])
    }

    /// The response says the connection closes after it.
    pub fn says_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"close"))
    }
}

/// Why no further response could be read.
#[derive(Debug)]
pub enum Cut {
    /// The server closed; `partial` is what it had sent of the next response.
    Eof { partial: Vec<u8> },
    /// Nothing arrived within [`HANG_GUARD`]; `partial` as for `Eof`.
    Hang { partial: Vec<u8> },
    /// A socket error (a reset, say).
    Io(io::Error),
    /// Bytes that are no HTTP/1.1 response.
    Malformed(String),
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |p: &[u8]| String::from_utf8_lossy(&p[..p.len().min(300)]).into_owned();
        match self {
            Cut::Eof { partial } if partial.is_empty() => f.write_str("the server closed"),
            Cut::Eof { partial } => write!(
                f,
                "the server closed in the middle of a response ({} bytes: {:?})",
                partial.len(),
                show(partial)
            ),
            Cut::Hang { partial } => write!(
                f,
                "no byte for {HANG_GUARD:?}: the server neither answered nor closed \
                 ({} bytes of a response: {:?})",
                partial.len(),
                show(partial)
            ),
            Cut::Io(e) => write!(f, "socket error: {e}"),
            Cut::Malformed(why) => write!(f, "malformed response: {why}"),
        }
    }
}

/// The client side of one connection: the socket and what was read from it but not yet
/// parsed.
pub struct Wire {
    pub sock: TcpStream,
    buf: Vec<u8>,
}

impl Wire {
    /// Wraps a connected socket (sets the read timeout to [`HANG_GUARD`]).
    pub fn new(sock: TcpStream) -> Wire {
        sock.set_read_timeout(Some(HANG_GUARD)).unwrap();
        sock.set_nodelay(true).unwrap();
        Wire {
            sock,
            buf: Vec::new(),
        }
    }

    /// Reads the next response, each read asking for `read_size()` bytes at most.
    pub fn reply(&mut self, read_size: &mut dyn FnMut() -> usize) -> Result<Reply, Cut> {
        loop {
            if let Some((reply, used)) = parse(&self.buf).map_err(Cut::Malformed)? {
                self.buf.drain(..used);
                return Ok(reply);
            }
            match self.read(read_size()) {
                Ok(0) => {
                    return Err(Cut::Eof {
                        partial: std::mem::take(&mut self.buf),
                    })
                }
                Ok(_) => {}
                Err(e) if is_timeout(&e) => {
                    return Err(Cut::Hang {
                        partial: std::mem::take(&mut self.buf),
                    })
                }
                Err(e) => return Err(Cut::Io(e)),
            }
        }
    }

    /// Reads until the server closes; returns every byte that came first (buffered ones
    /// included). `Err` on a hang or a socket error.
    pub fn rest(&mut self) -> Result<Vec<u8>, Cut> {
        loop {
            match self.read(64 * 1024) {
                Ok(0) => return Ok(std::mem::take(&mut self.buf)),
                Ok(_) => {}
                Err(e) if is_timeout(&e) => {
                    return Err(Cut::Hang {
                        partial: std::mem::take(&mut self.buf),
                    })
                }
                Err(e) => return Err(Cut::Io(e)),
            }
        }
    }

    fn read(&mut self, n: usize) -> io::Result<usize> {
        let at = self.buf.len();
        self.buf.resize(at + n.max(1), 0);
        let r = loop {
            match self.sock.read(&mut self.buf[at..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => break r,
            }
        };
        self.buf.truncate(at + *r.as_ref().unwrap_or(&0));
        r
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// A complete response at the start of `buf` and the bytes it takes; `None` while it is
/// incomplete.
fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>, String> {
    let mut slots = [httparse::EMPTY_HEADER; 32];
    let mut res = httparse::Response::new(&mut slots);
    let head_len = match res.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "{e}: {:?}",
                String::from_utf8_lossy(&buf[..buf.len().min(300)])
            ))
        }
    };
    let status = res.code.unwrap_or(0);
    let headers: Vec<(String, Vec<u8>)> = res
        .headers
        .iter()
        .map(|h| (h.name.to_owned(), h.value.to_vec()))
        .collect();
    let head = String::from_utf8_lossy(&buf[..head_len]).into_owned();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let chunked = find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case(b"chunked"));
    let mut reply = Reply {
        status,
        head,
        headers: headers.clone(),
        chunked,
        body: Vec::new(),
    };
    if chunked {
        let mut at = head_len;
        loop {
            let (line, size) = match httparse::parse_chunk_size(&buf[at..]) {
                Ok(httparse::Status::Complete(c)) => c,
                Ok(httparse::Status::Partial) => return Ok(None),
                Err(_) => return Err(format!("bad chunk size line at byte {at} of the response")),
            };
            at += line;
            if size == 0 {
                break;
            }
            let size = usize::try_from(size).map_err(|_| "chunk too large".to_owned())?;
            if buf.len() < at + size + 2 {
                return Ok(None);
            }
            reply.body.extend_from_slice(&buf[at..at + size]);
            if &buf[at + size..at + size + 2] != b"\r\n" {
                return Err(format!("no CRLF after a chunk of {size} bytes"));
            }
            at += size + 2;
        }
        // Trailer lines, then the empty line.
        loop {
            let Some(eol) = buf[at..].windows(2).position(|w| w == b"\r\n") else {
                return Ok(None);
            };
            at += eol + 2;
            if eol == 0 {
                return Ok(Some((reply, at)));
            }
        }
    }
    let len = match find("content-length") {
        Some(v) => std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .ok_or_else(|| format!("bad Content-Length {:?}", String::from_utf8_lossy(&v)))?,
        // Every response these tests get is framed; one delimited by the close is refused
        // rather than guessed at.
        None if matches!(status, 204 | 304) || status < 200 => 0,
        None => return Err(format!("no framing: {}", reply.head)),
    };
    if buf.len() < head_len + len {
        return Ok(None);
    }
    reply.body = buf[head_len..head_len + len].to_vec();
    Ok(Some((reply, head_len + len)))
}
