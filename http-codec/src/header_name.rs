//! Header field names: a known-header enum and allocation-free, case-insensitive recognition.
//!
//! The head parsers recognise only the names their framing needs (`crate::framing`); every
//! other name is classified here when a caller reads it: a jump on the length and a compare of
//! the name's first and last 8 bytes, case-folded, against each known name of that length
//! (`lookup`), and of the middle for names over 16 bytes. No allocation, no lowercase copy.

use core::fmt;

use crate::scan::{load4, load8};

macro_rules! known_headers {
    ($( $(#[$doc:meta])* $variant:ident => $lower:literal, $canon:literal; )+) => {
        /// A header field name the crate recognises: every name the `http` crate's `http::header`
        /// module defines, plus a few that browsers, proxies and WebSocket clients send on almost
        /// every request.
        ///
        /// Recognition is ASCII case-insensitive (RFC 9110 §5.1).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        #[non_exhaustive]
        pub enum KnownHeader {
            $( $(#[$doc])* $variant, )+
        }

        impl KnownHeader {
            /// Every known header, in declaration order (`ALL[h as usize] == h`).
            pub const ALL: &'static [KnownHeader] = &[ $( KnownHeader::$variant, )+ ];

            /// The lowercase name, as HTTP/2 and the `http` crate spell it.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                LOWER[self as usize]
            }

            /// The conventional Title-Case spelling used when writing responses.
            #[must_use]
            pub const fn canonical(self) -> &'static str {
                match self { $( KnownHeader::$variant => $canon, )+ }
            }

            /// `"\r\n" + canonical + ": "`: the precomputed bytes the response encoder writes
            /// before a value (the CRLF ends the previous line; see `response.rs`).
            #[inline]
            pub(crate) const fn line_prefix(self) -> &'static [u8] {
                match self { $( KnownHeader::$variant => concat!("\r\n", $canon, ": ").as_bytes(), )+ }
            }
        }

        const LOWER: &[&str] = &[ $( $lower, )+ ];

        /// Per-name recognition constants (length and key), one module per variant because
        /// `macro_rules!` cannot build identifiers; match patterns need named constants.
        #[allow(non_snake_case)]
        mod keys {
            $( pub(super) mod $variant {
                pub(in super::super) const LEN: usize = $lower.len();
                pub(in super::super) const KEY: u128 = super::super::key_of($lower.as_bytes());
            } )+
        }

        /// Length first, then the key: rustc lowers this to a jump on the length and a few
        /// immediate compares, with no table loads on the dependency chain. A duplicate
        /// `(LEN, KEY)` would be an unreachable-pattern warning (denied in CI).
        #[inline(always)]
        fn lookup(len: usize, key: u128) -> Option<KnownHeader> {
            match (len, key) {
                $( (keys::$variant::LEN, keys::$variant::KEY) => Some(KnownHeader::$variant), )+
                _ => None,
            }
        }
    };
}

known_headers! {
    /// `Accept` (RFC 9110 §12.5.1)
    Accept => "accept", "Accept";
    /// `Accept-Charset` (RFC 9110 §12.5.2)
    AcceptCharset => "accept-charset", "Accept-Charset";
    /// `Accept-Encoding` (RFC 9110 §12.5.3)
    AcceptEncoding => "accept-encoding", "Accept-Encoding";
    /// `Accept-Language` (RFC 9110 §12.5.4)
    AcceptLanguage => "accept-language", "Accept-Language";
    /// `Accept-Ranges` (RFC 9110 §14.3)
    AcceptRanges => "accept-ranges", "Accept-Ranges";
    /// `Access-Control-Allow-Credentials` (Fetch)
    AccessControlAllowCredentials => "access-control-allow-credentials", "Access-Control-Allow-Credentials";
    /// `Access-Control-Allow-Headers` (Fetch)
    AccessControlAllowHeaders => "access-control-allow-headers", "Access-Control-Allow-Headers";
    /// `Access-Control-Allow-Methods` (Fetch)
    AccessControlAllowMethods => "access-control-allow-methods", "Access-Control-Allow-Methods";
    /// `Access-Control-Allow-Origin` (Fetch)
    AccessControlAllowOrigin => "access-control-allow-origin", "Access-Control-Allow-Origin";
    /// `Access-Control-Expose-Headers` (Fetch)
    AccessControlExposeHeaders => "access-control-expose-headers", "Access-Control-Expose-Headers";
    /// `Access-Control-Max-Age` (Fetch)
    AccessControlMaxAge => "access-control-max-age", "Access-Control-Max-Age";
    /// `Access-Control-Request-Headers` (Fetch)
    AccessControlRequestHeaders => "access-control-request-headers", "Access-Control-Request-Headers";
    /// `Access-Control-Request-Method` (Fetch)
    AccessControlRequestMethod => "access-control-request-method", "Access-Control-Request-Method";
    /// `Age` (RFC 9111 §5.1)
    Age => "age", "Age";
    /// `Allow` (RFC 9110 §10.2.1)
    Allow => "allow", "Allow";
    /// `Alt-Svc` (RFC 7838)
    AltSvc => "alt-svc", "Alt-Svc";
    /// `Authorization` (RFC 9110 §11.6.2)
    Authorization => "authorization", "Authorization";
    /// `Cache-Control` (RFC 9111 §5.2)
    CacheControl => "cache-control", "Cache-Control";
    /// `Cache-Status` (RFC 9211)
    CacheStatus => "cache-status", "Cache-Status";
    /// `CDN-Cache-Control` (RFC 9213)
    CdnCacheControl => "cdn-cache-control", "CDN-Cache-Control";
    /// `Connection` (RFC 9110 §7.6.1)
    Connection => "connection", "Connection";
    /// `Content-Disposition` (RFC 6266)
    ContentDisposition => "content-disposition", "Content-Disposition";
    /// `Content-Encoding` (RFC 9110 §8.4)
    ContentEncoding => "content-encoding", "Content-Encoding";
    /// `Content-Language` (RFC 9110 §8.5)
    ContentLanguage => "content-language", "Content-Language";
    /// `Content-Length` (RFC 9110 §8.6)
    ContentLength => "content-length", "Content-Length";
    /// `Content-Location` (RFC 9110 §8.7)
    ContentLocation => "content-location", "Content-Location";
    /// `Content-Range` (RFC 9110 §14.4)
    ContentRange => "content-range", "Content-Range";
    /// `Content-Security-Policy` (CSP3)
    ContentSecurityPolicy => "content-security-policy", "Content-Security-Policy";
    /// `Content-Security-Policy-Report-Only` (CSP3)
    ContentSecurityPolicyReportOnly => "content-security-policy-report-only", "Content-Security-Policy-Report-Only";
    /// `Content-Type` (RFC 9110 §8.3)
    ContentType => "content-type", "Content-Type";
    /// `Cookie` (RFC 6265 §5.4)
    Cookie => "cookie", "Cookie";
    /// `DNT` (Tracking Preference Expression)
    Dnt => "dnt", "DNT";
    /// `Date` (RFC 9110 §6.6.1)
    Date => "date", "Date";
    /// `ETag` (RFC 9110 §8.8.3)
    Etag => "etag", "ETag";
    /// `Expect` (RFC 9110 §10.1.1)
    Expect => "expect", "Expect";
    /// `Expires` (RFC 9111 §5.3)
    Expires => "expires", "Expires";
    /// `Forwarded` (RFC 7239)
    Forwarded => "forwarded", "Forwarded";
    /// `From` (RFC 9110 §10.1.2)
    From => "from", "From";
    /// `Host` (RFC 9110 §7.2)
    Host => "host", "Host";
    /// `If-Match` (RFC 9110 §13.1.1)
    IfMatch => "if-match", "If-Match";
    /// `If-Modified-Since` (RFC 9110 §13.1.3)
    IfModifiedSince => "if-modified-since", "If-Modified-Since";
    /// `If-None-Match` (RFC 9110 §13.1.2)
    IfNoneMatch => "if-none-match", "If-None-Match";
    /// `If-Range` (RFC 9110 §13.1.5)
    IfRange => "if-range", "If-Range";
    /// `If-Unmodified-Since` (RFC 9110 §13.1.4)
    IfUnmodifiedSince => "if-unmodified-since", "If-Unmodified-Since";
    /// `Last-Modified` (RFC 9110 §8.8.2)
    LastModified => "last-modified", "Last-Modified";
    /// `Link` (RFC 8288)
    Link => "link", "Link";
    /// `Location` (RFC 9110 §10.2.2)
    Location => "location", "Location";
    /// `Max-Forwards` (RFC 9110 §7.6.2)
    MaxForwards => "max-forwards", "Max-Forwards";
    /// `Origin` (RFC 6454)
    Origin => "origin", "Origin";
    /// `Pragma` (RFC 9111 §5.4)
    Pragma => "pragma", "Pragma";
    /// `Proxy-Authenticate` (RFC 9110 §11.7.1)
    ProxyAuthenticate => "proxy-authenticate", "Proxy-Authenticate";
    /// `Proxy-Authorization` (RFC 9110 §11.7.2)
    ProxyAuthorization => "proxy-authorization", "Proxy-Authorization";
    /// `Public-Key-Pins` (RFC 7469)
    PublicKeyPins => "public-key-pins", "Public-Key-Pins";
    /// `Public-Key-Pins-Report-Only` (RFC 7469)
    PublicKeyPinsReportOnly => "public-key-pins-report-only", "Public-Key-Pins-Report-Only";
    /// `Range` (RFC 9110 §14.2)
    Range => "range", "Range";
    /// `Referer` (RFC 9110 §10.1.3)
    Referer => "referer", "Referer";
    /// `Referrer-Policy` (Referrer Policy)
    ReferrerPolicy => "referrer-policy", "Referrer-Policy";
    /// `Refresh` (HTML)
    Refresh => "refresh", "Refresh";
    /// `Retry-After` (RFC 9110 §10.2.3)
    RetryAfter => "retry-after", "Retry-After";
    /// `Sec-WebSocket-Accept` (RFC 6455)
    SecWebSocketAccept => "sec-websocket-accept", "Sec-WebSocket-Accept";
    /// `Sec-WebSocket-Extensions` (RFC 6455)
    SecWebSocketExtensions => "sec-websocket-extensions", "Sec-WebSocket-Extensions";
    /// `Sec-WebSocket-Key` (RFC 6455)
    SecWebSocketKey => "sec-websocket-key", "Sec-WebSocket-Key";
    /// `Sec-WebSocket-Protocol` (RFC 6455)
    SecWebSocketProtocol => "sec-websocket-protocol", "Sec-WebSocket-Protocol";
    /// `Sec-WebSocket-Version` (RFC 6455)
    SecWebSocketVersion => "sec-websocket-version", "Sec-WebSocket-Version";
    /// `Server` (RFC 9110 §10.2.4)
    Server => "server", "Server";
    /// `Set-Cookie` (RFC 6265 §4.1)
    SetCookie => "set-cookie", "Set-Cookie";
    /// `Strict-Transport-Security` (RFC 6797)
    StrictTransportSecurity => "strict-transport-security", "Strict-Transport-Security";
    /// `TE` (RFC 9110 §10.1.4)
    Te => "te", "TE";
    /// `Trailer` (RFC 9110 §6.6.2)
    Trailer => "trailer", "Trailer";
    /// `Transfer-Encoding` (RFC 9112 §6.1)
    TransferEncoding => "transfer-encoding", "Transfer-Encoding";
    /// `User-Agent` (RFC 9110 §10.1.5)
    UserAgent => "user-agent", "User-Agent";
    /// `Upgrade` (RFC 9110 §7.8)
    Upgrade => "upgrade", "Upgrade";
    /// `Upgrade-Insecure-Requests` (Upgrade Insecure Requests)
    UpgradeInsecureRequests => "upgrade-insecure-requests", "Upgrade-Insecure-Requests";
    /// `Vary` (RFC 9110 §12.5.5)
    Vary => "vary", "Vary";
    /// `Via` (RFC 9110 §7.6.3)
    Via => "via", "Via";
    /// `Warning` (RFC 7234 §5.5, obsolete but still defined by `http`)
    Warning => "warning", "Warning";
    /// `WWW-Authenticate` (RFC 9110 §11.6.1)
    WwwAuthenticate => "www-authenticate", "WWW-Authenticate";
    /// `X-Content-Type-Options` (Fetch)
    XContentTypeOptions => "x-content-type-options", "X-Content-Type-Options";
    /// `X-DNS-Prefetch-Control` (de facto)
    XDnsPrefetchControl => "x-dns-prefetch-control", "X-DNS-Prefetch-Control";
    /// `X-Frame-Options` (RFC 7034)
    XFrameOptions => "x-frame-options", "X-Frame-Options";
    /// `X-XSS-Protection` (de facto)
    XXssProtection => "x-xss-protection", "X-XSS-Protection";
    // ---- not in `http::header`, but on nearly every browser or proxy request ----
    /// `Keep-Alive` (RFC 2068 §19.7.1.1, still sent by HTTP/1.0 clients)
    KeepAlive => "keep-alive", "Keep-Alive";
    /// `Proxy-Connection` (non-standard, sent by old clients)
    ProxyConnection => "proxy-connection", "Proxy-Connection";
    /// `Priority` (RFC 9218)
    Priority => "priority", "Priority";
    /// `HTTP2-Settings` (RFC 7540 §3.2.1)
    Http2Settings => "http2-settings", "HTTP2-Settings";
    /// `Sec-Fetch-Site` (Fetch Metadata)
    SecFetchSite => "sec-fetch-site", "Sec-Fetch-Site";
    /// `Sec-Fetch-Mode` (Fetch Metadata)
    SecFetchMode => "sec-fetch-mode", "Sec-Fetch-Mode";
    /// `Sec-Fetch-Dest` (Fetch Metadata)
    SecFetchDest => "sec-fetch-dest", "Sec-Fetch-Dest";
    /// `Sec-Fetch-User` (Fetch Metadata)
    SecFetchUser => "sec-fetch-user", "Sec-Fetch-User";
    /// `Sec-CH-UA` (User-Agent Client Hints)
    SecChUa => "sec-ch-ua", "Sec-CH-UA";
    /// `Sec-CH-UA-Mobile` (User-Agent Client Hints)
    SecChUaMobile => "sec-ch-ua-mobile", "Sec-CH-UA-Mobile";
    /// `Sec-CH-UA-Platform` (User-Agent Client Hints)
    SecChUaPlatform => "sec-ch-ua-platform", "Sec-CH-UA-Platform";
    /// `X-Forwarded-For` (de facto)
    XForwardedFor => "x-forwarded-for", "X-Forwarded-For";
    /// `X-Forwarded-Host` (de facto)
    XForwardedHost => "x-forwarded-host", "X-Forwarded-Host";
    /// `X-Forwarded-Proto` (de facto)
    XForwardedProto => "x-forwarded-proto", "X-Forwarded-Proto";
    /// `X-Real-IP` (de facto)
    XRealIp => "x-real-ip", "X-Real-IP";
    /// `X-Request-ID` (de facto)
    XRequestId => "x-request-id", "X-Request-ID";
}

// ---------------------------------------------------------------------------------------------
// Recognition
// ---------------------------------------------------------------------------------------------

/// The recognition key of a (lowercase) name: two little-endian words that together cover
/// every byte — the first and last 8 bytes for names of 8+ bytes, the first and last 4 for
/// 4..=7 bytes, the bytes themselves below that. With the length, the key identifies names up
/// to 16 bytes exactly; longer names also compare their middle (see [`classify_token`]).
const fn key_of(n: &[u8]) -> u128 {
    let len = n.len();
    if len >= 8 {
        (word_at(n, 0, 8) as u128) | ((word_at(n, len - 8, 8) as u128) << 64)
    } else if len >= 4 {
        (word_at(n, 0, 4) as u128) | ((word_at(n, len - 4, 4) as u128) << 32)
    } else {
        word_at(n, 0, len) as u128
    }
}

const fn word_at(b: &[u8], at: usize, width: usize) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < width {
        w |= (b[at + i] as u64) << (8 * i);
        i += 1;
    }
    w
}

/// Recognises a name that contains no byte below 0x21.
///
/// Input is lowercased by folding with `| 0x20`. That is an exact ASCII lowercase only for
/// letters — it also maps CR (0x0D) to `-` and 0x10..=0x19 to digits — but known names contain
/// only `a-z`, `0-9` and `-`, so for input free of bytes below 0x21 a folded match implies an
/// exact case-insensitive match, and hence a valid token. The head parser guarantees that
/// precondition; the public [`KnownHeader::from_bytes`] re-checks exactly.
#[inline(always)]
pub(crate) fn classify_token(name: &[u8]) -> Option<KnownHeader> {
    const F8: u64 = 0x2020_2020_2020_2020;
    const F4: u64 = 0x2020_2020;
    let n = name.len();
    let key = if n >= 8 {
        u128::from(load8(name, 0) | F8) | (u128::from(load8(name, n - 8) | F8) << 64)
    } else if n >= 4 {
        u128::from(load4(name, 0) | F4) | (u128::from(load4(name, n - 4) | F4) << 32)
    } else {
        let mut w = 0u128;
        for (i, &b) in name.iter().enumerate() {
            w |= u128::from(b | 0x20) << (8 * i);
        }
        w
    };
    let known = lookup(n, key)?;
    if n > 16 {
        // The key covered the first and last 8 bytes; compare the middle too.
        let lower = known.as_str().as_bytes();
        let mut i = 8;
        while i + 8 < n {
            if load8(name, i) | F8 != load8(lower, i) {
                return None;
            }
            i += 8;
        }
    }
    Some(known)
}

impl KnownHeader {
    /// Recognises any byte string, ASCII case-insensitively; `None` if it is not a known name.
    ///
    /// ```
    /// use bufslab_http::KnownHeader;
    /// assert_eq!(KnownHeader::from_bytes(b"CONTENT-length"), Some(KnownHeader::ContentLength));
    /// assert_eq!(KnownHeader::from_bytes(b"content\rlength"), None);
    /// ```
    #[must_use]
    pub fn from_bytes(name: &[u8]) -> Option<KnownHeader> {
        // The fast fold is exact only on tokens; arbitrary input gets an exact check afterwards.
        let known = classify_token(name)?;
        known
            .as_str()
            .as_bytes()
            .eq_ignore_ascii_case(name)
            .then_some(known)
    }
}

impl fmt::Display for KnownHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field name from a parsed request: either recognised, or the raw bytes as received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeaderName<'b> {
    /// A recognised name (case-insensitively).
    Known(KnownHeader),
    /// Any other name, exactly as received (case preserved, never allocated).
    Other(&'b [u8]),
}

impl<'b> HeaderName<'b> {
    /// The name bytes: lowercase for known names, as received for others.
    #[must_use]
    pub fn as_bytes(&self) -> &'b [u8] {
        match *self {
            HeaderName::Known(k) => k.as_str().as_bytes(),
            HeaderName::Other(raw) => raw,
        }
    }

    /// The known header, if this name was recognised.
    #[must_use]
    pub const fn known(&self) -> Option<KnownHeader> {
        match *self {
            HeaderName::Known(k) => Some(k),
            HeaderName::Other(_) => None,
        }
    }

    /// ASCII case-insensitive comparison with any name.
    #[must_use]
    pub fn eq_ignore_case(&self, other: &[u8]) -> bool {
        self.as_bytes().eq_ignore_ascii_case(other)
    }
}

impl From<KnownHeader> for HeaderName<'_> {
    fn from(k: KnownHeader) -> Self {
        HeaderName::Known(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_name_round_trips_in_any_case() {
        for (i, &k) in KnownHeader::ALL.iter().enumerate() {
            assert_eq!(k as usize, i);
            let lower = k.as_str();
            assert_eq!(classify_token(lower.as_bytes()), Some(k), "{lower}");
            assert_eq!(classify_token(k.canonical().as_bytes()), Some(k));
            assert_eq!(
                classify_token(lower.to_ascii_uppercase().as_bytes()),
                Some(k)
            );
            assert!(k.canonical().eq_ignore_ascii_case(lower));
            let prefix = k.line_prefix();
            assert_eq!(&prefix[..2], b"\r\n");
            assert_eq!(&prefix[prefix.len() - 2..], b": ");
        }
    }

    #[test]
    fn unknown_names_are_not_recognised() {
        for n in [
            &b"x-custom"[..],
            b"hosts",
            b"hos",
            b"content-lengt",
            b"content-lengthh",
            b"a",
            b"",
            b"contentxlength",
        ] {
            assert_eq!(KnownHeader::from_bytes(n), None);
        }
    }

    #[test]
    fn long_names_compare_their_middle() {
        // Same length, first 8 and last 8 bytes as a known name, different middle.
        assert_eq!(
            classify_token(b"access-control-allow-credentials"),
            Some(KnownHeader::AccessControlAllowCredentials)
        );
        assert_eq!(classify_token(b"access-xxxxxxx-allow-credentials"), None);
        assert_eq!(classify_token(b"access-control-allow-xredentials"), None);
        assert_eq!(classify_token(b"transfer-xncoding"), None);
        assert_eq!(classify_token(b"transferxencoding"), None);
    }
}
