//! `bufslab-http`: a zero-copy HTTP/1.1 codec that never allocates and never panics.
//!
//! * [`Parser`] / [`parse_request`]: a strict (RFC 9110 / 9112) request head parser. Method,
//!   target, version and header values are slices of your buffer; header storage is your
//!   [`HeaderSlot`] array, reused across requests; names are recognised into [`KnownHeader`]
//!   without allocation; body framing ([`BodyFraming`]), `Connection`, `Expect` and `Host` are
//!   extracted in the same pass. On partial input it remembers how far it got.
//! * [`ChunkedDecoder`], [`LengthDecoder`], [`BodyDecoder`]: body readers that hand out
//!   sub-slices of the input (no copy) and can skip a body.
//! * [`ResponseHead`]: writes a response head into any [`bytes::BufMut`] from precomputed
//!   constants, with `itoa` for Content-Length and a [`DateCache`] for `Date`; it never frames
//!   content for a status that has none ([`status_allows_content`]).
//! * [`ResponseParser`] / [`parse_response`]: the client side, a response head parser as
//!   strict as the request parser (it shares its field-line code), with the body's framing
//!   ([`ResponseFraming`]) worked out from RFC 9112 §6.3 and the request's method.
//! * [`Error`]: one error enum; [`Error::status`] is the status code to answer with.
//! * [`Backend`]: which implementation scans a head's bytes (SSE2 search by default on
//!   x86_64, an AVX2 structural index, a portable one), chosen in [`Config`]; all give the
//!   same answers.
//!
//! ```
//! use bufslab_http::{
//!     BodyDecoder, BodyFraming, DateCache, HeaderSlot, KnownHeader, Parser, ResponseHead,
//!     Status,
//! };
//!
//! // Per connection: a parser and header slots, allocated once.
//! let mut parser = Parser::default();
//! let mut slots = [HeaderSlot::EMPTY; 64];
//! let mut date = DateCache::from_unix(1_700_000_000); // refresh once per second or batch
//!
//! // The request arrives in two reads; the second call does not rescan the first line.
//! let wire = b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\n";
//! assert!(parser.parse(&wire[..25], &mut slots)?.is_partial());
//! let Status::Complete(req) = parser.parse(wire, &mut slots)? else { unreachable!() };
//! assert_eq!(req.path(), b"/echo");
//! assert_eq!(req.get(KnownHeader::Host), Some(&b"a"[..]));
//! assert_eq!(req.framing(), BodyFraming::Length(5));
//! assert!(req.keep_alive());
//!
//! // The body is a slice of the same buffer.
//! let mut body = BodyDecoder::new(req.framing());
//! let step = body.decode(&wire[req.head_len()..])?;
//! assert_eq!((step.data, step.done), (&b"hello"[..], true));
//! let next_request_starts_at = req.head_len() + step.consumed;
//! assert_eq!(&wire[next_request_starts_at..next_request_starts_at + 3], b"GET");
//!
//! // Encode the response.
//! date.refresh_unix(1_700_000_001);
//! let mut out = bytes::BytesMut::with_capacity(256);
//! ResponseHead::new(&mut out, 200)
//!     .static_header(KnownHeader::ContentType, b"text/plain")
//!     .content_length(5)
//!     .date(&date)
//!     .finish();
//! out.extend_from_slice(step.data);
//! assert!(out.starts_with(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"));
//! # Ok::<(), bufslab_http::Error>(())
//! ```
//!
//! A parse error maps to a response with [`Error::status`]; after any error the connection
//! must be closed, because the peer's framing can no longer be trusted.
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backend;
mod body;
mod chunked;
mod config;
mod date;
mod decoded;
mod error;
mod fields;
mod framing;
mod head;
mod header_name;
#[cfg(feature = "http")]
mod http_compat;
mod index;
mod parse;
mod parsed_response;
mod request;
mod response;
mod response_parse;
mod scan;
mod scanner;
// The only module allowed `unsafe`: vector loads and `target_feature` calls, each argued
// sound in its module's docs.
#[allow(unsafe_code)]
mod simd;
mod uri;

pub use backend::Backend;
pub use body::{BodyDecoder, LengthDecoder};
pub use chunked::ChunkedDecoder;
pub use config::Config;
pub use date::{format_imf_fixdate, DateCache, DATE_LEN};
pub use decoded::Decoded;
pub use error::Error;
pub use fields::{Header, HeaderSlot};
pub use header_name::{HeaderName, KnownHeader};
pub use parse::{parse_request, Parser, Status};
pub use parsed_response::{Response, ResponseFraming};
pub use request::{BodyFraming, Method, Request, TargetForm, Version};
pub use response::{
    is_field_name, is_field_value, reason, status_allows_content, status_line, write_chunk,
    write_last_chunk, ResponseHead, CONTINUE_100,
};
pub use response_parse::{parse_response, ResponseParser};

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
