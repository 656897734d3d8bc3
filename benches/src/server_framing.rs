//! What a server must decide from a request head before it can read the body and answer, as a
//! careful server author writes it over a parser that only hands out field slices (httparse,
//! picohttpparser): the body's framing (RFC 9112 §6.3), whether the connection persists
//! (§9.3) and that Host is there once (RFC 9112 §3.2). hyper's `proto::h1::role` does this
//! work for httparse; bufslab-http does it while parsing, so the `framed` bench mode charges
//! the peers for it too and compares the whole job.
//!
//! The checks are the ones a server cannot skip without a smuggling or response-splitting
//! hole: Content-Length digits without overflow, repeated Content-Length values that agree,
//! Transfer-Encoding with `chunked` last and never beside a Content-Length, `Connection`
//! tokens, one Host in HTTP/1.1.

/// The framing a server decided, or why it refuses the head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerFraming {
    /// No body.
    None,
    /// A body of this many bytes.
    Length(u64),
    /// A chunked body.
    Chunked,
    /// The head cannot be served (400, or 501 for a coding other than chunked).
    Refused,
}

/// The framing and persistence of a request head whose version is `HTTP/1.minor` and whose
/// field lines are `fields` (name, value), decided as [`ServerFraming`] says.
///
/// # Examples
///
/// ```
/// use bufslab_benches::{decide_framing, ServerFraming};
///
/// let fields: [(&[u8], &[u8]); 2] = [(b"Host", b"a"), (b"content-length", b"12")];
/// assert_eq!(decide_framing(1, fields), (ServerFraming::Length(12), true));
/// let smuggle: [(&[u8], &[u8]); 3] =
///     [(b"Host", b"a"), (b"Content-Length", b"5"), (b"Transfer-Encoding", b"chunked")];
/// assert_eq!(decide_framing(1, smuggle).0, ServerFraming::Refused);
/// ```
#[inline(always)]
pub fn decide_framing<'a>(
    minor: u8,
    fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
) -> (ServerFraming, bool) {
    let (mut length, mut chunked, mut te, mut hosts) = (None::<u64>, false, false, 0u32);
    let (mut close, mut keep_alive, mut bad) = (false, false, false);
    for (name, value) in fields {
        match name.len() {
            4 if name.eq_ignore_ascii_case(b"host") => hosts += 1,
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for token in value.split(|&b| b == b',') {
                    let token = token.trim_ascii();
                    close |= token.eq_ignore_ascii_case(b"close");
                    keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            14 if name.eq_ignore_ascii_case(b"content-length") => match content_length(value) {
                Some(n) if length.map_or(true, |l| l == n) => length = Some(n),
                _ => bad = true,
            },
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                te = true;
                // Only the last coding decides; `chunked` anywhere else is an error.
                let last = value.rsplit(|&b| b == b',').next().unwrap_or_default();
                chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            }
            _ => {}
        }
    }
    let persists = !close && (minor >= 1 || keep_alive);
    let framing = if bad || (minor >= 1 && hosts != 1) || (te && (length.is_some() || !chunked)) {
        ServerFraming::Refused
    } else if te {
        ServerFraming::Chunked
    } else {
        length.map_or(ServerFraming::None, ServerFraming::Length)
    };
    (framing, persists)
}

/// `1*DIGIT` without overflow, or `None`.
#[inline(always)]
fn content_length(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() {
        return None;
    }
    v.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
            .flatten()
    })
}
