//! Message framing from the header fields (RFC 9112 §6, RFC 9110 §8.6): Content-Length and
//! Transfer-Encoding, plus the Host, Connection and Expect bookkeeping done in the same pass.
//!
//! The head parsers hand each framing-relevant field line to [`Framing::header`] as soon as
//! the line is complete, so the caller never walks the headers again; [`Framing::finish`]
//! (requests) and [`Framing::finish_response`] (responses, RFC 9112 §6.3 given the request's
//! method and the status) apply the cross-field rules once the head is complete. Requests and
//! responses share the field checks (one Content-Length value, `chunked` once, codings that
//! are tokens); only the cross-field rules differ, because a response can be delimited by the
//! server closing the connection and a request cannot.

use crate::error::Error;
use crate::fields::flags;
use crate::header_name::KnownHeader;
use crate::parsed_response::ResponseFraming;
use crate::request::{BodyFraming, Method, Version};
use crate::response::status_allows_content;
use crate::scan::{eq_fold, is_token, list_elements, load4, load8, trim_ows};
use crate::uri::{valid_authority, Port};

/// Whether `name` (a token) equals `lower` (a lowercase name of letters and `-`) ASCII
/// case-insensitively, for names of 4 to 24 bytes: up to three overlapping word compares.
/// Folding with `| 0x20` is exact on tokens: no `tchar` but an uppercase letter folds onto a
/// lowercase letter, and none but `-` folds onto `-`.
#[inline(always)]
fn name_is(name: &[u8], lower: &[u8]) -> bool {
    const F8: u64 = 0x2020_2020_2020_2020;
    const F4: u64 = 0x2020_2020;
    let n = lower.len();
    debug_assert!((4..=24).contains(&n) && name.len() == n);
    if n < 8 {
        return (load4(name, 0) | F4 == load4(lower, 0))
            & (load4(name, n - 4) | F4 == load4(lower, n - 4));
    }
    let ends =
        (load8(name, 0) | F8 == load8(lower, 0)) & (load8(name, n - 8) | F8 == load8(lower, n - 8));
    ends && (n <= 16 || load8(name, 8) | F8 == load8(lower, 8))
}

/// The request field names whose lines [`Framing::header`] interprets (Content-Length,
/// Transfer-Encoding, Host, Connection, Expect), recognised from the raw name (a token) at
/// parse time: a jump on the length and a word compare or two. Every other name is
/// classified only when the caller reads it.
#[inline(always)]
pub(crate) fn request_field(name: &[u8]) -> Option<KnownHeader> {
    // Literal names in each arm, so that every compare is against an immediate.
    match name.len() {
        4 if name_is(name, b"host") => Some(KnownHeader::Host),
        6 if name_is(name, b"expect") => Some(KnownHeader::Expect),
        10 if name_is(name, b"connection") => Some(KnownHeader::Connection),
        14 if name_is(name, b"content-length") => Some(KnownHeader::ContentLength),
        17 if name_is(name, b"transfer-encoding") => Some(KnownHeader::TransferEncoding),
        _ => None,
    }
}

/// The response field names whose lines [`Framing::header`] interprets: `Connection` always,
/// Content-Length and Transfer-Encoding only when they frame the body (`body`: no
/// [`fixed_response_framing`]). Host and Expect mean nothing in a response and are not
/// interpreted.
#[inline(always)]
pub(crate) fn response_field(name: &[u8], body: bool) -> Option<KnownHeader> {
    match name.len() {
        10 if name_is(name, b"connection") => Some(KnownHeader::Connection),
        14 if body && name_is(name, b"content-length") => Some(KnownHeader::ContentLength),
        17 if body && name_is(name, b"transfer-encoding") => Some(KnownHeader::TransferEncoding),
        _ => None,
    }
}

// Transfer-Encoding state bits.
const TE_SEEN: u8 = 1;
const TE_CHUNKED: u8 = 2;
const TE_CHUNKED_LAST: u8 = 4;
const TE_OTHER: u8 = 8;
/// A coding named `chunked` with parameters, which it has none of (RFC 9112 §7: "SHOULD be
/// treated as an error"). A request is rejected anyway, as `chunked` is then not last; a
/// response, which could otherwise be read until close, needs the bit.
const TE_CHUNKED_PARAMS: u8 = 16;

/// What the framing-relevant field lines seen so far declared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Framing {
    content_length: Option<u64>,
    te: u8,
    /// Index of the Host field line.
    pub(crate) host: Option<u32>,
    /// `fields::flags` bits.
    pub(crate) flags: u8,
}

impl Framing {
    pub(crate) const NEW: Framing = Framing {
        content_length: None,
        te: 0,
        host: None,
        flags: 0,
    };

    /// Interprets a framing-relevant field line (`view[vs..ve]` is its value, `index` its
    /// position in the head). What nearly every request sends (one Host, a one-token
    /// Connection, a Content-Length) is handled inline in the parser's header loop: a call
    /// would cost more than the check, since it clobbers the loop's vector constants.
    #[inline(always)]
    pub(crate) fn header(
        &mut self,
        k: KnownHeader,
        view: &[u8],
        vs: usize,
        ve: usize,
        index: usize,
    ) -> Result<(), Error> {
        // `vs..ve` is a field value inside `view`: the `else` is never taken, and a branch
        // there costs less than clamping the slice.
        let Some(v) = view.get(vs..ve) else {
            return Err(Error::InvalidHeaderValue);
        };
        match k {
            KnownHeader::Host => {
                if self.host.is_some() {
                    return Err(Error::MultipleHost);
                }
                // RFC 9112 §3.2: `uri-host [ ":" port ]`. Scanned in the whole buffer so that
                // the vector loads can run past the value; rarer shapes (IP-literals,
                // percent-encodings, anything invalid) get the exact grammar out of line.
                self.host = Some(index as u32);
                if !crate::simd::plain_host(view, vs, ve) {
                    // Only offsets go along: keeping the value's slice alive across the
                    // header loop for this call cost every request (callgrind).
                    return unusual_host(view, vs, ve);
                }
            }
            KnownHeader::ContentLength => {
                let n = parse_content_length(v)?;
                match self.content_length {
                    // RFC 9110 §8.6: repeated values must agree.
                    Some(prev) if prev != n => return Err(Error::InvalidContentLength),
                    _ => self.content_length = Some(n),
                }
            }
            KnownHeader::Connection if eq_fold(v, b"keep-alive") => {
                self.flags |= flags::KEEP_ALIVE;
            }
            KnownHeader::Connection if eq_fold(v, b"close") => self.flags |= flags::CLOSE,
            _ => return self.other_header(k, v),
        }
        Ok(())
    }

    /// Transfer-Encoding, Expect and Connection lists: rare enough to stay out of line.
    #[inline(never)]
    fn other_header(&mut self, k: KnownHeader, v: &[u8]) -> Result<(), Error> {
        match k {
            KnownHeader::TransferEncoding => {
                self.te = transfer_encoding(self.te, v)?;
            }
            KnownHeader::Connection => {
                for t in list_elements(v) {
                    if eq_fold(t, b"close") {
                        self.flags |= flags::CLOSE;
                    } else if eq_fold(t, b"keep-alive") {
                        self.flags |= flags::KEEP_ALIVE;
                    } else if eq_fold(t, b"upgrade") {
                        self.flags |= flags::UPGRADE;
                    }
                }
            }
            KnownHeader::Expect => {
                for e in list_elements(v) {
                    if eq_fold(e, b"100-continue") {
                        self.flags |= flags::EXPECT_CONTINUE;
                    } else {
                        return Err(Error::UnsupportedExpectation);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A Transfer-Encoding must be the only framing field, in HTTP/1.1: with HTTP/1.0 the
    /// framing is faulty (RFC 9112 §6.1), with a Content-Length ambiguous between two hops
    /// (§6.3 point 3: the smuggling and response-splitting hole). Both are rejected, in
    /// requests and responses alike.
    fn transfer_encoding_alone(&self, version: Version) -> Result<(), Error> {
        if version == Version::Http10 {
            return Err(Error::TransferEncodingInHttp10);
        }
        if self.content_length.is_some() {
            return Err(Error::ContentLengthWithTransferEncoding);
        }
        Ok(())
    }

    /// Cross-field framing rules, applied once the head is complete (RFC 9112 §6.3).
    pub(crate) fn finish(&self, version: Version) -> Result<BodyFraming, Error> {
        if version == Version::Http11 && self.host.is_none() {
            return Err(Error::MissingHost);
        }
        if self.te & TE_SEEN != 0 {
            self.transfer_encoding_alone(version)?;
            if self.te & TE_CHUNKED_LAST == 0 {
                return Err(Error::InvalidTransferEncoding);
            }
            if self.te & TE_OTHER != 0 {
                return Err(Error::UnsupportedTransferCoding);
            }
            return Ok(BodyFraming::Chunked);
        }
        Ok(match self.content_length {
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::None,
        })
    }
}

/// `Content-Length = 1*DIGIT`, or a list of identical values (RFC 9110 §8.6 permits
/// collapsing `5, 5`); overflow of `u64` is invalid.
#[inline(always)]
fn parse_content_length(v: &[u8]) -> Result<u64, Error> {
    // A single run of at most 19 digits (cannot overflow u64); anything else out of line.
    if !v.is_empty() && v.len() <= 19 && v.iter().all(u8::is_ascii_digit) {
        Ok(v.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
    } else {
        content_length_list(v)
    }
}

/// [`parse_content_length`] for lists, whitespace, long or invalid values.
#[inline(never)]
fn content_length_list(v: &[u8]) -> Result<u64, Error> {
    let mut result: Option<u64> = None;
    for elem in v.split(|&b| b == b',') {
        let digits = trim_ows(elem);
        if digits.is_empty() {
            return Err(Error::InvalidContentLength);
        }
        let mut n: u64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return Err(Error::InvalidContentLength);
            }
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or(Error::InvalidContentLength)?;
        }
        match result {
            Some(prev) if prev != n => return Err(Error::InvalidContentLength),
            _ => result = Some(n),
        }
    }
    result.ok_or(Error::InvalidContentLength)
}

/// The framing a response has whatever its fields say (RFC 9112 §6.3 points 1 and 2), if
/// any: none after a HEAD request or for a status without content (1xx, 204, 304), a tunnel
/// after a 2xx to CONNECT. A client MUST ignore Content-Length and Transfer-Encoding in the
/// latter (RFC 9110 §9.3.6), and they frame nothing in the former, so those fields are not
/// even checked there.
#[inline]
pub(crate) fn fixed_response_framing(method: Method<'_>, status: u16) -> Option<ResponseFraming> {
    if method == Method::Head {
        return Some(ResponseFraming::None);
    }
    // RFC 9110 §15: a code outside 100..=599 is processed as a 5xx, whose body is framed by
    // its fields.
    if !(100..=599).contains(&status) {
        return None;
    }
    if !status_allows_content(status) {
        Some(ResponseFraming::None)
    } else if method == Method::Connect && (200..300).contains(&status) {
        Some(ResponseFraming::Tunnel)
    } else {
        None
    }
}

impl Framing {
    /// A response's framing, RFC 9112 §6.3 in its order, once the head is complete: `fixed`
    /// ([`fixed_response_framing`]) first; then Transfer-Encoding (point 4: chunked when
    /// `chunked` is the final coding, else until the server closes), which with a
    /// Content-Length is an error (point 3: "ought to be handled as an error", the response
    /// splitting hole), as is Transfer-Encoding in HTTP/1.0 (§6.1: the framing is faulty);
    /// then Content-Length (point 6; invalid or differing values were rejected when their line
    /// arrived, point 5); else until the server closes (point 8). A `chunked` with parameters
    /// is an error (RFC 9112 §7), not an unknown coding that would leave the body to be read
    /// until close.
    pub(crate) fn finish_response(
        &self,
        version: Version,
        fixed: Option<ResponseFraming>,
    ) -> Result<ResponseFraming, Error> {
        if let Some(framing) = fixed {
            return Ok(framing);
        }
        if self.te & TE_SEEN != 0 {
            self.transfer_encoding_alone(version)?;
            if self.te & TE_CHUNKED_PARAMS != 0 {
                return Err(Error::InvalidTransferEncoding);
            }
            return Ok(if self.te & TE_CHUNKED_LAST != 0 {
                ResponseFraming::Chunked
            } else {
                ResponseFraming::CloseDelimited
            });
        }
        Ok(match self.content_length {
            Some(n) => ResponseFraming::Length(n),
            None => ResponseFraming::CloseDelimited,
        })
    }
}

/// Folds one Transfer-Encoding field line into the TE state (RFC 9112 §6.1): a list of
/// `transfer-coding`s; `chunked` at most once and, at the end of all lines, last. Empty list
/// elements are ignored (RFC 9110 §5.6.1), also a whole empty line, which combines with the
/// others as `, chunked` would; a Transfer-Encoding with no coding at all is rejected in
/// [`Framing::finish`] (chunked is not last).
fn transfer_encoding(mut te: u8, v: &[u8]) -> Result<u8, Error> {
    for coding in list_elements(v) {
        if eq_fold(coding, b"chunked") {
            if te & TE_CHUNKED != 0 {
                // "A sender MUST NOT apply the chunked transfer coding more than once."
                return Err(Error::InvalidTransferEncoding);
            }
            te |= TE_CHUNKED | TE_CHUNKED_LAST;
        } else {
            // transfer-coding = token *( OWS ";" OWS transfer-parameter ); only the name
            // matters here, and it must be a token.
            let name = trim_ows(coding.split(|&b| b == b';').next().unwrap_or_default());
            if !is_token(name) {
                return Err(Error::InvalidTransferEncoding);
            }
            if eq_fold(name, b"chunked") {
                te |= TE_CHUNKED_PARAMS;
            }
            te = (te | TE_OTHER) & !TE_CHUNKED_LAST;
        }
    }
    Ok(te | TE_SEEN)
}

/// A Host value of a rarer shape than `crate::simd::plain_host` accepts: the exact grammar.
#[inline(never)]
fn unusual_host(view: &[u8], vs: usize, ve: usize) -> Result<(), Error> {
    if valid_authority(view.get(vs..ve).unwrap_or_default(), Port::Optional) {
        Ok(())
    } else {
        Err(Error::InvalidHost)
    }
}
