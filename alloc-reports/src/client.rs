//! A blocking HTTP/1.1 client that allocates nothing once built.
//!
//! dhat counts every thread of the process, the client's included, so a client that allocated
//! per request would hide the server's zero behind its own noise. This one owns a single
//! receive buffer, allocated by [`Client::new`], and reuses it for every connection and
//! response: connecting, writing, reading and parsing touch only that buffer and the stack.
//! Responses are parsed and their bodies decoded by bufslab-http (`ResponseParser`,
//! `BodyDecoder`), which allocates nothing either, and is as strict with a server's framing
//! as the server is with a client's.
//!
//! Over HTTPS ([`Client::with_tls`]) the same exchanges go through a rustls client, which does
//! allocate (its records, its session state). That is only for servers in a process of their
//! own, counted by the preloaded counter in their process, where nothing this process does
//! counts; the HTTPS scenarios apply to no in-process subject.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use bufslab_http::{BodyDecoder, HeaderSlot, Method, ResponseFraming, ResponseParser, Status};
use rustls::client::Resumption;
use rustls::crypto::ring::cipher_suite;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, HandshakeKind, RootCertStore};

use crate::scenario::TlsSuite;

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
    /// The TLS client could not be configured.
    Tls(rustls::Error),
    /// The handshake negotiated another suite than the one offered.
    WrongSuite(TlsSuite),
    /// The handshake was full where it should have resumed the previous session (`true`), or
    /// the other way round (`false`).
    WrongHandshake {
        /// Whether it should have resumed.
        resumed: bool,
    },
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
            ClientError::Tls(e) => write!(f, "TLS client: {e}"),
            ClientError::WrongSuite(suite) => write!(
                f,
                "the handshake did not negotiate {}, the only suite offered",
                suite.name()
            ),
            ClientError::WrongHandshake { resumed: true } => {
                f.write_str("a full handshake where the session should have resumed")
            }
            ClientError::WrongHandshake { resumed: false } => {
                f.write_str("a resumed handshake where a full one was asked for")
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Io(e) => Some(e),
            ClientError::Malformed(e) => Some(e),
            ClientError::Tls(e) => Some(e),
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

/// The TLS side of a [`Client`]: TLS 1.3 with one suite, the server's certificate as the only
/// root, the server name `localhost`, no ALPN, and sessions kept for resumption or not.
#[derive(Clone, Debug)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    suite: TlsSuite,
    /// The suite as rustls names it, to compare with the negotiated one.
    wanted: rustls::CipherSuite,
    resume: bool,
}

impl ClientTls {
    /// A client that trusts `root` (a self-signed certificate for `localhost`), offers `suite`
    /// only (so every server negotiates it), and where `resume` is true keeps the tickets the
    /// server sends and resumes with them, every connection after the first checked to have
    /// resumed; where false it keeps none and every handshake is checked to be full.
    ///
    /// # Errors
    /// [`ClientError::Tls`] when rustls refuses the configuration or the certificate.
    pub fn new(
        root: CertificateDer<'static>,
        suite: TlsSuite,
        resume: bool,
    ) -> Result<ClientTls, ClientError> {
        let offered = match suite {
            TlsSuite::Aes128Gcm => cipher_suite::TLS13_AES_128_GCM_SHA256,
            TlsSuite::Aes256Gcm => cipher_suite::TLS13_AES_256_GCM_SHA384,
            TlsSuite::Chacha20Poly1305 => cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        };
        let mut provider = rustls::crypto::ring::default_provider();
        provider.cipher_suites = vec![offered];
        let mut roots = RootCertStore::empty();
        roots.add(root).map_err(ClientError::Tls)?;
        let mut config = ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(ClientError::Tls)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        if !resume {
            config.resumption = Resumption::disabled();
        }
        Ok(ClientTls {
            config: Arc::new(config),
            name: ServerName::try_from("localhost").map_err(|e| {
                ClientError::Tls(rustls::Error::General(format!("server name: {e}")))
            })?,
            suite,
            wanted: offered.suite(),
            resume,
        })
    }

    /// Connects to `addr` and completes the handshake, checking its suite and, after the
    /// client's first, whether it resumed.
    fn connect(&self, addr: SocketAddr, first: bool) -> Result<TlsStream, ClientError> {
        let mut sock = TcpStream::connect(addr)?;
        sock.set_nodelay(true)?;
        let mut tls = ClientConnection::new(self.config.clone(), self.name.clone())
            .map_err(ClientError::Tls)?;
        while tls.is_handshaking() {
            tls.complete_io(&mut sock)?;
        }
        if tls.negotiated_cipher_suite().map(|s| s.suite()) != Some(self.wanted) {
            return Err(ClientError::WrongSuite(self.suite));
        }
        let resumed = tls.handshake_kind() == Some(HandshakeKind::Resumed);
        // The first connection has no session to resume.
        if resumed != (self.resume && !first) {
            return Err(ClientError::WrongHandshake {
                resumed: self.resume,
            });
        }
        Ok(TlsStream { tls, sock })
    }
}

/// A TLS connection driven by hand over a blocking or non-blocking socket.
#[derive(Debug)]
struct TlsStream {
    tls: ClientConnection,
    sock: TcpStream,
}

impl TlsStream {
    /// Plaintext into `buf`: what is decrypted already, else a record read from the socket
    /// (blocking or not, as the socket is). `Ok(0)` at the end of the connection.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                // Nothing decrypted: read more records.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The server closed without a close_notify. Every body this client reads is
                // framed by length or by chunks, so a cut one fails as an early end anyway.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            self.tls.read_tls(&mut self.sock)?;
            self.tls
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            // A KeyUpdate's answer, an alert.
            self.flush()?;
        }
    }

    /// Encrypts `data` and sends it.
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.tls.writer().write_all(data)?;
        self.flush()
    }

    /// Sends every record rustls has ready.
    fn flush(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            self.tls.write_tls(&mut self.sock)?;
        }
        Ok(())
    }
}

/// A connection, plain or TLS.
#[derive(Debug)]
enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

impl Conn {
    fn socket(&self) -> &TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(t) => &t.sock,
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(t) => t.read(buf),
        }
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Conn::Plain(s) => s.write_all(data),
            Conn::Tls(t) => t.write_all(data),
        }
    }
}

impl Drop for Conn {
    /// A TLS connection ends with a close_notify, as a client that is done should end it.
    fn drop(&mut self) {
        if let Conn::Tls(t) = self {
            t.tls.send_close_notify();
            let _ = t.flush();
        }
    }
}

/// One connection at a time over a preallocated receive buffer.
#[derive(Debug)]
pub struct Client {
    stream: Option<Conn>,
    tls: Option<ClientTls>,
    /// TLS handshakes made so far: the first cannot resume.
    handshakes: u64,
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
            tls: None,
            handshakes: 0,
            buf: vec![0; capacity].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// The same client over HTTPS: every connection a TLS 1.3 handshake as `tls` says.
    #[must_use]
    pub fn with_tls(capacity: usize, tls: ClientTls) -> Client {
        Client {
            tls: Some(tls),
            ..Client::new(capacity)
        }
    }

    /// Opens a connection to `addr` (with its handshake, over HTTPS), closing the previous one.
    ///
    /// # Errors
    /// [`ClientError::Io`] when connecting or the handshake fails, and over HTTPS
    /// [`ClientError::WrongSuite`] or [`ClientError::WrongHandshake`] when it is not the one
    /// asked for.
    pub fn connect(&mut self, addr: SocketAddr) -> Result<(), ClientError> {
        self.close();
        let stream = match &self.tls {
            Some(tls) => {
                let first = self.handshakes == 0;
                self.handshakes += 1;
                Conn::Tls(Box::new(tls.connect(addr, first)?))
            }
            None => {
                let stream = TcpStream::connect(addr)?;
                // Requests are written whole; Nagle would only hold back the last piece of one.
                stream.set_nodelay(true)?;
                Conn::Plain(stream)
            }
        };
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
        stream.socket().set_nonblocking(true)?;
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
        stream.socket().set_nonblocking(false)?;
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

    fn stream_mut(&mut self) -> Result<&mut Conn, ClientError> {
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
