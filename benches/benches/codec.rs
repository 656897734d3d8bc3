//! Head parsing against httparse and picohttpparser on the same fixtures, in the same run,
//! plus response encoding.
//!
//! Run: `cargo bench -p bufslab-benches --bench codec -- --warm-up-time 1 --measurement-time 3`
//! (pin with `taskset -c N` on a shared machine).
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

use bufslab_http::{DateCache, HeaderSlot, KnownHeader, Parser, ResponseHead, Status};
use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const TECHEMPOWER: &[u8] = include_bytes!("../../http-codec/tests/fixtures/techempower.http");
const BROWSER: &[u8] = include_bytes!("../../http-codec/tests/fixtures/browser.http");
const MANY_HEADERS: &[u8] = include_bytes!("../../http-codec/tests/fixtures/many_headers.http");
const POST_JSON: &[u8] = include_bytes!("../../http-codec/tests/fixtures/post_json.http");

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

fn parse_benches(c: &mut Criterion) {
    // Leaked once so every fixture is `'static`, which lets the httparse slot array (typed with
    // the buffer's lifetime) be created once outside the timed loop.
    let pipelined: &'static [u8] = Box::leak(TECHEMPOWER.repeat(16).into_boxed_slice());
    let fixtures: [(&str, &'static [u8], usize); 5] = [
        ("techempower", TECHEMPOWER, 1),
        ("browser", BROWSER, 1),
        ("pipelined16", pipelined, 16),
        ("many_headers", MANY_HEADERS, 1),
        ("post_json", POST_JSON, 1),
    ];
    for (name, buf, n) in fixtures {
        let mut g = c.benchmark_group(format!("parse/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        let mut parser = Parser::default();
        let mut slots = [HeaderSlot::EMPTY; SLOTS];
        g.bench_function("bufslab", |b| {
            b.iter(|| bufslab_all(&mut parser, &mut slots, black_box(buf), n))
        });
        let mut hp: [MaybeUninit<httparse::Header<'static>>; SLOTS] =
            [const { MaybeUninit::uninit() }; SLOTS];
        g.bench_function("httparse", |b| {
            b.iter(|| httparse_all(&mut hp, black_box(buf), n))
        });
        let mut ph = [picohttpparser_sys::phr_header::default(); SLOTS];
        g.bench_function("pico", |b| b.iter(|| pico_all(&mut ph, black_box(buf), n)));
        g.finish();
    }
}

fn encode_benches(c: &mut Criterion) {
    let date = DateCache::new(std::time::SystemTime::now());
    let mut out = BytesMut::with_capacity(4096);
    // The TechEmpower plaintext response, built header by header from precomputed constants.
    c.bench_function("encode/plaintext_builder", |b| {
        b.iter(|| {
            out.clear();
            ResponseHead::new(&mut out, 200)
                .static_header(KnownHeader::Server, b"bufslab")
                .static_header(KnownHeader::ContentType, b"text/plain")
                .content_length(black_box(13))
                .date(black_box(&date))
                .finish();
            out.extend_from_slice(b"Hello, World!");
            black_box(out.len())
        })
    });
    // The same bytes from a prefix precomputed once (status line + static headers), then
    // Content-Length, Date and the end of the head.
    let mut prefix = Vec::new();
    let _ = ResponseHead::new(&mut prefix, 200)
        .static_header(KnownHeader::Server, b"bufslab")
        .static_header(KnownHeader::ContentType, b"text/plain");
    c.bench_function("encode/plaintext_prefix", |b| {
        b.iter(|| {
            out.clear();
            ResponseHead::from_prefix(&mut out, black_box(&prefix))
                .finish_with_length(black_box(13), black_box(&date));
            out.extend_from_slice(b"Hello, World!");
            black_box(out.len())
        })
    });
}

criterion_group!(benches, parse_benches, encode_benches);
criterion_main!(benches);
