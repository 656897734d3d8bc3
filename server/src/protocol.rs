//! What the engine reads from a request head before the service sees it, and the responses it
//! writes itself: errors (400, 408, 413, 431, 500, 503, ...) and `OPTIONS *`.

use bufslab::PoolBuf;
use bufslab_http::{BodyFraming, DateCache, Method, Request, TargetForm, Version};
use bytes::BufMut;

use crate::exchange::ExchangeState;

/// Room an error response takes at most: status line, Content-Type, Content-Length, Server
/// (up to 40 bytes), Date, `Connection: close`, and the reason phrase as its body.
pub(crate) const ERROR_ROOM: usize = 384;

/// What the engine needs of a complete head, copied out so the head's borrow of the read
/// block can end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    pub(crate) head_len: usize,
    pub(crate) framing: BodyFraming,
    pub(crate) has_body: bool,
    /// `OPTIONS *`: a question about the server as a whole, which the engine answers.
    pub(crate) options_star: bool,
}

impl Head {
    /// Reads what the engine needs from a complete head, and starts its exchange in `st`.
    #[inline]
    pub(crate) fn of(req: &Request<'_, '_>, shutting_down: bool, st: &mut ExchangeState) -> Head {
        let method = req.method();
        let framing = req.framing();
        let has_body = !matches!(framing, BodyFraming::None | BodyFraming::Length(0));
        *st = ExchangeState::new(
            method == Method::Head,
            req.version() == Version::Http10,
            req.keep_alive(),
            req.expect_continue(),
            has_body,
            shutting_down,
        );
        Head {
            head_len: req.head_len(),
            framing,
            has_body,
            options_star: req.target_form() == TargetForm::Asterisk,
        }
    }
}

/// Writes `status` with `Connection: close` and its reason phrase as a plain-text body. `out`
/// has [`ERROR_ROOM`] spare bytes.
pub(crate) fn error(out: &mut PoolBuf, date: &DateCache, server: Option<&[u8]>, status: u16) {
    let reason = bufslab_http::reason(status).as_bytes();
    let mut h = bufslab_http::ResponseHead::new(out, status);
    h.static_header(bufslab_http::KnownHeader::ContentType, b"text/plain")
        .content_length(reason.len() as u64);
    if let Some(name) = server.filter(|n| n.len() <= 40) {
        h.static_header(bufslab_http::KnownHeader::Server, name);
    }
    h.date(date).connection_close().finish();
    out.put_slice(reason);
}

/// Answers `OPTIONS *` (RFC 9110 §9.3.7): `200` with no content. The methods each resource
/// allows are the service's to say, for its own targets.
pub(crate) fn options_star(
    out: &mut PoolBuf,
    date: &DateCache,
    server: Option<&[u8]>,
    st: &ExchangeState,
) {
    let mut h = bufslab_http::ResponseHead::new(out, 200);
    h.content_length(0);
    if let Some(name) = server.filter(|n| n.len() <= 40) {
        h.static_header(bufslab_http::KnownHeader::Server, name);
    }
    h.date(date);
    match (st.keep(), st.http10) {
        (true, false) => {}
        (true, true) => {
            h.keep_alive();
        }
        (false, _) => {
            h.connection_close();
        }
    }
    h.finish();
}
