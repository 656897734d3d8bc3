//! Answering a parsed request head: what it asks for, whether the connection stays open, and
//! the response (or, for `/echo`, its head) written into an output block.

use bufslab::PoolBuf;
use bufslab_http::{BodyFraming, Method, Request, Version, CONTINUE_100};

use crate::body::BodyUse;
use crate::routes::{self, NoRoom, Persist, Reply, Route};
use crate::server::Shared;

/// What routing and framing need from a parsed head, copied out so the head's borrow of the
/// read block ends before the response is written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Info {
    pub(crate) route: Route,
    pub(crate) head_only: bool,
    pub(crate) head_len: usize,
    pub(crate) framing: BodyFraming,
    pub(crate) keep_alive: bool,
    pub(crate) http10: bool,
    /// The client waits for `100 Continue` before it sends its body. Never set for an
    /// HTTP/1.0 client: a 1xx must not go to one (RFC 9110 §15.2), and its expectation is
    /// ignored (§10.1.1).
    pub(crate) expect_continue: bool,
}

impl Info {
    /// Reads what the answer needs from a complete head.
    #[inline]
    pub(crate) fn of(req: &Request<'_, '_>) -> Info {
        let method = req.method();
        let http10 = req.version() == Version::Http10;
        Info {
            // An absolute-form target routes by its path: `Request::path` strips the scheme
            // and authority (RFC 9112 §3.2.2).
            route: Route::of(method, req.path()),
            head_only: method == Method::Head,
            head_len: req.head_len(),
            framing: req.framing(),
            keep_alive: req.keep_alive(),
            http10,
            expect_continue: req.expect_continue() && !http10,
        }
    }

    /// The request has a body to consume.
    pub(crate) fn has_body(&self) -> bool {
        !matches!(self.framing, BodyFraming::None | BodyFraming::Length(0))
    }

    /// Whether the connection serves another request after this one.
    pub(crate) fn keep(&self, shutting_down: bool) -> bool {
        // A client that waits for `100 Continue` may never send a body we do not ask for, so
        // the connection cannot be reused after answering without reading it.
        self.keep_alive
            && !shutting_down
            && !(self.has_body() && self.expect_continue && self.route != Route::Echo)
    }

    /// What the response's `Connection` header says.
    pub(crate) fn persist(&self, keep: bool) -> Persist {
        match (keep, self.http10) {
            (false, _) => Persist::Close,
            (true, true) => Persist::KeepAlive10,
            (true, false) => Persist::Default,
        }
    }

    /// The response sends `100 Continue` first.
    pub(crate) fn sends_continue(&self) -> bool {
        self.route == Route::Echo && self.expect_continue && self.has_body()
    }
}

/// Writes the response to `info` into `out`, which has `info.route.room()` spare bytes: the
/// whole response, or for `/echo` its interim `100 Continue` (when asked for) and its head
/// (chunked: deferred to the first data, see [`BodyUse::EchoChunked`]). Returns how the
/// request's body is to be consumed.
#[inline]
pub(crate) fn respond(
    out: &mut PoolBuf,
    info: &Info,
    r: &Reply<'_>,
    shared: &Shared,
) -> Result<BodyUse, NoRoom> {
    match info.route {
        Route::Plaintext => routes::plaintext(out, r),
        Route::Json => routes::hello_json(out, r)?,
        Route::Stats => routes::json(out, r, &shared.snapshot())?,
        Route::NotFound => routes::error(out, r, 404, None),
        Route::MethodNotAllowed(allow) => routes::error(out, r, 405, Some(allow)),
        Route::Echo => {
            if info.sends_continue() {
                routes::continue_100(out);
            }
            // Only `Length` and `Chunked` frame a body; anything else is an empty one.
            let len = match info.framing {
                BodyFraming::Chunked => return Ok(BodyUse::EchoChunked(Some(r.persist))),
                BodyFraming::Length(n) => n,
                _ => 0,
            };
            routes::echo_head(out, r, Some(len));
            return Ok(BodyUse::EchoLength);
        }
    }
    Ok(BodyUse::Skip)
}

/// Bytes of `respond`'s output that come before the final response: the interim
/// `100 Continue`, which a later refusal keeps (a final status may follow it).
pub(crate) fn interim_len(info: &Info) -> usize {
    if info.sends_continue() {
        CONTINUE_100.len()
    } else {
        0
    }
}
