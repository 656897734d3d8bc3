//! Body readers: Content-Length and a dispatcher over all framings, of requests and
//! responses.
//!
//! Readers never copy: they hand out sub-slices of the caller's input, and "skipping" a body
//! is just consuming input without looking at it (Kestrel's "consume body without
//! allocating").

use crate::chunked::ChunkedDecoder;
use crate::config::Config;
use crate::decoded::Decoded;
use crate::error::Error;
use crate::parsed_response::ResponseFraming;
use crate::request::BodyFraming;

/// Reads a body of known length (RFC 9112 §6.3 point 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthDecoder {
    remaining: u64,
}

impl LengthDecoder {
    /// A reader for `len` body bytes.
    #[must_use]
    pub const fn new(len: u64) -> LengthDecoder {
        LengthDecoder { remaining: len }
    }

    /// Body bytes still expected.
    #[must_use]
    pub const fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Takes as much of the body as `input` holds.
    pub fn decode<'b>(&mut self, input: &'b [u8]) -> Decoded<'b> {
        let take = usize::try_from(self.remaining).map_or(input.len(), |r| r.min(input.len()));
        let data = input.get(..take).unwrap_or_default();
        self.remaining -= take as u64;
        Decoded {
            consumed: take,
            data,
            done: self.remaining == 0,
        }
    }
}

/// Decodes a request or response body with whatever framing the head declared.
///
/// # Examples
///
/// ```
/// use bufslab_http::{parse_request, BodyDecoder, HeaderSlot};
/// let mut slots = [HeaderSlot::EMPTY; 8];
/// let wire = b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
///              3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
/// let req = parse_request(wire, &mut slots)?.complete().unwrap();
/// let mut body = BodyDecoder::new(req.framing());
/// let (mut at, mut data) = (req.head_len(), Vec::new());
/// loop {
///     let step = body.decode(&wire[at..])?;
///     data.extend_from_slice(step.data);
///     at += step.consumed;
///     if step.done {
///         break;
///     }
/// }
/// assert_eq!(data, b"abcde");
/// assert!(wire[at..].starts_with(b"GET / "));
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum BodyDecoder {
    /// No body.
    Empty,
    /// Content-Length body.
    Length(LengthDecoder),
    /// Chunked body.
    Chunked(ChunkedDecoder),
    /// A response body that ends when the server closes the connection
    /// ([`ResponseFraming::CloseDelimited`]): all input is body, and `done` is never set, since
    /// only the end of the stream, which the caller sees, ends it.
    UntilClose,
}

impl BodyDecoder {
    /// The decoder for a framing (from [`Request::framing`](crate::Request::framing)), with
    /// the default limits.
    #[must_use]
    pub const fn new(framing: BodyFraming) -> BodyDecoder {
        BodyDecoder::with_config(framing, &Config::DEFAULT)
    }

    /// The decoder for a framing, with the chunked limits of `config` (pass the parser's
    /// [`Parser::config`](crate::Parser::config)).
    #[must_use]
    pub const fn with_config(framing: BodyFraming, config: &Config) -> BodyDecoder {
        match framing {
            BodyFraming::None | BodyFraming::Length(0) => BodyDecoder::Empty,
            BodyFraming::Length(n) => BodyDecoder::Length(LengthDecoder::new(n)),
            BodyFraming::Chunked => BodyDecoder::Chunked(ChunkedDecoder::with_config(config)),
        }
    }

    /// The decoder for a response's framing (from
    /// [`Response::framing`](crate::Response::framing)), with the chunked limits of `config`
    /// (pass the parser's [`ResponseParser::config`](crate::ResponseParser::config)). A tunnel
    /// has no body: what follows the head is the tunnel's.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{BodyDecoder, Config, ResponseFraming};
    /// let mut body = BodyDecoder::for_response(ResponseFraming::CloseDelimited, &Config::DEFAULT);
    /// let step = body.decode(b"all of it")?;
    /// assert_eq!((step.data, step.done), (&b"all of it"[..], false));
    /// let mut none = BodyDecoder::for_response(ResponseFraming::Tunnel, &Config::DEFAULT);
    /// assert_eq!(none.decode(b"tunnel bytes")?.consumed, 0);
    /// # Ok::<(), bufslab_http::Error>(())
    /// ```
    #[must_use]
    pub const fn for_response(framing: ResponseFraming, config: &Config) -> BodyDecoder {
        match framing {
            ResponseFraming::None | ResponseFraming::Tunnel | ResponseFraming::Length(0) => {
                BodyDecoder::Empty
            }
            ResponseFraming::Length(n) => BodyDecoder::Length(LengthDecoder::new(n)),
            ResponseFraming::Chunked => BodyDecoder::Chunked(ChunkedDecoder::with_config(config)),
            ResponseFraming::CloseDelimited => BodyDecoder::UntilClose,
        }
    }

    /// Decodes the next piece of body from `input` (zero-copy).
    ///
    /// # Errors
    /// Chunked framing errors (all 400).
    pub fn decode<'b>(&mut self, input: &'b [u8]) -> Result<Decoded<'b>, Error> {
        match self {
            BodyDecoder::Empty => Ok(Decoded {
                consumed: 0,
                data: &[],
                done: true,
            }),
            BodyDecoder::Length(l) => Ok(l.decode(input)),
            BodyDecoder::Chunked(c) => c.decode(input),
            BodyDecoder::UntilClose => Ok(Decoded {
                consumed: input.len(),
                data: input,
                done: false,
            }),
        }
    }

    /// Consumes as much body as `input` holds without looking at the data; returns the bytes
    /// consumed and whether the body is complete.
    ///
    /// # Errors
    /// Chunked framing errors (all 400).
    pub fn skip(&mut self, input: &[u8]) -> Result<(usize, bool), Error> {
        match self {
            BodyDecoder::Empty => Ok((0, true)),
            BodyDecoder::Length(l) => {
                let d = l.decode(input);
                Ok((d.consumed, d.done))
            }
            BodyDecoder::Chunked(c) => c.skip(input),
            BodyDecoder::UntilClose => Ok((input.len(), false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 9112 §6.3 point 6: exactly Content-Length bytes, the rest is the next request.
    #[test]
    fn rfc9112_6_3_content_length_body_stops_at_length() {
        let mut d = LengthDecoder::new(5);
        let r = d.decode(b"hel");
        assert_eq!((r.consumed, r.data, r.done), (3, &b"hel"[..], false));
        let r = d.decode(b"loGET /");
        assert_eq!((r.consumed, r.data, r.done), (2, &b"lo"[..], true));
        let mut b = BodyDecoder::new(BodyFraming::Length(3));
        assert_eq!(b.skip(b"abcdef").unwrap(), (3, true));
        let mut e = BodyDecoder::new(BodyFraming::None);
        assert_eq!(e.skip(b"abc").unwrap(), (0, true));
    }

    #[test]
    fn huge_length_does_not_overflow() {
        let mut d = LengthDecoder::new(u64::MAX);
        let r = d.decode(b"abc");
        assert_eq!(r.consumed, 3);
        assert_eq!(d.remaining(), u64::MAX - 3);
    }
}
