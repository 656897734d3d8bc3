//! Limits and permitted leniencies, shared by the head parser and the body decoders.

use crate::Backend;

/// Limits and the leniencies RFC 9112 permits. Defaults are strict.
///
/// Fields are private so that new limits can be added without breaking callers: start from
/// [`Config::DEFAULT`] (or `Config::default()`) and change what you need with the `with_*`
/// setters, which are `const fn` so a configuration can be a `const`.
///
/// # Examples
///
/// ```
/// use bufslab_http::{Config, Parser};
///
/// const SMALL: Config = Config::DEFAULT.with_max_head_bytes(4096).with_max_headers(32);
/// let parser = Parser::new(SMALL);
/// assert_eq!(parser.config().max_head_bytes(), 4096);
/// assert_eq!(parser.config().max_request_line(), Config::DEFAULT.max_request_line());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    max_head_bytes: usize,
    max_request_line: usize,
    max_headers: usize,
    allow_bare_lf: bool,
    max_chunk_extension_bytes: u64,
    max_trailer_bytes: u64,
    backend: Backend,
}

impl Config {
    /// The strict defaults: 16 KiB heads, 8 KiB request lines, 100 field lines, no bare LF,
    /// 16 KiB of chunk extensions and 16 KiB of trailers per body.
    pub const DEFAULT: Config = Config {
        max_head_bytes: 16 * 1024,
        max_request_line: 8 * 1024,
        max_headers: 100,
        allow_bare_lf: false,
        // hyper uses the same figure.
        max_chunk_extension_bytes: 16 * 1024,
        max_trailer_bytes: 16 * 1024,
        backend: Backend::Auto,
    };

    /// Largest accepted head, request line and final empty line included: a head of exactly
    /// `n` bytes is accepted. A head that has not ended once more than `n` bytes have arrived
    /// is rejected with [`Error::HeadTooLarge`](crate::Error::HeadTooLarge) (431) at that
    /// call, without waiting for the rest; with exactly `n` bytes and no end yet, the answer
    /// is still [`Status::Partial`](crate::Status::Partial). A read buffer therefore needs
    /// room for `n + 1` bytes for that verdict to come; with a smaller one, parse with
    /// [`Parser::parse_with_capacity`](crate::Parser::parse_with_capacity), which reports a
    /// full buffer instead of `Partial`. Values above `u32::MAX` are clamped.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{Config, Error, HeaderSlot, Parser};
    ///
    /// let mut parser = Parser::new(Config::DEFAULT.with_max_head_bytes(32));
    /// let mut slots = [HeaderSlot::EMPTY; 4];
    /// let head = b"GET / HTTP/1.1\r\nHost: a\r\nX: 123456789\r\n\r\n";
    /// // 32 bytes without the end of the head: not over the limit yet.
    /// assert!(parser.parse(&head[..32], &mut slots)?.is_partial());
    /// // More than 32: over it.
    /// assert_eq!(parser.parse(&head[..33], &mut slots).err(), Some(Error::HeadTooLarge));
    /// # Ok::<(), Error>(())
    /// ```
    #[must_use]
    pub const fn with_max_head_bytes(mut self, n: usize) -> Config {
        self.max_head_bytes = n;
        self
    }

    /// Longest accepted request line (without its line ending). Longer lines are rejected
    /// with [`Error::RequestLineTooLong`](crate::Error::RequestLineTooLong) (414, RFC 9112 §3).
    #[must_use]
    pub const fn with_max_request_line(mut self, n: usize) -> Config {
        self.max_request_line = n;
        self
    }

    /// Most header field lines; the effective limit is the smaller of this and the number of
    /// slots passed to [`Parser::parse`](crate::Parser::parse). More is
    /// [`Error::TooManyHeaders`](crate::Error::TooManyHeaders) (431).
    #[must_use]
    pub const fn with_max_headers(mut self, n: usize) -> Config {
        self.max_headers = n;
        self
    }

    /// Accept a bare LF as a line ending in the head (RFC 9112 §2.2: a recipient MAY). Off by
    /// default: a bare LF is rejected with [`Error::BareLf`](crate::Error::BareLf), because
    /// front ends that disagree on line endings are a request-smuggling vector. Chunked
    /// framing always requires CR LF.
    #[must_use]
    pub const fn with_allow_bare_lf(mut self, allow: bool) -> Config {
        self.allow_bare_lf = allow;
        self
    }

    /// Most chunk-extension bytes (everything between a chunk size and its CR, summed over
    /// the whole body) a [`ChunkedDecoder`](crate::ChunkedDecoder) accepts before failing with
    /// [`Error::InvalidChunkExtension`](crate::Error::InvalidChunkExtension), so a peer cannot
    /// make the server spin on framing that carries no data.
    #[must_use]
    pub const fn with_max_chunk_extension_bytes(mut self, n: u64) -> Config {
        self.max_chunk_extension_bytes = n;
        self
    }

    /// Most trailer-section bytes a [`ChunkedDecoder`](crate::ChunkedDecoder) accepts before
    /// failing with [`Error::InvalidTrailer`](crate::Error::InvalidTrailer).
    #[must_use]
    pub const fn with_max_trailer_bytes(mut self, n: u64) -> Config {
        self.max_trailer_bytes = n;
        self
    }

    /// Which implementation scans the bytes of a head ([`Backend::Auto`] by default: the one
    /// measured fastest). Every backend gives the same answers; forcing one is for benchmarks
    /// and tests. A backend the CPU lacks runs as the nearest one it has
    /// ([`Backend::resolved`]), so a configuration is valid on every machine.
    #[must_use]
    pub const fn with_backend(mut self, backend: Backend) -> Config {
        self.backend = backend;
        self
    }

    /// See [`with_max_head_bytes`](Self::with_max_head_bytes).
    #[must_use]
    pub const fn max_head_bytes(&self) -> usize {
        self.max_head_bytes
    }

    /// See [`with_max_request_line`](Self::with_max_request_line).
    #[must_use]
    pub const fn max_request_line(&self) -> usize {
        self.max_request_line
    }

    /// See [`with_max_headers`](Self::with_max_headers).
    #[must_use]
    pub const fn max_headers(&self) -> usize {
        self.max_headers
    }

    /// See [`with_allow_bare_lf`](Self::with_allow_bare_lf).
    #[must_use]
    pub const fn allow_bare_lf(&self) -> bool {
        self.allow_bare_lf
    }

    /// See [`with_max_chunk_extension_bytes`](Self::with_max_chunk_extension_bytes).
    #[must_use]
    pub const fn max_chunk_extension_bytes(&self) -> u64 {
        self.max_chunk_extension_bytes
    }

    /// See [`with_max_trailer_bytes`](Self::with_max_trailer_bytes).
    #[must_use]
    pub const fn max_trailer_bytes(&self) -> u64 {
        self.max_trailer_bytes
    }

    /// See [`with_backend`](Self::with_backend).
    #[must_use]
    pub const fn backend(&self) -> Backend {
        self.backend
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}
