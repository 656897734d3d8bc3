//! Shared helpers for the integration tests: an owned summary of a parse result (so results
//! from different buffers and calls compare with `==`), and a small deterministic generator of
//! requests and responses.
#![allow(dead_code)]

use std::fmt::Debug;

use bufslab_http::{
    Backend, BodyFraming, Config, Error, Header, HeaderSlot, Method, Parser, Request, Response,
    ResponseFraming, ResponseParser, TargetForm, Version,
};

/// Everything observable about a parsed head, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub method: Vec<u8>,
    pub target: Vec<u8>,
    pub form: TargetForm,
    pub version: Version,
    pub head_len: usize,
    pub framing: BodyFraming,
    pub keep_alive: bool,
    pub close: bool,
    pub upgrade: bool,
    pub expect_continue: bool,
    pub host: Option<Vec<u8>>,
    /// (classified name bytes, raw name, value)
    pub headers: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
}

pub fn summarize(r: &Request<'_, '_>) -> Summary {
    Summary {
        method: r.method().as_bytes().to_vec(),
        target: r.target().to_vec(),
        form: r.target_form(),
        version: r.version(),
        head_len: r.head_len(),
        framing: r.framing(),
        keep_alive: r.keep_alive(),
        close: r.connection_close(),
        upgrade: r.connection_upgrade(),
        expect_continue: r.expect_continue(),
        host: r.host().map(<[u8]>::to_vec),
        headers: owned_headers(r.headers()),
    }
}

/// (classified name bytes, raw name, value) of each field line.
fn owned_headers<'b>(
    headers: impl Iterator<Item = Header<'b>>,
) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    headers
        .map(|h| {
            (
                h.name.as_bytes().to_vec(),
                h.raw_name.to_vec(),
                h.value.to_vec(),
            )
        })
        .collect()
}

pub type Outcome = Result<Option<Summary>, Error>;

/// Parses `buf` in one call.
pub fn whole(cfg: Config, buf: &[u8]) -> Outcome {
    fed(cfg, buf, &[])
}

/// The backends this CPU runs as themselves (see [`Backend::resolved`]), slowest first.
pub fn backends() -> Vec<Backend> {
    Backend::ALL
        .iter()
        .copied()
        .filter(|b| b.is_supported())
        .collect()
}

/// `run`'s answer with `cfg` under every backend this CPU runs, which must all be the same:
/// so every test that parses through [`fed`] (the RFC rows, the split tests, the differential
/// corpora) holds each backend to the others.
pub fn on_every_backend<T: PartialEq + Debug>(
    cfg: Config,
    buf: &[u8],
    run: impl Fn(Config) -> T,
) -> T {
    let mut answers = backends()
        .into_iter()
        .map(|b| (b, run(cfg.with_backend(b))));
    let (first, want) = answers
        .next()
        .expect("the portable backend runs everywhere");
    for (b, got) in answers {
        assert_eq!(
            got,
            want,
            "the {b} backend disagrees with {first} on {:?}",
            String::from_utf8_lossy(buf)
        );
    }
    want
}

/// Feeds `buf` to one parser as a growing prefix, cutting at each position in `cuts` (sorted),
/// then the whole buffer; stops at the first non-partial result. Every backend must agree
/// ([`on_every_backend`]).
pub fn fed(cfg: Config, buf: &[u8], cuts: &[usize]) -> Outcome {
    on_every_backend(cfg, buf, |cfg| {
        let mut slots = [HeaderSlot::EMPTY; 64];
        let mut p = Parser::new(cfg);
        feed(buf, cuts, |b| {
            Ok(p.parse(b, &mut slots)?.complete().map(|r| summarize(&r)))
        })
    })
}

/// Calls `parse` (one call of a resumable parser, `None` for partial) on growing prefixes of
/// `buf`, cut at each position in `cuts` and then whole, until it is not partial.
pub fn feed<T>(
    buf: &[u8],
    cuts: &[usize],
    mut parse: impl FnMut(&[u8]) -> Result<Option<T>, Error>,
) -> Result<Option<T>, Error> {
    for &k in cuts.iter().chain(std::iter::once(&buf.len())) {
        if let Some(done) = parse(&buf[..k.min(buf.len())])? {
            return Ok(Some(done));
        }
    }
    Ok(None)
}

/// Everything observable about a parsed response head, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseSummary {
    pub version: Version,
    pub status: u16,
    pub reason: Vec<u8>,
    pub head_len: usize,
    pub framing: ResponseFraming,
    pub keep_alive: bool,
    pub close: bool,
    pub upgrade: bool,
    /// (classified name bytes, raw name, value)
    pub headers: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
}

pub fn summarize_response(r: &Response<'_, '_>) -> ResponseSummary {
    ResponseSummary {
        version: r.version(),
        status: r.status(),
        reason: r.reason().to_vec(),
        head_len: r.head_len(),
        framing: r.framing(),
        keep_alive: r.keep_alive(),
        close: r.connection_close(),
        upgrade: r.connection_upgrade(),
        headers: owned_headers(r.headers()),
    }
}

pub type ResponseOutcome = Result<Option<ResponseSummary>, Error>;

/// Parses the response `buf` to a `method` request in one call.
pub fn whole_response(cfg: Config, method: Method<'_>, buf: &[u8]) -> ResponseOutcome {
    fed_response(cfg, method, buf, &[])
}

/// [`fed`] for a response to a `method` request.
pub fn fed_response(
    cfg: Config,
    method: Method<'_>,
    buf: &[u8],
    cuts: &[usize],
) -> ResponseOutcome {
    on_every_backend(cfg, buf, |cfg| {
        let mut slots = [HeaderSlot::EMPTY; 64];
        let mut p = ResponseParser::new(cfg);
        feed(buf, cuts, |b| {
            let status = p.parse(b, method, &mut slots)?;
            Ok(status.complete().map(|r| summarize_response(&r)))
        })
    })
}

/// xorshift64*: a tiny deterministic generator, so corpora are reproducible without a
/// dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A byte a field value may hold, mostly visible ASCII, some HTAB, SP and obs-text.
    pub fn value_byte(&mut self) -> u8 {
        match self.below(20) {
            0 => b'\t',
            1 => 0x80 + self.below(128) as u8,
            2 => b' ',
            _ => 0x21 + self.below(94) as u8,
        }
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn pick_bytes(&mut self, items: &[&'static [u8]]) -> &'static [u8] {
        items[self.below(items.len())]
    }
}

pub const TCHARS: &[u8] =
    b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Randomly re-cases ASCII letters (field names are case-insensitive, RFC 9110 §5.1).
pub fn recase(rng: &mut Rng, s: &[u8]) -> Vec<u8> {
    s.iter()
        .map(|&b| {
            if rng.chance(30) {
                b.to_ascii_uppercase()
            } else {
                b
            }
        })
        .collect()
}

/// A valid request head (and maybe a body) built from random parts.
pub fn valid_request(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    if rng.chance(5) {
        out.extend_from_slice(b"\r\n");
    }
    let method: &[u8] = rng.pick_bytes(&[
        &b"GET"[..],
        b"POST",
        b"PUT",
        b"HEAD",
        b"DELETE",
        b"PATCH",
        b"TRACE",
        b"PURGE",
        b"M-SEARCH",
        b"get",
    ]);
    out.extend_from_slice(method);
    out.push(b' ');
    out.push(b'/');
    for _ in 0..rng.below(40) {
        out.push(*rng.pick(b"abcxyz0129-._~!$&'()*+,;=:@/?%"));
    }
    let http10 = rng.chance(15);
    out.extend_from_slice(if http10 {
        b" HTTP/1.0\r\n"
    } else {
        b" HTTP/1.1\r\n"
    });
    let mut lines: Vec<Vec<u8>> = Vec::new();
    if !http10 || rng.chance(50) {
        let host: &[u8] =
            rng.pick_bytes(&[&b"example.com"[..], b"localhost:8080", b"[::1]:80", b""]);
        lines.push([&recase(rng, b"host")[..], b": ", host].concat());
    }
    fields_and_body(rng, &mut out, lines, http10);
    out
}

/// Appends random field lines to `lines`, maybe a framing or `Connection` field and its body,
/// then writes them all, the empty line and the body to `out`.
fn fields_and_body(rng: &mut Rng, out: &mut Vec<u8>, mut lines: Vec<Vec<u8>>, http10: bool) {
    let names: &[&'static [u8]] = &[
        b"Accept",
        b"User-Agent",
        b"Cookie",
        b"accept-encoding",
        b"X-Custom",
        b"x-forwarded-for",
        b"Sec-Fetch-Mode",
        b"Referer",
        b"Cache-Control",
        b"If-None-Match",
        b"Authorization",
        b"Content-Type",
        b"Upgrade",
    ];
    for _ in 0..rng.below(12) {
        let name = if rng.chance(20) {
            (0..1 + rng.below(20)).map(|_| *rng.pick(TCHARS)).collect()
        } else {
            let base = rng.pick_bytes(names);
            recase(rng, base)
        };
        let mut value = Vec::new();
        if rng.chance(20) {
            value.push(*rng.pick(b" \t"));
        }
        for _ in 0..rng.below(60) {
            value.push(rng.value_byte());
        }
        if rng.chance(20) {
            value.push(*rng.pick(b" \t"));
        }
        let sep: &[u8] = rng.pick_bytes(&[&b":"[..], b": ", b":\t", b":  "]);
        lines.push([&name[..], sep, &value].concat());
    }
    let mut body = Vec::new();
    match rng.below(6) {
        0 => {
            let n = rng.below(20);
            lines.push(format!("Content-Length: {n}").into_bytes());
            body = vec![b'x'; n];
        }
        1 if !http10 => {
            lines.push(recase(rng, b"Transfer-Encoding: chunked"));
            body = b"3\r\nabc\r\n0\r\n\r\n".to_vec();
        }
        2 => {
            let c: &[u8] = rng.pick_bytes(&[
                &b"Connection: close"[..],
                b"Connection: keep-alive",
                b"connection: Upgrade, Keep-Alive",
            ]);
            lines.push(c.to_vec());
        }
        3 => lines.push(b"Expect: 100-continue".to_vec()),
        _ => {}
    }
    // Shuffle a little so framing headers are not always last.
    if lines.len() > 1 && rng.chance(50) {
        let a = rng.below(lines.len());
        let b = rng.below(lines.len());
        lines.swap(a, b);
    }
    for l in lines {
        out.extend_from_slice(&l);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&body);
}

/// A request with a few random byte edits biased towards the bytes HTTP framing cares about.
pub fn mutated_request(rng: &mut Rng) -> Vec<u8> {
    let buf = valid_request(rng);
    mutate(rng, buf)
}

/// A valid response head (and maybe a body) built from random parts: any status line the
/// grammar allows, then the same field lines and framing as [`valid_request`] makes.
pub fn valid_response(rng: &mut Rng) -> Vec<u8> {
    let http10 = rng.chance(15);
    let mut out: Vec<u8> = if http10 {
        b"HTTP/1.0 ".to_vec()
    } else {
        b"HTTP/1.1 ".to_vec()
    };
    let code = if rng.chance(20) {
        100 + rng.below(500)
    } else {
        *rng.pick(&[
            100, 101, 200, 201, 204, 206, 301, 302, 304, 400, 404, 500, 503,
        ])
    };
    out.extend_from_slice(format!("{code} ").as_bytes());
    let reason: &[u8] = rng.pick_bytes(&[
        &b"OK"[..],
        b"",
        b"Not Found",
        b"Continue",
        b" two  spaces\t and a tab ",
        b"caf\xc3\xa9",
        b"!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    ]);
    out.extend_from_slice(reason);
    out.extend_from_slice(b"\r\n");
    fields_and_body(rng, &mut out, Vec::new(), http10);
    out
}

/// A response with a few random byte edits, as [`mutated_request`].
pub fn mutated_response(rng: &mut Rng) -> Vec<u8> {
    let buf = valid_response(rng);
    mutate(rng, buf)
}

/// One to three random byte edits biased towards the bytes HTTP framing cares about.
fn mutate(rng: &mut Rng, mut buf: Vec<u8>) -> Vec<u8> {
    for _ in 0..1 + rng.below(3) {
        if buf.is_empty() {
            break;
        }
        let at = rng.below(buf.len());
        let b = *rng.pick(b"\r\n \t:\0\x7f\x01\x80,;\"(/@aZ9-#");
        match rng.below(3) {
            0 => buf[at] = b,
            1 => buf.insert(at, b),
            _ => {
                buf.remove(at);
            }
        }
    }
    buf
}
