//! Resumable parsing: feeding a request in pieces gives exactly the result of parsing it whole
//! for valid requests split at every byte position and for mutated
//! (mostly invalid) requests fed one byte at a time.

mod common;

use bufslab_http::Config;
use common::{fed, mutated_request, valid_request, whole, Rng};
use proptest::prelude::*;

fn lenient() -> Config {
    Config::DEFAULT.with_allow_bare_lf(true)
}

proptest! {
    // Each case parses the request O(len) times; 256 cases keep debug-mode `cargo test` fast.
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every split position k: first call with `buf[..k]`, second with all of `buf`.
    #[test]
    fn valid_request_split_anywhere_matches_whole(seed in any::<u64>()) {
        let buf = valid_request(&mut Rng(seed | 1));
        let want = whole(Config::DEFAULT, &buf);
        prop_assert!(matches!(want, Ok(Some(_))), "generator made an invalid request: {:?} {:?}",
            want, String::from_utf8_lossy(&buf));
        for k in 0..=buf.len() {
            prop_assert_eq!(&fed(Config::DEFAULT, &buf, &[k]), &want, "split at {}", k);
        }
        // And every prefix in turn, resuming at each byte.
        let cuts: Vec<usize> = (0..buf.len()).collect();
        prop_assert_eq!(&fed(Config::DEFAULT, &buf, &cuts), &want);
    }

    /// Arbitrary edits: incremental and whole parsing agree on Complete, Partial and the exact
    /// error, in strict and lenient mode.
    #[test]
    fn mutated_request_byte_by_byte_matches_whole(seed in any::<u64>(), lenient_lf in any::<bool>()) {
        let cfg = if lenient_lf { lenient() } else { Config::DEFAULT };
        let buf = mutated_request(&mut Rng(seed | 1));
        let want = whole(cfg, &buf);
        let cuts: Vec<usize> = (0..buf.len()).collect();
        prop_assert_eq!(&fed(cfg, &buf, &cuts), &want, "{:?}", String::from_utf8_lossy(&buf));
        let mid = buf.len() / 2;
        prop_assert_eq!(&fed(cfg, &buf, &[mid]), &want);
    }

    /// Limits are enforced identically however the bytes arrive.
    #[test]
    fn limits_are_split_independent(seed in any::<u64>(), max_head in 16usize..400, max_line in 4usize..80) {
        let cfg = Config::DEFAULT.with_max_head_bytes(max_head).with_max_request_line(max_line).with_max_headers(4);
        let buf = valid_request(&mut Rng(seed | 1));
        let want = whole(cfg, &buf);
        let cuts: Vec<usize> = (0..buf.len()).collect();
        prop_assert_eq!(&fed(cfg, &buf, &cuts), &want);
    }
}

/// The parser does not rescan completed lines: after a partial call, the resume offset is at
/// the start of the first incomplete line.
#[test]
fn resume_offset_skips_completed_lines() {
    use bufslab_http::{HeaderSlot, Parser, Status};
    let buf = b"GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nX-Long: abcdef";
    let mut p = Parser::default();
    let mut slots = [HeaderSlot::EMPTY; 8];
    assert!(matches!(p.parse(buf, &mut slots), Ok(Status::Partial)));
    assert_eq!(p.resume_offset(), buf.len() - b"X-Long: abcdef".len());
    let mut full = buf.to_vec();
    full.extend_from_slice(b"\r\n\r\n");
    let Ok(Status::Complete(r)) = p.parse(&full, &mut slots) else {
        panic!()
    };
    assert_eq!(r.header_count(), 3);
    // Completion resets the parser for the next request.
    assert_eq!(p.resume_offset(), 0);
}
