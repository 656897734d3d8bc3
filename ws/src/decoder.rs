//! The receiving side: frames and messages out of successive buffers.

use std::ops::Range;

use crate::header::{FrameHeader, OpCode, Parsed, Role, MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN};
use crate::{apply_mask, CloseCode, Error, Utf8Validator};

/// Size limits on what a [`Decoder`] accepts; a frame or message over one fails the connection
/// with 1009 as soon as its header declares it, before any of its payload is read.
///
/// # Examples
///
/// ```
/// use bufslab_ws::{Decoder, Limits, Role};
///
/// // A chat server: nothing over 64 KiB, in whatever number of frames.
/// let dec = Decoder::with_limits(Role::Server, Limits::new(64 << 10, 64 << 10));
/// # let _ = dec;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest data frame payload accepted (control frames are capped at 125 bytes
    /// anyway). Default 16 MiB, tungstenite's.
    pub max_frame: u64,
    /// The longest message accepted, summed over its frames. Default 64 MiB, tungstenite's.
    pub max_message: u64,
}

impl Limits {
    /// Limits of `max_frame` bytes per frame and `max_message` per message.
    pub const fn new(max_frame: u64, max_message: u64) -> Limits {
        Limits {
            max_frame,
            max_message,
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new(16 << 20, 64 << 20)
    }
}

/// A data message's kind, from its first frame's opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// UTF-8 text, checked by the decoder.
    Text,
    /// Bytes.
    Binary,
}

/// A close frame's content, when it had any: a valid code and a UTF-8 reason (possibly empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CloseFrame<'a> {
    /// The code, valid by [`CloseCode::is_valid`].
    pub code: CloseCode,
    /// The reason, at most 123 bytes.
    pub reason: &'a str,
}

/// What one [`Decoder::decode`] call found.
///
/// A message is `MessageStart`, any number of `Data`, then `MessageEnd`, with every frame of it
/// announced by a `Frame` first; `Ping`, `Pong` and `Close` (each after its own `Frame`) may
/// come between the frames of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A frame's header, validated against the protocol's rules and the limits, before its
    /// payload. Also sent for control frames.
    Frame(FrameHeader),
    /// A text or binary message begins: the first frame's `Frame` event came just before.
    MessageStart(MessageKind),
    /// Payload of the open message, unmasked in place: a slice of the buffer passed to this
    /// call. For text, the bytes so far are valid UTF-8 except perhaps for a code point that
    /// the next `Data` completes (`MessageEnd` checks that none is left open). Never empty.
    Data(&'a [u8]),
    /// The open message's last byte was given: for text, the whole message was valid UTF-8.
    MessageEnd,
    /// A ping, with its payload (at most 125 bytes). Answer with a pong carrying the same
    /// payload ([`encode_pong`](crate::encode_pong)).
    Ping(&'a [u8]),
    /// A pong, with its payload.
    Pong(&'a [u8]),
    /// The peer's close frame, `None` when it carried no code. Answer with a close frame (the
    /// same code, or [`CloseCode::NORMAL`]) and close the connection; the decoder accepts no
    /// bytes after it.
    Close(Option<CloseFrame<'a>>),
}

/// What [`Decoder::decode`] did with the buffer it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decoded<'a> {
    /// How many bytes from the start of the buffer were used. The next call gets the buffer
    /// from there: the decoder keeps what it needs of a partial header or control frame
    /// itself, so these bytes are never needed again.
    pub consumed: usize,
    /// The event found, or `None` when every byte was consumed and more are needed.
    pub event: Option<Event<'a>>,
}

/// Where the decoder is in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Collecting a header into `hdr`.
    Header,
    /// The `Frame` event went out for a message's first frame: `MessageStart` is next.
    Start,
    /// In a data frame's payload: `remaining` bytes to go.
    Payload,
    /// In a control frame's payload: `remaining` bytes to go, gathered in `ctrl` if split.
    Control,
    /// The peer's close frame was given out.
    Closed,
}

/// What a step found, as positions, so the borrow of the buffer is taken once at the end.
enum Found {
    Frame,
    MessageStart,
    Data(Range<usize>),
    MessageEnd,
    /// A control payload: in the caller's buffer, or (split over buffers) in `ctrl`.
    Control(Option<Range<usize>>),
}

/// An RFC 6455 receiver: turns the bytes of a connection, in whatever pieces they arrive, into
/// validated frames, message payloads and control frames, unmasking in place and copying
/// nothing but headers (at most 14 bytes) and control payloads split across buffers (at most
/// 125, into a fixed array). Never allocates, never panics.
///
/// One `Decoder` per connection, for its whole life (240 bytes on x86-64, no heap).
///
/// # Examples
///
/// A server echo loop over one received block:
///
/// ```
/// use bufslab_ws::{Decoder, Event, Role};
///
/// let mut dec = Decoder::new(Role::Server);
/// // "Hi" in a masked text frame, then an empty ping, as a client sends them.
/// let mut block = [0x81, 0x82, 1, 2, 3, 4, b'H' ^ 1, b'i' ^ 2, 0x89, 0x80, 0, 0, 0, 0];
/// let mut at = 0;
/// let mut seen = Vec::new();
/// loop {
///     let step = dec.decode(&mut block[at..])?;
///     at += step.consumed;
///     match step.event {
///         None => break, // all used: read more into a fresh block
///         Some(Event::Data(text)) => seen.push(String::from_utf8_lossy(text).into_owned()),
///         Some(Event::Ping(p)) => seen.push(format!("ping {}", p.len())),
///         Some(_) => {}
///     }
/// }
/// assert_eq!(seen, ["Hi", "ping 0"]);
/// # Ok::<(), bufslab_ws::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Decoder {
    role: Role,
    limits: Limits,
    phase: Phase,
    failed: Option<Error>,
    hdr: [u8; MAX_HEADER_LEN],
    hdr_len: u8,
    /// Header bytes known to be needed: 2 until the second byte tells the length form.
    hdr_need: u8,
    /// The frame being read.
    frame: FrameHeader,
    remaining: u64,
    mask_at: usize,
    message: Option<MessageKind>,
    message_len: u64,
    utf8: Utf8Validator,
    ctrl: [u8; MAX_CONTROL_PAYLOAD],
    ctrl_len: u8,
}

impl Decoder {
    /// A decoder for an endpoint of role `role`, with the default [`Limits`].
    pub fn new(role: Role) -> Decoder {
        Decoder::with_limits(role, Limits::default())
    }

    /// A decoder with the given limits.
    pub const fn with_limits(role: Role, limits: Limits) -> Decoder {
        Decoder {
            role,
            limits,
            phase: Phase::Header,
            failed: None,
            hdr: [0; MAX_HEADER_LEN],
            hdr_len: 0,
            hdr_need: 2,
            frame: FrameHeader::new(OpCode::Continuation, 0),
            remaining: 0,
            mask_at: 0,
            message: None,
            message_len: 0,
            utf8: Utf8Validator::new(),
            ctrl: [0; MAX_CONTROL_PAYLOAD],
            ctrl_len: 0,
        }
    }

    /// The role given at construction.
    pub const fn role(&self) -> Role {
        self.role
    }

    /// The limits given at construction.
    pub const fn limits(&self) -> Limits {
        self.limits
    }

    /// The kind of the message whose frames are being read, if one is open.
    pub const fn open_message(&self) -> Option<MessageKind> {
        self.message
    }

    /// Whether the peer's close frame was decoded.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Starts over at the beginning of a stream, keeping the role and limits: for a decoder
    /// reused on a new connection.
    pub fn reset(&mut self) {
        *self = Decoder::with_limits(self.role, self.limits);
    }

    /// Decodes from `buf`, the bytes received after those consumed by earlier calls (the rest
    /// of the current block, or a new one), and returns at most one event.
    ///
    /// Call it again with `&mut buf[consumed..]` until `event` is `None`: then every byte was
    /// used and the block can be released. Masked payload is unmasked in `buf` itself, which
    /// is why it takes `&mut`. On an error, send a close frame with
    /// [`Error::close_code`] and close the connection; the decoder repeats the error from then
    /// on.
    pub fn decode<'a>(&'a mut self, buf: &'a mut [u8]) -> Result<Decoded<'a>, Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let (consumed, found) = match self.step(buf) {
            Ok(step) => step,
            Err(e) => {
                self.failed = Some(e);
                return Err(e);
            }
        };
        let buf: &'a [u8] = buf;
        let this: &'a Decoder = self;
        Ok(Decoded {
            consumed,
            event: found.map(|found| this.event(found, buf)),
        })
    }

    fn step(&mut self, buf: &mut [u8]) -> Result<(usize, Option<Found>), Error> {
        let mut at = 0;
        loop {
            let avail = buf.len() - at;
            match self.phase {
                Phase::Header => {
                    let have = usize::from(self.hdr_len);
                    let take = (usize::from(self.hdr_need) - have).min(avail);
                    self.hdr[have..have + take].copy_from_slice(&buf[at..at + take]);
                    at += take;
                    self.hdr_len += take as u8;
                    if self.hdr_len < self.hdr_need {
                        return Ok((at, None));
                    }
                    match FrameHeader::parse(&self.hdr[..usize::from(self.hdr_len)], self.role)? {
                        // At most 14: the second byte fixed the header's length.
                        Parsed::Incomplete(need) => self.hdr_need = need as u8,
                        Parsed::Complete(frame, _) => {
                            self.hdr_len = 0;
                            self.hdr_need = 2;
                            self.begin(frame)?;
                            return Ok((at, Some(Found::Frame)));
                        }
                    }
                }
                Phase::Start => {
                    self.phase = Phase::Payload;
                    return Ok((at, Some(Found::MessageStart)));
                }
                Phase::Payload if self.remaining == 0 => {
                    self.phase = Phase::Header;
                    if self.frame.fin {
                        if self.is_text() {
                            self.utf8.finish()?;
                        }
                        self.message = None;
                        return Ok((at, Some(Found::MessageEnd)));
                    }
                }
                Phase::Payload => {
                    if avail == 0 {
                        return Ok((at, None));
                    }
                    // Fits in usize: at most `avail`.
                    let n = self.remaining.min(avail as u64) as usize;
                    let data = &mut buf[at..at + n];
                    if let Some(key) = self.frame.mask {
                        self.mask_at = apply_mask(data, key, self.mask_at);
                    }
                    if self.is_text() {
                        self.utf8.feed(data)?;
                    }
                    self.remaining -= n as u64;
                    at += n;
                    return Ok((at, Some(Found::Data(at - n..at))));
                }
                Phase::Control => {
                    // At most 125: checked by the header parser.
                    let len = self.remaining as usize;
                    if self.ctrl_len == 0 && avail >= len {
                        // The whole payload is here: read it where it lies.
                        let range = at..at + len;
                        self.phase = finish_control(&self.frame, &mut buf[range.clone()])?;
                        return Ok((at + len, Some(Found::Control(Some(range)))));
                    }
                    let have = usize::from(self.ctrl_len);
                    let take = (len - have).min(avail);
                    self.ctrl[have..have + take].copy_from_slice(&buf[at..at + take]);
                    at += take;
                    self.ctrl_len += take as u8;
                    if have + take < len {
                        return Ok((at, None));
                    }
                    self.phase = finish_control(&self.frame, &mut self.ctrl[..len])?;
                    return Ok((at, Some(Found::Control(None))));
                }
                Phase::Closed => {
                    return if avail == 0 {
                        Ok((at, None))
                    } else {
                        Err(Error::FrameAfterClose)
                    };
                }
            }
        }
    }

    fn is_text(&self) -> bool {
        self.message == Some(MessageKind::Text)
    }

    /// The checks that need the stream's state, then the phase the frame's payload is read in.
    fn begin(&mut self, frame: FrameHeader) -> Result<(), Error> {
        let kind = match frame.opcode {
            OpCode::Continuation if self.message.is_none() => {
                return Err(Error::UnexpectedContinuation)
            }
            OpCode::Text | OpCode::Binary if self.message.is_some() => {
                return Err(Error::ExpectedContinuation)
            }
            OpCode::Text => Some(MessageKind::Text),
            OpCode::Binary => Some(MessageKind::Binary),
            OpCode::Continuation => None,
            OpCode::Close | OpCode::Ping | OpCode::Pong => {
                self.frame = frame;
                self.remaining = frame.payload_len;
                self.ctrl_len = 0;
                self.phase = Phase::Control;
                return Ok(());
            }
        };
        let len = frame.payload_len;
        if len > self.limits.max_frame {
            return Err(Error::FrameTooLarge {
                len,
                max: self.limits.max_frame,
            });
        }
        let message_len = match kind {
            Some(_) => len,
            None => self.message_len.saturating_add(len),
        };
        if message_len > self.limits.max_message {
            return Err(Error::MessageTooLarge {
                len: message_len,
                max: self.limits.max_message,
            });
        }
        self.message_len = message_len;
        self.frame = frame;
        self.remaining = len;
        self.mask_at = 0;
        self.phase = match kind {
            Some(kind) => {
                self.message = Some(kind);
                Phase::Start
            }
            None => Phase::Payload,
        };
        Ok(())
    }

    fn event<'a>(&'a self, found: Found, buf: &'a [u8]) -> Event<'a> {
        match found {
            Found::Frame => Event::Frame(self.frame),
            Found::MessageStart => Event::MessageStart(match self.message {
                Some(MessageKind::Text) => MessageKind::Text,
                _ => MessageKind::Binary,
            }),
            Found::Data(range) => Event::Data(&buf[range]),
            Found::MessageEnd => Event::MessageEnd,
            Found::Control(range) => {
                let payload = match range {
                    Some(range) => &buf[range],
                    None => &self.ctrl[..usize::from(self.ctrl_len)],
                };
                match self.frame.opcode {
                    OpCode::Ping => Event::Ping(payload),
                    OpCode::Pong => Event::Pong(payload),
                    // `finish_control` checked it when the payload was complete.
                    _ => Event::Close(parse_close(payload).ok().flatten()),
                }
            }
        }
    }
}

/// Unmasks a whole control payload and checks a close frame's; returns the phase that follows.
fn finish_control(frame: &FrameHeader, payload: &mut [u8]) -> Result<Phase, Error> {
    if let Some(key) = frame.mask {
        apply_mask(payload, key, 0);
    }
    if frame.opcode == OpCode::Close {
        parse_close(payload)?;
        return Ok(Phase::Closed);
    }
    Ok(Phase::Header)
}

/// A close payload's code and reason, checked (RFC 6455 §5.5.1, §7.4).
///
/// # Examples
///
/// ```
/// use bufslab_ws::{parse_close, CloseCode, Error};
///
/// let frame = parse_close(b"\x03\xe8bye")?.unwrap();
/// assert_eq!((frame.code, frame.reason), (CloseCode::NORMAL, "bye"));
/// assert_eq!(parse_close(b""), Ok(None));
/// assert_eq!(parse_close(b"\x03"), Err(Error::CloseFrameTooShort));
/// assert_eq!(parse_close(b"\x03\xed"), Err(Error::InvalidCloseCode(1005)));
/// # Ok::<(), Error>(())
/// ```
pub fn parse_close(payload: &[u8]) -> Result<Option<CloseFrame<'_>>, Error> {
    let (code, reason) = match payload {
        [] => return Ok(None),
        [_] => return Err(Error::CloseFrameTooShort),
        [hi, lo, reason @ ..] => (u16::from_be_bytes([*hi, *lo]), reason),
    };
    // The reason first, as tungstenite does: a frame wrong in both ways gets the same code
    // from either (RFC 6455 orders neither check).
    let reason = std::str::from_utf8(reason).map_err(|_| Error::InvalidCloseReason)?;
    let code = CloseCode::new(code);
    if !code.is_valid() {
        return Err(Error::InvalidCloseCode(code.get()));
    }
    Ok(Some(CloseFrame { code, reason }))
}
