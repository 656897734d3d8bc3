//! Body readers: Content-Length and a dispatcher over all framings.
//!
//! Readers never copy: they hand out sub-slices of the caller's input, and "skipping" a body
//! is just consuming input without looking at it (Kestrel's "consume body without
//! allocating").

use crate::chunked::ChunkedDecoder;
use crate::error::Error;
use crate::request::BodyFraming;

/// One step of body decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded<'b> {
    /// Input bytes used by this step (framing and data); advance the input by this much.
    pub consumed: usize,
    /// Body bytes, a sub-slice of the input (possibly empty).
    pub data: &'b [u8],
    /// The body is complete; any input after `consumed` belongs to the next message.
    pub done: bool,
}

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

/// Decodes a request body with whatever framing the head declared.
#[derive(Clone, Debug)]
pub enum BodyDecoder {
    /// No body.
    Empty,
    /// Content-Length body.
    Length(LengthDecoder),
    /// Chunked body.
    Chunked(ChunkedDecoder),
}

impl BodyDecoder {
    /// The decoder for a framing (from [`Request::framing`](crate::Request::framing)).
    #[must_use]
    pub fn new(framing: BodyFraming) -> BodyDecoder {
        match framing {
            BodyFraming::None | BodyFraming::Length(0) => BodyDecoder::Empty,
            BodyFraming::Length(n) => BodyDecoder::Length(LengthDecoder::new(n)),
            BodyFraming::Chunked => BodyDecoder::Chunked(ChunkedDecoder::new()),
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
