//! bufslab-http inside a `tokio_util::codec::Framed` TCP stream: a `Decoder` that turns the
//! read buffer into requests (head plus Content-Length body) and an `Encoder` that writes
//! responses, with a small server on top.
//!
//! ```text
//! cargo run -p bufslab-http --example tokio_codec -- 127.0.0.1:8080
//! curl -i http://127.0.0.1:8080/hello
//! curl -i -d 'some data' http://127.0.0.1:8080/echo
//! ```
//!
//! The decoded request owns no copy of the wire bytes: the head and the body are split off
//! the read buffer as `Bytes` (reference-counted views of the same allocation) and the method
//! and path are sub-slices of the head. `cargo test -p bufslab-http --example tokio_codec`
//! runs the server against a client on 127.0.0.1.

use std::io;
use std::ops::Range;
use std::time::SystemTime;

use bufslab_http::{
    BodyFraming, Config, DateCache, Error, HeaderSlot, KnownHeader, Parser, ResponseHead, Status,
};
use bytes::{Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{Decoder, Encoder, Framed};

/// Largest request body this server buffers. A body is handed out whole, so it must fit in
/// memory; a server that streams bodies would use `BodyDecoder` chunk by chunk instead.
const MAX_BODY: u64 = 1 << 20;

/// A request as the codec hands it out: the head and the body are `Bytes` split off the read
/// buffer, so nothing is copied.
#[derive(Debug)]
struct Request {
    head: Bytes,
    method: Range<usize>,
    path: Range<usize>,
    keep_alive: bool,
    body: Bytes,
}

impl Request {
    fn method(&self) -> &[u8] {
        &self.head[self.method.clone()]
    }

    fn path(&self) -> &[u8] {
        &self.head[self.path.clone()]
    }
}

/// A response the codec encodes.
#[derive(Debug)]
struct Response {
    status: u16,
    body: Bytes,
    close: bool,
}

impl Response {
    fn text(status: u16, body: &'static str) -> Response {
        Response {
            status,
            body: Bytes::from_static(body.as_bytes()),
            close: false,
        }
    }
}

/// What can end a connection: a request the codec rejects (answer its status, then close) or
/// an I/O error.
#[derive(Debug)]
enum CodecError {
    /// Malformed or unsupported request; the status to answer with.
    Reject(u16),
    Io(io::Error),
}

impl From<io::Error> for CodecError {
    fn from(e: io::Error) -> Self {
        CodecError::Io(e)
    }
}

impl From<Error> for CodecError {
    fn from(e: Error) -> Self {
        CodecError::Reject(e.status())
    }
}

/// Where the decoder is within the current request.
enum State {
    /// Waiting for a complete head.
    Head,
    /// The head (already split off) is complete and `body_len` body bytes are still to come.
    Body { req: Request, body_len: usize },
}

/// The per-connection codec: a resumable parser, its header slots (allocated once per
/// connection), and a date cache for the responses.
struct HttpCodec {
    parser: Parser,
    slots: Box<[HeaderSlot]>,
    state: State,
    date: DateCache,
}

impl HttpCodec {
    fn new() -> HttpCodec {
        HttpCodec {
            parser: Parser::new(Config::DEFAULT),
            slots: vec![HeaderSlot::EMPTY; 64].into_boxed_slice(),
            state: State::Head,
            date: DateCache::new(SystemTime::now()),
        }
    }
}

/// Where `part` lies within `whole` (a sub-slice of it, as everything a `Request` hands out
/// is), so it can be found again after `whole` becomes a `Bytes`.
fn range_in(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

impl Decoder for HttpCodec {
    type Item = Request;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Request>, CodecError> {
        if let State::Head = self.state {
            // The parser remembers how far it got, so calling it again after every read does
            // not rescan the lines that were already complete.
            let (head_len, method, path, keep_alive, framing) =
                match self.parser.parse(src, &mut self.slots)? {
                    Status::Partial => return Ok(None),
                    Status::Complete(req) => (
                        req.head_len(),
                        range_in(src, req.method().as_bytes()),
                        range_in(src, req.path()),
                        req.keep_alive(),
                        req.framing(),
                    ),
                };
            let body_len = match framing {
                BodyFraming::None => 0,
                BodyFraming::Length(n) if n <= MAX_BODY => n as usize,
                BodyFraming::Length(_) => return Err(CodecError::Reject(413)),
                // This server buffers whole bodies and wants their size up front.
                BodyFraming::Chunked => return Err(CodecError::Reject(411)),
            };
            let head = src.split_to(head_len).freeze();
            let req = Request {
                head,
                method,
                path,
                keep_alive,
                body: Bytes::new(),
            };
            self.state = State::Body { req, body_len };
        }
        let State::Body { body_len, .. } = self.state else {
            return Ok(None);
        };
        if src.len() < body_len {
            src.reserve(body_len - src.len());
            return Ok(None);
        }
        let body = src.split_to(body_len).freeze();
        let State::Body { mut req, .. } = std::mem::replace(&mut self.state, State::Head) else {
            return Ok(None);
        };
        req.body = body;
        Ok(Some(req))
    }
}

impl Encoder<Response> for HttpCodec {
    type Error = CodecError;

    fn encode(&mut self, resp: Response, dst: &mut BytesMut) -> Result<(), CodecError> {
        // Re-renders the date only when the second changed.
        self.date.refresh(SystemTime::now());
        dst.reserve(128 + resp.body.len());
        let mut head = ResponseHead::new(dst, resp.status);
        head.static_header(KnownHeader::Server, b"bufslab-http")
            .static_header(KnownHeader::ContentType, b"text/plain");
        if resp.close {
            head.connection_close();
        }
        head.finish_with_length(resp.body.len() as u64, &self.date);
        dst.extend_from_slice(&resp.body);
        Ok(())
    }
}

/// The application: two routes.
fn handle(req: &Request) -> Response {
    match (req.method(), req.path()) {
        (b"GET", b"/hello") => Response::text(200, "Hello, World!"),
        (b"POST", b"/echo") => Response {
            status: 200,
            body: req.body.clone(),
            close: false,
        },
        _ => Response::text(404, "not found"),
    }
}

/// Serves one connection until the peer closes it, asks to close, or sends something the
/// codec rejects (answered with its status, then closed: the framing of anything after a
/// rejected request cannot be trusted).
async fn serve(stream: TcpStream) -> io::Result<()> {
    let mut framed = Framed::new(stream, HttpCodec::new());
    while let Some(item) = framed.next().await {
        let (resp, keep_alive) = match item {
            Ok(req) => (handle(&req), req.keep_alive),
            Err(CodecError::Reject(status)) => (Response::text(status, ""), false),
            Err(CodecError::Io(e)) => return Err(e),
        };
        let resp = Response {
            close: !keep_alive,
            ..resp
        };
        match framed.send(resp).await {
            Ok(()) => {}
            Err(CodecError::Io(e)) => return Err(e),
            Err(CodecError::Reject(_)) => break,
        }
        if !keep_alive {
            break;
        }
    }
    Ok(())
}

/// Accepts connections and serves each on its own task; `max_conns` bounds the run (for the
/// test), `None` serves forever.
async fn run(listener: TcpListener, max_conns: Option<usize>) -> io::Result<()> {
    let mut tasks = Vec::new();
    let mut accepted = 0;
    while max_conns.map_or(true, |max| accepted < max) {
        let (stream, _) = listener.accept().await?;
        accepted += 1;
        tasks.push(tokio::spawn(async move {
            if let Err(e) = serve(stream).await {
                eprintln!("connection error: {e}");
            }
        }));
    }
    for t in tasks {
        t.await.map_err(io::Error::other)?;
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let listener = TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    run(listener, None).await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// One response as a client sees it, parsed with httparse (not by the crate under test).
    #[derive(Debug, PartialEq)]
    struct Seen {
        status: u16,
        close: bool,
        body: Vec<u8>,
    }

    /// Reads `n` responses from `stream`, each framed by its Content-Length.
    async fn read_responses(stream: &mut TcpStream, n: usize) -> Vec<Seen> {
        let mut buf = Vec::new();
        let mut seen = Vec::new();
        while seen.len() < n {
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut resp = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head_len) = resp.parse(&buf).unwrap() {
                let header = |name: &str| {
                    resp.headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| h.value.to_vec())
                };
                let len: usize = String::from_utf8(header("content-length").unwrap())
                    .unwrap()
                    .parse()
                    .unwrap();
                if buf.len() >= head_len + len {
                    seen.push(Seen {
                        status: resp.code.unwrap(),
                        close: header("connection").as_deref() == Some(b"close"),
                        body: buf[head_len..head_len + len].to_vec(),
                    });
                    buf.drain(..head_len + len);
                    continue;
                }
            }
            let mut chunk = [0u8; 4096];
            let got = stream.read(&mut chunk).await.unwrap();
            assert!(got > 0, "server closed after {} responses", seen.len());
            buf.extend_from_slice(&chunk[..got]);
        }
        seen
    }

    fn ok(body: &str) -> Seen {
        Seen {
            status: 200,
            close: false,
            body: body.as_bytes().to_vec(),
        }
    }

    async fn client(addr: std::net::SocketAddr) {
        // 1. Keep-alive requests, one written byte by byte (the parser resumes), then a
        //    pipelined pair, then a POST whose body arrives after its head.
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.set_nodelay(true).unwrap();
        for &b in b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n" {
            c.write_all(&[b]).await.unwrap();
        }
        assert_eq!(read_responses(&mut c, 1).await, [ok("Hello, World!")]);
        c.write_all(b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n")
            .await
            .unwrap();
        let pair = read_responses(&mut c, 2).await;
        assert_eq!(pair[0], ok("Hello, World!"));
        assert_eq!(pair[1].status, 404);
        c.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello")
            .await
            .unwrap();
        c.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        c.write_all(b" world").await.unwrap();
        assert_eq!(read_responses(&mut c, 1).await, [ok("hello world")]);
        // `Connection: close` is answered, then the server closes.
        c.write_all(b"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let last = read_responses(&mut c, 1).await;
        assert!(last[0].close);
        assert_eq!(c.read(&mut [0u8; 16]).await.unwrap(), 0);

        // 2. A smuggling attempt is rejected with 400 and the connection closed.
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(
            b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\
              Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        )
        .await
        .unwrap();
        let rejected = read_responses(&mut c, 1).await;
        assert_eq!((rejected[0].status, rejected[0].close), (400, true));
        assert_eq!(c.read(&mut [0u8; 16]).await.unwrap(), 0);

        // 3. A chunked body, which this server does not buffer: 411.
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(
            b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        )
        .await
        .unwrap();
        assert_eq!(read_responses(&mut c, 1).await[0].status, 411);
    }

    #[tokio::test]
    async fn serves_requests_from_a_client_then_exits() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(run(listener, Some(3)));
        // A guard against a hang, not a speed check: the exchange takes milliseconds.
        tokio::time::timeout(Duration::from_secs(30), client(addr))
            .await
            .expect("client finished");
        tokio::time::timeout(Duration::from_secs(30), server)
            .await
            .expect("server finished")
            .unwrap()
            .unwrap();
    }
}
