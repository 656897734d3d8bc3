//! A reference recogniser for the chunked transfer coding (RFC 9112 §7.1), written as plain
//! recursive descent over the grammar, one byte at a time, with its own byte classes: the
//! decoder's state machine is checked against it (the chunked proptest and fuzz target).
//!
//! ```text
//! chunked-body   = *chunk last-chunk trailer-section CRLF
//! chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! last-chunk     = 1*("0") [ chunk-ext ] CRLF
//! chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//! chunk-ext-val  = token / quoted-string
//! trailer-section = *( field-line CRLF )
//! ```
#![allow(dead_code)]

/// What the reference makes of a whole input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A complete body: its data, and the input bytes it spans.
    Done { body: Vec<u8>, consumed: usize },
    /// Every byte so far fits the grammar, but the body is not finished.
    Incomplete,
    /// Some byte cannot continue a chunked body.
    Invalid,
}

enum Stop {
    Incomplete,
    Invalid,
}

type R<T> = Result<T, Stop>;

struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> R<u8> {
        self.buf.get(self.at).copied().ok_or(Stop::Incomplete)
    }

    fn take(&mut self) -> R<u8> {
        let b = self.peek()?;
        self.at += 1;
        Ok(b)
    }

    fn expect(&mut self, want: u8) -> R<()> {
        if self.take()? == want {
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }
}

/// RFC 9110 §5.6.2.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// HTAB / SP / VCHAR / obs-text: what a quoted-pair escapes and a field value holds.
fn is_text(b: u8) -> bool {
    b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80
}

fn bws(c: &mut Cursor<'_>) -> R<()> {
    while is_ws(c.peek()?) {
        c.at += 1;
    }
    Ok(())
}

fn token(c: &mut Cursor<'_>) -> R<()> {
    if !is_tchar(c.take()?) {
        return Err(Stop::Invalid);
    }
    while is_tchar(c.peek()?) {
        c.at += 1;
    }
    Ok(())
}

fn quoted_string(c: &mut Cursor<'_>) -> R<()> {
    c.expect(b'"')?;
    loop {
        match c.take()? {
            b'"' => return Ok(()),
            b'\\' => {
                if !is_text(c.take()?) {
                    return Err(Stop::Invalid);
                }
            }
            b if is_text(b) => {}
            _ => return Err(Stop::Invalid),
        }
    }
}

fn chunk_ext(c: &mut Cursor<'_>) -> R<()> {
    loop {
        if c.peek()? == b'\r' {
            return Ok(());
        }
        bws(c)?;
        c.expect(b';')?;
        bws(c)?;
        token(c)?;
        let before = c.at;
        bws(c)?;
        if c.peek()? == b'=' {
            c.at += 1;
            bws(c)?;
            if c.peek()? == b'"' {
                quoted_string(c)?;
            } else {
                token(c)?;
            }
        } else {
            c.at = before;
        }
    }
}

fn crlf(c: &mut Cursor<'_>) -> R<()> {
    c.expect(b'\r')?;
    c.expect(b'\n')
}

/// chunk-size [ chunk-ext ] CRLF; the size.
fn size_line(c: &mut Cursor<'_>) -> R<u64> {
    let mut size: u64 = 0;
    let mut digits = 0;
    while let Some(d) = (c.peek()? as char).to_digit(16) {
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(u64::from(d)))
            .ok_or(Stop::Invalid)?;
        digits += 1;
        c.at += 1;
    }
    if digits == 0 {
        return Err(Stop::Invalid);
    }
    chunk_ext(c)?;
    crlf(c)?;
    Ok(size)
}

fn body(c: &mut Cursor<'_>, out: &mut Vec<u8>) -> R<()> {
    loop {
        let size = size_line(c)?;
        if size == 0 {
            break;
        }
        for _ in 0..size {
            out.push(c.take()?);
        }
        crlf(c)?;
    }
    // trailer-section CRLF
    loop {
        if c.peek()? == b'\r' {
            return crlf(c);
        }
        token(c)?;
        c.expect(b':')?;
        while c.peek()? != b'\r' {
            if !is_text(c.take()?) {
                return Err(Stop::Invalid);
            }
        }
        crlf(c)?;
    }
}

/// Recognises a chunked body at the start of `input`.
pub fn recognise(input: &[u8]) -> Verdict {
    let mut c = Cursor { buf: input, at: 0 };
    let mut out = Vec::new();
    match body(&mut c, &mut out) {
        Ok(()) => Verdict::Done {
            body: out,
            consumed: c.at,
        },
        Err(Stop::Incomplete) => Verdict::Incomplete,
        Err(Stop::Invalid) => Verdict::Invalid,
    }
}
