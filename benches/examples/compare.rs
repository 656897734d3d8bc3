//! Noise-resistant head-to-head timing: the three parsers run interleaved, in short bursts,
//! many rounds, and the *minimum* per-iteration time of each is kept. On a shared machine this
//! is steadier than criterion's mean/median, because interference only ever adds time.
//!
//! Run: `cargo run --release -p bufslab-benches --example compare [fixture | enc]`
//! (`taskset -c N` to pin). `ONLY=1` times bufslab alone (for profiling), `ONLY=pico` / `ONLY=httparse` another one;
//! `ROUNDS=n` sets the number of rounds (e.g. `ROUNDS=1` under callgrind).

use bufslab_http::{DateCache, HeaderSlot, KnownHeader, Parser, ResponseHead, Status};
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::time::Instant;
const F: [(&str, &[u8]); 4] = [
    (
        "techempower",
        include_bytes!("../../http-codec/tests/fixtures/techempower.http"),
    ),
    (
        "browser",
        include_bytes!("../../http-codec/tests/fixtures/browser.http"),
    ),
    (
        "many_headers",
        include_bytes!("../../http-codec/tests/fixtures/many_headers.http"),
    ),
    (
        "post_json",
        include_bytes!("../../http-codec/tests/fixtures/post_json.http"),
    ),
];
/// bufslab: parse, classify, extract framing.
fn ours(p: &mut Parser, s: &mut [HeaderSlot], b: &[u8]) -> usize {
    match p.parse(b, s) {
        Ok(Status::Complete(r)) => {
            black_box((r.framing(), r.keep_alive()));
            r.head_len()
        }
        _ => panic!(),
    }
}
fn hp(h: &mut [MaybeUninit<httparse::Header<'static>>; 64], b: &'static [u8]) -> usize {
    let mut r = httparse::Request::new(&mut []);
    match r.parse_with_uninit_headers(b, h) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => panic!(),
    }
}
fn pico(h: &mut [picohttpparser_sys::phr_header; 64], b: &[u8]) -> usize {
    let (mut m, mut ml, mut p, mut pl, mut mv, mut nh) =
        (std::ptr::null(), 0, std::ptr::null(), 0, 0, 64);
    // SAFETY: all pointers are valid for the call; `b` outlives it; `nh` is the slot count.
    let r = unsafe {
        picohttpparser_sys::phr_parse_request(
            b.as_ptr().cast(),
            b.len(),
            &mut m,
            &mut ml,
            &mut p,
            &mut pl,
            &mut mv,
            h.as_mut_ptr(),
            &mut nh,
            0,
        )
    };
    assert!(r > 0);
    r as usize
}
fn time(mut f: impl FnMut() -> usize) -> f64 {
    let n = 20000;
    let t = Instant::now();
    for _ in 0..n {
        black_box(f());
    }
    t.elapsed().as_nanos() as f64 / n as f64
}
fn enc() {
    use bytes::BytesMut;
    let date = DateCache::new(std::time::SystemTime::now());
    let mut out = BytesMut::with_capacity(4096);
    let mut prefix = Vec::new();
    let _ = ResponseHead::new(&mut prefix, 200)
        .static_header(KnownHeader::Server, b"bufslab")
        .static_header(KnownHeader::ContentType, b"text/plain");
    let (mut a, mut b) = (f64::MAX, f64::MAX);
    for _ in 0..200 {
        a = a.min(time(|| {
            out.clear();
            ResponseHead::new(&mut out, 200)
                .static_header(KnownHeader::Server, b"bufslab")
                .static_header(KnownHeader::ContentType, b"text/plain")
                .content_length(black_box(13))
                .date(black_box(&date))
                .finish();
            out.extend_from_slice(b"Hello, World!");
            out.len()
        }));
        b = b.min(time(|| {
            out.clear();
            ResponseHead::from_prefix(&mut out, black_box(&prefix))
                .finish_with_length(black_box(13), black_box(&date));
            out.extend_from_slice(b"Hello, World!");
            out.len()
        }));
    }
    println!("encode builder {a:.2} ns  prefix+tail {b:.2} ns");
}
fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    if filter == "enc" {
        enc();
        return;
    }
    let mut p = Parser::default();
    let mut s = [HeaderSlot::EMPTY; 64];
    let mut h: [MaybeUninit<httparse::Header<'static>>; 64] = [const { MaybeUninit::uninit() }; 64];
    let mut ph = [picohttpparser_sys::phr_header::default(); 64];
    for (name, buf) in F {
        if !name.contains(&filter) {
            continue;
        }
        let (mut a, mut b, mut c) = (f64::MAX, f64::MAX, f64::MAX);
        let rounds = match std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()) {
            Some(r) => r,
            None if std::env::var_os("ONLY").is_some() => 1500,
            None => 60,
        };
        let only = std::env::var("ONLY").unwrap_or_default();
        for _ in 0..rounds {
            // `ONLY=pico` / `ONLY=httparse` time just that contender (for instruction counts).
            if only == "pico" {
                c = c.min(time(|| pico(&mut ph, black_box(buf))));
                (a, b) = (1.0, 1.0);
                continue;
            }
            if only == "httparse" {
                b = b.min(time(|| hp(&mut h, black_box(buf))));
                (a, c) = (1.0, 1.0);
                continue;
            }
            a = a.min(time(|| ours(&mut p, &mut s, black_box(buf))));
            if !only.is_empty() {
                b = 1.0;
                c = 1.0;
                continue;
            }
            b = b.min(time(|| hp(&mut h, black_box(buf))));
            c = c.min(time(|| pico(&mut ph, black_box(buf))));
        }
        println!("{name:14} ours {a:7.1}  httparse {b:7.1}  pico {c:7.1}   ours/pico {:.2}  ours/httparse {:.2}", a / c, a / b);
    }
}
