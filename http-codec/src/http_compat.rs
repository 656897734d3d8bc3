//! Conversions to the [`http`](https://docs.rs/http/1) crate's types, behind the `http` feature.
//!
//! These are for interoperability and the slow path: handing a parsed request to code written
//! against `http::Request`, logging, tests. Most of them allocate by nature (an `http::Uri`
//! owns a copy of the target, an `http::HeaderMap` owns its entries, an `http::HeaderName`
//! for a name outside both crates' known sets is a lowercase copy, an extension method longer
//! than 15 bytes is a heap copy), so a server that wants zero allocations per request reads the
//! borrowed [`Request`] instead and converts nothing on its hot path.
//!
//! | from | to | allocates |
//! |---|---|---|
//! | [`Version`] | `http::Version` | never |
//! | [`Method`] | `http::Method` | only for an extension method longer than 15 bytes |
//! | [`KnownHeader`] | `http::HeaderName` | never (`HeaderName::from_static`) |
//! | [`HeaderName`] | `http::HeaderName` | for a name that is not a [`KnownHeader`] |
//! | [`Request`] | `http::Request<()>` | always (target, header map, values) |

use crate::{HeaderName, KnownHeader, Method, Request, Version};

impl From<Version> for http::Version {
    /// `HTTP/1.0` or `HTTP/1.1`.
    fn from(v: Version) -> http::Version {
        match v {
            Version::Http10 => http::Version::HTTP_10,
            Version::Http11 => http::Version::HTTP_11,
        }
    }
}

impl TryFrom<Method<'_>> for http::Method {
    type Error = http::method::InvalidMethod;

    /// The standard methods map to `http`'s constants; an extension method goes through
    /// `http::Method::from_bytes`, which fails only for bytes the parser would not have
    /// accepted as a method (an [`Method::Extension`] built by hand).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::Method;
    ///
    /// assert_eq!(http::Method::try_from(Method::Get).unwrap(), http::Method::GET);
    /// let purge = http::Method::try_from(Method::Extension(b"PURGE")).unwrap();
    /// assert_eq!(purge.as_str(), "PURGE");
    /// assert!(http::Method::try_from(Method::Extension(b"NO SPACE")).is_err());
    /// ```
    fn try_from(m: Method<'_>) -> Result<http::Method, Self::Error> {
        Ok(match m {
            Method::Get => http::Method::GET,
            Method::Head => http::Method::HEAD,
            Method::Post => http::Method::POST,
            Method::Put => http::Method::PUT,
            Method::Delete => http::Method::DELETE,
            Method::Connect => http::Method::CONNECT,
            Method::Options => http::Method::OPTIONS,
            Method::Trace => http::Method::TRACE,
            Method::Patch => http::Method::PATCH,
            other => http::Method::from_bytes(other.as_bytes())?,
        })
    }
}

impl From<KnownHeader> for http::HeaderName {
    /// The lowercase name as a static `http::HeaderName`: no allocation, also for the names
    /// `http::header` has no constant for (`Sec-Fetch-Mode`, `X-Forwarded-For`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::KnownHeader;
    ///
    /// assert_eq!(http::HeaderName::from(KnownHeader::ContentLength), http::header::CONTENT_LENGTH);
    /// ```
    fn from(k: KnownHeader) -> http::HeaderName {
        // Every `as_str()` is a lowercase token (checked for all of `KnownHeader::ALL` by the
        // tests below), which is what `from_static` requires to not panic.
        http::HeaderName::from_static(k.as_str())
    }
}

impl TryFrom<HeaderName<'_>> for http::HeaderName {
    type Error = http::header::InvalidHeaderName;

    /// A known name converts without allocating; any other name is validated and lowercased
    /// into a new `http::HeaderName` (which allocates unless `http` knows the name).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::HeaderName;
    ///
    /// let name = http::HeaderName::try_from(HeaderName::Other(b"X-Trace-Id")).unwrap();
    /// assert_eq!(name.as_str(), "x-trace-id");
    /// ```
    fn try_from(name: HeaderName<'_>) -> Result<http::HeaderName, Self::Error> {
        match name.known() {
            Some(k) => Ok(k.into()),
            None => http::HeaderName::from_bytes(name.as_bytes()),
        }
    }
}

impl TryFrom<Request<'_, '_>> for http::Request<()> {
    type Error = http::Error;

    /// Copies the head into an owned `http::Request<()>`: method, target (as an `http::Uri`,
    /// in whichever form it arrived), version, and every field line in received order
    /// (repeated names are appended, not merged). The body is not part of the head: read it
    /// with a [`BodyDecoder`](crate::BodyDecoder) and attach it with `Request::map`.
    ///
    /// This allocates (the `Uri`, the `HeaderMap` and its values): use it where an owned
    /// `http` value is needed, not for every request of a server that counts allocations.
    ///
    /// # Errors
    ///
    /// A target that `http::Uri` does not accept (it is stricter than RFC 9112 in places and
    /// limits a URI to 65 534 bytes), an extension method that `http` rejects, or more field
    /// lines than an `http::HeaderMap` can hold. Everything the parser accepted as a field
    /// name and value is accepted by `http`.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::{parse_request, HeaderSlot};
    ///
    /// let mut slots = [HeaderSlot::EMPTY; 16];
    /// let wire = b"GET /items?id=7 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";
    /// let req = parse_request(wire, &mut slots)?.complete().expect("a complete head");
    ///
    /// let owned = http::Request::try_from(req).expect("valid for http");
    /// assert_eq!(owned.method(), http::Method::GET);
    /// assert_eq!(owned.uri().path(), "/items");
    /// assert_eq!(owned.uri().query(), Some("id=7"));
    /// assert_eq!(owned.version(), http::Version::HTTP_11);
    /// assert_eq!(owned.headers()[http::header::HOST], "example.com");
    /// # Ok::<(), bufslab_http::Error>(())
    /// ```
    fn try_from(req: Request<'_, '_>) -> Result<http::Request<()>, Self::Error> {
        let mut headers = http::HeaderMap::try_with_capacity(req.header_count())?;
        for h in req.headers() {
            let name = http::HeaderName::try_from(h.name)?;
            let value = http::HeaderValue::from_bytes(h.value)?;
            headers.try_append(name, value)?;
        }
        let mut out = http::Request::new(());
        *out.method_mut() = http::Method::try_from(req.method())?;
        *out.uri_mut() = http::Uri::try_from(req.target())?;
        *out.version_mut() = req.version().into();
        *out.headers_mut() = headers;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_request, Config, HeaderName, HeaderSlot, KnownHeader, Method, Parser};

    #[test]
    fn every_known_header_converts_to_its_lowercase_name() {
        for &k in KnownHeader::ALL {
            let name = http::HeaderName::from(k);
            assert_eq!(name.as_str(), k.as_str());
            // The same name parsed by `http` compares equal (standard or custom alike).
            assert_eq!(
                http::HeaderName::from_bytes(k.canonical().as_bytes()).unwrap(),
                name
            );
        }
    }

    #[test]
    fn standard_methods_map_to_constants() {
        let cases = [
            (Method::Get, http::Method::GET),
            (Method::Head, http::Method::HEAD),
            (Method::Post, http::Method::POST),
            (Method::Put, http::Method::PUT),
            (Method::Delete, http::Method::DELETE),
            (Method::Connect, http::Method::CONNECT),
            (Method::Options, http::Method::OPTIONS),
            (Method::Trace, http::Method::TRACE),
            (Method::Patch, http::Method::PATCH),
        ];
        for (ours, theirs) in cases {
            assert_eq!(http::Method::try_from(ours).unwrap(), theirs);
            assert_eq!(ours.as_bytes(), theirs.as_str().as_bytes());
        }
    }

    #[test]
    fn parsed_extension_methods_convert() {
        // Every tchar is accepted in a method by both parsers; a long one is heap-allocated
        // by `http` but still converts.
        let long = b"A-VERY-LONG-EXTENSION-METHOD!#$%&'*+.^_`|~0123456789";
        for m in [&b"PURGE"[..], b"get", &long[..]] {
            let mut wire = m.to_vec();
            wire.extend_from_slice(b" / HTTP/1.1\r\nHost: a\r\n\r\n");
            let mut slots = [HeaderSlot::EMPTY; 4];
            let req = parse_request(&wire, &mut slots)
                .unwrap()
                .complete()
                .unwrap();
            assert_eq!(req.method(), Method::Extension(m));
            let converted = http::Method::try_from(req.method()).unwrap();
            assert_eq!(converted.as_str().as_bytes(), m);
        }
    }

    #[test]
    fn header_names_convert_known_and_other() {
        let known = http::HeaderName::try_from(HeaderName::Known(KnownHeader::Host)).unwrap();
        assert_eq!(known, http::header::HOST);
        let other = http::HeaderName::try_from(HeaderName::Other(b"X-Custom_Thing")).unwrap();
        assert_eq!(other.as_str(), "x-custom_thing");
        assert!(http::HeaderName::try_from(HeaderName::Other(b"bad name")).is_err());
    }

    #[test]
    fn request_converts_with_every_field_line_in_order() {
        let wire = b"POST /upload?x=1&y=2 HTTP/1.0\r\nHost: example.com:8080\r\n\
            Content-Length: 3\r\nX-Tag: one\r\nx-tag: two\r\nAccept:\t*/* \r\n\r\nabc";
        let mut slots = [HeaderSlot::EMPTY; 8];
        let req = parse_request(wire, &mut slots).unwrap().complete().unwrap();
        let owned = http::Request::try_from(req).unwrap();

        assert_eq!(owned.method(), http::Method::POST);
        assert_eq!(owned.uri(), "/upload?x=1&y=2");
        assert_eq!(owned.version(), http::Version::HTTP_10);
        let h = owned.headers();
        assert_eq!(h.len(), 5);
        assert_eq!(h[http::header::HOST], "example.com:8080");
        assert_eq!(h[http::header::CONTENT_LENGTH], "3");
        assert_eq!(h[http::header::ACCEPT], "*/*");
        let tags: Vec<_> = h.get_all("x-tag").iter().collect();
        assert_eq!(tags, ["one", "two"]);
    }

    #[test]
    fn every_target_form_converts() {
        let cases: [(&[u8], &str); 4] = [
            (b"GET /a/b HTTP/1.1\r\nHost: h\r\n\r\n", "/a/b"),
            (
                b"GET http://h.example/p?q HTTP/1.1\r\nHost: h.example\r\n\r\n",
                "http://h.example/p?q",
            ),
            (
                b"CONNECT h.example:443 HTTP/1.1\r\nHost: h.example:443\r\n\r\n",
                "h.example:443",
            ),
            (b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", "*"),
        ];
        for (wire, uri) in cases {
            let mut slots = [HeaderSlot::EMPTY; 4];
            let req = parse_request(wire, &mut slots).unwrap().complete().unwrap();
            let owned = http::Request::try_from(req).unwrap();
            assert_eq!(owned.uri(), uri, "{}", wire.escape_ascii());
        }
    }

    #[test]
    fn every_name_and_value_byte_the_parser_accepts_converts() {
        let mut accepted = (0, 0);
        for b in 0..=u8::MAX {
            let mut name_line = b"GET / HTTP/1.1\r\nHost: a\r\nX".to_vec();
            name_line.extend_from_slice(&[b, b'y', b':', b' ', b'v']);
            let mut value_line = b"GET / HTTP/1.1\r\nHost: a\r\nX: a".to_vec();
            value_line.extend_from_slice(&[b, b'z']);
            for (wire, count) in [(name_line, &mut accepted.0), (value_line, &mut accepted.1)] {
                let mut wire = wire;
                wire.extend_from_slice(b"\r\n\r\n");
                let mut slots = [HeaderSlot::EMPTY; 4];
                if let Ok(status) = parse_request(&wire, &mut slots) {
                    let req = status.complete().unwrap();
                    let owned = http::Request::try_from(req);
                    assert!(owned.is_ok(), "byte {b:#04x}: {:?}", owned.err());
                    *count += 1;
                }
            }
        }
        // In a name: the 77 tchar bytes, and `:` (which ends the name `X` early). In a value:
        // HTAB, SP, VCHAR and obs-text.
        assert_eq!(accepted, (77 + 1, 1 + 1 + 94 + 128));
    }

    #[test]
    fn obs_text_values_are_kept() {
        let wire = b"GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\xc3\xa9\r\n\r\n";
        let mut slots = [HeaderSlot::EMPTY; 4];
        let req = parse_request(wire, &mut slots).unwrap().complete().unwrap();
        let owned = http::Request::try_from(req).unwrap();
        assert_eq!(owned.headers()["x-name"].as_bytes(), b"caf\xc3\xa9");
    }

    #[test]
    fn a_target_http_rejects_is_an_error_not_a_panic() {
        // A 70 000-byte path is a valid request-target for the parser (with the limits
        // raised) but longer than an `http::Uri` may be.
        let mut wire = b"GET /".to_vec();
        wire.resize(70_000, b'a');
        wire.extend_from_slice(b" HTTP/1.1\r\nHost: h\r\n\r\n");
        let config = Config::DEFAULT
            .with_max_head_bytes(1 << 20)
            .with_max_request_line(1 << 20);
        let mut parser = Parser::new(config);
        let mut slots = [HeaderSlot::EMPTY; 4];
        let req = parser.parse(&wire, &mut slots).unwrap().complete().unwrap();
        assert!(http::Request::try_from(req).is_err());
    }
}
