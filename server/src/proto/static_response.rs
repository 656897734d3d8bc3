//! Responses built once and sent many times ([`StaticResponse`], [`StaticHead`]), and the one
//! check every header line a service adds goes through ([`header_line`]), for [`Response`] and
//! [`Switch`] alike.
//!
//! [`Response`]: crate::Response
//! [`Switch`]: crate::Switch

#[cfg(doc)]
use crate::{Exchange, Response};
use bufslab_http::{
    is_field_name, is_field_value, status_allows_content, KnownHeader, ResponseHead,
};

use crate::response_error::ResponseError;

/// A response whose status line, headers and body are fixed: built once, at start-up, and sent
/// with [`Exchange::send_static`] for the cost of two copies and the `Date`.
///
/// # Examples
///
/// ```
/// use bufslab_http::KnownHeader;
/// use bufslab_server::StaticResponse;
///
/// let hello = StaticResponse::new(200, &[(KnownHeader::ContentType, b"text/plain")], b"Hello!")?;
/// assert_eq!(hello.body(), b"Hello!");
/// # Ok::<(), bufslab_server::ResponseError>(())
/// ```
#[derive(Clone, Debug)]
pub struct StaticResponse {
    pub(crate) head: bytes::Bytes,
    pub(crate) body: bytes::Bytes,
}

impl StaticResponse {
    /// Builds the response: status line, `headers` in order, then `Content-Length`.
    ///
    /// # Errors
    /// As [`Response::header`] and [`Response::body`] would refuse them: an interim status,
    /// a reserved or invalid header, content for a status without it.
    pub fn new(
        status: u16,
        headers: &[(KnownHeader, &[u8])],
        body: &'static [u8],
    ) -> Result<StaticResponse, ResponseError> {
        if !(200..=999).contains(&status) {
            return Err(ResponseError::InterimStatus(status));
        }
        let allows = status_allows_content(status);
        if !allows && !body.is_empty() {
            return Err(ResponseError::NoContentAllowed(status));
        }
        let mut head = build_head(status, headers)?;
        if allows {
            head.extend_from_slice(format!("\r\nContent-Length: {}", body.len()).as_bytes());
        }
        Ok(StaticResponse {
            head: head.into(),
            body: bytes::Bytes::from_static(body),
        })
    }

    /// The body.
    #[must_use]
    pub fn body(&self) -> &[u8] {
        &self.body
    }
}

/// A status line and headers fixed at start-up, for responses whose body is not: start one
/// with [`Exchange::respond_with`], which copies them at once, then add headers and end it as
/// any [`Response`].
///
/// # Examples
///
/// ```
/// use bufslab_http::KnownHeader;
/// use bufslab_server::StaticHead;
///
/// let json = StaticHead::new(200, &[(KnownHeader::ContentType, b"application/json")])?;
/// assert_eq!(json.status(), 200);
/// # Ok::<(), bufslab_server::ResponseError>(())
/// ```
#[derive(Clone, Debug)]
pub struct StaticHead {
    pub(crate) head: bytes::Bytes,
    pub(crate) status: u16,
}

impl StaticHead {
    /// Builds the status line and `headers`, in order.
    ///
    /// # Errors
    /// As [`Response::header`] would refuse them, and an interim status.
    pub fn new(status: u16, headers: &[(KnownHeader, &[u8])]) -> Result<StaticHead, ResponseError> {
        Ok(StaticHead {
            head: build_head(status, headers)?.into(),
            status,
        })
    }

    /// The status.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.status
    }
}

/// The status line and header lines of a precomputed head, checked as [`Response`] checks
/// them.
fn build_head(status: u16, headers: &[(KnownHeader, &[u8])]) -> Result<Vec<u8>, ResponseError> {
    if !(200..=999).contains(&status) {
        return Err(ResponseError::InterimStatus(status));
    }
    let mut head = Vec::with_capacity(256);
    let mut h = ResponseHead::new(&mut head, status);
    for &(name, value) in headers {
        if is_reserved(name) {
            return Err(ResponseError::ReservedHeader);
        }
        h.header(name, value)
            .map_err(|_| ResponseError::InvalidHeader)?;
    }
    Ok(head)
}

/// `header`, `header_raw` and the line they share, for a head a service builds (`Response`,
/// `Switch`: a struct with fields `ex: &mut Exchange` and `error: Option<ResponseError>`), the
/// line written by `Exchange::$put`. Every line goes through [`header_line`]; the first refusal
/// spoils the head, and later lines are not written.
macro_rules! header_methods {
    ($put:ident) => {
        /// Adds a known header. The value is checked (no control byte but HTAB, no DEL), so
        /// one taken from input cannot inject a header; the headers that frame the message or
        /// govern the connection are the engine's.
        pub fn header(self, name: KnownHeader, value: &[u8]) -> Self {
            self.line($crate::static_response::HeaderName::Known(name), value)
        }

        /// Adds any header, after checking the name (a token) and the value.
        pub fn header_raw(self, name: &[u8], value: &[u8]) -> Self {
            self.line($crate::static_response::HeaderName::Raw(name), value)
        }

        fn line(mut self, name: $crate::static_response::HeaderName<'_>, value: &[u8]) -> Self {
            if self.error.is_none() {
                let written = $crate::static_response::header_line(name, value)
                    .and_then(|name| self.ex.$put(&[b"\r\n", name, b": ", value]));
                self.error = written.err();
            }
            self
        }
    };
}
pub(crate) use header_methods;

/// A header name a service adds to a head it builds: known, or any bytes to be checked.
#[derive(Clone, Copy)]
pub(crate) enum HeaderName<'n> {
    Known(KnownHeader),
    Raw(&'n [u8]),
}

/// The checks every header a service adds goes through, whichever head it goes into: the
/// name to write (a known one in its canonical spelling, whichever way it was given), or why
/// the line is refused: a header only the engine writes, a name that is not a token, or a
/// value with a control byte other than HTAB (which could inject a header).
pub(crate) fn header_line<'n>(
    name: HeaderName<'n>,
    value: &[u8],
) -> Result<&'n [u8], ResponseError> {
    let known = match name {
        HeaderName::Known(k) => Some(k),
        HeaderName::Raw(raw) => KnownHeader::from_bytes(raw),
    };
    let name = match (known, name) {
        (Some(k), _) if is_reserved(k) => return Err(ResponseError::ReservedHeader),
        (Some(k), _) => k.canonical().as_bytes(),
        (None, HeaderName::Raw(raw)) if is_field_name(raw) => raw,
        (None, _) => return Err(ResponseError::InvalidHeader),
    };
    if !is_field_value(value) {
        return Err(ResponseError::InvalidHeader);
    }
    Ok(name)
}

/// Headers only the engine writes: they frame the message or govern the connection.
pub(crate) fn is_reserved(name: KnownHeader) -> bool {
    matches!(
        name,
        KnownHeader::ContentLength
            | KnownHeader::TransferEncoding
            | KnownHeader::Connection
            | KnownHeader::Date
            | KnownHeader::KeepAlive
            | KnownHeader::Upgrade
            | KnownHeader::Trailer
            | KnownHeader::Te
            | KnownHeader::ProxyConnection
    )
}
