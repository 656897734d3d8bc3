//! Response parser: no input panics, feeding the input in pieces (every byte, or at split
//! points chosen by the input) gives exactly the whole-buffer result, and a complete head is
//! consistent: a status of three digits, a reason inside the status line, the framing RFC 9112
//! §6.3 gives for the request's method and the status (a code outside 100..=599 framed as a
//! 5xx, RFC 9110 §15). Its body is then decoded.

use bufslab_http::{
    status_allows_content, BodyDecoder, Error, HeaderSlot, Method, ResponseFraming, ResponseParser,
    Status,
};

// The integration tests' owned summary of a parse and their feeding of growing prefixes, so
// both compare the same fields in the same way.
#[path = "../../tests/common/mod.rs"]
mod common;
use common::{feed, summarize_response, ResponseSummary};
mod split;
use split::Run;

fn run(r: &Run<'_>) -> Result<Option<ResponseSummary>, Error> {
    let (cfg, buf) = (r.cfg, r.buf);
    // The request the response answers, from the mode byte's top bits.
    let method =
        [Method::Get, Method::Head, Method::Connect, Method::Post][usize::from(r.mode >> 5) & 3];
    let mut storage = vec![HeaderSlot::EMPTY; r.slots];
    let mut p = ResponseParser::new(cfg);
    feed(buf, r.cuts, |prefix| {
        match p.parse(prefix, method, &mut storage)? {
            Status::Complete(r) => {
                let s = summarize_response(&r);
                assert!(s.head_len <= buf.len() && s.head_len <= cfg.max_head_bytes());
                assert!(s.status <= 999);
                let valid = (100..=599).contains(&s.status);
                assert_eq!(r.is_server_error(), !valid || s.status >= 500);
                let head = buf[..s.head_len].as_ptr_range();
                let reason = r.reason().as_ptr_range();
                assert!(
                    r.reason().is_empty() || (head.start < reason.start && reason.end <= head.end)
                );
                let no_body = method == Method::Head || (valid && !status_allows_content(s.status));
                let tunnel = method == Method::Connect && (200..300).contains(&s.status);
                match s.framing {
                    ResponseFraming::None => assert!(no_body),
                    ResponseFraming::Tunnel => assert!(tunnel && !no_body),
                    _ => assert!(!no_body && !tunnel),
                }
                if s.keep_alive {
                    assert!(!matches!(
                        s.framing,
                        ResponseFraming::CloseDelimited | ResponseFraming::Tunnel
                    ));
                }
                // Decode (or skip) whatever body follows; must not panic either way.
                let mut body = BodyDecoder::for_response(r.framing(), &cfg);
                let _ = body.skip(&buf[s.head_len..]);
                Ok(Some(s))
            }
            Status::Partial => Ok(None),
        }
    })
}

/// The target's body: panics where `data` breaks a rule above.
pub fn check(data: &[u8]) {
    split::split_independent(data, &[400, 417, 431, 501, 502, 505], run);
}
