//! The valid requests and what each must get back.

use std::fmt::Write as _;

use crate::peer::Response;
use crate::rng::Rng;

const PLAINTEXT: &[u8] = b"Hello, World!";
const JSON: &[u8] = br#"{"message":"Hello, World!"}"#;

/// What a valid request must get back.
#[derive(Clone)]
pub enum Expect {
    Plaintext,
    Json,
    NotFound,
    NotAllowed,
    Echo { body: Vec<u8>, chunked: bool },
}

/// A valid request.
pub struct Request {
    pub head: Vec<u8>,
    pub body: Vec<u8>,
    pub expect: Expect,
    pub head_only: bool,
    /// The response must say `Connection: close`, and the server close after it.
    pub close: bool,
    /// `Expect: 100-continue`: the body goes only after a `100 Continue`.
    pub continue_100: bool,
}

impl Request {
    pub fn get(path: &str, expect: Expect) -> Request {
        Request {
            head: format!("GET {path} HTTP/1.1\r\nHost: soak\r\n\r\n").into_bytes(),
            body: Vec::new(),
            expect,
            head_only: false,
            close: false,
            continue_100: false,
        }
    }

    pub fn echo(body: Vec<u8>, continue_100: bool) -> Request {
        let expect = if continue_100 {
            "Expect: 100-continue\r\n"
        } else {
            ""
        };
        Request {
            head: format!(
                "POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Type: application/octet-stream\r\n\
                 {expect}Content-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes(),
            expect: Expect::Echo {
                body: body.clone(),
                chunked: false,
            },
            body,
            head_only: false,
            close: false,
            continue_100,
        }
    }

    /// A chunked echo of `data`: random chunk sizes, now and then a chunk extension, upper-case
    /// hex or a trailer field.
    pub fn echo_chunked(rng: &mut Rng, data: Vec<u8>) -> Request {
        let mut body = Vec::with_capacity(data.len() + data.len() / 64 + 64);
        let mut at = 0;
        while at < data.len() {
            let n = rng.range(1, 16 * 1024).min(data.len() - at);
            if rng.percent(50) {
                let _ = write!(SliceWriter(&mut body), "{n:X}");
            } else {
                let _ = write!(SliceWriter(&mut body), "{n:x}");
            }
            if rng.percent(10) {
                body.extend_from_slice(b";ext=1");
            }
            body.extend_from_slice(b"\r\n");
            body.extend_from_slice(&data[at..at + n]);
            body.extend_from_slice(b"\r\n");
            at += n;
        }
        body.extend_from_slice(b"0\r\n");
        if rng.percent(10) {
            body.extend_from_slice(b"X-Trailer: t\r\n");
        }
        body.extend_from_slice(b"\r\n");
        Request {
            head: b"POST /echo HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec(),
            body,
            expect: Expect::Echo {
                body: data,
                chunked: true,
            },
            head_only: false,
            close: false,
            continue_100: false,
        }
    }

    /// One of the small requests: the GET routes, HEAD, 404, 405, a small echo.
    pub fn small(rng: &mut Rng) -> Request {
        match rng.next() % 10 {
            0..=2 => Request::get("/plaintext", Expect::Plaintext),
            3 | 4 => Request::get("/json", Expect::Json),
            5 => Request {
                head: b"HEAD /plaintext HTTP/1.1\r\nHost: soak\r\n\r\n".to_vec(),
                head_only: true,
                ..Request::get("/plaintext", Expect::Plaintext)
            },
            6 => Request::get("/no/such/path", Expect::NotFound),
            7 => Request {
                head: b"DELETE /json HTTP/1.1\r\nHost: soak\r\n\r\n".to_vec(),
                ..Request::get("/json", Expect::NotAllowed)
            },
            _ => {
                let n = rng.range(0, 2048);
                Request::echo(rng.bytes(n), false)
            }
        }
    }

    /// A `GET /plaintext` whose head outgrows one 4 KiB block but not `max_head` (a large
    /// cookie, as browsers send).
    pub fn large_head(rng: &mut Rng, max_head: usize) -> Request {
        let base = "GET /plaintext HTTP/1.1\r\nHost: soak\r\nCookie: c=\r\n\r\n".len();
        let n = rng.range(4200, max_head.max(4400) - 100) - base;
        let cookie: String = (0..n)
            .map(|_| char::from(b'a' + (rng.next() % 26) as u8))
            .collect();
        Request {
            head: format!("GET /plaintext HTTP/1.1\r\nHost: soak\r\nCookie: c={cookie}\r\n\r\n")
                .into_bytes(),
            ..Request::get("/plaintext", Expect::Plaintext)
        }
    }

    /// Adds `Connection: close` to the head.
    pub fn closing(mut self) -> Request {
        let end = self.head.len() - 2;
        self.head
            .splice(end..end, b"Connection: close\r\n".iter().copied());
        self.close = true;
        self
    }

    /// Checks a response against what this request must get.
    pub fn check(&self, r: &Response) -> Result<(), String> {
        let h = &r.head;
        if h.version != "HTTP/1.1" {
            return Err(format!("version {}", h.version));
        }
        let status = match self.expect {
            Expect::Plaintext | Expect::Json | Expect::Echo { .. } => 200,
            Expect::NotFound => 404,
            Expect::NotAllowed => 405,
        };
        if h.status != status {
            return Err(format!("status {}, expected {status}", h.status));
        }
        if h.closes() != self.close {
            return Err(format!(
                "Connection: close {} (expected {})",
                h.closes(),
                self.close
            ));
        }
        if matches!(self.expect, Expect::NotAllowed) && h.field("allow").is_none() {
            return Err("405 without Allow".to_owned());
        }
        let want: &[u8] = match &self.expect {
            Expect::Plaintext => PLAINTEXT,
            Expect::Json => JSON,
            Expect::Echo { body, chunked } => {
                if h.chunked() != *chunked {
                    return Err(format!(
                        "chunked response {} for chunked request {chunked}",
                        h.chunked()
                    ));
                }
                body
            }
            Expect::NotFound | Expect::NotAllowed => return Ok(()),
        };
        if self.head_only {
            let len = h.field("content-length").unwrap_or_default();
            if len != want.len().to_string() || !r.body.is_empty() {
                return Err(format!(
                    "HEAD: Content-Length {len:?}, {} body bytes",
                    r.body.len()
                ));
            }
            return Ok(());
        }
        if r.body != want {
            let at = r.body.iter().zip(want).position(|(a, b)| a != b);
            return Err(format!(
                "body of {} bytes differs from the {} expected (first difference at {:?})",
                r.body.len(),
                want.len(),
                at
            ));
        }
        Ok(())
    }
}

/// `write!` into a `Vec<u8>`.
pub struct SliceWriter<'a>(pub &'a mut Vec<u8>);

impl std::fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
