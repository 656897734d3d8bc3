//! Differential test against httparse over a generated corpus.
//!
//! For every input both parsers must agree on accept / reject / partial, and on every field
//! when both accept — except for the deliberate differences below, each of which is a rule
//! this crate enforces and httparse (a syntax-only parser) leaves to its caller:
//!
//! | # | bufslab-http | httparse | why |
//! |---|---|---|---|
//! | D1 | rejects bare LF line endings (`BareLf`) unless `Config::allow_bare_lf` | accepts | RFC 9112 §2.2 only *permits* accepting a bare LF; mixed line-ending handling between hops is a smuggling vector |
//! | D2 | checks body framing: Content-Length syntax / agreement, Transfer-Encoding rules, CL+TE | does not interpret headers | RFC 9110 §8.6, RFC 9112 §6.1 / §6.3 |
//! | D3 | requires exactly one valid Host in HTTP/1.1, at most one in 1.0 | does not interpret headers | RFC 9112 §3.2 (MUST respond 400) |
//! | D4 | checks the request-target form against the method and rejects non-ASCII targets | accepts any bytes `0x21..=0xff` | RFC 9112 §3.2, RFC 3986 §2 |
//! | D5 | rejects an unknown expectation (417) | does not interpret headers | RFC 9110 §10.1.1 |
//! | D6 | answers 505 for a well-formed version other than 1.0 / 1.1 and recognises the HTTP/2 preface | reports a generic `Version` error | same accept/reject; only the error differs (RFC 9110 §15.6.6) |
//! | D7 | reports `Partial` on a request line that cannot be judged yet (e.g. `GET / XT`) | fails fast on a version prefix that can never be valid | both end up rejecting; the verdict only differs for a truncated input |
//! | D8 | rejects a `#` in the request-target (`InvalidTarget`, 400) | accepts it as part of the path | RFC 9112 §3.2: no target form has a fragment; RFC 9110 §7.1: a client never sends one, so a `#` is either an attack on routing or a broken client |
//!
//! Errors are not compared one-to-one (the enums differ); accept / reject / partial and all
//! fields are.

mod common;
#[path = "common/differential.rs"]
mod differential;

use std::mem::MaybeUninit;

use bufslab_http::{Config, Error};
use common::{mutated_request, valid_request, whole, Outcome, Rng};
use differential::{
    case, corpus, explained, lenient_agrees, same_head, still_rejected, Case, Tally,
};

/// httparse's view, owned: None = partial.
type Theirs =
    Result<Option<(Vec<u8>, Vec<u8>, u8, usize, Vec<(Vec<u8>, Vec<u8>)>)>, httparse::Error>;

fn theirs(buf: &[u8]) -> Theirs {
    let mut slots: [MaybeUninit<httparse::Header<'_>>; 64] = [const { MaybeUninit::uninit() }; 64];
    let mut req = httparse::Request::new(&mut []);
    match req.parse_with_uninit_headers(buf, &mut slots)? {
        httparse::Status::Complete(n) => Ok(Some((
            req.method.unwrap_or_default().as_bytes().to_vec(),
            req.path.unwrap_or_default().as_bytes().to_vec(),
            req.version.unwrap_or(9),
            n,
            req.headers
                .iter()
                .map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec()))
                .collect(),
        ))),
        httparse::Status::Partial => Ok(None),
    }
}

/// Whether the request-target (the second SP-separated part of the first line) holds a `#`.
fn target_has_fragment(buf: &[u8]) -> bool {
    let line = buf
        .split(|&b| b == b'\n')
        .find(|l| !l.is_empty() && *l != b"\r");
    line.and_then(|l| l.split(|&b| b == b' ').nth(1))
        .is_some_and(|t| t.contains(&b'#'))
}

/// Which deliberate difference (if any) explains ours rejecting what httparse accepts.
fn deliberate(err: Error, buf: &[u8]) -> Option<&'static str> {
    Some(match err {
        Error::InvalidTarget if target_has_fragment(buf) => "D8",
        Error::BareLf => "D1",
        Error::InvalidContentLength
        | Error::ContentLengthWithTransferEncoding
        | Error::InvalidTransferEncoding
        | Error::TransferEncodingInHttp10
        | Error::UnsupportedTransferCoding => "D2",
        Error::MissingHost | Error::MultipleHost | Error::InvalidHost => "D3",
        Error::InvalidTarget => "D4",
        Error::UnsupportedExpectation => "D5",
        _ => return None,
    })
}

/// Checks one input; returns the deliberate difference it showed, if any.
fn compare(buf: &[u8], ours: &Outcome, theirs: &Theirs, tally: &mut Tally) -> Option<&'static str> {
    let show = || String::from_utf8_lossy(buf).into_owned();
    let c = case(ours, theirs);
    tally.count(&c);
    match c {
        Case::BothAccept(o, (method, path, version, len, headers)) => {
            assert_eq!(&o.method, method, "{}", show());
            assert_eq!(&o.target, path, "{}", show());
            same_head(
                buf,
                (o.version, o.head_len, &o.headers),
                (*version, *len, headers),
            );
        }
        // Accepted by httparse, or not decided yet (ours decides earlier): only the checks
        // httparse lacks.
        Case::OursRejects(e) | Case::OursEarly(e) => {
            return Some(explained(deliberate(e, buf), e, theirs, buf));
        }
        // D7 (httparse rejects an impossible version prefix early) or D1/D4 (httparse treats
        // the bytes differently).
        Case::TheirsEarly(e) => {
            still_rejected(buf, |b| matches!(whole(Config::DEFAULT, b), Ok(Some(_))), e);
        }
        Case::TheirsRejects(_, e) => {
            panic!("ours accepts, httparse rejects ({e:?}): {:?}", show())
        }
        Case::Mismatch => panic!("one complete, the other partial: {:?} {theirs:?}", show()),
        Case::BothPartial | Case::BothReject => {}
    }
    None
}

#[test]
fn differential_against_httparse() {
    let mut tally = Tally::default();
    let mut fragments = 0;
    corpus(
        0x9e37_79b9_7f4a_7c15,
        6000,
        valid_request,
        mutated_request,
        |buf| {
            let ours = whole(Config::DEFAULT, buf);
            if compare(buf, &ours, &theirs(buf), &mut tally) == Some("D8") {
                fragments += 1;
            }
        },
    );
    eprintln!("{tally:?}, D8 {fragments}");
    // The corpus must exercise agreement, not just disagreement, and the fragment rule.
    assert!(
        tally.both_accept > 2500 && tally.both_reject > 500 && fragments > 0,
        "{tally:?}"
    );
}

/// With bare LF allowed, D1 disappears: line endings agree exactly with httparse.
#[test]
fn differential_bare_lf_lenient_agrees() {
    let cfg = Config::DEFAULT.with_allow_bare_lf(true);
    lenient_agrees(
        7,
        valid_request,
        |b| Ok(whole(cfg, b)?.map(|o| (o.head_len, o.headers.len()))),
        |b| theirs(b).map(|t| t.map(|t| (t.3, t.4.len()))),
    );
}

/// D8 on its own: a fragment appended to the target of valid requests is the only difference.
/// httparse accepts the request with the `#` in its path and otherwise the same fields; ours
/// rejects it, because routing on `/p#x` would route on what the client meant to keep to
/// itself (RFC 9110 §7.1) and no request-target form has a fragment (RFC 9112 §3.2).
#[test]
fn differential_fragment_is_rejected_where_httparse_accepts() {
    let mut rng = Rng(0x5eed_f7a9);
    for _ in 0..500 {
        let buf = valid_request(&mut rng);
        let Ok(Some(want)) = whole(Config::DEFAULT, &buf) else {
            panic!("generator made an invalid request")
        };
        let at = buf.iter().position(|&b| b == b' ').unwrap() + 1 + want.target.len();
        let with_fragment = [&buf[..at], b"#frag", &buf[at..]].concat();
        assert_eq!(
            whole(Config::DEFAULT, &with_fragment),
            Err(Error::InvalidTarget),
            "{:?}",
            String::from_utf8_lossy(&with_fragment)
        );
        let Ok(Some((_, path, _, len, headers))) = theirs(&with_fragment) else {
            panic!(
                "httparse rejects {:?}",
                String::from_utf8_lossy(&with_fragment)
            )
        };
        assert_eq!(path, [&want.target[..], b"#frag"].concat());
        assert_eq!(len, want.head_len + 5);
        assert_eq!(headers.len(), want.headers.len());
        assert_eq!(deliberate(Error::InvalidTarget, &with_fragment), Some("D8"));
    }
}
