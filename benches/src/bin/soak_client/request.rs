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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer::{peer_reading, Head};

    fn response(status: u16, fields: &[(&str, &str)], body: &[u8]) -> Response {
        Response {
            head: Head {
                version: "HTTP/1.1".to_owned(),
                status,
                fields: fields
                    .iter()
                    .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                    .collect(),
            },
            body: body.to_vec(),
        }
    }

    #[test]
    fn a_chunked_echo_frames_its_data() {
        let mut rng = Rng::new(7);
        let data = rng.bytes(100_000);
        let req = Request::echo_chunked(&mut rng, data.clone());
        let mut answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        answer.extend_from_slice(&req.body);
        let r = peer_reading(answer).response(false).expect("chunked");
        assert_eq!(r.body, data);
        assert!(req.check(&r).is_ok());
    }

    #[test]
    fn an_echo_must_match_byte_for_byte() {
        let req = Request::echo(b"abc".to_vec(), false);
        let fields = [("content-length", "3")];
        assert!(req.check(&response(200, &fields, b"abc")).is_ok());
        let e = req
            .check(&response(200, &fields, b"abd"))
            .expect_err("differs");
        assert!(e.contains("first difference at Some(2)"), "{e}");
        assert!(req.check(&response(500, &fields, b"abc")).is_err());
        let close = [("content-length", "3"), ("connection", "close")];
        assert!(
            req.check(&response(200, &close, b"abc")).is_err(),
            "a close nobody asked for"
        );
    }

    #[test]
    fn head_answers_carry_the_length_and_no_body() {
        let mut req = Request::get("/plaintext", Expect::Plaintext);
        req.head_only = true;
        assert!(req
            .check(&response(200, &[("content-length", "13")], b""))
            .is_ok());
        assert!(req
            .check(&response(200, &[("content-length", "12")], b""))
            .is_err());
    }

    #[test]
    fn closing_adds_the_field_to_the_head() {
        let req = Request::get("/json", Expect::Json).closing();
        assert!(req.close);
        assert!(req
            .head
            .ends_with(b"Host: soak\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn a_large_head_outgrows_a_block_but_not_the_limit() {
        let mut rng = Rng::new(3);
        for _ in 0..100 {
            let n = Request::large_head(&mut rng, 8192).head.len();
            assert!((4200..=8092).contains(&n), "{n}");
        }
    }
}
