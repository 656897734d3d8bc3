//! The response head parser, for clients: the status line, then the same field-line loop and
//! the same field checks as the request parser (`crate::head`, `crate::framing`), and the
//! body's framing by RFC 9112 §6.3, which needs the request's method as well as the response.
//!
//! Resumption works as for requests: the parser remembers the offset of the first incomplete
//! line and what the complete lines before it declared, and starts there on the next call.

use crate::config::Config;
use crate::error::Error;
use crate::fields::HeaderSlot;
use crate::framing::{fixed_response_framing, response_field};
use crate::head::{
    head_view, http_version, incomplete, line_end, parser_basics, settle, within_capacity, Lines,
};
use crate::parse::Status;
use crate::parsed_response::{Response, ResponseFraming};
use crate::request::{Method, Version};
use crate::scanner::Scanner;
use crate::simd::{find_ctl_but_tab, Job};

/// Offset of the reason phrase in the status line: after `HTTP/1.1 200 `.
const REASON_START: usize = 13;

/// The most empty lines skipped before a status line. Servers send one after a `304` or a
/// `100` whose framing they got wrong (a stray CR LF where no body was due); more than a few
/// is not that slip but a stream that has lost its framing.
pub(crate) const MAX_EMPTY_LINES_BEFORE_STATUS: usize = 4;

/// Everything derived from the complete lines seen so far.
#[derive(Clone, Copy, Debug)]
struct Progress {
    /// The status line is done; `lines.pos` is at a field line or the final empty line.
    in_headers: bool,
    version: Version,
    status: u16,
    /// The reason phrase is `buf[reason_start..reason_end]`.
    reason_start: usize,
    reason_end: usize,
    /// Offset of the first incomplete line and the field lines so far.
    lines: Lines,
}

impl Progress {
    const NEW: Progress = Progress {
        in_headers: false,
        version: Version::Http11,
        status: 0,
        reason_start: REASON_START,
        reason_end: REASON_START,
        lines: Lines::NEW,
    };
}

/// A resumable response head parser, for a client: the counterpart of [`Parser`](crate::Parser),
/// as strict (RFC 9112 field syntax, one framing or none), as zero-copy and as allocation-free.
///
/// Feed it the bytes received so far, from the first byte of the response, and the method of
/// the request it answers: a response to HEAD has no body, a 2xx to CONNECT opens a tunnel
/// (RFC 9112 §6.3). On [`Status::Partial`] it remembers how far it got; on
/// [`Status::Complete`] or an error it resets itself, ready for the next response.
///
/// The [`Config`] limits that apply: [`max_head_bytes`](Config::max_head_bytes) (the status
/// line counts, as the request line does), [`max_headers`](Config::max_headers) and
/// [`allow_bare_lf`](Config::allow_bare_lf); `max_request_line` does not.
///
/// A status line is `HTTP-version SP 3DIGIT SP reason-phrase` (RFC 9112 §4): the SP after the
/// code is required even when the reason is empty. A code of three digits outside `100..=599`
/// is invalid, but RFC 9110 §15 has a client treat the response as a 5xx rather than lose it:
/// it is parsed, reported by [`Response::status`](crate::Response::status) as received, and
/// framed as a 5xx (see [`Response::is_server_error`](crate::Response::is_server_error)). Up to
/// four empty lines before the status line are skipped (RFC 9112 §2.2: servers send one after
/// a `304` or a `100`); a fifth is [`Error::InvalidStatusLine`].
/// Content-Length and Transfer-Encoding are checked as in requests whenever they frame the
/// body, except that a Transfer-Encoding not ending in `chunked`, or an unknown coding before a
/// final `chunked`, is accepted: a response can be delimited by closing the connection, and
/// the server only applies other codings when the request's `TE` field asked for them.
///
/// Field lines are the request parser's, with one consequence for clients: obs-fold and
/// whitespace before the colon are rejected ([`Error::ObsFold`],
/// [`Error::WhitespaceBeforeColon`]), where RFC 9112 §5.1 and §5.2 would have a user agent or a
/// proxy remove them, which needs a copy of the head; a proxy may answer 502 instead, as it
/// does for any error here. A client that must talk to a server sending them has to rewrite
/// the bytes before parsing.
///
/// After any error, close the connection: the responses that follow cannot be told apart.
/// [`Error::status`] is what a server answers to a bad *request*; a gateway that receives a bad
/// response answers 502 (Bad Gateway, RFC 9110 §15.6.3) whatever the variant.
///
/// # Examples
///
/// ```
/// use bufslab_http::{
///     BodyDecoder, Config, HeaderSlot, Method, ResponseFraming, ResponseParser, Status,
/// };
///
/// // One parser and one set of header slots per connection, reused for every response.
/// let mut parser = ResponseParser::new(Config::DEFAULT);
/// let mut slots = [HeaderSlot::EMPTY; 32];
///
/// // An interim 100 (Continue), then the final response, arriving in pieces.
/// let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\
///              Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
/// let Status::Complete(interim) = parser.parse(wire, Method::Post, &mut slots)? else {
///     unreachable!()
/// };
/// assert_eq!((interim.status(), interim.framing()), (100, ResponseFraming::None));
/// let rest = &wire[interim.head_len()..];
/// assert!(parser.parse(&rest[..20], Method::Post, &mut slots)?.is_partial());
/// let Status::Complete(resp) = parser.parse(rest, Method::Post, &mut slots)? else {
///     unreachable!()
/// };
/// assert_eq!((resp.status(), resp.framing()), (200, ResponseFraming::Chunked));
///
/// // The body through the chunked decoder, as a slice of the same buffer.
/// let mut body = BodyDecoder::for_response(resp.framing(), parser.config());
/// let step = body.decode(&rest[resp.head_len()..])?;
/// assert_eq!((step.data, step.done), (&b"hello"[..], false));
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ResponseParser {
    config: Config,
    p: Progress,
}

parser_basics!(ResponseParser);

/// Parses one response head with the default [`Config`] in one shot (no resumption state
/// kept: on [`Status::Partial`], call again with more bytes or use a [`ResponseParser`]).
/// `method` is the method of the request the response answers.
///
/// # Errors
/// As [`ResponseParser::parse`].
///
/// # Examples
///
/// ```
/// use bufslab_http::{parse_response, HeaderSlot, Method, ResponseFraming, Status};
/// let mut slots = [HeaderSlot::EMPTY; 16];
/// let buf = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
/// // The same head frames a body after GET and none after HEAD.
/// let Status::Complete(resp) = parse_response(buf, Method::Get, &mut slots)? else {
///     unreachable!()
/// };
/// assert_eq!(resp.framing(), ResponseFraming::Length(5));
/// let resp = parse_response(buf, Method::Head, &mut slots)?.complete().unwrap();
/// assert_eq!(resp.framing(), ResponseFraming::None);
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[inline]
pub fn parse_response<'b, 'h>(
    buf: &'b [u8],
    method: Method<'_>,
    slots: &'h mut [HeaderSlot],
) -> Result<Status<Response<'b, 'h>>, Error> {
    ResponseParser::new(Config::DEFAULT).parse(buf, method, slots)
}

impl ResponseParser {
    /// Parses (or continues parsing) a response head.
    ///
    /// `buf` must start at the first byte of the response and, on a call after
    /// [`Status::Partial`], must begin with the same bytes as before; `method` is the method of
    /// the request the response answers, the same on every call. `slots` receives one entry per
    /// header line; pass the same slots on every call for one response.
    ///
    /// # Errors
    /// Any [`Error`] the field lines can cause (as for requests, less Host and Expect, which
    /// mean nothing in a response), [`Error::InvalidStatusLine`] and
    /// [`Error::InvalidStatusCode`]. The parser resets itself.
    #[inline]
    pub fn parse<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        method: Method<'_>,
        slots: &'h mut [HeaderSlot],
    ) -> Result<Status<Response<'b, 'h>>, Error> {
        let run = self.run(buf, method, slots);
        settle(
            run,
            &mut self.p,
            |_| Progress::NEW,
            |p, (head_len, framing)| {
                let slots: &'h [HeaderSlot] = slots;
                Response {
                    buf,
                    slots: slots.get(..p.lines.count).unwrap_or_default(),
                    version: p.version,
                    status: p.status,
                    reason: buf.get(p.reason_start..p.reason_end).unwrap_or_default(),
                    head_len,
                    framing,
                    flags: p.lines.framing.flags,
                }
            },
        )
    }

    /// [`parse`](Self::parse) for a head read into a buffer of `capacity` bytes, of which `buf`
    /// is the filled part: an incomplete head that fills the buffer is
    /// [`Error::HeadExceedsBuffer`] instead of a [`Status::Partial`] no read could end (see
    /// [`Parser::parse_with_capacity`](crate::Parser::parse_with_capacity)).
    ///
    /// # Errors
    /// As [`parse`](Self::parse), plus [`Error::HeadExceedsBuffer`]. The parser resets itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{Error, HeaderSlot, Method, ResponseParser};
    /// let mut parser = ResponseParser::default();
    /// let mut slots = [HeaderSlot::EMPTY; 8];
    /// let mut buf = [b'a'; 64]; // a full receive buffer
    /// let start = b"HTTP/1.1 200 OK\r\nCookie: ";
    /// buf[..start.len()].copy_from_slice(start);
    /// let err = parser.parse_with_capacity(&buf, buf.len(), Method::Get, &mut slots);
    /// assert_eq!(err.err(), Some(Error::HeadExceedsBuffer));
    /// ```
    #[inline]
    pub fn parse_with_capacity<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        capacity: usize,
        method: Method<'_>,
        slots: &'h mut [HeaderSlot],
    ) -> Result<Status<Response<'b, 'h>>, Error> {
        let status = self.parse(buf, method, slots)?;
        within_capacity(status, buf.len(), capacity, || self.reset())
    }

    /// `Ok(None)`: partial; `Ok(Some(..))`: complete head of that length, and its framing.
    #[inline(always)]
    fn run(
        &mut self,
        buf: &[u8],
        method: Method<'_>,
        slots: &mut [HeaderSlot],
    ) -> Result<Option<(usize, ResponseFraming)>, Error> {
        let backend = self.config.backend();
        let job = Run {
            parser: self,
            buf,
            method,
            slots,
        };
        backend.run(job)
    }

    /// [`run`](Self::run) with the backend's scanner.
    #[inline(always)]
    fn run_with<S: Scanner>(
        &mut self,
        scanner: S,
        buf: &[u8],
        method: Method<'_>,
        slots: &mut [HeaderSlot],
    ) -> Result<Option<(usize, ResponseFraming)>, Error> {
        let (view, truncated) = head_view(buf, &self.config);
        if !self.p.in_headers && self.status_line(view, truncated)?.is_none() {
            return Ok(None);
        }
        let fixed = fixed_response_framing(method, self.p.status);
        let wants = |name: &[u8]| response_field(name, fixed.is_none());
        let lines = &mut self.p.lines;
        match lines.field_lines(scanner, view, truncated, slots, &self.config, wants)? {
            Some(head_len) => {
                let framing = lines.framing.finish_response(self.p.version, fixed)?;
                Ok(Some((head_len, framing)))
            }
            None => Ok(None),
        }
    }

    /// Parses the status line (RFC 9112 §4). `Ok(None)`: incomplete. Each byte is judged as
    /// soon as it arrives, so a prefix never gets another verdict than the whole line.
    #[inline(always)]
    fn status_line(&mut self, view: &[u8], truncated: bool) -> Result<Option<()>, Error> {
        let lenient_lf = self.config.allow_bare_lf();
        // RFC 9112 §2.2: empty lines before the status line, a few at most (the line is parsed
        // whole on every call, so they are counted from the start again).
        let mut start = 0;
        for skipped in 0..=MAX_EMPTY_LINES_BEFORE_STATUS {
            let next = match view.get(start) {
                Some(b'\r') => match view.get(start + 1) {
                    Some(b'\n') => start + 2,
                    Some(_) => return Err(Error::BareCr),
                    None => return incomplete(truncated),
                },
                Some(b'\n') if lenient_lf => start + 1,
                Some(b'\n') => return Err(Error::BareLf),
                _ => break,
            };
            if skipped == MAX_EMPTY_LINES_BEFORE_STATUS {
                return Err(Error::InvalidStatusLine);
            }
            start = next;
        }
        let line = view.get(start..).unwrap_or_default();
        // HTTP-version SP (RFC 9112 §2.3).
        let Some(v) = line.get(..8) else {
            return incomplete(truncated);
        };
        let version = http_version(v)?;
        match line.get(8) {
            None => return incomplete(truncated),
            Some(b' ') => {}
            Some(_) => return Err(Error::InvalidVersion),
        }
        // status-code = 3DIGIT, then SP, required even before an empty reason phrase (RFC 9112
        // §4). A code outside 100 to 599 is kept as it is (RFC 9110 §15: a client treats it as
        // a 5xx).
        let mut status = 0u16;
        for at in 9..12 {
            match line.get(at) {
                None => return incomplete(truncated),
                Some(&d) if d.is_ascii_digit() => status = status * 10 + u16::from(d - b'0'),
                Some(_) => return Err(Error::InvalidStatusCode),
            }
        }
        match line.get(12) {
            None => return incomplete(truncated),
            Some(b' ') => {}
            Some(d) if d.is_ascii_digit() => return Err(Error::InvalidStatusCode),
            Some(_) => return Err(Error::InvalidStatusLine),
        }
        // reason-phrase = *( HTAB / SP / VCHAR / obs-text ): it ends at the first control byte
        // other than HTAB, or DEL, which must be the line's end.
        let reason_start = start + REASON_START;
        let reason_end = find_ctl_but_tab(view, reason_start);
        let Some(next) = line_end(view, reason_end, lenient_lf, Error::InvalidStatusLine)? else {
            return incomplete(truncated);
        };
        self.p = Progress {
            in_headers: true,
            version,
            status,
            reason_start,
            reason_end,
            lines: Lines {
                pos: next,
                ..self.p.lines
            },
        };
        Ok(Some(()))
    }
}

/// A response parse call as a [`Job`] for the backend's scanner.
struct Run<'p, 'b, 's, 'm> {
    parser: &'p mut ResponseParser,
    buf: &'b [u8],
    method: Method<'m>,
    slots: &'s mut [HeaderSlot],
}

impl Job for Run<'_, '_, '_, '_> {
    type Out = Result<Option<(usize, ResponseFraming)>, Error>;

    #[inline(always)]
    fn run<S: Scanner>(self, scanner: S) -> Self::Out {
        self.parser
            .run_with(scanner, self.buf, self.method, self.slots)
    }
}
