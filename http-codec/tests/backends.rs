//! Every backend gives the same answer for every input: the same head, the same error, the
//! same `Partial`, whole or split at any byte.
//!
//! `common::fed` already holds the backends to each other in every test that parses through it
//! (the RFC rows, the split tests, the differential corpora); the cases here aim at what tells
//! the backends apart: where a delimiter falls relative to a 16-byte step or a 64-byte block,
//! the end of the input inside a block, long values, and bytes of every class in every place.

mod common;

use bufslab_http::{Backend, Config, Method};
use common::{backends, fed, fed_response, mutated_request, mutated_response, whole, Rng};

fn configs() -> [Config; 3] {
    [
        Config::DEFAULT,
        Config::DEFAULT.with_allow_bare_lf(true),
        Config::DEFAULT.with_max_head_bytes(200).with_max_headers(6),
    ]
}

#[test]
fn the_backends_under_test() {
    let all = backends();
    assert_eq!(all.first(), Some(&Backend::Portable));
    if cfg!(target_arch = "x86_64") {
        assert!(all.contains(&Backend::Sse2));
    }
    // Say which ran, so a log shows whether the vector backends were covered on this CPU.
    println!("backends under test: {all:?}");
    for b in Backend::ALL.iter().filter(|b| !b.is_supported()) {
        println!(
            "skipped: this CPU cannot run the {b} backend (it runs as {})",
            b.resolved()
        );
    }
}

#[test]
fn fixtures_split_at_every_byte() {
    let fixtures: [&[u8]; 4] = [
        include_bytes!("fixtures/techempower.http"),
        include_bytes!("fixtures/browser.http"),
        include_bytes!("fixtures/many_headers.http"),
        include_bytes!("fixtures/post_json.http"),
    ];
    for buf in fixtures {
        let want = whole(Config::DEFAULT, buf);
        assert!(matches!(want, Ok(Some(_))), "{want:?}");
        for k in 0..=buf.len() {
            assert_eq!(fed(Config::DEFAULT, buf, &[k]), want, "split at {k}");
            // The input ending at `k`: `Partial` (or the answer) from every backend.
            let _ = whole(Config::DEFAULT, &buf[..k]);
        }
        let mut pipelined = buf.repeat(3);
        pipelined.truncate(buf.len() * 2 + 70);
        assert_eq!(whole(Config::DEFAULT, &pipelined), want);
    }
}

/// A head whose field lines put `at`, a byte of some class, at every offset of a 64-byte block:
/// in the name, at the colon, in the value, at the CR and the LF, on each side of a block
/// boundary.
#[test]
fn a_byte_of_every_class_at_every_offset() {
    let specials: &[u8] = &[
        b'\t', b' ', b':', b'\r', b'\n', 0x00, 0x01, 0x1f, 0x7f, 0x80, 0xff, b'"', b'(', b',',
        b'/', b'#', b'_', b'~', b'|', b'!', b'@', b'[', b'{', b'a', b'Z', b'0', b'-', b'.',
    ];
    for pad in 0..70 {
        let mut base = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        base.extend_from_slice(b"X-Pad: ");
        base.extend(std::iter::repeat(b'p').take(pad));
        base.extend_from_slice(b"\r\nX-Long-Name-For-Blocks: value-of-some-length-here\r\n");
        base.extend_from_slice(b"Accept: text/html,application/xhtml+xml;q=0.9\r\n\r\n");
        let start = 25 + 7 + pad + 2;
        for pos in start..base.len() {
            for &b in specials {
                let mut buf = base.clone();
                buf[pos] = b;
                for cfg in configs() {
                    let _ = whole(cfg, &buf);
                }
            }
        }
        // The input cut at every length: the end of the view anywhere in a block.
        for k in 0..=base.len() {
            let _ = whole(Config::DEFAULT, &base[..k]);
        }
    }
}

#[test]
fn long_values_and_many_lines() {
    let mut rng = Rng(0x05ee_d0b1_a5e5);
    for _ in 0..300 {
        let mut buf = b"POST /upload HTTP/1.1\r\nHost: example.com\r\n".to_vec();
        for _ in 0..rng.below(40) {
            let name_len = 1 + rng.below(40);
            for _ in 0..name_len {
                buf.push(b"abcXYZ019-_.!#$%&'*+^`|~"[rng.below(24)]);
            }
            buf.push(b':');
            for _ in 0..rng.below(4) {
                buf.push(if rng.chance(50) { b' ' } else { b'\t' });
            }
            for _ in 0..rng.below(300) {
                buf.push(rng.value_byte());
            }
            buf.extend_from_slice(b"\r\n");
        }
        buf.extend_from_slice(b"Content-Length: 0\r\n\r\n");
        if rng.chance(30) {
            let k = rng.below(buf.len());
            buf[k] = [0x00, 0x7f, b'\r', b'\n', b' ', b':'][rng.below(6)];
        }
        let cuts: Vec<usize> = (0..buf.len()).step_by(1 + rng.below(7)).collect();
        for cfg in configs() {
            assert_eq!(fed(cfg, &buf, &cuts), whole(cfg, &buf));
        }
    }
}

#[test]
fn mutated_requests_and_responses() {
    let mut rng = Rng(0xdead_beef_cafe);
    for _ in 0..3000 {
        let buf = mutated_request(&mut rng);
        for cfg in configs() {
            let _ = whole(cfg, &buf);
        }
        let mid = buf.len() / 3;
        let _ = fed(Config::DEFAULT, &buf, &[mid, mid * 2]);
        let resp = mutated_response(&mut rng);
        for method in [Method::Get, Method::Head, Method::Connect] {
            let _ = fed_response(Config::DEFAULT, method, &resp, &[mid]);
        }
    }
}

#[test]
fn random_bytes() {
    // Mostly bytes a head is made of, so that random inputs get past the request line.
    let alphabet = b"GET / HTTP/1.1\r\nHost: a\r\nX-Y: z\r\n\r\n\t:\x7f\x80\x00";
    let mut rng = Rng(0x0123_4567_89ab);
    for _ in 0..20_000 {
        let mut buf = b"GET /x HTTP/1.1\r\n".to_vec();
        for _ in 0..rng.below(200) {
            buf.push(alphabet[rng.below(alphabet.len())]);
        }
        let _ = whole(Config::DEFAULT, &buf);
        let _ = whole(Config::DEFAULT.with_allow_bare_lf(true), &buf);
    }
}

#[test]
fn a_backend_the_cpu_lacks_runs_as_one_it_has() {
    for &b in Backend::ALL {
        let r = b.resolved();
        assert!(r <= b && r.is_supported(), "{b} runs as {r}");
    }
    assert!(Backend::Auto.resolved().is_supported());
    assert_eq!(Config::DEFAULT.backend(), Backend::Auto);
}
