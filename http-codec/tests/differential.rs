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
//!
//! Errors are not compared one-to-one (the enums differ); accept / reject / partial and all
//! fields are.

mod common;

use std::mem::MaybeUninit;

use bufslab_http::{Config, Error};
use common::{mutated_request, valid_request, whole, Outcome, Rng};

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

/// Which deliberate difference (if any) explains ours rejecting what httparse accepts.
fn deliberate(err: Error, buf: &[u8]) -> Option<&'static str> {
    Some(match err {
        Error::BareLf => "D1",
        Error::InvalidContentLength
        | Error::ContentLengthWithTransferEncoding
        | Error::InvalidTransferEncoding
        | Error::TransferEncodingInHttp10
        | Error::UnsupportedTransferCoding => "D2",
        Error::MissingHost | Error::MultipleHost | Error::InvalidHost => "D3",
        Error::InvalidTarget => "D4",
        Error::UnsupportedExpectation => "D5",
        _ => {
            let _ = buf;
            return None;
        }
    })
}

fn compare(buf: &[u8], ours: &Outcome, theirs: &Theirs, counts: &mut [usize; 8]) {
    let show = || String::from_utf8_lossy(buf).into_owned();
    match (ours, theirs) {
        (Ok(Some(o)), Ok(Some((method, path, version, len, headers)))) => {
            counts[0] += 1;
            assert_eq!(&o.method, method, "{}", show());
            assert_eq!(&o.target, path, "{}", show());
            let v = match o.version {
                bufslab_http::Version::Http10 => 0,
                bufslab_http::Version::Http11 => 1,
            };
            assert_eq!(v, *version, "{}", show());
            assert_eq!(o.head_len, *len, "{}", show());
            let ours_h: Vec<(Vec<u8>, Vec<u8>)> = o
                .headers
                .iter()
                .map(|(_, raw, v)| (raw.clone(), v.clone()))
                .collect();
            assert_eq!(&ours_h, headers, "{}", show());
        }
        (Ok(None), Ok(None)) => counts[1] += 1,
        (Err(_), Err(_)) => counts[2] += 1,
        (Err(e), Ok(Some(_))) => {
            let why = deliberate(*e, buf)
                .unwrap_or_else(|| panic!("ours rejects ({e:?}), httparse accepts: {:?}", show()));
            let _ = why;
            counts[3] += 1;
        }
        (Err(e), Ok(None)) => {
            // Ours decides earlier than httparse: only the limits and checks httparse lacks.
            deliberate(*e, buf).unwrap_or_else(|| {
                panic!("ours rejects ({e:?}), httparse says partial: {:?}", show())
            });
            counts[4] += 1;
        }
        (Ok(None), Err(e)) => {
            // D7 (httparse rejects an impossible version prefix early) or D1/D4 (httparse
            // treats the bytes differently): must still be rejected by us once complete.
            let mut done = buf.to_vec();
            done.extend_from_slice(b"\r\n\r\n");
            assert!(
                !matches!(whole(Config::DEFAULT, &done), Ok(Some(_))),
                "httparse rejects ({e:?}) what we would accept: {:?}",
                show()
            );
            counts[5] += 1;
        }
        (Ok(Some(_)), Err(e)) => panic!("ours accepts, httparse rejects ({e:?}): {:?}", show()),
        (Ok(Some(_)), Ok(None)) => panic!("ours complete, httparse partial: {:?}", show()),
        (Ok(None), Ok(Some(_))) => panic!("ours partial, httparse complete: {:?}", show()),
    }
}

#[test]
fn differential_against_httparse() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut counts = [0usize; 8];
    for i in 0..6000 {
        let buf = if i % 2 == 0 {
            valid_request(&mut rng)
        } else {
            mutated_request(&mut rng)
        };
        let ours = whole(Config::DEFAULT, &buf);
        compare(&buf, &ours, &theirs(&buf), &mut counts);
    }
    eprintln!(
        "both accept {}, both partial {}, both reject {}, deliberate D-rejects {}, ours-early {}, theirs-early {}",
        counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]
    );
    // The corpus must exercise agreement, not just disagreement.
    assert!(counts[0] > 2500 && counts[2] > 500, "{counts:?}");
}

/// With bare LF allowed, D1 disappears: line endings agree exactly with httparse.
#[test]
fn differential_bare_lf_lenient_agrees() {
    let cfg = Config::DEFAULT.with_allow_bare_lf(true);
    let mut rng = Rng(7);
    for _ in 0..2000 {
        let buf: Vec<u8> = valid_request(&mut rng)
            .into_iter()
            .filter(|&b| b != b'\r')
            .collect();
        let ours = whole(cfg, &buf);
        let t = theirs(&buf);
        match (&ours, &t) {
            (Ok(Some(o)), Ok(Some((_, _, _, len, headers)))) => {
                assert_eq!(o.head_len, *len);
                assert_eq!(o.headers.len(), headers.len());
            }
            (Ok(None), Ok(None)) => {}
            (Err(_), Ok(Some(_))) => {}
            other => panic!("{other:?} {:?}", String::from_utf8_lossy(&buf)),
        }
    }
}
