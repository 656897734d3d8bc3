//! A parsed head's field lines: the caller's header slots, resolved against the buffer, and
//! the accessors every parsed head (request or response) offers over them.
//!
//! Requests and responses hold their field lines the same way (offsets in [`HeaderSlot`]s) and
//! answer the same questions about them, so the accessors are written once, in
//! [`field_accessors`], and expanded into both `impl` blocks.

use crate::header_name::{classify_token, HeaderName, KnownHeader};
use crate::request::Version;

/// One caller-provided header slot: byte offsets into the parsed buffer.
///
/// Slots hold offsets, not slices, so they carry no lifetime: a connection allocates its slots
/// once (`[HeaderSlot::EMPTY; 64]` or a `Vec`) and reuses them for every request (or
/// response), so parsing initialises nothing per message — the same saving httparse gets from `MaybeUninit`, without
/// `unsafe`. Offsets are also what makes resumable parsing sound: between two calls the caller
/// may have grown (and moved) its buffer, which would invalidate slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HeaderSlot {
    pub(crate) name_start: u32,
    pub(crate) name_len: u32,
    pub(crate) value_start: u32,
    pub(crate) value_len: u32,
}

impl HeaderSlot {
    /// An unused slot, for array initialisation.
    pub const EMPTY: HeaderSlot = HeaderSlot {
        name_start: 0,
        name_len: 0,
        value_start: 0,
        value_len: 0,
    };

    /// Resolves the slot against the buffer it was parsed from. Out-of-range offsets (a slot
    /// paired with the wrong buffer) give empty slices rather than a panic.
    #[inline(always)]
    pub(crate) fn resolve<'b>(&self, buf: &'b [u8]) -> Header<'b> {
        let (ns, vs) = (self.name_start as usize, self.value_start as usize);
        let raw_name = buf.get(ns..ns + self.name_len as usize).unwrap_or_default();
        let value = buf
            .get(vs..vs + self.value_len as usize)
            .unwrap_or_default();
        // The parser recognised only the names the framing needs; the rest are classified
        // here, where the caller asks for them (a caller that reads only `raw_name` and
        // `value` lets the compiler drop this).
        let name = match classify_token(raw_name) {
            Some(k) => HeaderName::Known(k),
            None => HeaderName::Other(raw_name),
        };
        Header {
            name,
            raw_name,
            value,
        }
    }
}

impl HeaderSlot {
    /// Whether the slot's name is `k`'s, ASCII case-insensitively: the lengths first, so most
    /// slots are passed over on one compare.
    #[inline]
    pub(crate) fn is(&self, buf: &[u8], k: KnownHeader) -> bool {
        let lower = k.as_str().as_bytes();
        let ns = self.name_start as usize;
        self.name_len as usize == lower.len()
            && buf
                .get(ns..ns + lower.len())
                .is_some_and(|name| name.eq_ignore_ascii_case(lower))
    }
}

/// A header field line: zero-copy slices into the parsed buffer.
///
/// # Examples
///
/// ```
/// use bufslab_http::{parse_request, HeaderName, HeaderSlot, KnownHeader};
/// let mut slots = [HeaderSlot::EMPTY; 8];
/// let buf = b"GET / HTTP/1.1\r\nhost: a\r\nX-Id:  7 \r\n\r\n";
/// let req = parse_request(buf, &mut slots)?.complete().unwrap();
/// let h = req.header(1).unwrap();
/// assert_eq!((h.name, h.raw_name, h.value), (HeaderName::Other(b"X-Id"), &b"X-Id"[..], &b"7"[..]));
/// assert_eq!(req.header(0).unwrap().name, HeaderName::Known(KnownHeader::Host));
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header<'b> {
    /// The classified name.
    pub name: HeaderName<'b>,
    /// The name exactly as received (case preserved).
    pub raw_name: &'b [u8],
    /// The value with leading and trailing OWS (SP / HTAB) removed (RFC 9110 §5.5).
    pub value: &'b [u8],
}

/// Connection tokens and expectations found while parsing (bit set): shared by requests and
/// responses, so that `Connection` is interpreted by one piece of code.
pub(crate) mod flags {
    pub const CLOSE: u8 = 1;
    pub const KEEP_ALIVE: u8 = 2;
    pub const UPGRADE: u8 = 4;
    pub const EXPECT_CONTINUE: u8 = 8;
}

/// Whether a message's `Connection` field and version keep the connection open after it
/// (RFC 9112 §9.3): not with `close`; HTTP/1.1 by default; HTTP/1.0 only with `keep-alive`.
#[inline]
pub(crate) fn persists(version: Version, bits: u8) -> bool {
    if bits & flags::CLOSE != 0 {
        return false;
    }
    match version {
        Version::Http11 => true,
        Version::Http10 => bits & flags::KEEP_ALIVE != 0,
    }
}

/// The accessors every parsed head has, for a type with the fields `buf: &'b [u8]` (the
/// parsed buffer), `slots: &'h [HeaderSlot]` (its field lines), `flags: u8` ([`flags`] bits),
/// `version`, `head_len` and `framing` (of type `$framing`). Expanded inside
/// `impl<'b, 'h> T<'b, 'h>`, with those two lifetimes as arguments.
macro_rules! head_accessors {
    ($b:lifetime, $h:lifetime, $framing:ty) => {
        /// The HTTP version (`HTTP/1.2` to `HTTP/1.9` are read as HTTP/1.1: RFC 9110 §6.2).
        #[must_use]
        pub fn version(&self) -> $crate::Version {
            self.version
        }

        /// Length of the head in bytes, up to and including the final empty line (and, in a
        /// request, the empty lines before the request line): the body, or the next message
        /// when there is none, starts at this offset.
        #[must_use]
        pub fn head_len(&self) -> usize {
            self.head_len
        }

        /// How the body is delimited.
        #[must_use]
        pub fn framing(&self) -> $framing {
            self.framing
        }

        /// The field lines, for `Debug`.
        fn fields_debug(&self) -> $crate::fields::FieldsDebug<'_> {
            $crate::fields::FieldsDebug {
                buf: self.buf,
                slots: self.slots,
            }
        }

        /// `Connection` contains `close`.
        #[must_use]
        pub fn connection_close(&self) -> bool {
            self.flags & $crate::fields::flags::CLOSE != 0
        }

        /// `Connection` contains `keep-alive`.
        #[must_use]
        pub fn connection_keep_alive(&self) -> bool {
            self.flags & $crate::fields::flags::KEEP_ALIVE != 0
        }

        /// `Connection` contains `upgrade` (RFC 9110 §7.8); the protocols are in
        /// `get(KnownHeader::Upgrade)`.
        #[must_use]
        pub fn connection_upgrade(&self) -> bool {
            self.flags & $crate::fields::flags::UPGRADE != 0
        }

        /// Number of header field lines.
        #[must_use]
        pub fn header_count(&self) -> usize {
            self.slots.len()
        }

        /// The `i`-th header field line, in received order.
        #[must_use]
        pub fn header(&self, i: usize) -> Option<$crate::Header<$b>> {
            Some(self.slots.get(i)?.resolve(self.buf))
        }

        /// All header field lines, in received order.
        pub fn headers(&self) -> impl ExactSizeIterator<Item = $crate::Header<$b>> + $h
        where
            $b: $h,
        {
            let buf = self.buf;
            self.slots.iter().map(move |s| s.resolve(buf))
        }

        /// The value of the first field line with this known name.
        #[must_use]
        pub fn get(&self, name: $crate::KnownHeader) -> Option<&$b [u8]> {
            let s = self.slots.iter().find(|s| s.is(self.buf, name))?;
            Some(s.resolve(self.buf).value)
        }

        /// The values of all field lines with this known name, in order.
        pub fn get_all(&self, name: $crate::KnownHeader) -> impl Iterator<Item = &$b [u8]> + $h
        where
            $b: $h,
        {
            let buf = self.buf;
            self.slots
                .iter()
                .filter(move |s| s.is(buf, name))
                .map(move |s| s.resolve(buf).value)
        }

        /// The value of the first field line whose name equals `name` ASCII case-insensitively
        /// (known or not).
        #[must_use]
        pub fn get_raw(&self, name: &[u8]) -> Option<&$b [u8]> {
            self.headers()
                .find(|h| h.raw_name.eq_ignore_ascii_case(name))
                .map(|h| h.value)
        }
    };
}
pub(crate) use head_accessors;

/// Bytes shown as text in `Debug` output, escaping what is not printable ASCII (no
/// allocation).
pub(crate) struct Text<'a>(pub(crate) &'a [u8]);

impl core::fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "\"{}\"", self.0.escape_ascii())
    }
}

/// A head's field lines as a `Debug` map from raw name to value.
pub(crate) struct FieldsDebug<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) slots: &'a [HeaderSlot],
}

impl core::fmt::Debug for FieldsDebug<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map()
            .entries(self.slots.iter().map(|s| {
                let h = s.resolve(self.buf);
                (Text(h.raw_name), Text(h.value))
            }))
            .finish()
    }
}
