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
    /// After the digits, in BWS before `;` or CR.
    SizeWs,
    /// Inside chunk extensions, until CR.
    Ext,
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
            // BWS is only allowed before ";" (chunk-ext = *( BWS ";" ... )).
            State::SizeWs => match b {
                b' ' | b'\t' => State::SizeWs,
                b';' => State::Ext,
                _ => return Err(Error::InvalidChunkSize),
            },
            State::Ext => {
                self.ext_bytes += 1;
                if self.ext_bytes > self.max_ext_bytes {
                    return Err(Error::InvalidChunkExtension);
                }
                match b {
                    b'\r' => State::SizeLf,
                    // chunk-ext is tokens, quoted-strings and BWS: no controls but HTAB.
                    b'\t' => State::Ext,
                    0x00..=0x1f | 0x7f => return Err(Error::InvalidChunkExtension),
                    _ => State::Ext,
                }
            }
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

    /// After the size digits: BWS, then `;` (extensions) or CR.
    #[inline]
    fn after_size(&mut self, b: u8) -> Result<State, Error> {
        match b {
            b' ' | b'\t' => Ok(State::SizeWs),
            b';' => Ok(State::Ext),
            b'\r' => Ok(State::SizeLf),
            _ => Err(Error::InvalidChunkSize),
        }
    }

    #[inline]
    fn count_trailer(&mut self) -> Result<(), Error> {
        self.trailer_bytes += 1;
        if self.trailer_bytes > self.max_trailer_bytes {
            Err(Error::InvalidTrailer)
        } else {
            Ok(())
        }
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
