//! The parsed request: a zero-copy view over the caller's buffer and header slots.

use crate::fields::{flags, head_accessors, persists, HeaderSlot, Text};
use crate::scan;
use crate::uri::split_absolute;

/// The request method (RFC 9110 §9). Methods are case-sensitive, so `get` is an extension
/// method, not `GET`.
///
/// More methods may get their own variant in a minor release (so a `match` needs a `_` arm);
/// until then they arrive as [`Method::Extension`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method<'b> {
    /// `GET` (RFC 9110 §9.3.1)
    Get,
    /// `HEAD` (RFC 9110 §9.3.2)
    Head,
    /// `POST` (RFC 9110 §9.3.3)
    Post,
    /// `PUT` (RFC 9110 §9.3.4)
    Put,
    /// `DELETE` (RFC 9110 §9.3.5)
    Delete,
    /// `CONNECT` (RFC 9110 §9.3.6)
    Connect,
    /// `OPTIONS` (RFC 9110 §9.3.7)
    Options,
    /// `TRACE` (RFC 9110 §9.3.8)
    Trace,
    /// `PATCH` (RFC 5789)
    Patch,
    /// Any other method token, as received.
    Extension(&'b [u8]),
}

impl<'b> Method<'b> {
    /// Classifies a method token (already validated as a `tchar` sequence).
    #[inline]
    pub(crate) fn from_token(m: &'b [u8]) -> Method<'b> {
        match m {
            b"GET" => Method::Get,
            b"POST" => Method::Post,
            b"HEAD" => Method::Head,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"OPTIONS" => Method::Options,
            b"CONNECT" => Method::Connect,
            b"PATCH" => Method::Patch,
            b"TRACE" => Method::Trace,
            other => Method::Extension(other),
        }
    }

    /// A compact code for the standard methods (0 for extensions), so the parser's resumable
    /// state needs no lifetime.
    #[inline]
    pub(crate) fn code(&self) -> u8 {
        match self {
            Method::Get => 1,
            Method::Head => 2,
            Method::Post => 3,
            Method::Put => 4,
            Method::Delete => 5,
            Method::Connect => 6,
            Method::Options => 7,
            Method::Trace => 8,
            Method::Patch => 9,
            Method::Extension(_) => 0,
        }
    }

    /// Inverse of [`code`](Self::code); `raw` is the method text, used for extensions.
    #[inline]
    pub(crate) fn from_code(code: u8, raw: &'b [u8]) -> Method<'b> {
        match code {
            1 => Method::Get,
            2 => Method::Head,
            3 => Method::Post,
            4 => Method::Put,
            5 => Method::Delete,
            6 => Method::Connect,
            7 => Method::Options,
            8 => Method::Trace,
            9 => Method::Patch,
            _ => Method::Extension(raw),
        }
    }

    /// The method as bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &'b [u8] {
        match *self {
            Method::Get => b"GET",
            Method::Head => b"HEAD",
            Method::Post => b"POST",
            Method::Put => b"PUT",
            Method::Delete => b"DELETE",
            Method::Connect => b"CONNECT",
            Method::Options => b"OPTIONS",
            Method::Trace => b"TRACE",
            Method::Patch => b"PATCH",
            Method::Extension(m) => m,
        }
    }
}

/// The HTTP version of the request (RFC 9112 §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// HTTP/1.0
    Http10,
    /// HTTP/1.1
    Http11,
}

/// The form of the request-target (RFC 9112 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetForm {
    /// `/path?query` (§3.2.1)
    Origin,
    /// `scheme://authority/path` (§3.2.2), sent to proxies.
    Absolute,
    /// `host:port`, only with CONNECT (§3.2.3).
    Authority,
    /// `*`, only with OPTIONS (§3.2.4).
    Asterisk,
}

/// How the request body is delimited (RFC 9112 §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyFraming {
    /// No Content-Length and no Transfer-Encoding: the body is empty (§6.3 point 7).
    None,
    /// `Content-Length: n` (§6.3 point 6).
    Length(u64),
    /// `Transfer-Encoding: chunked` (§6.3 point 4).
    Chunked,
}

/// A complete, validated request head. Everything borrows the caller's buffer (`'b`) and
/// header slots (`'h`); nothing was allocated or copied.
///
/// # Examples
///
/// ```
/// use bufslab_http::{parse_request, BodyFraming, HeaderSlot, KnownHeader, Method, Version};
/// let mut slots = [HeaderSlot::EMPTY; 16];
/// let buf = b"POST /items?page=2 HTTP/1.1\r\nHost: example.com\r\n\
///             Content-Length: 3\r\nConnection: close\r\n\r\nabc";
/// let req = parse_request(buf, &mut slots)?.complete().unwrap();
/// assert_eq!(req.method(), Method::Post);
/// assert_eq!((req.path(), req.query()), (&b"/items"[..], Some(&b"page=2"[..])));
/// assert_eq!(req.version(), Version::Http11);
/// assert_eq!(req.host(), Some(&b"example.com"[..]));
/// assert_eq!(req.get(KnownHeader::ContentLength), Some(&b"3"[..]));
/// assert_eq!(req.framing(), BodyFraming::Length(3));
/// assert!(!req.keep_alive());
/// assert_eq!(&buf[req.head_len()..], b"abc");
/// for h in req.headers() {
///     assert!(!h.raw_name.is_empty());
/// }
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Request<'b, 'h> {
    pub(crate) buf: &'b [u8],
    pub(crate) slots: &'h [HeaderSlot],
    pub(crate) method: Method<'b>,
    pub(crate) target: &'b [u8],
    pub(crate) form: TargetForm,
    pub(crate) version: Version,
    pub(crate) head_len: usize,
    pub(crate) framing: BodyFraming,
    pub(crate) flags: u8,
    pub(crate) host: Option<u32>,
}

impl<'b, 'h> Request<'b, 'h> {
    /// The method.
    #[must_use]
    pub fn method(&self) -> Method<'b> {
        self.method
    }

    /// The request-target, as received.
    #[must_use]
    pub fn target(&self) -> &'b [u8] {
        self.target
    }

    /// The path, for routing: the request-target up to (not including) `?`. For an
    /// absolute-form target (`http://host:port/p?q`, RFC 9112 §3.2.2) it is the target's path
    /// (`/p`), or `/` when the path is empty; for authority-form and asterisk-form, the whole
    /// target.
    ///
    /// ```
    /// use bufslab_http::{parse_request, HeaderSlot};
    /// let mut slots = [HeaderSlot::EMPTY; 4];
    /// let buf = b"GET http://example.com:8080/a/b?c HTTP/1.1\r\nHost: example.com\r\n\r\n";
    /// let req = parse_request(buf, &mut slots)?.complete().unwrap();
    /// assert_eq!(req.path(), b"/a/b");
    /// assert_eq!(req.query(), Some(&b"c"[..]));
    /// assert_eq!(req.authority(), Some(&b"example.com:8080"[..]));
    /// # Ok::<(), bufslab_http::Error>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn path(&self) -> &'b [u8] {
        let t = self.path_and_query();
        let path = t.get(..scan::find_byte(t, 0, b'?')).unwrap_or(t);
        if path.is_empty() {
            // Only an absolute-form target can get here (every other form is non-empty and
            // does not start with `?`): its empty path means `/` (RFC 9112 §3.2.1).
            b"/"
        } else {
            path
        }
    }

    /// The query after `?`, if any (also of an absolute-form target).
    #[must_use]
    #[inline]
    pub fn query(&self) -> Option<&'b [u8]> {
        let t = self.path_and_query();
        t.get(scan::find_byte(t, 0, b'?') + 1..)
    }

    /// The authority the target names: the `host[:port]` of an absolute-form target, or the
    /// whole authority-form target of CONNECT; `None` for origin-form and asterisk-form.
    ///
    /// RFC 9112 §3.2.2: when the target has an authority, it replaces the Host field (which
    /// is still required and checked), so the authority a request is for is
    /// `req.authority().or(req.host())`.
    #[must_use]
    pub fn authority(&self) -> Option<&'b [u8]> {
        match self.form {
            TargetForm::Absolute => split_absolute(self.target).0,
            TargetForm::Authority => Some(self.target),
            TargetForm::Origin | TargetForm::Asterisk => None,
        }
    }

    /// The target without an absolute-form's scheme and authority.
    #[inline(always)]
    fn path_and_query(&self) -> &'b [u8] {
        if self.form == TargetForm::Absolute {
            split_absolute(self.target).1
        } else {
            self.target
        }
    }

    /// The form of the request-target.
    #[must_use]
    pub fn target_form(&self) -> TargetForm {
        self.form
    }

    /// Whether the connection stays open after this exchange (RFC 9112 §9.3): HTTP/1.1 unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    #[must_use]
    pub fn keep_alive(&self) -> bool {
        persists(self.version, self.flags)
    }

    /// `Expect: 100-continue` was sent (RFC 9110 §10.1.1).
    #[must_use]
    pub fn expect_continue(&self) -> bool {
        self.flags & flags::EXPECT_CONTINUE != 0
    }

    /// The Host value, if present (always present for HTTP/1.1; RFC 9112 §3.2).
    #[must_use]
    pub fn host(&self) -> Option<&'b [u8]> {
        let i = self.host? as usize;
        Some(self.slots.get(i)?.resolve(self.buf).value)
    }

    head_accessors!('b, 'h, BodyFraming);
}

impl core::fmt::Debug for Request<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Request")
            .field("method", &Text(self.method.as_bytes()))
            .field("target", &Text(self.target))
            .field("version", &self.version)
            .field("framing", &self.framing)
            .field("keep_alive", &self.keep_alive())
            .field("head_len", &self.head_len)
            .field("headers", &self.fields_debug())
            .finish()
    }
}
