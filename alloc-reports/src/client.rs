//! A blocking HTTP/1.1 client that allocates nothing once built.
//!
//! dhat counts every thread of the process, the client's included, so a client that allocated
//! per request would hide the server's zero behind its own noise. This one owns a single
//! receive buffer, allocated by [`Client::new`], and reuses it for every connection and
//! response: connecting, writing, reading and parsing touch only that buffer and the stack.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};

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
    /// The response could not be parsed; the value says which part.
    Malformed(&'static str),
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
            ClientError::Malformed(what) => write!(f, "malformed response: {what}"),
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
    /// The response said `Connection: close`.
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

    /// Reads one complete response.
    ///
    /// # Errors
    /// Any [`ClientError`] but [`ClientError::NotClosed`].
    pub fn read_response(&mut self) -> Result<Response, ClientError> {
        let head_len = loop {
            if let Some(at) = find(self.pending(), b"\r\n\r\n") {
                break at + 4;
            }
            self.fill()?;
        };
        let head = Head::parse(&self.buf[self.start..self.start + head_len])?;
        self.start += head_len;
        let mut hash = FNV_START;
        let body_len = if head.chunked {
            self.read_chunked(&mut hash)?
        } else {
            let len = head.content_length.unwrap_or(0);
            self.hash_body(len, &mut hash)?;
            len
        };
        Ok(Response {
            status: head.status,
            body_len,
            body_hash: hash,
            close: head.close,
        })
    }

    /// Consumes the next `len` body bytes, reading more as needed, into the running hash.
    fn hash_body(&mut self, len: u64, hash: &mut u64) -> Result<(), ClientError> {
        let mut left = len;
        while left > 0 {
            if self.pending().is_empty() {
                self.fill()?;
            }
            let take = self
                .pending()
                .len()
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            *hash = fnv1a(*hash, &self.pending()[..take]);
            self.start += take;
            left -= take as u64;
        }
        Ok(())
    }

    /// Decodes a chunked body, hashing its data; returns its decoded length.
    fn read_chunked(&mut self, hash: &mut u64) -> Result<u64, ClientError> {
        let mut total = 0u64;
        loop {
            let line = loop {
                if let Some(at) = find(self.pending(), b"\r\n") {
                    break at;
                }
                self.fill()?;
            };
            let size = parse_hex(&self.pending()[..line])?;
            self.start += line + 2;
            if size == 0 {
                // No trailers from this server: the empty line ends the body.
                while self.pending().len() < 2 {
                    self.fill()?;
                }
                if &self.pending()[..2] != b"\r\n" {
                    return Err(ClientError::Malformed("chunked trailer"));
                }
                self.start += 2;
                return Ok(total);
            }
            self.hash_body(size, hash)?;
            total += size;
            while self.pending().len() < 2 {
                self.fill()?;
            }
            if &self.pending()[..2] != b"\r\n" {
                return Err(ClientError::Malformed("chunk end"));
            }
            self.start += 2;
        }
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

/// The parts of a response head the client acts on.
struct Head {
    status: u16,
    content_length: Option<u64>,
    chunked: bool,
    close: bool,
}

impl Head {
    fn parse(head: &[u8]) -> Result<Head, ClientError> {
        let mut lines = head
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let status_line = lines.next().ok_or(ClientError::Malformed("status line"))?;
        let code = status_line
            .strip_prefix(b"HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .ok_or(ClientError::Malformed("status line"))?;
        let status = parse_dec(code).ok_or(ClientError::Malformed("status code"))?;
        let status = u16::try_from(status).map_err(|_| ClientError::Malformed("status code"))?;
        let mut parsed = Head {
            status,
            content_length: None,
            chunked: false,
            close: false,
        };
        for line in lines.filter(|l| !l.is_empty()) {
            let colon = line
                .iter()
                .position(|&b| b == b':')
                .ok_or(ClientError::Malformed("header line"))?;
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if name.eq_ignore_ascii_case(b"content-length") {
                parsed.content_length =
                    Some(parse_dec(value).ok_or(ClientError::Malformed("content-length"))?);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                parsed.chunked = value.eq_ignore_ascii_case(b"chunked");
            } else if name.eq_ignore_ascii_case(b"connection") {
                parsed.close = value.eq_ignore_ascii_case(b"close");
            }
        }
        Ok(parsed)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_dec(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        let d = char::from(b).to_digit(10)?;
        acc.checked_mul(10)?.checked_add(u64::from(d))
    })
}

fn parse_hex(line: &[u8]) -> Result<u64, ClientError> {
    // Chunk extensions follow a `;`; this server sends none, but they are legal.
    let digits = line
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if digits.is_empty() {
        return Err(ClientError::Malformed("chunk size"));
    }
    digits
        .iter()
        .try_fold(0u64, |acc, &b| {
            let d = char::from(b).to_digit(16)?;
            acc.checked_mul(16)?.checked_add(u64::from(d))
        })
        .ok_or(ClientError::Malformed("chunk size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_fields() {
        let head = Head::parse(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
        assert_eq!(head.status, 404);
        assert_eq!(head.content_length, Some(9));
        assert!(head.close && !head.chunked);
        assert!(Head::parse(b"HTTP/1.0 200 OK\r\n\r\n").is_err());
        assert!(Head::parse(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_hex(b"1f;ext=1").unwrap(), 31);
        assert!(parse_hex(b"").is_err());
        assert!(parse_hex(b"fffffffffffffffff").is_err());
        assert_eq!(parse_dec(b"120"), Some(120));
        assert_eq!(parse_dec(b"1a"), None);
    }
}
