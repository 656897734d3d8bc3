//! Why a response could not be written as asked: the error every response-writing call of
//! the service API returns.

#[cfg(doc)]
use crate::{Exchange, Response, StaticResponse};
use std::fmt;

/// Why a response could not be written as asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseError {
    /// A response was already started for this request.
    AlreadyStarted,
    /// Body bytes were written with no response started, or after it ended.
    NotStreaming,
    /// A header name that is not a token, or a value with a control byte (RFC 9110 §5.5).
    InvalidHeader,
    /// A header the engine writes itself: `Content-Length`, `Transfer-Encoding`,
    /// `Connection`, `Date`, `Keep-Alive`, `Upgrade` (offered with
    /// [`Response::offer_upgrade`](crate::Response::offer_upgrade)), `Trailer`, `TE`.
    ReservedHeader,
    /// A final response needs a status of 200..=999; 1xx are the engine's (`100 Continue`).
    InterimStatus(u16),
    /// This status never has content (1xx, 204, 304), and content was given.
    NoContentAllowed(u16),
    /// More body bytes than the announced `Content-Length`.
    LengthExceeded,
    /// The writer given to [`Response::body_with`] failed (its body did not fit, say).
    BodyNotWritten,
    /// The output could not take the bytes: the pool has no block (a `503` answers the
    /// request in the response's place), or a streamed body wrote more than
    /// [`Exchange::write_room`] into a full output queue.
    NoRoom,
    /// A whole body (given to [`Response::body`], [`Response::body_with`] or a
    /// [`StaticResponse`]) of `len` bytes is over `limit`, the size every response is promised
    /// room for ([`Config::whole_body_limit`](crate::Config::whole_body_limit)): stream it
    /// ([`Response::stream`], [`Exchange::pull`]) or hand it over owned
    /// ([`Response::body_owned`]).
    TooLarge {
        /// The body's length.
        len: usize,
        /// The most a whole body may hold.
        limit: usize,
    },
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseError::AlreadyStarted => f.write_str("a response was already started"),
            ResponseError::NotStreaming => f.write_str("no response body is being written"),
            ResponseError::InvalidHeader => f.write_str("invalid header name or value"),
            ResponseError::ReservedHeader => {
                f.write_str("framing and connection headers are written by the engine")
            }
            ResponseError::InterimStatus(s) => write!(f, "status {s} is not a final status"),
            ResponseError::NoContentAllowed(s) => write!(f, "a {s} response has no content"),
            ResponseError::LengthExceeded => {
                f.write_str("more body bytes than the announced Content-Length")
            }
            ResponseError::BodyNotWritten => f.write_str("the body writer failed"),
            ResponseError::NoRoom => f.write_str("no output room (pool empty, or queue full)"),
            ResponseError::TooLarge { len, limit } => write!(
                f,
                "a whole body of {len} bytes is over the {limit}-byte limit: stream it or hand it over owned"
            ),
        }
    }
}

impl std::error::Error for ResponseError {}
