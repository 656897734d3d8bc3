//! The request head parser: one left-to-right pass that validates syntax, classifies header
//! names and extracts body framing, resumable on partial input.
//!
//! Structure: the request line is parsed once; then the field lines go through the loop the
//! response parser uses too (`crate::head::Lines::field_lines`), which scans each line once for its
//! end and its name's end. Framing headers (Content-Length, Transfer-Encoding, Host,
//! Connection, Expect) are handed to `crate::framing` as soon as their line is complete, so the
//! caller never walks the headers again.
//!
//! Resumption: the parser remembers the offset of the first incomplete line and everything
//! derived from the complete lines before it (request line offsets, header count, framing
//! state). The next call starts at that offset, so completed lines are never rescanned.

use crate::config::Config;
use crate::error::Error;
use crate::fields::HeaderSlot;
use crate::framing::request_field;
use crate::head::{
    head_view, http_version, incomplete, line_end, parser_basics, settle, within_capacity, Lines,
};
use crate::request::{BodyFraming, Method, Request, TargetForm, Version};
use crate::scan::{find_non_tchar, SCHEME_CHAR};
use crate::scanner::Scanner;
use crate::simd::Job;
use crate::uri::{valid_absolute, valid_authority, Port};

/// The result of a successful parse call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status<T> {
    /// The head is complete.
    Complete(T),
    /// More bytes are needed. Call again with the same bytes plus whatever arrived since.
    Partial,
}

impl<T> Status<T> {
    /// The complete value, if any.
    pub fn complete(self) -> Option<T> {
        match self {
            Status::Complete(t) => Some(t),
            Status::Partial => None,
        }
    }

    /// Whether more input is needed.
    pub fn is_partial(&self) -> bool {
        matches!(self, Status::Partial)
    }
}

/// Everything derived from the complete lines seen so far.
#[derive(Clone, Copy, Debug)]
struct Progress {
    /// The request line is done; `lines.pos` is at a field line or the final empty line.
    in_headers: bool,
    method: u8,
    method_start: usize,
    method_end: usize,
    target_end: usize,
    version: Version,
    form: TargetForm,
    /// Offset of the first incomplete line (before `in_headers`, the request line's start)
    /// and the field lines so far.
    lines: Lines,
}

impl Progress {
    /// `p` made ready for a new head: [`NEW`](Self::NEW) but for the request line's fields,
    /// which the request line of the next head writes before anything reads them (so the
    /// completed call need not store them again).
    #[inline(always)]
    fn fresh(p: Progress) -> Progress {
        Progress {
            in_headers: false,
            lines: Lines::NEW,
            ..p
        }
    }

    const NEW: Progress = Progress {
        in_headers: false,
        method: 0,
        method_start: 0,
        method_end: 0,
        target_end: 0,
        version: Version::Http11,
        form: TargetForm::Origin,
        lines: Lines::NEW,
    };
}

/// A resumable request head parser.
///
/// Feed it the bytes received so far (always from the start of the request: the same bytes
/// plus more on each call). On [`Status::Partial`] it remembers how far it got; on
/// [`Status::Complete`] or an error it resets itself, ready for the next request.
///
/// # Examples
///
/// ```
/// use bufslab_http::{Config, Error, HeaderSlot, Parser, Status};
///
/// // One parser and one set of header slots per connection, reused for every request.
/// let mut parser = Parser::new(Config::DEFAULT.with_max_head_bytes(8 * 1024));
/// let mut slots = [HeaderSlot::EMPTY; 32];
///
/// // The head arrives in pieces: each call gets everything received so far.
/// let wire = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n";
/// assert!(parser.parse(&wire[..20], &mut slots)?.is_partial());
/// let Status::Complete(req) = parser.parse(wire, &mut slots)? else { unreachable!() };
/// assert_eq!((req.path(), req.head_len()), (&b"/plaintext"[..], wire.len()));
///
/// // A malformed head is an error carrying the status to answer with; then close.
/// let err = parser.parse(b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", &mut slots).unwrap_err();
/// assert_eq!((err, err.status()), (Error::WhitespaceBeforeColon, 400));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Parser {
    config: Config,
    p: Progress,
}

parser_basics!(Parser);

/// Parses one request head with the default [`Config`] in one shot (no resumption state kept:
/// on [`Status::Partial`], call again with more bytes or use a [`Parser`]).
///
/// ```
/// use bufslab_http::{parse_request, BodyFraming, HeaderSlot, Method, Status};
/// let mut slots = [HeaderSlot::EMPTY; 16];
/// let buf = b"GET /hi HTTP/1.1\r\nHost: example.com\r\n\r\n";
/// let Status::Complete(req) = parse_request(buf, &mut slots)? else { unreachable!() };
/// assert_eq!(req.method(), Method::Get);
/// assert_eq!(req.framing(), BodyFraming::None);
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[inline]
pub fn parse_request<'b, 'h>(
    buf: &'b [u8],
    slots: &'h mut [HeaderSlot],
) -> Result<Status<Request<'b, 'h>>, Error> {
    Parser::new(Config::DEFAULT).parse(buf, slots)
}

impl Parser {
    /// Parses (or continues parsing) a request head.
    ///
    /// `buf` must start at the first byte of the request and, on a call after
    /// [`Status::Partial`], must begin with the same bytes as before. `slots` receives one entry
    /// per header line; pass the same slots on every call for one request.
    ///
    /// A read buffer of at most [`Config::max_head_bytes`] bytes can fill up with a head that
    /// is still `Partial` (the limit is only over at one byte more): read into such a buffer
    /// with [`parse_with_capacity`](Self::parse_with_capacity).
    ///
    /// # Errors
    /// Any [`Error`]; [`Error::status`] says what to answer. The parser resets itself.
    // Inlined across crates: a caller that reads a few fields of the `Request` lets the
    // compiler drop the stores of the others (a server has one or two call sites). A hint is
    // not enough since the backends' cold call joined it: measured in server-demo, the call
    // LLVM then made cost 55 instructions per request.
    #[inline(always)]
    pub fn parse<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        slots: &'h mut [HeaderSlot],
    ) -> Result<Status<Request<'b, 'h>>, Error> {
        let backend = self.config.backend();
        // Only the scan goes through the backend's choice; the `Request` is built after it,
        // once, from the progress: a forced backend's out-of-line call then returns a few
        // words, and the inlined default's result is not stored to the memory that call
        // writes (measured: 17 stores per head).
        let run = backend.run(Parse {
            parser: self,
            buf,
            slots: &mut *slots,
        });
        settle(
            run,
            &mut self.p,
            Progress::fresh,
            |p, (head_len, framing)| {
                let slots: &'h [HeaderSlot] = slots;
                let method = Method::from_code(
                    p.method,
                    buf.get(p.method_start..p.method_end).unwrap_or_default(),
                );
                Request {
                    buf,
                    slots: slots.get(..p.lines.count).unwrap_or_default(),
                    method,
                    target: buf.get(p.method_end + 1..p.target_end).unwrap_or_default(),
                    form: p.form,
                    version: p.version,
                    head_len,
                    framing,
                    flags: p.lines.framing.flags,
                    host: p.lines.framing.host,
                }
            },
        )
    }

    /// [`parse`](Self::parse) for a head read into a buffer of `capacity` bytes, of which
    /// `buf` is the filled part: when the head is incomplete and `buf` fills the buffer
    /// (`buf.len() >= capacity`), no read can add to it, so this answers
    /// [`Error::HeadExceedsBuffer`] (431) where `parse` would say [`Status::Partial`] for ever
    /// (and a read into the full buffer would return `Ok(0)`, which looks like the end of the
    /// stream).
    ///
    /// `parse` itself only knows the bytes it is given, and reaches
    /// [`Error::HeadTooLarge`] once more than [`Config::max_head_bytes`] bytes arrived: with a
    /// buffer of at least `max_head_bytes + 1` bytes the two agree, and the check here never
    /// fires; with one of at most `max_head_bytes` (a 16 KiB block and the default 16 KiB
    /// limit), only this tells a head too large for the buffer from one still arriving. It is
    /// an error of its own, not a limit derived from the buffer, so that one `Config` serves
    /// buffers of any size and a caller can tell "too large for this buffer" (move the head
    /// into a larger one, if it has one) from "too large for the server".
    ///
    /// # Errors
    /// As [`parse`](Self::parse), plus [`Error::HeadExceedsBuffer`]. The parser resets itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{Error, HeaderSlot, Parser};
    ///
    /// let mut parser = Parser::default(); // a 16 KiB head limit
    /// let mut slots = [HeaderSlot::EMPTY; 8];
    /// let mut block = vec![b'a'; 16 * 1024]; // a read buffer of the same size, filled
    /// let start = b"GET / HTTP/1.1\r\nCookie: ";
    /// block[..start.len()].copy_from_slice(start);
    /// assert!(parser.parse(&block, &mut slots)?.is_partial()); // would wait for ever
    /// parser.reset();
    /// let err = parser.parse_with_capacity(&block, block.len(), &mut slots).unwrap_err();
    /// assert_eq!((err, err.status()), (Error::HeadExceedsBuffer, 431));
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn parse_with_capacity<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        capacity: usize,
        slots: &'h mut [HeaderSlot],
    ) -> Result<Status<Request<'b, 'h>>, Error> {
        let status = self.parse(buf, slots)?;
        within_capacity(status, buf.len(), capacity, || self.reset())
    }

    /// `Ok(None)`: partial; `Ok(Some(..))`: complete head of that length.
    #[inline(always)]
    fn run<S: Scanner>(
        &mut self,
        scanner: S,
        buf: &[u8],
        slots: &mut [HeaderSlot],
    ) -> Result<Option<(usize, BodyFraming)>, Error> {
        let (view, truncated) = head_view(buf, &self.config);
        if !self.p.in_headers && self.request_line(scanner, view, truncated)?.is_none() {
            return Ok(None);
        }
        let lines = &mut self.p.lines;
        let config = &self.config;
        match lines.field_lines(scanner, view, truncated, slots, config, request_field)? {
            Some(head_len) => Ok(Some((head_len, lines.framing.finish(self.p.version)?))),
            None => Ok(None),
        }
    }

    /// Parses the request line (after any leading empty lines). `Ok(None)`: incomplete.
    #[inline(always)]
    fn request_line<S: Scanner>(
        &mut self,
        scanner: S,
        view: &[u8],
        truncated: bool,
    ) -> Result<Option<()>, Error> {
        let lenient_lf = self.config.allow_bare_lf();
        let mut i = self.p.lines.pos;
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
        loop {
            match view.get(i) {
                None => return incomplete(truncated),
                Some(b'\r') => match view.get(i + 1) {
                    Some(b'\n') => i += 2,
                    Some(_) => return Err(Error::BareCr),
                    None => return incomplete(truncated),
                },
                Some(b'\n') if lenient_lf => i += 1,
                Some(b'\n') => return Err(Error::BareLf),
                Some(_) => break,
            }
        }
        self.p.lines.pos = i;
        let start = i;
        // Scan at most the allowed line (+ CRLF): a longer line is 414 no matter what follows.
        let rl_limit = start
            .saturating_add(self.config.max_request_line())
            .saturating_add(2);
        let rl = view.get(..rl_limit).unwrap_or(view);
        let rl_truncated = rl.len() < view.len();
        let more = || -> Result<Option<()>, Error> {
            if rl_truncated {
                Err(Error::RequestLineTooLong)
            } else {
                incomplete(truncated)
            }
        };

        // method SP (RFC 9112 §3.1). "GET " is checked as one word: it is most requests.
        let (method_end, method) = if rl.get(start..start + 4) == Some(b"GET ") {
            (start + 3, Method::Get)
        } else if rl.get(start..start + 5) == Some(b"POST ") {
            (start + 4, Method::Post)
        } else {
            let e = find_non_tchar(rl, start);
            match rl.get(e) {
                None => return more(),
                Some(b' ') if e > start => {
                    (e, Method::from_token(rl.get(start..e).unwrap_or_default()))
                }
                Some(_) => return Err(Error::InvalidMethod),
            }
        };
        // request-target SP (RFC 9112 §3.2). The scan also stops at `#`, which is then
        // rejected below: no target form has a fragment, a client never sends one
        // (RFC 9110 §7.1), and routing on a path with `#` in it would route on a fragment.
        let ts = method_end + 1;
        let te = scanner.target_end(rl, ts);
        match rl.get(te) {
            None => return more(),
            Some(b' ') if te > ts => {}
            Some(b'\r' | b'\n') if te > ts => return Err(Error::InvalidRequestLine),
            Some(_) => return Err(Error::InvalidTarget),
        }
        // HTTP-version (RFC 9112 §2.3) and CR LF. What nearly every client sends is compared
        // as one 10-byte literal; anything else takes the general path, which gives such a
        // line the same answer.
        let vs = te + 1;
        let after = vs + 8;
        let (version, line_end) = if rl.get(vs..vs + 10) == Some(b"HTTP/1.1\r\n") {
            (Version::Http11, vs + 10)
        } else {
            let Some(v) = rl.get(vs..after) else {
                return more();
            };
            let version = match http_version(v) {
                Err(Error::UnsupportedVersion)
                    if v == b"HTTP/2.0" && rl.get(start..te) == Some(b"PRI *") =>
                {
                    return Err(Error::Http2Preface);
                }
                v => v?,
            };
            let Some(line_end) = line_end(rl, after, lenient_lf, Error::InvalidVersion)? else {
                return more();
            };
            (version, line_end)
        };
        if after - start > self.config.max_request_line() {
            return Err(Error::RequestLineTooLong);
        }
        let target = rl.get(ts..te).unwrap_or_default();
        let form = target_form(method, target)?;
        self.p = Progress {
            in_headers: true,
            method: method.code(),
            method_start: start,
            method_end,
            target_end: te,
            version,
            form,
            lines: Lines {
                pos: line_end,
                ..self.p.lines
            },
        };
        Ok(Some(()))
    }
}

/// A request parse call as a [`Job`] for the backend's scanner.
struct Parse<'p, 'b, 'h> {
    parser: &'p mut Parser,
    buf: &'b [u8],
    slots: &'h mut [HeaderSlot],
}

impl Job for Parse<'_, '_, '_> {
    type Out = Result<Option<(usize, BodyFraming)>, Error>;

    #[inline(always)]
    fn run<S: Scanner>(self, scanner: S) -> Self::Out {
        self.parser.run(scanner, self.buf, self.slots)
    }
}

/// Classifies and checks the request-target against the method (RFC 9112 §3.2).
#[inline(always)]
fn target_form(method: Method<'_>, t: &[u8]) -> Result<TargetForm, Error> {
    // §3.2.1: origin-form, nearly every request; the other forms are checked out of line.
    if t.first() == Some(&b'/') && method != Method::Connect {
        Ok(TargetForm::Origin)
    } else {
        other_target_form(method, t)
    }
}

/// The request-target forms other than origin-form with a method other than CONNECT.
#[inline(never)]
fn other_target_form(method: Method<'_>, t: &[u8]) -> Result<TargetForm, Error> {
    let connect = method == Method::Connect;
    match t.first() {
        // §3.2.4: asterisk-form only with OPTIONS.
        Some(b'*') if t.len() == 1 && method == Method::Options => Ok(TargetForm::Asterisk),
        // §3.2.3: authority-form (uri-host ":" port) only, and always, with CONNECT.
        Some(_) if connect => match valid_authority(t, Port::Required) {
            true => Ok(TargetForm::Authority),
            false => Err(Error::InvalidTarget),
        },
        // §3.2.2: absolute-form, `scheme ":" ...` (RFC 3986 §3.1), with a valid authority.
        Some(b) if b.is_ascii_alphabetic() => {
            let colon = t.iter().position(|&b| !SCHEME_CHAR[b as usize]);
            match colon {
                Some(c) if t.get(c) == Some(&b':') && valid_absolute(t) => Ok(TargetForm::Absolute),
                _ => Err(Error::InvalidTarget),
            }
        }
        _ => Err(Error::InvalidTarget),
    }
}
