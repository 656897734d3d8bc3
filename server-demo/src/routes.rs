//! The endpoints, and the responses they encode straight into pooled blocks.
//!
//! Every function here writes into the spare room of one [`PoolBuf`] and must not run out of
//! it (a `BufMut` panics past its capacity), so each response has a fixed worst-case size
//! ([`Route::room`]) that the connection reserves before encoding. Nothing here allocates:
//! heads come from the codec's precomputed constants and the worker's [`DateCache`]; JSON is
//! serialized by serde_json into the block itself through a slice writer.

use bufslab::PoolBuf;
use bufslab_http::{DateCache, KnownHeader, Method, ResponseHead, CONTINUE_100};
use bytes::BufMut;
use serde::Serialize;

/// The `Server` header value.
pub(crate) const SERVER_NAME: &[u8] = b"server-demo";

/// Room kept free for a response head: the longest head this server writes (status line,
/// Server, Date, Content-Type, Content-Length, Connection, Allow) is about 220 bytes.
pub(crate) const HEAD_ROOM: usize = 320;

/// Room for a `/stats` response: its JSON is about 600 bytes.
const STATS_ROOM: usize = 2048;

const PLAINTEXT: &[u8] = b"Hello, World!";

/// The status line and fixed headers of every `/plaintext` response, precomputed (Kestrel's
/// "precomputed header bytes"): only the date and a `Connection` header are written per
/// response. A test checks it against what the header builder writes. (The builder starts each
/// header line with its CRLF, so the prefix ends without one.)
const PLAINTEXT_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nServer: server-demo";

/// The same for JSON responses, up to the length, which the serialized body decides.
const JSON_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json";

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
    /// Routes a request by method and path (the target without its query).
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

    /// Bytes of block room this route's response (head and body) may take.
    pub(crate) fn room(self) -> usize {
        match self {
            Route::Stats => STATS_ROOM,
            // The echo head, plus an interim `100 Continue` that may precede it.
            Route::Echo => HEAD_ROOM + CONTINUE_100.len(),
            _ => HEAD_ROOM + 64,
        }
    }
}

/// What the `Connection` header of a response says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Persist {
    /// HTTP/1.1 keep-alive: the default, no header needed.
    Default,
    /// HTTP/1.0 client that asked for keep-alive: it must be told it got it.
    KeepAlive10,
    /// The connection closes after this response.
    Close,
}

/// Per-response context.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reply<'a> {
    pub(crate) date: &'a DateCache,
    pub(crate) persist: Persist,
    /// `HEAD`: all the headers a GET would get, no body.
    pub(crate) head_only: bool,
}

/// Writes the headers every response carries. `B` is a `PoolBuf` or a slice of one.
fn common<B: BufMut>(h: &mut ResponseHead<'_, B>, r: &Reply<'_>) {
    h.static_header(KnownHeader::Server, SERVER_NAME);
    per_response(h, r);
}

/// The headers that change from one response to the next: `Date`, and `Connection` when the
/// exchange needs one.
fn per_response<B: BufMut>(h: &mut ResponseHead<'_, B>, r: &Reply<'_>) {
    h.date(r.date);
    match r.persist {
        Persist::Default => {}
        Persist::KeepAlive10 => {
            h.static_header(KnownHeader::Connection, b"keep-alive");
        }
        Persist::Close => {
            h.connection_close();
        }
    }
}

/// A response with a fixed body. The caller reserved `HEAD_ROOM + body.len()` bytes.
pub(crate) fn fixed(
    out: &mut PoolBuf,
    r: &Reply<'_>,
    status: u16,
    content_type: &[u8],
    body: &[u8],
    allow: Option<&[u8]>,
) {
    let mut h = ResponseHead::new(out, status);
    h.static_header(KnownHeader::ContentType, content_type)
        .content_length(body.len() as u64);
    if let Some(allow) = allow {
        h.static_header(KnownHeader::Allow, allow);
    }
    common(&mut h, r);
    h.finish();
    if !r.head_only {
        out.put_slice(body);
    }
}

/// `GET /plaintext`. The caller reserved `HEAD_ROOM + 64` bytes.
pub(crate) fn plaintext(out: &mut PoolBuf, r: &Reply<'_>) {
    let mut h = ResponseHead::from_prefix(out, PLAINTEXT_HEAD);
    per_response(&mut h, r);
    h.finish();
    if !r.head_only {
        out.put_slice(PLAINTEXT);
    }
}

/// An error or 404/405 response: status, reason phrase as the body.
pub(crate) fn error(out: &mut PoolBuf, r: &Reply<'_>, status: u16, allow: Option<&[u8]>) {
    let reason = bufslab_http::reason(status).as_bytes();
    fixed(out, r, status, b"text/plain", reason, allow);
}

/// The `/json` body.
#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// Why a serialized response did not fit.
#[derive(Debug)]
pub(crate) struct NoRoom;

/// Serializes `value` as a JSON response into the block's spare room, without allocating.
///
/// The body is serialized first, behind a `HEAD_ROOM` gap (its length goes into the head),
/// then the head is written at the front and the body moved down to meet it: one short
/// `memmove` instead of a scratch buffer.
pub(crate) fn json<T: Serialize>(
    out: &mut PoolBuf,
    r: &Reply<'_>,
    value: &T,
) -> Result<(), NoRoom> {
    let spare = out.spare_mut();
    if spare.len() <= HEAD_ROOM {
        return Err(NoRoom);
    }
    let (head_area, body_area) = spare.split_at_mut(HEAD_ROOM);
    let body_room = body_area.len();
    // `&mut [u8]` is an `io::Write` that fills the slice and then refuses: serde_json's
    // `write_all` then reports an error instead of anything allocating or panicking.
    let mut w: &mut [u8] = body_area;
    serde_json::to_writer(&mut w, value).map_err(|_| NoRoom)?;
    let body_len = body_room - w.len();
    let mut hw: &mut [u8] = head_area;
    {
        let mut h = ResponseHead::from_prefix(&mut hw, JSON_HEAD);
        h.content_length(body_len as u64);
        common(&mut h, r);
        h.finish();
    }
    let head_len = HEAD_ROOM - hw.len();
    spare.copy_within(HEAD_ROOM..HEAD_ROOM + body_len, head_len);
    out.commit(head_len + if r.head_only { 0 } else { body_len });
    Ok(())
}

/// `GET /json`.
pub(crate) fn hello_json(out: &mut PoolBuf, r: &Reply<'_>) -> Result<(), NoRoom> {
    json(
        out,
        r,
        &Message {
            message: "Hello, World!",
        },
    )
}

/// The interim `100 Continue` that tells a waiting client to send its body.
pub(crate) fn continue_100(out: &mut PoolBuf) {
    out.put_slice(CONTINUE_100);
}

/// The head of a `/echo` response. `len`: the request's Content-Length, or `None` for a
/// chunked request, echoed as a chunked response (its length is unknown until it ends).
pub(crate) fn echo_head(out: &mut PoolBuf, r: &Reply<'_>, len: Option<u64>) {
    let mut h = ResponseHead::new(out, 200);
    h.static_header(KnownHeader::ContentType, b"application/octet-stream");
    match len {
        Some(n) => {
            h.content_length(n);
        }
        None => {
            h.chunked();
        }
    }
    common(&mut h, r);
    h.finish();
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
    fn the_plaintext_prefix_is_what_the_builder_writes() {
        let pool = bufslab::Pool::new();
        let date = DateCache::from_unix(784_111_777);
        for persist in [Persist::Default, Persist::KeepAlive10, Persist::Close] {
            for head_only in [false, true] {
                let r = Reply {
                    date: &date,
                    persist,
                    head_only,
                };
                let mut fast = pool.get(4096).unwrap();
                plaintext(&mut fast, &r);
                let mut built = pool.get(4096).unwrap();
                fixed(&mut built, &r, 200, b"text/plain", PLAINTEXT, None);
                assert_eq!(&fast[..], &built[..], "{persist:?}, head_only {head_only}");
            }
        }
    }

    #[test]
    fn json_is_serialized_in_place() {
        let pool = bufslab::Pool::new();
        let mut out = pool.get(4096).unwrap();
        let date = DateCache::from_unix(784_111_777);
        let r = Reply {
            date: &date,
            persist: Persist::Default,
            head_only: false,
        };
        hello_json(&mut out, &r).unwrap();
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"));
        assert!(text.contains("\r\nContent-Length: 27\r\n"));
        assert!(text.ends_with("\r\n\r\n{\"message\":\"Hello, World!\"}"));
    }
}
