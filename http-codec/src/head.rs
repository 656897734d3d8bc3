//! What the request and the response head parsers share (RFC 9112 §2, §5): the view of the
//! input the head limit allows, the HTTP-version, and the field-line loop with its value
//! trimming. A request and a response differ only in their first line and in which field
//! lines their framing depends on; everything after the first line is parsed by the same code
//! ([`Lines::field_lines`]), so the two cannot drift apart in what they accept.
//!
//! The field-line loop: each line is scanned from its first byte for two things at once: its
//! end (the first control byte, nearly always the CR of CR LF) and its name's end (nearly
//! always the `:`). The value is what lies between, less its OWS. The loop tests the byte at
//! each answer once (`:`, CR LF); only when a test fails does it look for the rarer cases (a
//! name going on past a rarer `tchar`, a value going on past HTAB, the errors). The next
//! line's start depends only on the first scan, so consecutive lines overlap in the CPU
//! instead of waiting on name, then value.

use crate::config::Config;
use crate::error::Error;
use crate::fields::HeaderSlot;
use crate::framing::Framing;
use crate::header_name::KnownHeader;
use crate::parse::Status;
use crate::request::Version;
use crate::scan::ows_bounds;
use crate::scanner::{FieldLines, Scanner};

/// The construction and resumption plumbing of a head parser: `Default`, `new`, `config`,
/// `reset` and `resume_offset` for a struct `$t` with the fields `config: Config` and
/// `p: Progress`, where `Progress` (the parser's module's own) has a `NEW` value and its
/// `lines` are [`Lines`]. The same for both parsers, so written once.
macro_rules! parser_basics {
    ($t:ident) => {
        impl Default for $t {
            fn default() -> Self {
                $t::new($crate::Config::DEFAULT)
            }
        }

        impl $t {
            /// A parser with the given configuration.
            #[must_use]
            pub const fn new(config: $crate::Config) -> $t {
                $t {
                    config,
                    p: Progress::NEW,
                }
            }

            /// The configuration (pass it on to the body decoder, for its chunked limits).
            #[must_use]
            pub fn config(&self) -> &$crate::Config {
                &self.config
            }

            /// Forgets any partial progress (call before parsing a different buffer).
            pub fn reset(&mut self) {
                self.p = Progress::NEW;
            }

            /// Offset of the first byte the next call will look at: everything before it
            /// belongs to complete lines that will not be scanned again.
            #[must_use]
            pub fn resume_offset(&self) -> usize {
                self.p.lines.pos
            }
        }
    };
}
pub(crate) use parser_basics;

/// Turns a parser's `run` (`Ok(None)`: partial, `Ok(Some(r))`: complete, or an error) into the
/// call's result. On `Partial` the progress stays for the next call; on completion `make`
/// builds the head from it, on an error it is dropped, and either way `fresh(progress)` takes
/// its place, ready for the next head: a progress that starts a head anew, which need not
/// rewrite the fields a new head overwrites before it reads them.
#[inline(always)]
pub(crate) fn settle<P: Copy, R, T>(
    run: Result<Option<R>, Error>,
    progress: &mut P,
    fresh: impl Fn(P) -> P,
    make: impl FnOnce(P, R) -> T,
) -> Result<Status<T>, Error> {
    match run {
        Ok(Some(r)) => {
            let p = *progress;
            *progress = fresh(p);
            Ok(Status::Complete(make(p, r)))
        }
        Ok(None) => Ok(Status::Partial),
        Err(e) => {
            *progress = fresh(*progress);
            Err(e)
        }
    }
}

/// A parse call's status for a head read into a buffer of `capacity` bytes, of which `len` are
/// filled: `Partial` from a full buffer can never become anything else, since no read can add
/// to it, so it is [`Error::HeadExceedsBuffer`] instead, after `reset`.
#[inline(always)]
pub(crate) fn within_capacity<T>(
    status: Status<T>,
    len: usize,
    capacity: usize,
    reset: impl FnOnce(),
) -> Result<Status<T>, Error> {
    if status.is_partial() && len >= capacity {
        reset();
        return Err(Error::HeadExceedsBuffer);
    }
    Ok(status)
}

/// The part of `buf` a parser may look at: at most the head limit (and `u32::MAX`, so that
/// offsets fit a [`HeaderSlot`]), and whether `buf` holds more than that. Never looking past
/// the limit is what gives a whole-buffer parse and any incremental sequence the same bytes,
/// and so the same verdict.
#[inline(always)]
pub(crate) fn head_view<'b>(buf: &'b [u8], config: &Config) -> (&'b [u8], bool) {
    let max_head = config.max_head_bytes().min(u32::MAX as usize);
    let view = buf.get(..max_head).unwrap_or(buf);
    (view, view.len() < buf.len())
}

/// HTTP-version (RFC 9112 §2.3) from the 8 bytes that hold it. A higher minor version of
/// HTTP/1 is HTTP/1.1 (RFC 9110 §6.2: processed as the highest one implemented); another
/// well-formed major version is [`Error::UnsupportedVersion`], anything else
/// [`Error::InvalidVersion`].
#[inline(always)]
pub(crate) fn http_version(v: &[u8]) -> Result<Version, Error> {
    // One 8-byte compare for the two versions every peer sends.
    let word = u64::from_le_bytes(v.try_into().unwrap_or_default());
    match v {
        _ if word == u64::from_le_bytes(*b"HTTP/1.1") => Ok(Version::Http11),
        _ if word == u64::from_le_bytes(*b"HTTP/1.0") => Ok(Version::Http10),
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor] if minor.is_ascii_digit() => {
            Ok(Version::Http11)
        }
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            Err(Error::UnsupportedVersion)
        }
        _ => Err(Error::InvalidVersion),
    }
}

/// The end of a line whose content ends at `at` (RFC 9112 §2.2): `Ok(Some(start of the next
/// line))`, `Ok(None)` when the input ends first; a CR not followed by LF is
/// [`Error::BareCr`], a bare LF [`Error::BareLf`] unless `lenient_lf`, any other byte
/// `other`.
#[inline(always)]
pub(crate) fn line_end(
    buf: &[u8],
    at: usize,
    lenient_lf: bool,
    other: Error,
) -> Result<Option<usize>, Error> {
    match buf.get(at) {
        None => Ok(None),
        Some(b'\r') => match buf.get(at + 1) {
            Some(b'\n') => Ok(Some(at + 2)),
            Some(_) => Err(Error::BareCr),
            None => Ok(None),
        },
        Some(b'\n') if lenient_lf => Ok(Some(at + 1)),
        Some(b'\n') => Err(Error::BareLf),
        Some(_) => Err(other),
    }
}

/// Where a head's field lines stand between calls: the offset of the first incomplete line,
/// the field lines before it, and what their framing fields declared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lines {
    /// Offset of the first byte not yet part of a complete line.
    pub(crate) pos: usize,
    /// Complete field lines so far (the slots they fill).
    pub(crate) count: usize,
    pub(crate) framing: Framing,
}

impl Lines {
    pub(crate) const NEW: Lines = Lines {
        pos: 0,
        count: 0,
        framing: Framing::NEW,
    };

    /// Parses field lines from `self.pos` up to the empty line that ends the head, into
    /// `slots[self.count..]`, handing the field lines `recognise` names to `self.framing` as
    /// each line completes: the header section of a request and of a response alike
    /// (RFC 9112 §5). `Ok(Some(head_len))` when the head is complete. When the input ends
    /// first, `Ok(None)` with `self` at the first incomplete line, so that the next call
    /// resumes there, or [`Error::HeadTooLarge`] when `truncated`: the view was cut at the
    /// head limit ([`head_view`]).
    ///
    /// The common line (a name ending in `:`, a value, CR LF) takes one scan and a handful of
    /// compares; everything else (the head's end, obs-fold, a bare CR or LF, an invalid byte,
    /// the input's end) is told apart after the scan, off that path. Names are not classified
    /// here: only the few the framing needs are recognised, by their length and a word
    /// compare (`recognise`), and any other is classified when it is read.
    #[inline(always)]
    pub(crate) fn field_lines<S: Scanner>(
        &mut self,
        scanner: S,
        view: &[u8],
        truncated: bool,
        slots: &mut [HeaderSlot],
        config: &Config,
        recognise: impl Fn(&[u8]) -> Option<KnownHeader>,
    ) -> Result<Option<usize>, Error> {
        let lenient_lf = config.allow_bare_lf();
        // The slots a head may fill: one bounds check per line then both limits the count
        // and places the slot.
        let max = slots.len().min(config.max_headers());
        let slots = slots.get_mut(..max).unwrap_or_default();
        let mut i = self.pos;
        let mut n = self.count;
        let mut lines = scanner.lines(view, i);
        loop {
            // The head's end is the one line start that is not a field name, and every head
            // has one: tested before the scan, which it would only lengthen.
            if view.get(i) == Some(&b'\r') {
                match view.get(i + 1) {
                    Some(b'\n') => {
                        self.count = n;
                        return Ok(Some(i + 2));
                    }
                    Some(_) => return Err(Error::BareCr),
                    None => break,
                }
            }
            // The name's end (nearly always the `:`) and the line's (the first control byte or
            // DEL, nearly always the CR of CR LF): the next line's start depends on these two
            // searches only.
            let (mut ne, mut stop) = lines.line_start(view, i);
            // field-name ":" (RFC 9112 §5.1). The usual line is told by this one test; the
            // others are sorted out inside, in the order of the checks for a line.
            if view.get(ne) != Some(&b':') || ne == i {
                // A rarer `tchar` than a letter, digit or `-` continues the name.
                if let Some(&b) = view.get(ne) {
                    if crate::scan::TCHAR[b as usize] {
                        ne = lines.name_end(view, ne + 1);
                    }
                }
                if ne == i {
                    match other_line_start(view, i, n < slots.len(), lenient_lf)? {
                        Some(head_len) => {
                            self.count = n;
                            return Ok(Some(head_len));
                        }
                        None => break,
                    }
                }
                // Another field line is starting: reject now rather than after buffering it.
                if n >= slots.len() {
                    return Err(Error::TooManyHeaders);
                }
                match view.get(ne) {
                    Some(b':') => {}
                    Some(b' ' | b'\t') => return Err(Error::WhitespaceBeforeColon),
                    Some(_) => return Err(Error::InvalidHeaderName),
                    None => break,
                }
            }
            let Some(slot) = slots.get_mut(n) else {
                return Err(Error::TooManyHeaders);
            };
            // CR LF as one two-byte compare; anything else out of line: a value's HTAB first
            // (the scan stopped at it), then the other line ends and errors.
            // OWS field-value OWS CRLF (RFC 9112 §5, RFC 9110 §5.5): trimmed in each branch,
            // where the line's end is known.
            let (next, (vs, ve)) = if view.get(stop..stop + 2) == Some(b"\r\n") {
                (stop + 2, trim_value(view, ne + 1, stop))
            } else {
                if view.get(stop) == Some(&b'\t') {
                    stop = lines.value_end(view, stop + 1);
                }
                match line_end(view, stop, lenient_lf, Error::InvalidHeaderValue)? {
                    Some(next) => (next, trim_value(view, ne + 1, stop)),
                    None => break,
                }
            };
            if let Some(k) = view.get(i..ne).and_then(&recognise) {
                self.framing.header(k, view, vs, ve, n)?;
            }
            // Offsets fit in u32: `view` is at most `u32::MAX` bytes (see `head_view`).
            *slot = HeaderSlot {
                name_start: i as u32,
                name_len: (ne - i) as u32,
                value_start: vs as u32,
                value_len: (ve - vs) as u32,
            };
            n += 1;
            i = next;
        }
        self.pos = i;
        self.count = n;
        incomplete(truncated)
    }
}

/// A line that starts with neither a field name nor CR (RFC 9112 §2.2, §5): the head's end
/// after a bare LF where `lenient_lf` allows it (`Ok(Some(head_len))`), or the input's end
/// (`Ok(None)`); anything else is an error. `room`: another field line would still fit.
#[inline(never)]
fn other_line_start(
    view: &[u8],
    i: usize,
    room: bool,
    lenient_lf: bool,
) -> Result<Option<usize>, Error> {
    match view.get(i) {
        None => Ok(None),
        Some(b'\n') if lenient_lf => Ok(Some(i + 1)),
        Some(b'\n') => Err(Error::BareLf),
        // RFC 9112 §5.2 (obs-fold) and §2.2 (whitespace before the first field): a server
        // MUST reject or unfold, a user agent unfold, a proxy answer 502 or unfold. Unfolding
        // needs a copy, so both parsers reject.
        Some(b' ' | b'\t') => Err(Error::ObsFold),
        Some(_) if !room => Err(Error::TooManyHeaders),
        Some(_) => Err(Error::InvalidHeaderName),
    }
}

/// The field value in `buf[start..stop]` without its leading and trailing OWS (RFC 9110 §5.5):
/// `(value start, value end)`. Nearly every value has one SP before it and none after, so these
/// are a byte test or two each.
#[inline(always)]
fn trim_value(buf: &[u8], start: usize, stop: usize) -> (usize, usize) {
    // The value's first and last bytes (the same byte for a one-byte value) after one SP: the
    // caller has `stop` inside `buf`, so these need no further bounds.
    let vs = start + 1;
    let plain = |at: usize| buf.get(at).is_some_and(|&b| !is_ows(b));
    if vs < stop && buf.get(start) == Some(&b' ') && plain(vs) && plain(stop - 1) {
        return (vs, stop);
    }
    trim_value_slow(buf, start, stop)
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

/// The answer when the input ends inside a line: more bytes are needed, unless the view was
/// cut at the head limit, when no more will be looked at.
#[inline(always)]
pub(crate) fn incomplete<T>(truncated: bool) -> Result<Option<T>, Error> {
    if truncated {
        Err(Error::HeadTooLarge)
    } else {
        Ok(None)
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
