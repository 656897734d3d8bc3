//! The request head parser: one left-to-right pass that validates syntax, classifies header
//! names and extracts body framing, resumable on partial input.
//!
//! Structure: the request line is parsed once; then each header line is scanned from its first
//! byte for two things at once: its end (the first control byte other than HTAB, which must be
//! the CR of CR LF) and its name's end (the first non-`tchar` byte, which must be the `:`).
//! The value is what lies between, less its OWS. The next line's start depends only on the
//! first scan, so consecutive lines overlap in the CPU instead of waiting on name, then value.
//! Framing headers (Content-Length, Transfer-Encoding, Host, Connection, Expect) are handed to
//! `crate::framing` as soon as their line is complete, so the caller never walks the headers
//! again.
//!
//! Resumption: the parser remembers the offset of the first incomplete line and everything
//! derived from the complete lines before it (request line offsets, header count, framing
//! state). The next call starts at that offset, so completed lines are never rescanned.

use crate::config::Config;
use crate::error::Error;
use crate::framing::{is_framing_header, Framing};
use crate::header_name::classify_token;
use crate::request::{BodyFraming, HeaderSlot, Method, Request, TargetForm, Version};
use crate::scan::{find_non_tchar, ows_bounds, SCHEME_CHAR};
use crate::simd::{find_non_vchar, scan_field_line};
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
    /// Offset of the first byte not yet part of a complete line.
    pos: usize,
    /// The request line is done; `pos` is at a header line or the final empty line.
    in_headers: bool,
    method: u8,
    method_start: usize,
    method_end: usize,
    target_end: usize,
    version: Version,
    form: TargetForm,
    headers: usize,
    framing: Framing,
}

impl Progress {
    const NEW: Progress = Progress {
        pos: 0,
        in_headers: false,
        method: 0,
        method_start: 0,
        method_end: 0,
        target_end: 0,
        version: Version::Http11,
        form: TargetForm::Origin,
        headers: 0,
        framing: Framing::NEW,
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

impl Default for Parser {
    fn default() -> Self {
        Parser::new(Config::DEFAULT)
    }
}

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
    /// A parser with the given configuration.
    #[must_use]
    pub const fn new(config: Config) -> Parser {
        Parser {
            config,
            p: Progress::NEW,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Forgets any partial progress (call before parsing a different buffer).
    pub fn reset(&mut self) {
        self.p = Progress::NEW;
    }

    /// Offset of the first byte the next call will look at: everything before it belongs to
    /// complete lines that will not be scanned again.
    #[must_use]
    pub fn resume_offset(&self) -> usize {
        self.p.pos
    }

    /// Parses (or continues parsing) a request head.
    ///
    /// `buf` must start at the first byte of the request and, on a call after
    /// [`Status::Partial`], must begin with the same bytes as before. `slots` receives one entry
    /// per header line; pass the same slots on every call for one request.
    ///
    /// # Errors
    /// Any [`Error`]; [`Error::status`] says what to answer. The parser resets itself.
    // Inlinable across crates: a caller that reads a few fields of the `Request` lets the
    // compiler drop the stores of the others (a server has one or two call sites).
    #[inline]
    pub fn parse<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        slots: &'h mut [HeaderSlot],
    ) -> Result<Status<Request<'b, 'h>>, Error> {
        match self.run(buf, slots) {
            Ok(Some((head_len, framing))) => {
                let p = self.p;
                self.p = Progress::NEW;
                let slots: &'h [HeaderSlot] = slots;
                let method = Method::from_code(
                    p.method,
                    buf.get(p.method_start..p.method_end).unwrap_or_default(),
                );
                Ok(Status::Complete(Request {
                    buf,
                    slots: slots.get(..p.headers).unwrap_or_default(),
                    method,
                    target: buf.get(p.method_end + 1..p.target_end).unwrap_or_default(),
                    form: p.form,
                    version: p.version,
                    head_len,
                    framing,
                    flags: p.framing.flags,
                    host: p.framing.host,
                }))
            }
            Ok(None) => Ok(Status::Partial),
            Err(e) => {
                self.p = Progress::NEW;
                Err(e)
            }
        }
    }

    /// `Ok(None)`: partial; `Ok(Some(..))`: complete head of that length.
    #[inline(always)]
    fn run(
        &mut self,
        buf: &[u8],
        slots: &mut [HeaderSlot],
    ) -> Result<Option<(usize, BodyFraming)>, Error> {
        // Never look past the head limit: both a whole-buffer parse and any incremental
        // sequence then see exactly the same bytes and reach the same verdict.
        let max_head = self.config.max_head_bytes().min(u32::MAX as usize);
        let view = buf.get(..max_head).unwrap_or(buf);
        let truncated = view.len() < buf.len();
        if !self.p.in_headers {
            match self.request_line(view, truncated)? {
                Some(()) => {}
                None => return Ok(None),
            }
        }
        match self.header_lines(view, slots)? {
            Some(head_len) => Ok(Some((head_len, self.p.framing.finish(self.p.version)?))),
            None if truncated => Err(Error::HeadTooLarge),
            None => Ok(None),
        }
    }

    /// Parses the request line (after any leading empty lines). `Ok(None)`: incomplete.
    #[inline(always)]
    fn request_line(&mut self, view: &[u8], truncated: bool) -> Result<Option<()>, Error> {
        let lenient_lf = self.config.allow_bare_lf();
        let mut i = self.p.pos;
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
        self.p.pos = i;
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
        // request-target SP (RFC 9112 §3.2)
        let ts = method_end + 1;
        let te = find_non_vchar(rl, ts);
        match rl.get(te) {
            None => return more(),
            Some(b' ') if te > ts => {}
            Some(b'\r' | b'\n') if te > ts => return Err(Error::InvalidRequestLine),
            Some(_) => return Err(Error::InvalidTarget),
        }
        // HTTP-version (RFC 9112 §2.3)
        let vs = te + 1;
        let Some(v) = rl.get(vs..vs + 8) else {
            return more();
        };
        // One 8-byte compare for the two versions every client sends.
        let word = u64::from_le_bytes(v.try_into().unwrap_or_default());
        let version = match v {
            _ if word == u64::from_le_bytes(*b"HTTP/1.1") => Version::Http11,
            _ if word == u64::from_le_bytes(*b"HTTP/1.0") => Version::Http10,
            // RFC 9112 §2.3, RFC 9110 §6.2: a higher minor version of HTTP/1 is processed as
            // the highest one implemented.
            [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor] if minor.is_ascii_digit() => {
                Version::Http11
            }
            [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
                if major.is_ascii_digit() && minor.is_ascii_digit() =>
            {
                let preface = v == b"HTTP/2.0" && rl.get(start..te) == Some(b"PRI *");
                return Err(if preface {
                    Error::Http2Preface
                } else {
                    Error::UnsupportedVersion
                });
            }
            _ => return Err(Error::InvalidVersion),
        };
        let after = vs + 8;
        let line_end = match rl.get(after) {
            None => return more(),
            Some(b'\r') => match rl.get(after + 1) {
                Some(b'\n') => after + 2,
                Some(_) => return Err(Error::BareCr),
                None => return more(),
            },
            Some(b'\n') if lenient_lf => after + 1,
            Some(b'\n') => return Err(Error::BareLf),
            Some(_) => return Err(Error::InvalidVersion),
        };
        if after - start > self.config.max_request_line() {
            return Err(Error::RequestLineTooLong);
        }
        let target = rl.get(ts..te).unwrap_or_default();
        let form = target_form(method, target)?;
        self.p = Progress {
            pos: line_end,
            in_headers: true,
            method: method.code(),
            method_start: start,
            method_end,
            target_end: te,
            version,
            form,
            ..self.p
        };
        Ok(Some(()))
    }

    /// Parses header lines up to the empty line. `Ok(Some(head_len))` when complete.
    #[inline(always)]
    fn header_lines(
        &mut self,
        view: &[u8],
        slots: &mut [HeaderSlot],
    ) -> Result<Option<usize>, Error> {
        let lenient_lf = self.config.allow_bare_lf();
        let max = slots.len().min(self.config.max_headers());
        let mut i = self.p.pos;
        let mut n = self.p.headers;
        loop {
            // Line start: the end of the head, a continuation (rejected), or a field name.
            match view.get(i) {
                Some(b'\r') => match view.get(i + 1) {
                    Some(b'\n') => {
                        self.p.headers = n;
                        return Ok(Some(i + 2));
                    }
                    Some(_) => return Err(Error::BareCr),
                    None => break,
                },
                Some(b'\n') if lenient_lf => {
                    self.p.headers = n;
                    return Ok(Some(i + 1));
                }
                Some(b'\n') => return Err(Error::BareLf),
                // RFC 9112 §5.2 (obs-fold) and §2.2 (whitespace before the first field):
                // a server MUST reject (or unfold, which needs a copy; we reject).
                Some(b' ' | b'\t') => return Err(Error::ObsFold),
                Some(_) => {}
                None => break,
            }
            // Another field line is starting: reject now rather than after buffering it.
            if n >= max {
                return Err(Error::TooManyHeaders);
            }
            // The line's end first: the first control byte other than HTAB (or DEL) from the
            // line's start. A field name holds none (it is all `tchar`), so this is the value's
            // end, and the next line's start depends on this one scan only, not on the name's
            // end as well. The name and the value's OWS are worked out beside it.
            let (ne, stop) = scan_field_line(view, i);
            // field-name ":" (RFC 9112 §5.1)
            match view.get(ne) {
                Some(b':') if ne > i => {}
                Some(b' ' | b'\t') if ne > i => return Err(Error::WhitespaceBeforeColon),
                Some(_) => return Err(Error::InvalidHeaderName),
                None => break,
            }
            let name = view.get(i..ne).unwrap_or_default();
            let known = classify_token(name);
            // OWS field-value OWS CRLF (RFC 9112 §5, RFC 9110 §5.5)
            let (vs, ve) = trim_value(view, ne + 1, stop);
            // CR LF as one two-byte compare; anything else (bare CR or LF, an invalid byte,
            // the end of the input) is told apart below.
            let next = if view.get(stop..stop + 2) == Some(b"\r\n") {
                stop + 2
            } else {
                match view.get(stop) {
                    Some(b'\r') => match view.get(stop + 1) {
                        Some(b'\n') => stop + 2,
                        Some(_) => return Err(Error::BareCr),
                        // Incomplete line: the loop's exit records how far it got.
                        None => break,
                    },
                    Some(b'\n') if lenient_lf => stop + 1,
                    Some(b'\n') => return Err(Error::BareLf),
                    Some(_) => return Err(Error::InvalidHeaderValue),
                    None => break,
                }
            };
            if let Some(k) = known {
                if is_framing_header(k) {
                    self.p.framing.header(k, view, vs, ve, n)?;
                }
            }
            if let Some(slot) = slots.get_mut(n) {
                // Offsets fit in u32: `view` is at most `u32::MAX` bytes (see `run`).
                *slot = HeaderSlot {
                    name_start: i as u32,
                    name_len: (ne - i) as u32,
                    value_start: vs as u32,
                    value_len: (ve - vs) as u32,
                    known,
                };
            }
            n += 1;
            i = next;
        }
        self.p.pos = i;
        self.p.headers = n;
        Ok(None)
    }
}

/// The field value in `buf[start..stop]` without its leading and trailing OWS (RFC 9110 §5.5):
/// `(value start, value end)`. Nearly every value has one SP before it and none after, so these
/// are a byte test or two each.
#[inline(always)]
fn trim_value(buf: &[u8], start: usize, stop: usize) -> (usize, usize) {
    match buf.get(start..stop) {
        Some([b' ', first, .., last]) if !is_ows(*first) && !is_ows(*last) => (start + 1, stop),
        Some([b' ', only]) if !is_ows(*only) => (start + 1, stop),
        _ => trim_value_slow(buf, start, stop),
    }
}

/// [`trim_value`] for any OWS.
#[inline(never)]
fn trim_value_slow(buf: &[u8], start: usize, stop: usize) -> (usize, usize) {
    let (lead, end) = ows_bounds(buf.get(start..stop).unwrap_or_default());
    (start + lead, start + end)
}

/// Whether a byte of a field value is OWS. Only HTAB and SP can be: every other byte below
/// 0x21 ends the value (it is a control byte other than HTAB), so one compare does.
#[inline(always)]
fn is_ows(b: u8) -> bool {
    b <= b' '
}

#[inline(always)]
fn incomplete<T>(truncated: bool) -> Result<Option<T>, Error> {
    if truncated {
        Err(Error::HeadTooLarge)
    } else {
        Ok(None)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::trim_ows;

    #[test]
    fn trim_value_is_trim_ows_on_every_short_value() {
        // Every value of up to 6 bytes over OWS, a plain byte and obs-text, after a `:`.
        let alphabet = [b' ', b'\t', b'a', 0x80];
        for len in 0..=6u32 {
            for code in 0..4usize.pow(len) {
                let mut line = b"x:".to_vec();
                let mut c = code;
                for _ in 0..len {
                    line.push(alphabet[c % 4]);
                    c /= 4;
                }
                let stop = line.len();
                line.extend_from_slice(b"\r\n");
                let (vs, ve) = trim_value(&line, 2, stop);
                assert!(2 <= vs && vs <= ve && ve <= stop, "{line:?}");
                assert_eq!(&line[vs..ve], trim_ows(&line[2..stop]), "{line:?}");
            }
        }
    }
}
