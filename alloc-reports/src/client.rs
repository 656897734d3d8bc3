//! A blocking HTTP/1.1 client that allocates nothing once built.
//!
//! dhat counts every thread of the process, the client's included, so a client that allocated
//! per request would hide the server's zero behind its own noise. This one owns a single
//! receive buffer, allocated by [`Client::new`], and reuses it for every connection and
//! response: connecting, writing, reading and parsing touch only that buffer and the stack.
//! Responses are parsed and their bodies decoded by bufslab-http (`ResponseParser`,
//! `BodyDecoder`), which allocates nothing either, and is as strict with a server's framing
//! as the server is with a client's.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};

use bufslab_http::{BodyDecoder, HeaderSlot, Method, ResponseFraming, ResponseParser, Status};

/// Largest piece of a request written before the client reads what already came back: a
/// long echo request streams its response while it is being sent, and a client that wrote
/// it all first could deadlock with a server that stops reading while its output waits.
const WRITE_PIECE: usize = 16 * 1024;

/// Why an exchange failed.
#[derive(Debug)]
pub enum ClientError {
    /// Connecting, reading or writing failed.
    Io(io::Error),
    /// An operation that needs a connection found none.
    NotConnected,
    /// The server closed the connection before a response was complete.
    UnexpectedEof,
    /// The response is not valid HTTP/1.1: its head or its body's framing.
    Malformed(bufslab_http::Error),
    /// A 2xx response to CONNECT: a tunnel, which this client never asks for.
    Tunnel,
    /// A response is larger than the receive buffer.
    TooLarge,
    /// The connection stayed open where the server should have closed it.
    NotClosed,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "i/o error: {e}"),
            ClientError::NotConnected => f.write_str("not connected"),
            ClientError::UnexpectedEof => f.write_str("connection closed mid-response"),
            ClientError::Malformed(e) => write!(f, "malformed response: {e}"),
            ClientError::Tunnel => f.write_str("the server opened a tunnel"),
            ClientError::TooLarge => f.write_str("response larger than the receive buffer"),
            ClientError::NotClosed => {
                f.write_str("the server kept a connection open that it should have closed")
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Io(e) => Some(e),
            ClientError::Malformed(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Io(e)
    }
}

/// What the client learned from one response. The body itself is consumed; only its length
/// and a hash remain, so long bodies never need to fit in the buffer at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Body length in bytes (decoded, for a chunked body).
    pub body_len: u64,
    /// FNV-1a hash of the body, to compare an echo with what was sent.
    pub body_hash: u64,
    /// The connection does not persist after this response (`Connection: close`, or an
    /// HTTP/1.0 response without keep-alive, or a body that ends with the connection).
    pub close: bool,
}

/// The FNV-1a offset basis: the hash of an empty body.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Extends an FNV-1a hash with `bytes`.
#[must_use]
pub fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// One connection at a time over a preallocated receive buffer.
#[derive(Debug)]
pub struct Client {
    stream: Option<TcpStream>,
    buf: Box<[u8]>,
    /// Unparsed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
}

impl Client {
    /// A client with a receive buffer of `capacity` bytes: the largest response head or
    /// content-length body it can take, and how much it can absorb while still writing.
    #[must_use]
    pub fn new(capacity: usize) -> Client {
        Client {
            stream: None,
            buf: vec![0; capacity].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Opens a connection to `addr`, closing the previous one.
    ///
    /// # Errors
    /// [`ClientError::Io`] when connecting fails.
    pub fn connect(&mut self, addr: SocketAddr) -> Result<(), ClientError> {
        self.close();
        let stream = TcpStream::connect(addr)?;
        // Requests are written whole; Nagle would only hold back the last piece of one.
        stream.set_nodelay(true)?;
        self.stream = Some(stream);
        Ok(())
    }

    /// Closes the connection, if any, and forgets unread input.
    pub fn close(&mut self) {
        self.stream = None;
        self.start = 0;
        self.end = 0;
    }

    /// Writes `request` (one or more requests back to back), absorbing whatever arrives
    /// meanwhile so that a streamed response never blocks the server's reads.
    ///
    /// # Errors
    /// [`ClientError::Io`], [`ClientError::NotConnected`], or [`ClientError::TooLarge`] when
    /// the responses outgrow the buffer before the request is written.
    pub fn send(&mut self, request: &[u8]) -> Result<(), ClientError> {
        let mut pieces = request.chunks(WRITE_PIECE).peekable();
        while let Some(piece) = pieces.next() {
            self.stream_mut()?.write_all(piece)?;
            if pieces.peek().is_some() {
                self.absorb()?;
            }
        }
        Ok(())
    }

    /// Reads what is already readable into the buffer, without waiting for more.
    fn absorb(&mut self) -> Result<(), ClientError> {
        self.compact();
        let Client {
            stream, buf, end, ..
        } = self;
        let stream = stream.as_mut().ok_or(ClientError::NotConnected)?;
        stream.set_nonblocking(true)?;
        let result = loop {
            let Some(room) = buf.get_mut(*end..).filter(|r| !r.is_empty()) else {
                break Err(ClientError::TooLarge);
            };
            match stream.read(room) {
                Ok(0) => break Ok(()),
                Ok(n) => *end += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e.into()),
            }
        };
        stream.set_nonblocking(false)?;
        result
    }

    /// Reads one complete response (to a request other than HEAD or CONNECT, the only ones
    /// this client sends), hashing its body as it arrives.
    ///
    /// # Errors
    /// Any [`ClientError`] but [`ClientError::NotClosed`].
    pub fn read_response(&mut self) -> Result<Response, ClientError> {
        let mut parser = ResponseParser::default();
        let mut slots = [HeaderSlot::EMPTY; 32];
        let (status, framing, persists, head_len) = loop {
            match parser.parse(self.pending(), Method::Get, &mut slots) {
                Ok(Status::Complete(r)) => {
                    break (r.status(), r.framing(), r.keep_alive(), r.head_len())
                }
                // `fill` moves the pending bytes to the buffer's start, but they stay the same
                // bytes, which is all the parser needs to resume.
                Ok(Status::Partial) => self.fill()?,
                Err(e) => return Err(ClientError::Malformed(e)),
            }
        };
        if framing == ResponseFraming::Tunnel {
            return Err(ClientError::Tunnel);
        }
        self.start += head_len;
        let mut body = BodyDecoder::for_response(framing, parser.config());
        let (mut hash, mut body_len) = (FNV_START, 0u64);
        loop {
            let step = body
                .decode(self.pending())
                .map_err(ClientError::Malformed)?;
            hash = fnv1a(hash, step.data);
            body_len += step.data.len() as u64;
            let (consumed, done) = (step.consumed, step.done);
            self.start += consumed;
            if done {
                break;
            }
            // A step ends at a chunk's end: decode on while the bytes at hand take it further.
            if consumed > 0 {
                continue;
            }
            match self.fill() {
                // A close-delimited body ends where the connection does.
                Err(ClientError::UnexpectedEof) if framing == ResponseFraming::CloseDelimited => {
                    break
                }
                result => result?,
            }
        }
        Ok(Response {
            status,
            body_len,
            body_hash: hash,
            close: !persists,
        })
    }

    /// Waits for the server to close the connection (after a `Connection: close` response).
    ///
    /// # Errors
    /// [`ClientError::NotClosed`] when more bytes arrive instead, or [`ClientError::Io`].
    pub fn expect_eof(&mut self) -> Result<(), ClientError> {
        if !self.pending().is_empty() {
            return Err(ClientError::NotClosed);
        }
        match self.fill() {
            Err(ClientError::UnexpectedEof) => Ok(()),
            Err(ClientError::Io(e)) if e.kind() == io::ErrorKind::ConnectionReset => Ok(()),
            Err(e) => Err(e),
            Ok(()) => Err(ClientError::NotClosed),
        }
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn stream_mut(&mut self) -> Result<&mut TcpStream, ClientError> {
        self.stream.as_mut().ok_or(ClientError::NotConnected)
    }

    /// Moves unparsed bytes to the front so the rest of the buffer is free to read into.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// Blocks until at least one more byte arrives.
    fn fill(&mut self) -> Result<(), ClientError> {
        self.compact();
        let Client {
            stream, buf, end, ..
        } = self;
        let stream = stream.as_mut().ok_or(ClientError::NotConnected)?;
        let room = buf
            .get_mut(*end..)
            .filter(|r| !r.is_empty())
            .ok_or(ClientError::TooLarge)?;
        loop {
            match stream.read(room) {
                Ok(0) => return Err(ClientError::UnexpectedEof),
                Ok(n) => {
                    *end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// Serves `pieces` to one connection, one write each, then closes it.
    fn serve(pieces: &'static [&'static [u8]]) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_nodelay(true).unwrap();
            for p in pieces {
                s.write_all(p).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        addr
    }

    #[test]
    fn responses_in_pieces_length_chunked_and_until_close() {
        let addr = serve(&[
            b"HTTP/1.1 200 OK\r\nContent-Le",
            b"ngth: 5\r\n\r\nhel",
            b"loHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r",
            b"\n2;ext=1\r\nde\r\n1\r\nf\r\n1\r\ng\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end",
        ]);
        let mut c = Client::new(4096);
        c.connect(addr).unwrap();
        let r = c.read_response().unwrap();
        assert_eq!((r.status, r.body_len, r.close), (200, 5, false));
        assert_eq!(r.body_hash, fnv1a(FNV_START, b"hello"));
        let r = c.read_response().unwrap();
        assert_eq!((r.status, r.body_len, r.close), (404, 7, false));
        assert_eq!(r.body_hash, fnv1a(FNV_START, b"abcdefg"));
        let r = c.read_response().unwrap();
        assert_eq!((r.status, r.body_len, r.close), (200, 13, true));
        assert_eq!(r.body_hash, fnv1a(FNV_START, b"until the end"));
    }

    #[test]
    fn invalid_framing_is_malformed() {
        let addr = serve(&[b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"]);
        let mut c = Client::new(4096);
        c.connect(addr).unwrap();
        assert!(matches!(c.read_response(), Err(ClientError::Malformed(_))));
        let addr = serve(&[b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort"]);
        c.connect(addr).unwrap();
        assert!(matches!(c.read_response(), Err(ClientError::UnexpectedEof)));
    }
}
