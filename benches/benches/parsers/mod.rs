//! The request-head parsers the `codec` and `codec_interleaved` benches compare, on the same
//! fixtures.
//!
//! Fairness: every contender gets 64 header slots allocated once outside the timed loop (as a
//! server connection would hold them) and parses the same bytes
//! (`http-codec/tests/fixtures/`): httparse gets `MaybeUninit` slots
//! (`parse_with_uninit_headers`, the `Request` form of
//! `ParserConfig::parse_request_with_uninit_headers`), picohttpparser-sys its `phr_header`
//! array. bufslab additionally classifies every header name into `KnownHeader` and extracts the
//! body framing (Content-Length / Transfer-Encoding / Host / Connection / Expect); the others
//! do neither.

use std::hint::black_box;
use std::mem::MaybeUninit;

use bufslab_http::{HeaderSlot, Parser, Status};

const TECHEMPOWER: &[u8] = include_bytes!("../../../http-codec/tests/fixtures/techempower.http");
const BROWSER: &[u8] = include_bytes!("../../../http-codec/tests/fixtures/browser.http");
const MANY_HEADERS: &[u8] = include_bytes!("../../../http-codec/tests/fixtures/many_headers.http");
const POST_JSON: &[u8] = include_bytes!("../../../http-codec/tests/fixtures/post_json.http");

const SLOTS: usize = 64;

/// Parses every request head in `buf` (back to back, no bodies except `post_json`'s, which is
/// after the only head) and returns how many were parsed.
fn bufslab_all(parser: &mut Parser, slots: &mut [HeaderSlot], mut buf: &[u8], n: usize) -> usize {
    let mut done = 0;
    while done < n {
        match parser.parse(buf, slots) {
            Ok(Status::Complete(req)) => {
                black_box((req.header_count(), req.framing(), req.keep_alive()));
                buf = &buf[req.head_len()..];
                done += 1;
            }
            _ => panic!("bufslab rejected a fixture"),
        }
    }
    done
}

fn httparse_all(
    headers: &mut [MaybeUninit<httparse::Header<'static>>; SLOTS],
    mut buf: &'static [u8],
    n: usize,
) -> usize {
    let mut done = 0;
    while done < n {
        let mut req = httparse::Request::new(&mut []);
        match req.parse_with_uninit_headers(buf, headers) {
            Ok(httparse::Status::Complete(len)) => {
                black_box(req.headers.len());
                buf = &buf[len..];
                done += 1;
            }
            _ => panic!("httparse rejected a fixture"),
        }
    }
    done
}

fn pico_all(
    headers: &mut [picohttpparser_sys::phr_header; SLOTS],
    mut buf: &[u8],
    n: usize,
) -> usize {
    let mut done = 0;
    while done < n {
        let mut method = std::ptr::null();
        let mut method_len = 0;
        let mut path = std::ptr::null();
        let mut path_len = 0;
        let mut minor = 0;
        let mut num_headers = SLOTS;
        // SAFETY: every pointer is valid for the call; `buf` outlives it; `num_headers` is the
        // capacity of `headers`.
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
        black_box(num_headers);
        buf = &buf[r as usize..];
        done += 1;
    }
    done
}

/// The fixtures: name, bytes, request heads in them. `pipelined16` is leaked once so that every
/// fixture is `'static`, which lets the httparse slot array (typed with the buffer's lifetime)
/// be created once outside the timed loop.
pub fn fixtures() -> [(&'static str, &'static [u8], usize); 5] {
    let pipelined: &'static [u8] = Box::leak(TECHEMPOWER.repeat(16).into_boxed_slice());
    [
        ("techempower", TECHEMPOWER, 1),
        ("browser", BROWSER, 1),
        ("pipelined16", pipelined, 16),
        ("many_headers", MANY_HEADERS, 1),
        ("post_json", POST_JSON, 1),
    ]
}

/// Each contender with its per-connection state, allocated once.
pub struct Contenders {
    parser: Parser,
    slots: [HeaderSlot; SLOTS],
    httparse: [MaybeUninit<httparse::Header<'static>>; SLOTS],
    pico: [picohttpparser_sys::phr_header; SLOTS],
}

impl Contenders {
    pub fn new() -> Self {
        Contenders {
            parser: Parser::default(),
            slots: [HeaderSlot::EMPTY; SLOTS],
            httparse: [const { MaybeUninit::uninit() }; SLOTS],
            pico: [picohttpparser_sys::phr_header::default(); SLOTS],
        }
    }

    /// bufslab-http parses the `n` heads of `buf`.
    pub fn bufslab(&mut self, buf: &'static [u8], n: usize) -> usize {
        bufslab_all(&mut self.parser, &mut self.slots, black_box(buf), n)
    }

    /// httparse parses the `n` heads of `buf`.
    pub fn httparse(&mut self, buf: &'static [u8], n: usize) -> usize {
        httparse_all(&mut self.httparse, black_box(buf), n)
    }

    /// picohttpparser parses the `n` heads of `buf`.
    pub fn pico(&mut self, buf: &'static [u8], n: usize) -> usize {
        pico_all(&mut self.pico, black_box(buf), n)
    }
}
