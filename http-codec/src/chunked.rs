//! Incremental, in-place decoder for the chunked transfer coding (RFC 9112 §7.1).
//!
//! The decoder is a byte-level state machine for the framing (sizes, extensions, CRLFs,
//! trailers) and hands out chunk data as sub-slices of the input, so it works at every split
//! point and never copies. Extensions and trailer fields are validated and discarded (RFC 9112
//! §7.1.1: unrecognised extensions are ignored; RFC 9110 §6.5.1: trailers may be discarded);
//! both are capped so a peer cannot make the server spin on unbounded framing.

use crate::config::Config;
use crate::decoded::Decoded;
use crate::error::Error;
use crate::scan::TCHAR;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Expecting the first hex digit of a chunk-size.
    SizeStart,
    /// In the chunk-size digits.
    Size,
    /// After the digits, in BWS that must lead to `;`.
    SizeWs,
    /// After `;`: BWS, then an extension name.
    ExtNameStart,
    /// In an extension name (a token).
    ExtName,
    /// In BWS after a name: `=`, or `;` for the next extension.
    ExtAfterName,
    /// After `=`: BWS, then a token or a quoted-string.
    ExtValueStart,
    /// In a token value.
    ExtToken,
    /// Inside a quoted-string value.
    ExtQuoted,
    /// After a backslash inside a quoted-string.
    ExtQuotedPair,
    /// Right after a quoted-string's closing quote.
    ExtAfterQuote,
    /// In BWS after a value, which must lead to `;`.
    ExtAfterValue,
    /// Saw CR of the size line.
    SizeLf,
    /// In chunk data (`remaining` > 0).
    Data,
    /// Expecting CR after chunk data.
    DataCr,
    /// Expecting LF after chunk data.
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    /// In a trailer field name.
    TrailerName,
    /// In a trailer field value.
    TrailerValue,
    /// Saw CR ending a trailer line.
    TrailerLf,
    /// Saw CR of the final empty line.
    EndLf,
    /// Body complete.
    Done,
}

/// Incremental chunked-body decoder.
///
/// # Examples
///
/// ```
/// use bufslab_http::ChunkedDecoder;
/// let mut dec = ChunkedDecoder::new();
/// let mut input: &[u8] = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
/// let mut body = Vec::new();
/// loop {
///     let step = dec.decode(input)?;
///     body.extend_from_slice(step.data); // a sub-slice of `input`: no copy by the decoder
///     input = &input[step.consumed..];
///     if step.done { break; }
/// }
/// assert_eq!(body, b"hello world");
/// assert_eq!(input, b"NEXT");
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ChunkedDecoder {
    state: State,
    remaining: u64,
    ext_bytes: u64,
    trailer_bytes: u64,
    max_ext_bytes: u64,
    max_trailer_bytes: u64,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder::new()
    }
}

impl ChunkedDecoder {
    /// A decoder with the default limits ([`Config::DEFAULT`]).
    #[must_use]
    pub const fn new() -> ChunkedDecoder {
        ChunkedDecoder::with_config(&Config::DEFAULT)
    }

    /// A decoder with the chunk-extension and trailer limits of `config`
    /// ([`Config::with_max_chunk_extension_bytes`], [`Config::with_max_trailer_bytes`]).
    #[must_use]
    pub const fn with_config(config: &Config) -> ChunkedDecoder {
        ChunkedDecoder {
            state: State::SizeStart,
            remaining: 0,
            ext_bytes: 0,
            trailer_bytes: 0,
            max_ext_bytes: config.max_chunk_extension_bytes(),
            max_trailer_bytes: config.max_trailer_bytes(),
        }
    }

    /// Whether the terminating empty line has been consumed.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes framing from the start of `input` up to the next run of chunk data, and returns
    /// that data in place. Call again with `input[consumed..]` (or with more input once it is
    /// exhausted) until `done`.
    ///
    /// Any non-empty `input` makes progress (`consumed > 0`) unless the body is already done.
    ///
    /// # Errors
    /// [`Error::InvalidChunkSize`], [`Error::ChunkSizeOverflow`],
    /// [`Error::InvalidChunkExtension`], [`Error::InvalidChunkTerminator`],
    /// [`Error::InvalidTrailer`] (all 400). The decoder is unusable afterwards.
    pub fn decode<'b>(&mut self, input: &'b [u8]) -> Result<Decoded<'b>, Error> {
        let mut i = 0;
        loop {
            if self.state == State::Done {
                return Ok(Decoded {
                    consumed: i,
                    data: &[],
                    done: true,
                });
            }
            if self.state == State::Data {
                let avail = input.len() - i;
                if avail == 0 {
                    break;
                }
                let take = usize::try_from(self.remaining).map_or(avail, |r| r.min(avail));
                let data = input.get(i..i + take).unwrap_or_default();
                self.remaining -= take as u64;
                if self.remaining == 0 {
                    self.state = State::DataCr;
                }
                return Ok(Decoded {
                    consumed: i + take,
                    data,
                    done: false,
                });
            }
            let Some(&b) = input.get(i) else { break };
            i += 1;
            self.step(b)?;
        }
        Ok(Decoded {
            consumed: i,
            data: &[],
            done: false,
        })
    }

    /// Consumes as much of the body as `input` holds without looking at the data; returns the
    /// bytes consumed and whether the body is complete.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    pub fn skip(&mut self, input: &[u8]) -> Result<(usize, bool), Error> {
        let mut used = 0;
        loop {
            let rest = input.get(used..).unwrap_or_default();
            let d = self.decode(rest)?;
            used += d.consumed;
            if d.done || d.consumed == 0 {
                return Ok((used, d.done));
            }
        }
    }

    /// Advances the framing state machine by one byte (never called in `Data` or `Done`).
    #[inline]
    fn step(&mut self, b: u8) -> Result<(), Error> {
        self.state = match self.state {
            State::SizeStart => match hex(b) {
                Some(d) => {
                    self.remaining = u64::from(d);
                    State::Size
                }
                None => return Err(Error::InvalidChunkSize),
            },
            State::Size => match hex(b) {
                Some(d) => {
                    if self.remaining > u64::MAX >> 4 {
                        return Err(Error::ChunkSizeOverflow);
                    }
                    self.remaining = (self.remaining << 4) | u64::from(d);
                    State::Size
                }
                None => self.after_size(b)?,
            },
            // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
            // (RFC 9112 §7.1.1): whitespace only where a `;` or `=` may follow, and the line
            // ends right after a name or a value.
            State::SizeWs
            | State::ExtNameStart
            | State::ExtName
            | State::ExtAfterName
            | State::ExtValueStart
            | State::ExtToken
            | State::ExtQuoted
            | State::ExtQuotedPair
            | State::ExtAfterQuote
            | State::ExtAfterValue => self.extension(b)?,
            State::SizeLf => match b {
                b'\n' if self.remaining == 0 => State::TrailerStart,
                b'\n' => State::Data,
                _ => return Err(Error::InvalidChunkSize),
            },
            State::DataCr => match b {
                b'\r' => State::DataLf,
                _ => return Err(Error::InvalidChunkTerminator),
            },
            State::DataLf => match b {
                b'\n' => State::SizeStart,
                _ => return Err(Error::InvalidChunkTerminator),
            },
            State::TrailerStart => {
                self.count_trailer()?;
                match b {
                    b'\r' => State::EndLf,
                    b if TCHAR[b as usize] => State::TrailerName,
                    _ => return Err(Error::InvalidTrailer),
                }
            }
            State::TrailerName => {
                self.count_trailer()?;
                match b {
                    b':' => State::TrailerValue,
                    b if TCHAR[b as usize] => State::TrailerName,
                    _ => return Err(Error::InvalidTrailer),
                }
            }
            State::TrailerValue => {
                self.count_trailer()?;
                match b {
                    b'\r' => State::TrailerLf,
                    b'\t' => State::TrailerValue,
                    0x00..=0x1f | 0x7f => return Err(Error::InvalidTrailer),
                    _ => State::TrailerValue,
                }
            }
            State::TrailerLf => match b {
                b'\n' => State::TrailerStart,
                _ => return Err(Error::InvalidTrailer),
            },
            State::EndLf => match b {
                b'\n' => State::Done,
                _ => return Err(Error::InvalidTrailer),
            },
            // `decode` never steps in these states; treat a call as a framing error rather
            // than panicking.
            State::Data | State::Done => return Err(Error::InvalidChunkSize),
        };
        Ok(())
    }

    /// After the size digits: BWS, `;` (extensions) or CR.
    #[inline]
    fn after_size(&mut self, b: u8) -> Result<State, Error> {
        match b {
            b' ' | b'\t' => self.count_extension().map(|()| State::SizeWs),
            b';' => self.count_extension().map(|()| State::ExtNameStart),
            b'\r' => Ok(State::SizeLf),
            _ => Err(Error::InvalidChunkSize),
        }
    }

    /// One byte of BWS-before-`;` or of chunk extensions. Only whitespace after the size can
    /// be a malformed size line (`5 ` then CR); everything later is a malformed extension.
    #[inline(never)]
    fn extension(&mut self, b: u8) -> Result<State, Error> {
        self.count_extension()?;
        let ws = b == b' ' || b == b'\t';
        let tchar = TCHAR[b as usize];
        let next = match self.state {
            State::SizeWs => match b {
                _ if ws => State::SizeWs,
                b';' => State::ExtNameStart,
                _ => return Err(Error::InvalidChunkSize),
            },
            State::ExtNameStart => match b {
                _ if ws => State::ExtNameStart,
                _ if tchar => State::ExtName,
                _ => return Err(Error::InvalidChunkExtension),
            },
            State::ExtName => match b {
                _ if tchar => State::ExtName,
                _ if ws => State::ExtAfterName,
                b'=' => State::ExtValueStart,
                b';' => State::ExtNameStart,
                b'\r' => State::SizeLf,
                _ => return Err(Error::InvalidChunkExtension),
            },
            State::ExtAfterName => match b {
                _ if ws => State::ExtAfterName,
                b'=' => State::ExtValueStart,
                b';' => State::ExtNameStart,
                _ => return Err(Error::InvalidChunkExtension),
            },
            State::ExtValueStart => match b {
                _ if ws => State::ExtValueStart,
                _ if tchar => State::ExtToken,
                b'"' => State::ExtQuoted,
                _ => return Err(Error::InvalidChunkExtension),
            },
            State::ExtToken => match b {
                _ if tchar => State::ExtToken,
                _ if ws => State::ExtAfterValue,
                b';' => State::ExtNameStart,
                b'\r' => State::SizeLf,
                _ => return Err(Error::InvalidChunkExtension),
            },
            // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (RFC 9110 §5.6.4)
            State::ExtQuoted => match b {
                b'"' => State::ExtAfterQuote,
                b'\\' => State::ExtQuotedPair,
                b'\t' | b' '..=b'~' | 0x80..=0xff => State::ExtQuoted,
                _ => return Err(Error::InvalidChunkExtension),
            },
            // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
            State::ExtQuotedPair => match b {
                b'\t' | b' '..=b'~' | 0x80..=0xff => State::ExtQuoted,
                _ => return Err(Error::InvalidChunkExtension),
            },
            State::ExtAfterQuote => match b {
                _ if ws => State::ExtAfterValue,
                b';' => State::ExtNameStart,
                b'\r' => State::SizeLf,
                _ => return Err(Error::InvalidChunkExtension),
            },
            State::ExtAfterValue => match b {
                _ if ws => State::ExtAfterValue,
                b';' => State::ExtNameStart,
                _ => return Err(Error::InvalidChunkExtension),
            },
            _ => return Err(Error::InvalidChunkExtension),
        };
        Ok(next)
    }

    /// Counts one byte against the per-body extension limit.
    #[inline]
    fn count_extension(&mut self) -> Result<(), Error> {
        count(
            &mut self.ext_bytes,
            self.max_ext_bytes,
            Error::InvalidChunkExtension,
        )
    }

    /// Counts one byte against the trailer-section limit.
    #[inline]
    fn count_trailer(&mut self) -> Result<(), Error> {
        count(
            &mut self.trailer_bytes,
            self.max_trailer_bytes,
            Error::InvalidTrailer,
        )
    }
}

/// Adds one byte to `used`; `over` once it passes `max`.
#[inline]
fn count(used: &mut u64, max: u64, over: Error) -> Result<(), Error> {
    *used += 1;
    if *used > max {
        Err(over)
    } else {
        Ok(())
    }
}

#[inline]
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}
