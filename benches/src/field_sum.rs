//! What the codec benches read of every parsed request head, the same for every parser.
//!
//! A parser that hands out slices (picohttpparser, httparse) and one that hands out offsets
//! to resolve against the buffer (bufslab-http's header slots) do different amounts of work
//! before a server has its fields in hand. Timing only the parse call would leave the slice
//! making out for one contender and not the others, so each contender's timed loop reads
//! method, target, version and every header name and value through its parser's own API, and
//! folds each one's length and first byte into a [`FieldSum`] that is then `black_box`ed: the
//! same reads, the same arithmetic, for all of them.

use bufslab_http::{Request, Version};

/// A running sum over the fields of one request head: each field adds its length and its
/// first byte (0 for an empty field), the version adds its minor number.
///
/// Adding (rather than hashing) keeps the fold to about one instruction per field, so it
/// costs every contender the same small amount and leaves the parsers' own work to dominate.
///
/// # Examples
///
/// ```
/// use bufslab_benches::FieldSum;
///
/// let mut sum = FieldSum::default();
/// sum.field(b"GET");
/// sum.field(b"");
/// sum.minor_version(1);
/// assert_eq!(sum.value(), 3 + u64::from(b'G') + 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldSum(u64);

impl FieldSum {
    /// Folds one field (method, target, a header name or value) in.
    #[inline(always)]
    pub fn field(&mut self, bytes: &[u8]) {
        let first = bytes.first().copied().unwrap_or(0);
        self.0 = self
            .0
            .wrapping_add(bytes.len() as u64)
            .wrapping_add(u64::from(first));
    }

    /// Folds the HTTP version's minor number in (`HTTP/1.x` → `x`).
    #[inline(always)]
    pub fn minor_version(&mut self, minor: u8) {
        self.0 = self.0.wrapping_add(u64::from(minor));
    }

    /// The sum so far.
    #[inline(always)]
    #[must_use]
    pub fn value(self) -> u64 {
        self.0
    }
}

/// Reads every field of a bufslab-http request head: the method, the target, the version,
/// and each header's name (as received) and value, resolved from its slot.
///
/// # Examples
///
/// ```
/// use bufslab_benches::{sum_bufslab, FieldSum};
/// use bufslab_http::{HeaderSlot, Parser, Status};
///
/// let buf = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
/// let mut slots = [HeaderSlot::EMPTY; 4];
/// let Ok(Status::Complete(req)) = Parser::default().parse(buf, &mut slots) else {
///     panic!("a valid head");
/// };
/// let mut sum = FieldSum::default();
/// for field in [&b"GET"[..], b"/", b"Host", b"a"] {
///     sum.field(field);
/// }
/// sum.minor_version(1);
/// assert_eq!(sum_bufslab(&req), sum.value());
/// ```
#[inline(always)]
#[must_use]
pub fn sum_bufslab(req: &Request<'_, '_>) -> u64 {
    let mut sum = FieldSum::default();
    sum.field(req.method().as_bytes());
    sum.field(req.target());
    sum.minor_version(match req.version() {
        Version::Http10 => 0,
        _ => 1,
    });
    for h in req.headers() {
        sum.field(h.raw_name);
        sum.field(h.value);
    }
    sum.value()
}
