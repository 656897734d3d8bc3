//! The endpoints: a [`Service`] of `bufslab-server` that answers `/plaintext`, `/json`, `/echo`
//! and `/stats`.
//!
//! Nothing here allocates per request: `/plaintext` is a precomputed [`StaticResponse`], JSON
//! is serialized by serde_json into a buffer on the stack, and `/echo` writes each decoded piece
//! of the request body straight back into the connection's output.

use bufslab_http::{BodyFraming, KnownHeader, Method, Request};
use bufslab_server::{Exchange, ResponseError, Service, StaticHead, StaticResponse, WorkerInfo};
use serde::Serialize;

/// The `Server` header value.
pub(crate) const SERVER_NAME: &str = "server-demo";

/// Room for the JSON of a `/stats` response (about 600 bytes).
const STATS_ROOM: usize = 2048;

const PLAINTEXT: &[u8] = b"Hello, World!";

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// `GET /plaintext`
    Plaintext,
    /// `GET /json`
    Json,
    /// `POST /echo`
    Echo,
    /// `GET /stats`
    Stats,
    /// Unknown path.
    NotFound,
    /// Known path, wrong method; the value is the `Allow` header.
    MethodNotAllowed(&'static [u8]),
}

impl Route {
    /// Routes a request by method and path (the target without its query; an absolute-form
    /// target routes by its path, RFC 9112 §3.2.2).
    pub(crate) fn of(method: Method<'_>, path: &[u8]) -> Route {
        let get_or_head = matches!(method, Method::Get | Method::Head);
        match path {
            b"/plaintext" if get_or_head => Route::Plaintext,
            b"/json" if get_or_head => Route::Json,
            b"/stats" if get_or_head => Route::Stats,
            b"/plaintext" | b"/json" | b"/stats" => Route::MethodNotAllowed(b"GET, HEAD"),
            b"/echo" if method == Method::Post => Route::Echo,
            b"/echo" => Route::MethodNotAllowed(b"POST"),
            _ => Route::NotFound,
        }
    }
}

/// Where an `/echo` is, between the service's calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Echo {
    /// Not an echo, or its response is complete.
    #[default]
    Idle,
    /// A chunked request: the response head waits for the first decoded data, so a body that
    /// fails before any data still gets its 400 or 413 in place of a 200.
    ChunkedPending,
    /// A chunked response in progress.
    Chunked,
    /// A response of the request's Content-Length in progress: the data goes back as it is.
    Length,
}

/// The demo's service; one per worker.
#[derive(Debug)]
pub struct Demo {
    plaintext: StaticResponse,
    json: StaticHead,
    /// `/stats` is a snapshot of a moment: a cache that kept one would show stale counters.
    stats: StaticHead,
}

impl Demo {
    /// The service for one worker.
    ///
    /// # Panics
    /// Never: the precomputed response is a constant the tests build.
    #[must_use]
    pub fn new(_: WorkerInfo) -> Demo {
        let headers: [(KnownHeader, &[u8]); 1] = [(KnownHeader::ContentType, b"application/json")];
        let json = match StaticHead::new(200, &headers) {
            Ok(h) => h,
            Err(e) => unreachable!("the json head is valid: {e}"),
        };
        let headers: [(KnownHeader, &[u8]); 2] = [
            (KnownHeader::ContentType, b"application/json"),
            (KnownHeader::CacheControl, b"no-store"),
        ];
        let stats = match StaticHead::new(200, &headers) {
            Ok(h) => h,
            Err(e) => unreachable!("the stats head is valid: {e}"),
        };
        Demo {
            plaintext: plaintext_response(),
            json,
            stats,
        }
    }
}

/// The `/plaintext` response: precomputed once (Kestrel's "precomputed header bytes").
fn plaintext_response() -> StaticResponse {
    let headers: [(KnownHeader, &[u8]); 2] = [
        (KnownHeader::ContentType, b"text/plain"),
        (KnownHeader::Server, SERVER_NAME.as_bytes()),
    ];
    match StaticResponse::new(200, &headers, PLAINTEXT) {
        Ok(r) => r,
        Err(e) => unreachable!("the plaintext response is valid: {e}"),
    }
}

impl Service for Demo {
    type State = Echo;

    #[inline]
    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, echo: &mut Echo) {
        // A refused write is answered by the engine (500, or the close); nothing to add here.
        let _ = match Route::of(req.method(), req.path()) {
            Route::Plaintext => ex.send_static(&self.plaintext),
            Route::Json => json::<64, _>(
                ex,
                &self.json,
                &Message {
                    message: "Hello, World!",
                },
            ),
            Route::Stats => {
                let stats = ex.stats();
                json::<STATS_ROOM, _>(ex, &self.stats, &stats)
            }
            Route::NotFound => error(ex, 404, None),
            Route::MethodNotAllowed(allow) => error(ex, 405, Some(allow)),
            Route::Echo => {
                ex.read_body();
                match req.framing() {
                    BodyFraming::Chunked => {
                        *echo = Echo::ChunkedPending;
                        Ok(())
                    }
                    BodyFraming::Length(n) => {
                        *echo = Echo::Length;
                        echo_head(ex).stream(n)
                    }
                    _ => echo_head(ex).body(b""),
                }
            }
        };
    }

    #[inline]
    fn data(&mut self, data: &[u8], ex: &mut Exchange<'_>, echo: &mut Echo) {
        if *echo == Echo::ChunkedPending {
            *echo = Echo::Chunked;
            if echo_head(ex).chunked().is_err() {
                return;
            }
        }
        let _ = ex.write(data);
    }

    fn end(&mut self, ex: &mut Exchange<'_>, echo: &mut Echo) {
        if *echo == Echo::ChunkedPending && echo_head(ex).chunked().is_err() {
            return;
        }
        if *echo != Echo::Idle {
            let _ = ex.finish();
        }
        *echo = Echo::Idle;
    }
}

/// The head of an `/echo` response, framing left to the caller.
fn echo_head<'e, 'a>(ex: &'e mut Exchange<'a>) -> bufslab_server::Response<'e, 'a> {
    ex.respond(200)
        .header(KnownHeader::ContentType, b"application/octet-stream")
}

/// An error or 404/405 response: status, reason phrase as the body.
fn error(ex: &mut Exchange<'_>, status: u16, allow: Option<&[u8]>) -> Result<(), ResponseError> {
    let r = ex
        .respond(status)
        .header(KnownHeader::ContentType, b"text/plain");
    let r = match allow {
        Some(allow) => r.header(KnownHeader::Allow, allow),
        None => r,
    };
    r.body(bufslab_http::reason(status).as_bytes())
}

/// The `/json` body.
#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// Serializes `value` as a JSON response of at most `N` bytes, without allocating: straight
/// into the output block, whose writer refuses what does not fit, so serde_json reports an
/// error instead of anything allocating or panicking.
fn json<const N: usize, T: Serialize>(
    ex: &mut Exchange<'_>,
    head: &StaticHead,
    value: &T,
) -> Result<(), ResponseError> {
    // A body that does not fit is refused, and the engine answers 500 in its place.
    ex.respond_with(head)
        .body_with(N, |w| serde_json::to_writer(w, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing() {
        assert_eq!(Route::of(Method::Get, b"/plaintext"), Route::Plaintext);
        assert_eq!(Route::of(Method::Head, b"/json"), Route::Json);
        assert_eq!(Route::of(Method::Post, b"/echo"), Route::Echo);
        assert_eq!(
            Route::of(Method::Get, b"/echo"),
            Route::MethodNotAllowed(b"POST")
        );
        assert_eq!(
            Route::of(Method::Delete, b"/stats"),
            Route::MethodNotAllowed(b"GET, HEAD")
        );
        assert_eq!(Route::of(Method::Get, b"/nope"), Route::NotFound);
    }

    #[test]
    fn the_plaintext_response_is_built() {
        let r = plaintext_response();
        assert_eq!(r.body(), PLAINTEXT);
    }
}
