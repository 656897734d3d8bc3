//! The one error type of the crate.
//!
//! Every way a request or response head or a body can be malformed maps to exactly one
//! variant, and every variant knows the status code a server should answer with, so a server
//! can turn any parse failure into a response without a second table of its own.

use core::fmt;

/// Why a head or body was rejected.
///
/// [`Error::status`] gives the status code a server should send before closing the connection
/// (a server must close after any framing error, because it can no longer tell where the next
/// request starts: RFC 9112 §6.3, §11.2). A client that gets an error from
/// [`ResponseParser`](crate::ResponseParser) closes the connection too; a gateway answers 502.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    // ---- request line (RFC 9112 §3) ----
    /// The method is empty or contains a byte that is not a `tchar` (RFC 9110 §9.1, §5.6.2).
    InvalidMethod,
    /// The request-target is empty, contains a byte outside `%x21-7E` or a `#` (a fragment,
    /// which no target form has: RFC 9110 §7.1), is not in a form the method allows, or its
    /// authority is not `uri-host [ ":" port ]` (userinfo included; an `http` URI needs a
    /// host) (RFC 9112 §3.2, RFC 9110 §4.2).
    InvalidTarget,
    /// The request line is not `method SP request-target SP HTTP-version` (RFC 9112 §3).
    InvalidRequestLine,
    /// The HTTP-version is not `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3).
    InvalidVersion,
    /// A well-formed version whose major version is not 1 (RFC 9110 §15.6.6). A higher minor
    /// version, `HTTP/1.2` say, is parsed as HTTP/1.1 (RFC 9112 §2.3).
    UnsupportedVersion,
    /// The HTTP/2 connection preface `PRI * HTTP/2.0` arrived on an HTTP/1 connection
    /// (RFC 9113 §3.4).
    Http2Preface,
    /// The request line is longer than [`Config::with_max_request_line`](crate::Config::with_max_request_line)
    /// (RFC 9112 §3: 414 URI Too Long).
    RequestLineTooLong,

    // ---- status line (RFC 9112 §4), responses only ----
    /// The status line is not `HTTP-version SP status-code SP reason-phrase`: no SP after the
    /// code (it is required even before an empty reason), or a control byte other than HTAB,
    /// or DEL, in the reason phrase (RFC 9112 §4).
    InvalidStatusLine,
    /// The status code is not three digits, or not in `100..=599` (RFC 9110 §15).
    InvalidStatusCode,

    // ---- line and field syntax (RFC 9112 §2.2, §5) ----
    /// A CR not followed by LF (RFC 9112 §2.2).
    BareCr,
    /// A bare LF line ending while [`Config::with_allow_bare_lf`](crate::Config::with_allow_bare_lf) is off
    /// (RFC 9112 §2.2).
    BareLf,
    /// A field name is empty or contains a byte that is not a `tchar` (RFC 9110 §5.1).
    InvalidHeaderName,
    /// Whitespace between a field name and the colon (RFC 9112 §5.1: MUST reject with 400).
    WhitespaceBeforeColon,
    /// A line starting with SP or HTAB: obsolete line folding, or whitespace between the request
    /// line and the first field (RFC 9112 §5.2, §2.2).
    ObsFold,
    /// A field value contains NUL, a control character or DEL (RFC 9110 §5.5).
    InvalidHeaderValue,
    /// The head is larger than [`Config::with_max_head_bytes`](crate::Config::with_max_head_bytes):
    /// more than that many bytes arrived without its end (RFC 6585 §5: 431).
    HeadTooLarge,
    /// The head did not end within the caller's read buffer, which is full
    /// ([`Parser::parse_with_capacity`](crate::Parser::parse_with_capacity)), though it is not
    /// yet over [`Config::with_max_head_bytes`](crate::Config::with_max_head_bytes): no more
    /// bytes can arrive, so it would otherwise stay partial for ever (RFC 6585 §5: 431). A
    /// caller that can move the head into a larger buffer may do so and parse it again; this
    /// is told apart from [`Error::HeadTooLarge`] for that reason.
    HeadExceedsBuffer,
    /// More field lines than header slots or [`Config::with_max_headers`](crate::Config::with_max_headers)
    /// (RFC 6585 §5: 431). Never a silent truncation.
    TooManyHeaders,

    // ---- framing (RFC 9112 §6) ----
    /// Content-Length is not `1*DIGIT`, overflows `u64`, or lists different values
    /// (RFC 9110 §8.6, RFC 9112 §6.3 point 5).
    InvalidContentLength,
    /// Content-Length and Transfer-Encoding in the same request (RFC 9112 §6.1: a server MAY
    /// reject; doing so closes the request-smuggling hole).
    ContentLengthWithTransferEncoding,
    /// Transfer-Encoding is malformed, `chunked` is not the final coding or appears twice
    /// (RFC 9112 §6.1, §6.3 point 4).
    InvalidTransferEncoding,
    /// Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1: the framing must be treated as
    /// faulty).
    TransferEncodingInHttp10,
    /// A transfer coding other than `chunked` (RFC 9112 §6.1: SHOULD answer 501).
    UnsupportedTransferCoding,
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2: MUST answer 400).
    MissingHost,
    /// More than one Host field line (RFC 9112 §3.2: MUST answer 400).
    MultipleHost,
    /// A Host value that is not `uri-host [ ":" port ]` (RFC 9112 §3.2: MUST answer 400).
    InvalidHost,
    /// An Expect value other than `100-continue` (RFC 9110 §10.1.1: MAY answer 417).
    UnsupportedExpectation,

    // ---- chunked body (RFC 9112 §7.1) ----
    /// A chunk-size line is not `1*HEXDIG [ chunk-ext ] CRLF`.
    InvalidChunkSize,
    /// A chunk size does not fit in `u64`.
    ChunkSizeOverflow,
    /// A chunk extension is not `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`
    /// (RFC 9112 §7.1.1), or the body's extensions are longer than
    /// [`Config::with_max_chunk_extension_bytes`](crate::Config::with_max_chunk_extension_bytes).
    InvalidChunkExtension,
    /// Chunk data is not followed by CRLF.
    InvalidChunkTerminator,
    /// A trailer line is malformed or the trailer section is longer than the decoder's limit.
    InvalidTrailer,
}

impl Error {
    /// The status code a server should answer with.
    ///
    /// 400 for malformed messages, 414 for an over-long request line, 431 for an over-large head,
    /// 417 for an unknown expectation, 501 for an unknown transfer coding and 505 for an
    /// unsupported version. The status-line errors, which only a response can cause, are 502
    /// (Bad Gateway, RFC 9110 §15.6.3): what a gateway answers for an invalid response.
    #[must_use]
    pub const fn status(self) -> u16 {
        match self {
            Error::InvalidStatusLine | Error::InvalidStatusCode => 502,
            Error::RequestLineTooLong => 414,
            Error::HeadTooLarge | Error::HeadExceedsBuffer | Error::TooManyHeaders => 431,
            Error::UnsupportedExpectation => 417,
            Error::UnsupportedTransferCoding => 501,
            Error::UnsupportedVersion | Error::Http2Preface => 505,
            _ => 400,
        }
    }

    /// A short, static description (the same text `Display` prints).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Error::InvalidMethod => "invalid method",
            Error::InvalidTarget => "invalid request-target",
            Error::InvalidRequestLine => "malformed request line",
            Error::InvalidVersion => "malformed HTTP version",
            Error::UnsupportedVersion => "unsupported HTTP version",
            Error::Http2Preface => "HTTP/2 connection preface on an HTTP/1 connection",
            Error::RequestLineTooLong => "request line too long",
            Error::InvalidStatusLine => "malformed status line",
            Error::InvalidStatusCode => "invalid status code",
            Error::BareCr => "CR not followed by LF",
            Error::BareLf => "bare LF line ending",
            Error::InvalidHeaderName => "invalid header field name",
            Error::WhitespaceBeforeColon => "whitespace between header field name and colon",
            Error::ObsFold => "obsolete line folding or leading whitespace in field line",
            Error::InvalidHeaderValue => "invalid byte in header field value",
            Error::HeadTooLarge => "head too large",
            Error::HeadExceedsBuffer => "head larger than the read buffer",
            Error::TooManyHeaders => "too many header fields",
            Error::InvalidContentLength => "invalid or conflicting Content-Length",
            Error::ContentLengthWithTransferEncoding => {
                "both Content-Length and Transfer-Encoding present"
            }
            Error::InvalidTransferEncoding => "invalid Transfer-Encoding: chunked must be final",
            Error::TransferEncodingInHttp10 => "Transfer-Encoding in an HTTP/1.0 request",
            Error::UnsupportedTransferCoding => "unsupported transfer coding",
            Error::MissingHost => "missing Host header",
            Error::MultipleHost => "more than one Host header",
            Error::InvalidHost => "invalid Host header",
            Error::UnsupportedExpectation => "unsupported expectation",
            Error::InvalidChunkSize => "invalid chunk size line",
            Error::ChunkSizeOverflow => "chunk size overflow",
            Error::InvalidChunkExtension => "invalid or too long chunk extension",
            Error::InvalidChunkTerminator => "chunk data not followed by CRLF",
            Error::InvalidTrailer => "invalid or too large trailer section",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for Error {}
