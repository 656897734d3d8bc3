//! The URI pieces of a request head (RFC 3986 as profiled by RFC 9110 §4 and RFC 9112 §3.2):
//! `uri-host [ ":" port ]` in Host and in the request-target's authority, and the split of an
//! absolute-form target into authority and path.
//!
//! These are the slow, exact checks. The parser accepts the common Host value (a reg-name of
//! letters, digits, `-` and `.`, maybe with a port) with a vector scan first and only comes
//! here for anything else.

use crate::scan::REG_NAME_CHAR;

/// Whether a port is present and how strict to be about it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Port {
    /// `[ ":" *DIGIT ]`: Host (RFC 9112 §3.2) and an absolute-form authority.
    Optional,
    /// `":" 1*DIGIT` after a non-empty host: CONNECT's authority-form (RFC 9112 §3.2.3,
    /// RFC 9110 §9.3.6: the port is always sent).
    Required,
}

/// Whether `v` is `uri-host [ ":" port ]` (RFC 3986 §3.2.2, §3.2.3). `uri-host` is an
/// IP-literal in brackets, or a reg-name (which covers IPv4address) whose percent-encodings
/// are well-formed.
#[inline(never)]
pub(crate) fn valid_authority(v: &[u8], port: Port) -> bool {
    let (host_ok, host_empty, rest) = match v.split_first() {
        Some((b'[', after)) => match after.iter().position(|&b| b == b']') {
            Some(close) => (
                ip_literal(&after[..close]),
                false,
                after.get(close + 1..).unwrap_or_default(),
            ),
            None => return false,
        },
        _ => {
            let end = v.iter().position(|&b| b == b':').unwrap_or(v.len());
            (reg_name(&v[..end]), end == 0, &v[end..])
        }
    };
    if !host_ok {
        return false;
    }
    match (rest, port) {
        ([], Port::Optional) => true,
        ([b':', digits @ ..], Port::Optional) => digits.iter().all(u8::is_ascii_digit),
        ([b':', digits @ ..], Port::Required) => {
            !host_empty && !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )`.
fn reg_name(s: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if b == b'%' {
            let hex = |k: usize| s.get(k).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
        } else if REG_NAME_CHAR[b as usize] {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// The inside of `IP-literal = "[" ( IPv6address / IPvFuture ) "]"`.
fn ip_literal(s: &[u8]) -> bool {
    match s {
        // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
        [b'v' | b'V', rest @ ..] => {
            let digits = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            match rest.get(digits..) {
                Some([b'.', tail @ ..]) if digits > 0 && !tail.is_empty() => {
                    tail.iter().all(|&b| REG_NAME_CHAR[b as usize] || b == b':')
                }
                _ => false,
            }
        }
        _ => ipv6(s),
    }
}

/// `IPv6address` (RFC 3986 §3.2.2): eight 16-bit pieces of 1 to 4 hex digits separated by
/// `:`, the last two of which may be an IPv4address, with at most one `::` standing for one
/// or more zero pieces.
fn ipv6(s: &[u8]) -> bool {
    let (head, tail) = match find_double_colon(s) {
        Some(k) => (&s[..k], Some(&s[k + 2..])),
        None => (s, None),
    };
    let Some((n_head, v4_head)) = pieces(head) else {
        return false;
    };
    match tail {
        None => (n_head == 8 && !v4_head) || (n_head == 6 && v4_head),
        Some(tail) => {
            if v4_head {
                return false; // an IPv4 part must come last
            }
            let Some((n_tail, v4_tail)) = pieces(tail) else {
                return false;
            };
            let used = n_head + n_tail + if v4_tail { 2 } else { 0 };
            // `::` stands for at least one piece.
            used <= 7
        }
    }
}

fn find_double_colon(s: &[u8]) -> Option<usize> {
    s.windows(2).position(|w| w == b"::")
}

/// Counts the `h16` pieces of a `:`-separated run (no `::` in it); `Some((pieces, ends with
/// IPv4))`, `None` when malformed. An empty run has no pieces.
fn pieces(s: &[u8]) -> Option<(usize, bool)> {
    if s.is_empty() {
        return Some((0, false));
    }
    let mut n = 0;
    let mut parts = s.split(|&b| b == b':').peekable();
    while let Some(p) = parts.next() {
        let last = parts.peek().is_none();
        if last && p.contains(&b'.') {
            return ipv4(p).then_some((n, true));
        }
        if p.is_empty() || p.len() > 4 || !p.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        n += 1;
    }
    Some((n, false))
}

/// `IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet`.
fn ipv4(s: &[u8]) -> bool {
    let mut n = 0;
    for octet in s.split(|&b| b == b'.') {
        n += 1;
        let ok = match octet {
            [d] => d.is_ascii_digit(),
            [b'1'..=b'9', d] => d.is_ascii_digit(),
            [b'1', a, b] => a.is_ascii_digit() && b.is_ascii_digit(),
            [b'2', b'0'..=b'4', b] => b.is_ascii_digit(),
            [b'2', b'5', b'0'..=b'5'] => true,
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    n == 4
}

/// An absolute-form target's parts: `(authority, rest)` where `rest` is the path and query
/// (`path-abempty [ "?" query ]`, possibly empty). `authority` is `None` when the target has
/// no `//` after its scheme (a URI without an authority, such as `urn:x`); then `rest` is
/// what follows the scheme's `:`.
#[inline]
pub(crate) fn split_absolute(t: &[u8]) -> (Option<&[u8]>, &[u8]) {
    let after_scheme = match t.iter().position(|&b| b == b':') {
        Some(c) => t.get(c + 1..).unwrap_or_default(),
        None => return (None, t),
    };
    match after_scheme.strip_prefix(b"//") {
        Some(hier) => {
            let end = hier
                .iter()
                .position(|&b| b == b'/' || b == b'?')
                .unwrap_or(hier.len());
            (hier.get(..end), hier.get(end..).unwrap_or_default())
        }
        None => (None, after_scheme),
    }
}

/// Checks an absolute-form target (RFC 9112 §3.2.2): its authority, if any, is
/// `uri-host [ ":" port ]` without userinfo (RFC 9110 §4.2.4: a recipient treats userinfo
/// as an error), and an `http` or `https` URI has a non-empty host (RFC 9110 §4.2.1, §4.2.2).
pub(crate) fn valid_absolute(t: &[u8]) -> bool {
    let scheme = t.split(|&b| b == b':').next().unwrap_or_default();
    let http = scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https");
    match split_absolute(t) {
        (Some(authority), _) => {
            let host_empty = authority.is_empty() || authority.first() == Some(&b':');
            valid_authority(authority, Port::Optional) && !(http && host_empty)
        }
        (None, _) => !http,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities() {
        for ok in [
            &b""[..],
            b"a",
            b"a:",
            b"a:80",
            b"localhost:8080",
            b"127.0.0.1",
            b"127.0.0.1:1",
            b"ex%41mple",
            b"a-b.c_d~e!$&'()*+,;=",
            b"[::1]",
            b"[::1]:443",
            b"[::]",
            b"[1:2:3:4:5:6:7:8]",
            b"[1::8]",
            b"[::ffff:192.0.2.1]",
            b"[1:2:3:4:5:6:1.2.3.4]",
            b"[v1.x:y]",
            b":80",
        ] {
            assert!(valid_authority(ok, Port::Optional), "{}", ok.escape_ascii());
        }
        for bad in [
            &b"a:b"[..],
            b"a:80:90",
            b"a:80x",
            b"a:-1",
            b"::1",
            b"[::1",
            b"[zz]",
            b"a[b]",
            b"a]b",
            b"ex%zzmple",
            b"ex%4",
            b"[::1]x",
            b"[::1]:x",
            b"[1:2:3:4:5:6:7:8:9]",
            b"[1:2:3:4:5:6:7]",
            b"[1::2::3]",
            b"[12345::]",
            b"[1:2:3:4:5:6:7:1.2.3.4]",
            b"[::1.2.3]",
            b"[::256.1.1.1]",
            b"[::01.1.1.1]",
            b"[1.2.3.4::]",
            b"[1::2:3:4:5:6:7:8]",
            b"[v.x]",
            b"[v1.]",
            b"[]",
            b"u@a",
            b"a b",
        ] {
            assert!(
                !valid_authority(bad, Port::Optional),
                "{}",
                bad.escape_ascii()
            );
        }
        for ok in [&b"a:443"[..], b"[::1]:443", b"example.com:1"] {
            assert!(valid_authority(ok, Port::Required));
        }
        for bad in [
            &b"exam:le.com:443"[..],
            b"[::1:443",
            b"a%zz:443",
            b"a",
            b"a:",
            b":443",
        ] {
            assert!(
                !valid_authority(bad, Port::Required),
                "{}",
                bad.escape_ascii()
            );
        }
    }

    #[test]
    fn absolute_form_parts() {
        assert_eq!(
            split_absolute(b"http://h:1/p?q"),
            (Some(&b"h:1"[..]), &b"/p?q"[..])
        );
        assert_eq!(split_absolute(b"http://h"), (Some(&b"h"[..]), &b""[..]));
        assert_eq!(split_absolute(b"http://h?q"), (Some(&b"h"[..]), &b"?q"[..]));
        assert_eq!(split_absolute(b"urn:a:b"), (None, &b"a:b"[..]));
        assert!(valid_absolute(b"http://h/"));
        assert!(valid_absolute(b"HTTPS://[::1]:8443"));
        assert!(valid_absolute(b"urn:a"));
        assert!(!valid_absolute(b"http:/p"));
        assert!(!valid_absolute(b"http:///p"));
        assert!(!valid_absolute(b"http://:80/p"));
        assert!(!valid_absolute(b"http://u@h/"));
        assert!(!valid_absolute(b"http://h:x/"));
    }
}
