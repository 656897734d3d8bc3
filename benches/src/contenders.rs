//! The request-head parsers the `codec` and `codec_interleaved` benches and the `parse_loop`
//! program compare, on the same fixtures.
//!
//! Fairness: every contender gets 64 header slots allocated once outside the timed loop (as a
//! server connection would hold them) and parses the same bytes
//! (`http-codec/tests/fixtures/`): httparse gets `MaybeUninit` slots
//! (`parse_with_uninit_headers`, the `Request` form of
//! `ParserConfig::parse_request_with_uninit_headers`), picohttpparser-sys its `phr_header`
//! array. After each head, every contender reads the same fields through its own API (method,
//! target, version, every header name and value) into a [`FieldSum`], as a server would before
//! using them: for bufslab-http that resolves each header slot's offsets into slices, for the
//! others it dereferences the slices they handed out. bufslab additionally classifies every
//! header name into `KnownHeader` and extracts the body framing (Content-Length /
//! Transfer-Encoding / Host / Connection / Expect) while parsing; the others do neither.

use std::hint::black_box;
use std::mem::MaybeUninit;

use crate::{decide_framing, sum_bufslab, FieldSum};
use bufslab_http::{Backend, Config, HeaderSlot, Parser, Status};

const SLOTS: usize = 64;

/// The fixtures: name, bytes, request heads in them (`benches/src/lib.rs`, plus `pipelined16`,
/// 16 × `techempower`). `pipelined16` is leaked once so that every fixture is `'static`, which
/// lets the httparse slot array (typed with the buffer's lifetime) be created once outside the
/// timed loop.
#[must_use]
pub fn fixtures() -> [(&'static str, &'static [u8], usize); 5] {
    let [techempower, browser, many_headers, post_json] = crate::FIXTURES;
    let pipelined: &'static [u8] = Box::leak(techempower.1.repeat(16).into_boxed_slice());
    [
        (techempower.0, techempower.1, 1),
        (browser.0, browser.1, 1),
        ("pipelined16", pipelined, 16),
        (many_headers.0, many_headers.1, 1),
        (post_json.0, post_json.1, 1),
    ]
}

/// Parses the `n` request heads at the start of `buf` (back to back, no bodies except
/// `post_json`'s, which is after the only head) with `one`, which parses the head at the start
/// of what it is given and returns its length; returns `n`.
#[inline(always)]
fn each_head(
    mut buf: &'static [u8],
    n: usize,
    mut one: impl FnMut(&'static [u8]) -> usize,
) -> usize {
    for _ in 0..n {
        buf = &buf[one(buf)..];
    }
    n
}

/// The bufslab-http backends this CPU runs, each a contender of its own: `Auto` (the default,
/// inlined into the caller), then each one this CPU runs, forced (reached through the parser's
/// out-of-line call for a forced backend, as a user who forces one gets it).
#[must_use]
pub fn backends() -> Vec<Backend> {
    std::iter::once(Backend::Auto)
        .chain(Backend::ALL.iter().copied().filter(|b| b.is_supported()))
        .collect()
}

/// Each contender with its per-connection state, allocated once.
pub struct Contenders {
    /// One parser per entry of [`backends`], forced to it.
    parsers: Vec<Parser>,
    slots: [HeaderSlot; SLOTS],
    httparse: [MaybeUninit<httparse::Header<'static>>; SLOTS],
    pico: [picohttpparser_sys::phr_header; SLOTS],
}

impl Default for Contenders {
    fn default() -> Self {
        Contenders::new()
    }
}

impl Contenders {
    #[must_use]
    pub fn new() -> Self {
        Contenders {
            parsers: backends()
                .into_iter()
                .map(|b| Parser::new(Config::DEFAULT.with_backend(b)))
                .collect(),
            slots: [HeaderSlot::EMPTY; SLOTS],
            httparse: [const { MaybeUninit::uninit() }; SLOTS],
            pico: [picohttpparser_sys::phr_header::default(); SLOTS],
        }
    }

    /// bufslab-http with backend `backends()[k]` parses the `n` heads of `buf`, reading every
    /// field of each, and the framing and keep-alive it found while parsing.
    pub fn bufslab(&mut self, k: usize, buf: &'static [u8], n: usize) -> usize {
        let (parser, slots) = (&mut self.parsers[k], &mut self.slots);
        each_head(black_box(buf), n, |buf| match parser.parse(buf, slots) {
            Ok(Status::Complete(req)) => {
                black_box((sum_bufslab(&req), req.framing(), req.keep_alive()));
                req.head_len()
            }
            _ => panic!("bufslab rejected a fixture"),
        })
    }

    /// httparse parses the `n` heads of `buf`, reading every field of each.
    pub fn httparse(&mut self, buf: &'static [u8], n: usize) -> usize {
        self.httparse_with::<false>(buf, n)
    }

    /// [`httparse`](Self::httparse), then the server's decisions over its fields
    /// ([`decide_framing`]): what bufslab-http's parse includes.
    pub fn httparse_framed(&mut self, buf: &'static [u8], n: usize) -> usize {
        self.httparse_with::<true>(buf, n)
    }

    #[inline(always)]
    fn httparse_with<const FRAMED: bool>(&mut self, buf: &'static [u8], n: usize) -> usize {
        let headers = &mut self.httparse;
        each_head(black_box(buf), n, |buf| {
            let mut req = httparse::Request::new(&mut []);
            match req.parse_with_uninit_headers(buf, headers) {
                Ok(httparse::Status::Complete(len)) => {
                    let mut sum = FieldSum::default();
                    sum.field(req.method.unwrap_or_default().as_bytes());
                    sum.field(req.path.unwrap_or_default().as_bytes());
                    sum.minor_version(req.version.unwrap_or_default());
                    for h in req.headers.iter() {
                        sum.field(h.name.as_bytes());
                        sum.field(h.value);
                    }
                    black_box(sum.value());
                    if FRAMED {
                        let fields = req.headers.iter().map(|h| (h.name.as_bytes(), h.value));
                        black_box(decide_framing(req.version.unwrap_or_default(), fields));
                    }
                    len
                }
                _ => panic!("httparse rejected a fixture"),
            }
        })
    }

    /// picohttpparser parses the `n` heads of `buf`, reading every field of each.
    pub fn pico(&mut self, buf: &'static [u8], n: usize) -> usize {
        self.pico_with::<false>(buf, n)
    }

    /// [`pico`](Self::pico), then the server's decisions over its fields
    /// ([`decide_framing`]): what bufslab-http's parse includes.
    pub fn pico_framed(&mut self, buf: &'static [u8], n: usize) -> usize {
        self.pico_with::<true>(buf, n)
    }

    #[inline(always)]
    fn pico_with<const FRAMED: bool>(&mut self, buf: &'static [u8], n: usize) -> usize {
        let headers = &mut self.pico;
        each_head(black_box(buf), n, |buf| {
            let mut method = std::ptr::null();
            let mut method_len = 0;
            let mut path = std::ptr::null();
            let mut path_len = 0;
            let mut minor = 0;
            let mut num_headers = SLOTS;
            // SAFETY: every pointer is valid for the call; `buf` outlives it; `num_headers` is
            // the capacity of `headers`.
            let r = unsafe {
                picohttpparser_sys::phr_parse_request(
                    buf.as_ptr().cast(),
                    buf.len(),
                    &mut method,
                    &mut method_len,
                    &mut path,
                    &mut path_len,
                    &mut minor,
                    headers.as_mut_ptr(),
                    &mut num_headers,
                    0,
                )
            };
            assert!(r > 0, "pico rejected a fixture");
            let mut sum = FieldSum::default();
            // SAFETY (each `slice`): picohttpparser points every field into `buf`, which lives
            // for `'static`, and gives its length.
            unsafe {
                sum.field(slice(method, method_len));
                sum.field(slice(path, path_len));
                sum.minor_version(minor as u8);
                for h in &headers[..num_headers] {
                    sum.field(slice(h.name, h.name_len));
                    sum.field(slice(h.value, h.value_len));
                }
            }
            black_box(sum.value());
            if FRAMED {
                // SAFETY: as for the reads above.
                let fields = headers[..num_headers]
                    .iter()
                    .map(|h| unsafe { (slice(h.name, h.name_len), slice(h.value, h.value_len)) });
                black_box(decide_framing(minor as u8, fields));
            }
            r as usize
        })
    }
}

/// The bytes picohttpparser describes by a pointer and a length; empty for a null pointer (a
/// header's name on an obs-fold continuation line).
///
/// # Safety
/// A non-null `ptr` must point to `len` initialised bytes that live for `'static`.
#[inline(always)]
unsafe fn slice(ptr: *const std::ffi::c_char, len: usize) -> &'static [u8] {
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(ptr.cast(), len) }
}
