//! Differential test of the response parser against httparse's, over a generated corpus.
//!
//! For every input both parsers must agree on accept / reject / partial, and on every field
//! when both accept, except for these deliberate differences: rules this crate enforces (or
//! leniencies it allows) that httparse, a syntax-only parser, does not.
//!
//! | # | bufslab-http | httparse | why |
//! |---|---|---|---|
//! | R1 | rejects bare LF line endings unless `Config::allow_bare_lf` | accepts | RFC 9112 §2.2 only *permits* accepting them (as D1 for requests) |
//! | R2 | checks the framing fields when they frame the body: Content-Length syntax and agreement, `chunked` once and without parameters, codings that are tokens, Transfer-Encoding with Content-Length or in HTTP/1.0 | does not interpret fields | RFC 9112 §6.1, §6.3 points 3 to 5, §7; RFC 9110 §8.6 (as D2) |
//! | R3 | requires the SP after the status code, also before an empty reason | accepts `HTTP/1.1 200` CRLF | RFC 9112 §4: `status-code SP [ reason-phrase ]` |
//! | R4 | skips at most four empty lines before the status line, and rejects a fifth | skips any number | RFC 9112 §2.2: servers send a stray one after a `304` or `100`; a run of them is a stream that lost its framing, and an unbounded skip is an unbounded wait |
//! | R5 | reads `HTTP/1.2` to `HTTP/1.9` as HTTP/1.1 | rejects them | RFC 9110 §6.2 (as the request parser does) |
//! | R6 | reports `Partial` on a status line that cannot be judged yet (e.g. `HTTQ/1`) | fails fast on an impossible version prefix | same final verdict once the line is complete (as D7) |
//! | R7 | returns the reason phrase as received, obs-text included | returns `""` for a reason with obs-text | a field difference only: both accept |
//!
//! Errors are not compared one-to-one (the enums differ); accept / reject / partial and all
//! fields are.

mod common;
#[path = "common/differential.rs"]
mod differential;

use bufslab_http::{Config, Error, Method, Version};
use common::{mutated_response, valid_response, whole_response, ResponseOutcome};
use differential::{
    case, corpus, explained, lenient_agrees, same_head, still_rejected, Case, Tally,
};

/// httparse's view, owned: `None` = partial.
type Theirs = Result<Option<(u8, u16, Vec<u8>, usize, Vec<(Vec<u8>, Vec<u8>)>)>, httparse::Error>;

fn theirs(buf: &[u8]) -> Theirs {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(buf)? {
        httparse::Status::Complete(n) => Ok(Some((
            resp.version.unwrap_or(9),
            resp.code.unwrap_or_default(),
            resp.reason.unwrap_or_default().as_bytes().to_vec(),
            n,
            resp.headers
                .iter()
                .map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec()))
                .collect(),
        ))),
        httparse::Status::Partial => Ok(None),
    }
}

/// The status line's bytes, up to the first CR or LF.
fn status_line(buf: &[u8]) -> &[u8] {
    let end = buf
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(buf.len());
    &buf[..end]
}

/// Which deliberate difference (if any) explains ours rejecting what httparse accepts (or has
/// not decided yet).
fn deliberate(err: Error, buf: &[u8]) -> Option<&'static str> {
    let line = status_line(buf);
    Some(match err {
        Error::BareLf => "R1",
        Error::InvalidContentLength
        | Error::ContentLengthWithTransferEncoding
        | Error::InvalidTransferEncoding
        | Error::TransferEncodingInHttp10 => "R2",
        // `HTTP/1.x NNN` and the line ends: no SP.
        Error::InvalidStatusLine if line.len() == 12 => "R3",
        Error::InvalidStatusLine if buf.starts_with(&b"\r\n".repeat(5)) => "R4",
        _ => return None,
    })
}

/// Checks one input.
fn compare(buf: &[u8], ours: &ResponseOutcome, theirs: &Theirs, tally: &mut Tally) {
    let show = || String::from_utf8_lossy(buf).into_owned();
    let c = case(ours, theirs);
    tally.count(&c);
    match c {
        Case::BothAccept(o, (version, code, reason, len, headers)) => {
            assert_eq!(o.status, *code, "{}", show());
            if o.reason.is_ascii() {
                assert_eq!(&o.reason, reason, "{}", show());
            } else {
                // R7
                assert!(reason.is_empty(), "{}", show());
            }
            same_head(
                buf,
                (o.version, o.head_len, &o.headers),
                (*version, *len, headers),
            );
        }
        Case::OursRejects(e) | Case::OursEarly(e) => {
            explained(deliberate(e, buf), e, theirs, buf);
        }
        // R6
        Case::TheirsEarly(e) => still_rejected(
            buf,
            |b| matches!(whole_response(Config::DEFAULT, Method::Get, b), Ok(Some(_))),
            e,
        ),
        // R5 only: a higher HTTP/1 minor version.
        Case::TheirsRejects(o, e) => {
            let minor = status_line(buf)
                .get(..8)
                .and_then(|v| v.strip_prefix(b"HTTP/1."));
            assert!(
                matches!(minor, Some([b'2'..=b'9'])) && o.version == Version::Http11,
                "ours accepts, httparse rejects ({e:?}): {:?}",
                show()
            );
        }
        Case::Mismatch => panic!("one complete, the other partial: {:?} {theirs:?}", show()),
        Case::BothPartial | Case::BothReject => {}
    }
}

#[test]
fn differential_against_httparse_responses() {
    let mut tally = Tally::default();
    corpus(0x0dd5_eed5, 6000, valid_response, mutated_response, |buf| {
        let ours = whole_response(Config::DEFAULT, Method::Get, buf);
        compare(buf, &ours, &theirs(buf), &mut tally);
    });
    eprintln!("{tally:?}");
    // The corpus must exercise agreement, not just disagreement.
    assert!(
        tally.both_accept > 2500 && tally.both_reject > 300,
        "{tally:?}"
    );
}

/// With bare LF allowed, R1 disappears: line endings agree exactly with httparse.
#[test]
fn differential_bare_lf_lenient_agrees() {
    let cfg = Config::DEFAULT.with_allow_bare_lf(true);
    lenient_agrees(
        11,
        valid_response,
        |b| Ok(whole_response(cfg, Method::Get, b)?.map(|o| (o.head_len, o.headers.len()))),
        |b| theirs(b).map(|t| t.map(|t| (t.3, t.4.len()))),
    );
}

/// Each deliberate difference, on its own.
#[test]
fn each_deliberate_difference() {
    #[rustfmt::skip]
    let rows: &[(&str, &[u8], Option<Error>)] = &[
        ("R1", b"HTTP/1.1 200 OK\nContent-Length: 0\n\n", Some(Error::BareLf)),
        ("R2", b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", Some(Error::InvalidContentLength)),
        ("R3", b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", Some(Error::InvalidStatusLine)),
        ("R4", b"\r\n\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", Some(Error::InvalidStatusLine)),
        ("R5", b"HTTP/1.5 200 OK\r\nContent-Length: 0\r\n\r\n", None),
    ];
    for &(rule, buf, err) in rows {
        let ours = whole_response(Config::DEFAULT, Method::Get, buf);
        let t = theirs(buf);
        match err {
            Some(e) => {
                assert_eq!(ours, Err(e), "{rule}");
                assert!(matches!(t, Ok(Some(_))), "{rule}: httparse {t:?}");
                assert_eq!(deliberate(e, buf), Some(rule));
            }
            None => {
                assert!(matches!(ours, Ok(Some(_))), "{rule}");
                assert!(t.is_err(), "{rule}");
            }
        }
    }
    // R7: both accept; the reason differs.
    let buf = b"HTTP/1.1 200 D\xe9j\xe0 vu\r\n\r\n";
    let ours = whole_response(Config::DEFAULT, Method::Get, buf)
        .unwrap()
        .unwrap();
    assert_eq!(ours.reason, b"D\xe9j\xe0 vu");
    assert_eq!(theirs(buf).unwrap().unwrap().2, b"");
}
