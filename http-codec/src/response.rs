//! Response head encoder into any [`bytes::BufMut`], with no allocation.
//!
//! Every fixed part is a precomputed byte constant (Kestrel's "precomputed header bytes"):
//! status lines, and each known header's `"\r\nName: "` prefix. Lines are written as
//! `"\r\n" name ": " value`, i.e. each constant carries the *previous* line's CRLF, so a
//! header costs two copies (prefix, value) instead of three. `finish` writes the last CRLF
//! plus the empty line. Content-Length goes through `itoa`; the Date comes pre-rendered from a
//! [`DateCache`].

use bytes::BufMut;

use crate::date::DateCache;
use crate::error::Error;
use crate::header_name::KnownHeader;
use crate::scan::is_token;
use crate::simd::find_ctl_but_tab;

macro_rules! status_lines {
    ($( $code:literal $reason:literal ),+ $(,)?) => {
        /// The precomputed `HTTP/1.1 <code> <reason>` line (without CRLF) for common codes.
        #[must_use]
        #[inline]
        pub const fn status_line(code: u16) -> Option<&'static [u8]> {
            match code {
                $( $code => Some(concat!("HTTP/1.1 ", $code, " ", $reason).as_bytes()), )+
                _ => None,
            }
        }

        /// The reason phrase for common codes (RFC 9110 §15), `""` otherwise.
        #[must_use]
        pub const fn reason(code: u16) -> &'static str {
            match code {
                $( $code => $reason, )+
                _ => "",
            }
        }
    };
}

status_lines! {
    100 "Continue", 101 "Switching Protocols",
    200 "OK", 201 "Created", 202 "Accepted", 203 "Non-Authoritative Information",
    204 "No Content", 205 "Reset Content", 206 "Partial Content",
    300 "Multiple Choices", 301 "Moved Permanently", 302 "Found", 303 "See Other",
    304 "Not Modified", 307 "Temporary Redirect", 308 "Permanent Redirect",
    400 "Bad Request", 401 "Unauthorized", 402 "Payment Required", 403 "Forbidden",
    404 "Not Found", 405 "Method Not Allowed", 406 "Not Acceptable",
    407 "Proxy Authentication Required", 408 "Request Timeout", 409 "Conflict", 410 "Gone",
    411 "Length Required", 412 "Precondition Failed", 413 "Content Too Large",
    414 "URI Too Long", 415 "Unsupported Media Type", 416 "Range Not Satisfiable",
    417 "Expectation Failed", 421 "Misdirected Request", 422 "Unprocessable Content",
    426 "Upgrade Required", 428 "Precondition Required", 429 "Too Many Requests",
    431 "Request Header Fields Too Large",
    500 "Internal Server Error", 501 "Not Implemented", 502 "Bad Gateway",
    503 "Service Unavailable", 504 "Gateway Timeout", 505 "HTTP Version Not Supported",
}

/// The interim response a server sends before reading a body announced with
/// `Expect: 100-continue` (RFC 9110 §10.1.1).
pub const CONTINUE_100: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Writes one response head. Create with [`ResponseHead::new`], add headers, then
/// [`finish`](ResponseHead::finish); write the body after.
///
/// Every method writes with [`BufMut::put_slice`], which panics when the buffer has less spare
/// capacity than the bytes written. A growable buffer (`BytesMut`, `Vec<u8>`) never runs out;
/// a fixed-size one (a pooled block, `&mut [u8]`) must have room for the whole head: check
/// [`BufMut::remaining_mut`] first (a head with a Date and a Content-Length is its status line
/// plus about 60 bytes, plus each header's name and value and 4 bytes).
///
/// # Examples
///
/// ```
/// use bufslab_http::{DateCache, KnownHeader, ResponseHead};
/// let date = DateCache::from_unix(784_111_777);
/// let mut out = Vec::new();
/// ResponseHead::new(&mut out, 200)
///     .static_header(KnownHeader::ContentType, b"text/plain")
///     .content_length(13)
///     .date(&date)
///     .finish();
/// out.extend_from_slice(b"Hello, World!");
/// assert_eq!(
///     out,
///     b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\
///       Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\nHello, World!"
/// );
/// ```
#[derive(Debug)]
#[must_use = "call finish() to terminate the head"]
pub struct ResponseHead<'a, B: BufMut> {
    buf: &'a mut B,
}

impl<'a, B: BufMut> ResponseHead<'a, B> {
    /// Starts a response with this status code. Always `HTTP/1.1`: a server answers with the
    /// highest version it conforms to (RFC 9110 §6.2), also to HTTP/1.0 clients. Codes outside
    /// `100..=999` are written as 500 (a status code is exactly three digits, RFC 9110 §15).
    ///
    /// # Panics
    /// If `buf` has no room for the status line (see [`ResponseHead`]).
    #[inline]
    pub fn new(buf: &'a mut B, code: u16) -> Self {
        let code = if (100..=999).contains(&code) {
            code
        } else {
            500
        };
        match status_line(code) {
            Some(line) => buf.put_slice(line),
            None => {
                // The reason phrase may be empty, but the SP before it is required
                // (RFC 9112 §4).
                let digits = [
                    b'0' + (code / 100) as u8,
                    b'0' + (code / 10 % 10) as u8,
                    b'0' + (code % 10) as u8,
                ];
                buf.put_slice(b"HTTP/1.1 ");
                buf.put_slice(&digits);
                buf.put_slice(b" ");
            }
        }
        ResponseHead { buf }
    }

    /// Continues a head from a precomputed prefix: a status line and header lines written
    /// earlier by a `ResponseHead` (without [`finish`](Self::finish)) into a buffer kept for
    /// the server's lifetime. Responses that share status and static headers then cost one
    /// copy for all of them (Kestrel's "precomputed header bytes").
    ///
    /// # Panics
    /// If `buf` has less spare capacity than `prefix.len()` (see [`ResponseHead`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{DateCache, KnownHeader, ResponseHead};
    /// // Once, at startup:
    /// let mut prefix = Vec::new();
    /// ResponseHead::new(&mut prefix, 200).static_header(KnownHeader::Server, b"bufslab");
    /// // Per response:
    /// let date = DateCache::from_unix(0);
    /// let mut out = Vec::new();
    /// ResponseHead::from_prefix(&mut out, &prefix).finish_with_length(2, &date);
    /// assert!(out.starts_with(b"HTTP/1.1 200 OK\r\nServer: bufslab\r\nContent-Length: 2\r\nDate: "));
    /// assert!(out.ends_with(b"GMT\r\n\r\n"));
    /// ```
    #[inline]
    pub fn from_prefix(buf: &'a mut B, prefix: &[u8]) -> Self {
        buf.put_slice(prefix);
        ResponseHead { buf }
    }

    /// Adds a known header with a value chosen by the program (a constant, or a value it has
    /// already validated). Values must not contain CR, LF or NUL; checked only in debug builds.
    ///
    /// # Panics
    /// In debug builds, if `value` holds a control byte other than HTAB, or DEL. If `buf` has
    /// less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn static_header(&mut self, name: KnownHeader, value: &[u8]) -> &mut Self {
        debug_assert!(valid_value(value), "invalid header value");
        self.buf.put_slice(name.line_prefix());
        self.buf.put_slice(value);
        self
    }

    /// Adds a known header after checking the value (no control characters but HTAB, no DEL:
    /// RFC 9110 §5.5). Use this for anything derived from input, to rule out header injection.
    ///
    /// # Errors
    /// [`Error::InvalidHeaderValue`]; nothing is written.
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn header(&mut self, name: KnownHeader, value: &[u8]) -> Result<&mut Self, Error> {
        if !valid_value(value) {
            return Err(Error::InvalidHeaderValue);
        }
        Ok(self.static_header(name, value))
    }

    /// Adds any header after checking the name (a token) and the value.
    ///
    /// # Errors
    /// [`Error::InvalidHeaderName`] or [`Error::InvalidHeaderValue`]; nothing is written.
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    pub fn header_raw(&mut self, name: &[u8], value: &[u8]) -> Result<&mut Self, Error> {
        if !is_token(name) {
            return Err(Error::InvalidHeaderName);
        }
        if !valid_value(value) {
            return Err(Error::InvalidHeaderValue);
        }
        self.buf.put_slice(b"\r\n");
        self.buf.put_slice(name);
        self.buf.put_slice(b": ");
        self.buf.put_slice(value);
        Ok(self)
    }

    /// Adds `Content-Length: n` (formatted with `itoa`).
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn content_length(&mut self, n: u64) -> &mut Self {
        let mut b = itoa::Buffer::new();
        self.buf.put_slice(KnownHeader::ContentLength.line_prefix());
        self.buf.put_slice(b.format(n).as_bytes());
        self
    }

    /// Adds `Transfer-Encoding: chunked`; write the body with [`write_chunk`] and
    /// [`write_last_chunk`].
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn chunked(&mut self) -> &mut Self {
        self.buf.put_slice(b"\r\nTransfer-Encoding: chunked");
        self
    }

    /// Adds `Connection: close`.
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn connection_close(&mut self) -> &mut Self {
        self.buf.put_slice(b"\r\nConnection: close");
        self
    }

    /// Adds the cached `Date` (one 37-byte copy).
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn date(&mut self, cache: &DateCache) -> &mut Self {
        self.buf.put_slice(cache.line());
        self
    }

    /// Ends the head (last CRLF plus the empty line).
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn finish(&mut self) {
        self.buf.put_slice(b"\r\n\r\n");
    }

    /// Adds `Content-Length: n` and the cached `Date`, and ends the head. Every piece but the
    /// digits has a constant length, so after inlining each copy is a few moves, not a
    /// `memcpy` call.
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    #[inline]
    pub fn finish_with_length(&mut self, n: u64, date: &DateCache) {
        self.content_length(n).date(date).finish();
    }
}

/// Writes one chunk of a chunked body (RFC 9112 §7.1): hex size, CRLF, data, CRLF. An empty
/// `data` writes nothing (an empty chunk would end the body).
///
/// # Panics
/// If `buf` has less spare capacity than `data.len()` plus the size line and CRLFs (at most
/// 20 bytes); a growable buffer never runs out.
///
/// # Examples
///
/// ```
/// use bufslab_http::{write_chunk, write_last_chunk};
/// let mut out = Vec::new();
/// write_chunk(&mut out, b"hello, chunks");
/// write_last_chunk(&mut out);
/// assert_eq!(out, b"d\r\nhello, chunks\r\n0\r\n\r\n");
/// ```
pub fn write_chunk<B: BufMut>(buf: &mut B, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let mut hex = [0u8; 16];
    let mut n = data.len() as u64;
    let mut i = hex.len();
    while n > 0 && i > 0 {
        i -= 1;
        hex[i] = b"0123456789abcdef"[(n & 0xf) as usize];
        n >>= 4;
    }
    buf.put_slice(hex.get(i..).unwrap_or_default());
    buf.put_slice(b"\r\n");
    buf.put_slice(data);
    buf.put_slice(b"\r\n");
}

/// Writes the last chunk and an empty trailer section.
///
/// # Panics
/// If `buf` has less than 5 bytes of spare capacity; a growable buffer never runs out.
pub fn write_last_chunk<B: BufMut>(buf: &mut B) {
    buf.put_slice(b"0\r\n\r\n");
}

fn valid_value(v: &[u8]) -> bool {
    find_ctl_but_tab(v, 0) == v.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_and_headers() {
        let mut out = Vec::new();
        ResponseHead::new(&mut out, 404)
            .connection_close()
            .header(KnownHeader::Server, b"x")
            .unwrap()
            .header_raw(b"X-A", b"1\t2")
            .unwrap()
            .finish();
        assert_eq!(
            out,
            b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nServer: x\r\nX-A: 1\t2\r\n\r\n"
        );
        let mut out = Vec::new();
        ResponseHead::new(&mut out, 599).finish();
        assert_eq!(out, b"HTTP/1.1 599 \r\n\r\n");
        let mut out = Vec::new();
        ResponseHead::new(&mut out, 7).finish();
        assert_eq!(out, b"HTTP/1.1 500 Internal Server Error\r\n\r\n");
    }

    // RFC 9110 §5.5: CR / LF / NUL in a value would split the response (header injection).
    #[test]
    fn rfc9110_5_5_injection_is_refused() {
        let mut out = Vec::new();
        let mut h = ResponseHead::new(&mut out, 200);
        assert_eq!(
            h.header(KnownHeader::Location, b"/a\r\nSet-Cookie: x")
                .err(),
            Some(Error::InvalidHeaderValue)
        );
        assert_eq!(
            h.header_raw(b"Bad Name", b"v").err(),
            Some(Error::InvalidHeaderName)
        );
        h.finish();
        assert_eq!(out, b"HTTP/1.1 200 OK\r\n\r\n");
    }

    #[test]
    fn finish_with_length_matches_the_piecewise_form() {
        let date = DateCache::from_unix(784_111_777);
        for n in [0, 13, u64::MAX] {
            let mut a = Vec::new();
            ResponseHead::new(&mut a, 200)
                .content_length(n)
                .date(&date)
                .finish();
            let mut prefix = Vec::new();
            let _ = ResponseHead::new(&mut prefix, 200);
            let mut b = Vec::new();
            ResponseHead::from_prefix(&mut b, &prefix).finish_with_length(n, &date);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn chunk_writer() {
        let mut out = Vec::new();
        write_chunk(&mut out, &[b'a'; 26]);
        write_chunk(&mut out, b"");
        write_last_chunk(&mut out);
        assert_eq!(
            out,
            [&b"1a\r\n"[..], &[b'a'; 26], b"\r\n0\r\n\r\n"].concat()
        );
    }

    #[test]
    fn every_known_code_has_reason() {
        for code in 100..1000u16 {
            if let Some(l) = status_line(code) {
                assert!(l.starts_with(b"HTTP/1.1 "));
                assert!(!reason(code).is_empty());
            }
        }
    }
}
