//! The parsed response: a zero-copy view over the caller's buffer and header slots, and how its
//! body is delimited.

use crate::fields::{head_accessors, persists, HeaderSlot, Text};
use crate::request::Version;

/// How a response body is delimited (RFC 9112 §6.3), which depends on the request it answers
/// as well as on the response: the response parser works it out from both.
///
/// Read the body with [`BodyDecoder::for_response`](crate::BodyDecoder::for_response).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResponseFraming {
    /// No body: the response to a HEAD request, or a 1xx, 204 or 304 response (§6.3 point 1),
    /// whatever its fields say. After a 101 (Switching Protocols) the connection speaks the
    /// protocol named in `Upgrade`; after another 1xx the final response follows.
    None,
    /// A 2xx response to CONNECT (§6.3 point 2): no body; from the end of the head the
    /// connection is a tunnel.
    Tunnel,
    /// `Content-Length: n` (§6.3 point 6).
    Length(u64),
    /// `Transfer-Encoding` with `chunked` as the final coding (§6.3 point 4). Other codings
    /// listed before it (the server applies them only when the request's `TE` field asked for
    /// them) are still applied to the data the decoder hands out.
    Chunked,
    /// Everything until the server closes the connection: a Transfer-Encoding whose final
    /// coding is not `chunked` (§6.3 point 4), or neither Transfer-Encoding nor Content-Length
    /// (point 8). The connection cannot carry another response.
    CloseDelimited,
}

/// A complete, validated response head. Everything borrows the caller's buffer (`'b`) and
/// header slots (`'h`); nothing was allocated or copied.
///
/// # Examples
///
/// ```
/// use bufslab_http::{parse_response, HeaderSlot, KnownHeader, Method, ResponseFraming, Version};
/// let mut slots = [HeaderSlot::EMPTY; 16];
/// let buf = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\
///             Content-Length: 9\r\nConnection: close\r\n\r\nnot found";
/// let resp = parse_response(buf, Method::Get, &mut slots)?.complete().unwrap();
/// assert_eq!((resp.status(), resp.reason()), (404, &b"Not Found"[..]));
/// assert_eq!(resp.version(), Version::Http11);
/// assert_eq!(resp.get(KnownHeader::ContentType), Some(&b"text/plain"[..]));
/// assert_eq!(resp.framing(), ResponseFraming::Length(9));
/// assert!(resp.connection_close() && !resp.keep_alive());
/// assert_eq!(&buf[resp.head_len()..], b"not found");
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Response<'b, 'h> {
    pub(crate) buf: &'b [u8],
    pub(crate) slots: &'h [HeaderSlot],
    pub(crate) version: Version,
    pub(crate) status: u16,
    pub(crate) reason: &'b [u8],
    pub(crate) head_len: usize,
    pub(crate) framing: ResponseFraming,
    pub(crate) flags: u8,
}

impl<'b, 'h> Response<'b, 'h> {
    /// The status code as received: three digits, in `100..=599` unless the server sent an
    /// invalid one (RFC 9110 §15), which a client treats as a 5xx: see
    /// [`is_server_error`](Self::is_server_error).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{parse_response, HeaderSlot, Method, ResponseFraming};
    ///
    /// let mut slots = [HeaderSlot::EMPTY; 4];
    /// let buf = b"HTTP/1.1 999 Library Error\r\nContent-Length: 2\r\n\r\nno";
    /// let resp = parse_response(buf, Method::Get, &mut slots)?.complete().unwrap();
    /// assert_eq!(resp.status(), 999);
    /// assert!(resp.is_server_error());
    /// assert_eq!(resp.framing(), ResponseFraming::Length(2));
    /// # Ok::<(), bufslab_http::Error>(())
    /// ```
    #[must_use]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the response is a server error (5xx), or carries a code outside `100..=599`,
    /// which RFC 9110 §15 has a client process as a 5xx; its body is framed as a 5xx's.
    #[must_use]
    pub fn is_server_error(&self) -> bool {
        !(100..=499).contains(&self.status)
    }

    /// The reason phrase as received, possibly empty; it may hold obs-text (bytes above 0x7F).
    /// A client should not act on it (RFC 9112 §4).
    #[must_use]
    pub fn reason(&self) -> &'b [u8] {
        self.reason
    }

    /// Whether the connection can carry another request once this response is read
    /// (RFC 9112 §9.3): not after `Connection: close`, nor after an HTTP/1.0 response without
    /// `Connection: keep-alive`, a body delimited by the server closing, a tunnel, or a 101
    /// (the connection then speaks another protocol). An interim (other 1xx) response says
    /// nothing about it: the final response that follows does.
    #[must_use]
    pub fn keep_alive(&self) -> bool {
        persists(self.version, self.flags)
            && self.status != 101
            && !matches!(
                self.framing,
                ResponseFraming::CloseDelimited | ResponseFraming::Tunnel
            )
    }

    head_accessors!('b, 'h, ResponseFraming);
}

impl core::fmt::Debug for Response<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Response")
            .field("version", &self.version)
            .field("status", &self.status)
            .field("reason", &Text(self.reason))
            .field("framing", &self.framing)
            .field("keep_alive", &self.keep_alive())
            .field("head_len", &self.head_len)
            .field("headers", &self.fields_debug())
            .finish()
    }
}
