//! The request head parser: one left-to-right pass that validates syntax, classifies header
//! names and extracts body framing, resumable on partial input.
//!
//! Structure: the request line is parsed once; then each header line is scanned from its first
//! byte for two things at once: its end (the first control byte other than HTAB, which must be
//! the CR of CR LF) and its name's end (the first non-`tchar` byte, which must be the `:`).
//! The value is what lies between, less its OWS. The next line's start depends only on the
//! first scan, so consecutive lines overlap in the CPU instead of waiting on name, then value.
//! Framing headers (Content-Length, Transfer-Encoding, Host, Connection, Expect) are
//! interpreted as soon as their line is complete, so the caller never walks the headers again.
//!
//! Resumption: the parser remembers the offset of the first incomplete line and everything
//! derived from the complete lines before it (request line offsets, header count, framing
//! state). The next call starts at that offset, so completed lines are never rescanned.

use crate::error::Error;
use crate::header_name::{classify_token, KnownHeader};
use crate::request::{flags, BodyFraming, HeaderSlot, Method, Request, TargetForm, Version};
use crate::scan::{
    eq_fold, find_non_tchar, is_token, list_elements, ows_bounds, trim_ows, HOST_CHAR, SCHEME_CHAR,
};
use crate::simd::{find_non_vchar, scan_field_line};

/// Limits and the leniencies RFC 9112 permits. Defaults are strict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Largest accepted head, request line and final empty line included. Larger heads are
    /// rejected with [`Error::HeadTooLarge`] (431) as soon as this many bytes arrived without
    /// completing the head. Default 16 KiB. Values above `u32::MAX` are clamped.
    pub max_head_bytes: usize,
    /// Longest accepted request line (without its line ending). Longer lines are rejected with
    /// [`Error::RequestLineTooLong`] (414, RFC 9112 §3). Default 8 KiB.
    pub max_request_line: usize,
    /// Most header field lines; the effective limit is the smaller of this and the number of
    /// slots passed to [`Parser::parse`]. More is [`Error::TooManyHeaders`] (431). Default 100.
    pub max_headers: usize,
    /// Accept a bare LF as a line ending (RFC 9112 §2.2: a recipient MAY). Default `false`:
    /// a bare LF is rejected with [`Error::BareLf`], because front ends that disagree on line
    /// endings are a request-smuggling vector.
    pub allow_bare_lf: bool,
}

impl Config {
    /// The strict defaults.
    pub const DEFAULT: Config = Config {
        max_head_bytes: 16 * 1024,
        max_request_line: 8 * 1024,
        max_headers: 100,
        allow_bare_lf: false,
    };
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

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

/// The headers `framing_header` interprets, indexed by `KnownHeader` discriminant.
static FRAMING_HEADERS: [bool; 256] = {
    let mut t = [false; 256];
    t[KnownHeader::ContentLength as usize] = true;
    t[KnownHeader::TransferEncoding as usize] = true;
    t[KnownHeader::Host as usize] = true;
    t[KnownHeader::Connection as usize] = true;
    t[KnownHeader::Expect as usize] = true;
    t
};

// Transfer-Encoding state bits.
const TE_SEEN: u8 = 1;
const TE_CHUNKED: u8 = 2;
const TE_CHUNKED_LAST: u8 = 4;
const TE_OTHER: u8 = 8;

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
    content_length: Option<u64>,
    te: u8,
    host: Option<u32>,
    flags: u8,
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
        content_length: None,
        te: 0,
        host: None,
        flags: 0,
    };
}

/// A resumable request head parser.
///
/// Feed it the bytes received so far (always from the start of the request: the same bytes
/// plus more on each call). On [`Status::Partial`] it remembers how far it got; on
/// [`Status::Complete`] or an error it resets itself, ready for the next request.
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
                    flags: p.flags,
                    host: p.host,
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
        let max_head = self.config.max_head_bytes.min(u32::MAX as usize);
        let view = buf.get(..max_head).unwrap_or(buf);
        let truncated = view.len() < buf.len();
        if !self.p.in_headers {
            match self.request_line(view, truncated)? {
                Some(()) => {}
                None => return Ok(None),
            }
        }
        match self.header_lines(view, slots)? {
            Some(head_len) => Ok(Some((head_len, self.finish()?))),
            None if truncated => Err(Error::HeadTooLarge),
            None => Ok(None),
        }
    }

    /// Parses the request line (after any leading empty lines). `Ok(None)`: incomplete.
    #[inline(always)]
    fn request_line(&mut self, view: &[u8], truncated: bool) -> Result<Option<()>, Error> {
        let lenient_lf = self.config.allow_bare_lf;
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
            .saturating_add(self.config.max_request_line)
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
        if after - start > self.config.max_request_line {
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
        let lenient_lf = self.config.allow_bare_lf;
        let max = slots.len().min(self.config.max_headers);
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
                // One table load instead of five compares.
                if FRAMING_HEADERS[k as u8 as usize] {
                    self.framing_header(k, view, vs, ve, n)?;
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

    /// Interprets a framing-relevant header as soon as its line is complete. What nearly every
    /// request sends (one Host, a one-token Connection, a Content-Length) is handled in the
    /// header loop itself: a call would cost more than the check, since it clobbers the loop's
    /// vector constants.
    #[inline(always)]
    fn framing_header(
        &mut self,
        k: KnownHeader,
        view: &[u8],
        vs: usize,
        ve: usize,
        index: usize,
    ) -> Result<(), Error> {
        let v = view.get(vs..ve).unwrap_or_default();
        match k {
            KnownHeader::Host => {
                if self.p.host.is_some() {
                    return Err(Error::MultipleHost);
                }
                // Scanned in the whole buffer so that the vector loads can run past the value.
                if !crate::simd::all_host_chars(view, vs, ve) {
                    return Err(Error::InvalidHost);
                }
                self.p.host = Some(index as u32);
            }
            KnownHeader::ContentLength => {
                let n = parse_content_length(v)?;
                match self.p.content_length {
                    // RFC 9110 §8.6: repeated values must agree.
                    Some(prev) if prev != n => return Err(Error::InvalidContentLength),
                    _ => self.p.content_length = Some(n),
                }
            }
            KnownHeader::Connection if eq_fold(v, b"keep-alive") => {
                self.p.flags |= flags::KEEP_ALIVE;
            }
            KnownHeader::Connection if eq_fold(v, b"close") => self.p.flags |= flags::CLOSE,
            _ => return self.other_framing_header(k, v),
        }
        Ok(())
    }

    /// Transfer-Encoding, Expect and Connection lists: rare enough to stay out of line.
    #[inline(never)]
    fn other_framing_header(&mut self, k: KnownHeader, v: &[u8]) -> Result<(), Error> {
        match k {
            KnownHeader::TransferEncoding => {
                self.p.te = transfer_encoding(self.p.te, v)?;
            }
            KnownHeader::Connection => {
                for t in list_elements(v) {
                    if eq_fold(t, b"close") {
                        self.p.flags |= flags::CLOSE;
                    } else if eq_fold(t, b"keep-alive") {
                        self.p.flags |= flags::KEEP_ALIVE;
                    } else if eq_fold(t, b"upgrade") {
                        self.p.flags |= flags::UPGRADE;
                    }
                }
            }
            KnownHeader::Expect => {
                for e in list_elements(v) {
                    if eq_fold(e, b"100-continue") {
                        self.p.flags |= flags::EXPECT_CONTINUE;
                    } else {
                        return Err(Error::UnsupportedExpectation);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Cross-header framing rules, applied once the head is complete (RFC 9112 §6.3).
    fn finish(&self) -> Result<BodyFraming, Error> {
        let p = &self.p;
        if p.version == Version::Http11 && p.host.is_none() {
            return Err(Error::MissingHost);
        }
        if p.te & TE_SEEN != 0 {
            if p.version == Version::Http10 {
                return Err(Error::TransferEncodingInHttp10);
            }
            if p.content_length.is_some() {
                return Err(Error::ContentLengthWithTransferEncoding);
            }
            if p.te & TE_CHUNKED_LAST == 0 {
                return Err(Error::InvalidTransferEncoding);
            }
            if p.te & TE_OTHER != 0 {
                return Err(Error::UnsupportedTransferCoding);
            }
            return Ok(BodyFraming::Chunked);
        }
        Ok(match p.content_length {
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::None,
        })
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

/// Folds one Transfer-Encoding field line into the TE state (RFC 9112 §6.1): a list of
/// `transfer-coding`s; `chunked` at most once and, at the end of all lines, last.
fn transfer_encoding(mut te: u8, v: &[u8]) -> Result<u8, Error> {
    let mut any = false;
    for coding in list_elements(v) {
        any = true;
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
            te = (te | TE_OTHER) & !TE_CHUNKED_LAST;
        }
    }
    if !any {
        return Err(Error::InvalidTransferEncoding);
    }
    Ok(te | TE_SEEN)
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
        // §3.2.3: authority-form (host ":" port) only, and always, with CONNECT.
        Some(_) if connect => {
            let colon = t
                .iter()
                .rposition(|&b| b == b':')
                .ok_or(Error::InvalidTarget)?;
            let (host, port) = (&t[..colon], &t[colon + 1..]);
            let ok = !host.is_empty()
                && host.iter().all(|&b| HOST_CHAR[b as usize])
                && !port.is_empty()
                && port.iter().all(u8::is_ascii_digit);
            if ok {
                Ok(TargetForm::Authority)
            } else {
                Err(Error::InvalidTarget)
            }
        }
        // §3.2.2: absolute-form, `scheme ":" ...` (RFC 3986 §3.1).
        Some(b) if b.is_ascii_alphabetic() => {
            let colon = t.iter().position(|&b| !SCHEME_CHAR[b as usize]);
            match colon {
                Some(c) if t.get(c) == Some(&b':') => Ok(TargetForm::Absolute),
                _ => Err(Error::InvalidTarget),
            }
        }
        _ => Err(Error::InvalidTarget),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
