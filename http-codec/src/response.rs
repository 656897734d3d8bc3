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

/// Whether a response with this status code can have content: every code but 1xx
/// (Informational, RFC 9110 §15.2), 204 (No Content, §15.3.5) and 304 (Not Modified,
/// §15.4.5). Those responses end at the empty line after their header fields whatever the
/// fields say (RFC 9112 §6.3), so they carry neither a body nor the framing of one.
///
/// [`ResponseHead::content_length`] and [`ResponseHead::chunked`] panic when asked to frame
/// content for such a status; a server whose status is only known at run time (a handler's
/// answer, a proxied response) asks this first.
///
/// # Examples
///
/// ```
/// use bufslab_http::{status_allows_content, DateCache, ResponseHead};
///
/// let date = DateCache::from_unix(0);
/// let (status, body): (u16, &[u8]) = (204, b""); // from a handler, say
/// let mut out = Vec::new();
/// if status_allows_content(status) || body.is_empty() {
///     ResponseHead::new(&mut out, status).finish_with_length(body.len() as u64, &date);
///     out.extend_from_slice(body);
/// }
/// assert!(out.starts_with(b"HTTP/1.1 204 No Content\r\nDate: "));
/// assert!(!status_allows_content(101) && !status_allows_content(304));
/// assert!(status_allows_content(200) && status_allows_content(404));
/// ```
#[must_use]
#[inline]
pub const fn status_allows_content(code: u16) -> bool {
    !matches!(code, 100..=199 | 204 | 304)
}

/// Writes one response head. Create with [`ResponseHead::new`], add headers, then
/// [`finish`](ResponseHead::finish); write the body after.
///
/// The framing methods know the status: [`content_length`](Self::content_length) and
/// [`chunked`](Self::chunked) never frame content for a status that cannot have any (1xx, 204,
/// 304; see [`status_allows_content`]), so the head cannot announce a body the client will not
/// read (or read the next response as one).
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
    /// The status code written (0 when a prefix does not show one), for the framing rules.
    code: u16,
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
        ResponseHead { buf, code }
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
        // The status line's code, `HTTP/1.1 NNN `: the framing rules need it.
        let code = match prefix.get(9..12) {
            Some(&[a, b, c]) if [a, b, c].iter().all(u8::is_ascii_digit) => {
                u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0')
            }
            _ => 0,
        };
        ResponseHead { buf, code }
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

    /// Adds `Content-Length: n` (formatted with `itoa`): the response has `n` bytes of
    /// content, or would have for a `HEAD` request (RFC 9110 §8.6).
    ///
    /// For a status without content (1xx, 204, 304: [`status_allows_content`]) and `n == 0`,
    /// nothing is written: no content is what such a response has, and its framing is no
    /// Content-Length at all (RFC 9110 §8.6: a server MUST NOT send one in a 1xx or 204
    /// response; in a 304 it would have to be the length of the 200 response, not of this
    /// one). So `finish_with_length(body.len(), ..)` frames an empty body correctly for every
    /// status, and a server with statuses known only at run time can use it as it is.
    ///
    /// # Panics
    /// If the status cannot have content and `n > 0`: such a body is a bug in the caller
    /// (whatever followed the head would be read as the next response), caught here like an
    /// index past the end of a slice; check [`status_allows_content`] first when the status
    /// comes from elsewhere. If `buf` has less spare capacity than the bytes written (see
    /// [`ResponseHead`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::ResponseHead;
    /// let mut out = Vec::new();
    /// ResponseHead::new(&mut out, 200).content_length(0).finish();
    /// assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    /// out.clear();
    /// ResponseHead::new(&mut out, 204).content_length(0).finish();
    /// assert_eq!(out, b"HTTP/1.1 204 No Content\r\n\r\n");
    /// ```
    #[inline]
    pub fn content_length(&mut self, n: u64) -> &mut Self {
        if !status_allows_content(self.code) {
            return self.no_content_length(n);
        }
        let mut b = itoa::Buffer::new();
        self.buf.put_slice(KnownHeader::ContentLength.line_prefix());
        self.buf.put_slice(b.format(n).as_bytes());
        self
    }

    /// The framing of content for a status that has none (out of line: never the common
    /// path).
    #[cold]
    #[inline(never)]
    fn no_content_length(&mut self, n: u64) -> &mut Self {
        assert!(
            n == 0,
            "a {} response cannot have content (RFC 9110 §15), got Content-Length {n}",
            self.code
        );
        self
    }

    /// Adds `Transfer-Encoding: chunked`; write the body with [`write_chunk`] and
    /// [`write_last_chunk`].
    ///
    /// # Panics
    /// If the status cannot have content (1xx, 204, 304: [`status_allows_content`]): even an
    /// empty chunked body is the bytes of its last chunk, which the client would read as the
    /// next response. If `buf` has less spare capacity than the bytes written (see
    /// [`ResponseHead`]).
    #[inline]
    pub fn chunked(&mut self) -> &mut Self {
        assert!(
            status_allows_content(self.code),
            "a {} response cannot have a chunked body (RFC 9110 §15)",
            self.code
        );
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

    /// Adds `Connection: keep-alive`: what tells an HTTP/1.0 client that asked to keep the
    /// connection open (`req.version() == Version::Http10 && req.keep_alive()`) that it stays
    /// open. An HTTP/1.0 connection persists only when the response says so too (RFC 9112
    /// §9.3, Appendix C.2.2); an HTTP/1.1 one persists unless told otherwise, so it needs no
    /// field. Frame such a response with [`content_length`](Self::content_length): an HTTP/1.0
    /// client cannot read a chunked body (RFC 9112 §6.1), and one delimited by closing the
    /// connection ends it anyway.
    ///
    /// # Panics
    /// If `buf` has less spare capacity than the bytes written (see [`ResponseHead`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{parse_request, HeaderSlot, ResponseHead, Version};
    ///
    /// let mut slots = [HeaderSlot::EMPTY; 4];
    /// let req = b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    /// let req = parse_request(req, &mut slots)?.complete().unwrap();
    /// let mut out = Vec::new();
    /// let mut head = ResponseHead::new(&mut out, 200);
    /// if req.version() == Version::Http10 && req.keep_alive() {
    ///     head.keep_alive();
    /// }
    /// head.content_length(2).finish();
    /// assert_eq!(out, b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n");
    /// # Ok::<(), bufslab_http::Error>(())
    /// ```
    #[inline]
    pub fn keep_alive(&mut self) -> &mut Self {
        self.static_header(KnownHeader::Connection, b"keep-alive")
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
    /// `memcpy` call. For a status without content, `n == 0` writes no Content-Length (see
    /// [`content_length`](Self::content_length)).
    ///
    /// # Panics
    /// As [`content_length`](Self::content_length): if the status cannot have content and
    /// `n > 0`, or if `buf` has less spare capacity than the bytes written.
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

/// Whether `name` can be a header field name: a token (RFC 9110 §5.6.2), as
/// [`ResponseHead::header_raw`] checks it. For a writer of its own that takes names from
/// elsewhere.
///
/// # Examples
///
/// ```
/// assert!(bufslab_http::is_field_name(b"X-Request-Id"));
/// assert!(!bufslab_http::is_field_name(b"Bad Name"));
/// assert!(!bufslab_http::is_field_name(b""));
/// ```
#[must_use]
pub fn is_field_name(name: &[u8]) -> bool {
    is_token(name)
}

/// Whether `value` can be sent as a field value: no control byte but HTAB, no DEL (RFC 9110
/// §5.5), as [`ResponseHead::header`] checks it, so that a value taken from input cannot
/// inject a header.
///
/// # Examples
///
/// ```
/// assert!(bufslab_http::is_field_value(b"text/plain; charset=utf-8"));
/// assert!(!bufslab_http::is_field_value(b"a\r\nSet-Cookie: x"));
/// ```
#[must_use]
pub fn is_field_value(value: &[u8]) -> bool {
    valid_value(value)
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

    // RFC 9110 §8.6, §15.2, §15.3.5, §15.4.5; RFC 9112 §6.3: 1xx, 204 and 304 responses end
    // at their empty line, so they get no Content-Length, not even `0`.
    #[test]
    fn rfc9110_8_6_no_content_length_without_content() {
        let date = DateCache::from_unix(784_111_777);
        let date_line = "Date: Sun, 06 Nov 1994 08:49:37 GMT";
        for code in [100u16, 101, 103, 199, 204, 304] {
            assert!(!status_allows_content(code), "{code}");
            let mut out = Vec::new();
            ResponseHead::new(&mut out, code).finish_with_length(0, &date);
            let line = status_line(code).map_or(format!("HTTP/1.1 {code} "), |l| {
                String::from_utf8_lossy(l).into_owned()
            });
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{line}\r\n{date_line}\r\n\r\n"),
                "{code}"
            );
            // The same from a precomputed prefix, whose status the head reads back.
            let mut prefix = Vec::new();
            let _ = ResponseHead::new(&mut prefix, code).static_header(KnownHeader::Server, b"s");
            let mut out = Vec::new();
            ResponseHead::from_prefix(&mut out, &prefix)
                .content_length(0)
                .finish();
            assert!(!out.windows(14).any(|w| w == b"Content-Length"), "{code}");
        }
        // A normal 200 says `Content-Length: 0`; so does 205, which must (RFC 9110 §15.3.6).
        for code in [200u16, 205, 404, 500] {
            assert!(status_allows_content(code), "{code}");
            let mut out = Vec::new();
            ResponseHead::new(&mut out, code).finish_with_length(0, &date);
            let want = format!("\r\nContent-Length: 0\r\n{date_line}\r\n\r\n");
            assert!(out.ends_with(want.as_bytes()), "{code}");
            let mut out = Vec::new();
            ResponseHead::new(&mut out, code).chunked().finish();
            assert!(
                out.ends_with(b"\r\nTransfer-Encoding: chunked\r\n\r\n"),
                "{code}"
            );
        }
        // A code the encoder writes as 500 follows 500's rule.
        let mut out = Vec::new();
        ResponseHead::new(&mut out, 7).content_length(3).finish();
        assert!(out.ends_with(b"500 Internal Server Error\r\nContent-Length: 3\r\n\r\n"));
    }

    #[test]
    #[should_panic(expected = "a 204 response cannot have content")]
    fn rfc9110_15_3_5_content_on_204_panics() {
        let mut out = Vec::new();
        let _ = ResponseHead::new(&mut out, 204).content_length(1);
    }

    #[test]
    #[should_panic(expected = "a 304 response cannot have content")]
    fn rfc9110_15_4_5_content_on_304_panics() {
        let date = DateCache::from_unix(0);
        let mut out = Vec::new();
        ResponseHead::new(&mut out, 304).finish_with_length(12, &date);
    }

    #[test]
    #[should_panic(expected = "a 100 response cannot have content")]
    fn rfc9110_15_2_content_on_1xx_panics_also_from_a_prefix() {
        let mut out = Vec::new();
        let _ = ResponseHead::from_prefix(&mut out, CONTINUE_100).content_length(5);
    }

    #[test]
    #[should_panic(expected = "a 204 response cannot have a chunked body")]
    fn rfc9110_15_3_5_chunked_204_panics() {
        let mut out = Vec::new();
        let _ = ResponseHead::new(&mut out, 204).chunked();
    }

    #[test]
    #[should_panic(expected = "a 101 response cannot have a chunked body")]
    fn rfc9110_15_2_chunked_1xx_panics() {
        let mut out = Vec::new();
        let _ = ResponseHead::new(&mut out, 101).chunked();
    }

    // RFC 9112 §9.3, Appendix C.2.2: an HTTP/1.0 connection persists only if the response says
    // `Connection: keep-alive` too.
    #[test]
    fn rfc9112_9_3_keep_alive_for_http10() {
        let mut out = Vec::new();
        ResponseHead::new(&mut out, 200)
            .keep_alive()
            .content_length(2)
            .finish();
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n"
        );
        // The same bytes as the known header with that value, as servers wrote it before.
        let mut by_hand = Vec::new();
        ResponseHead::new(&mut by_hand, 200)
            .static_header(KnownHeader::Connection, b"keep-alive")
            .content_length(2)
            .finish();
        assert_eq!(out, by_hand);
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
