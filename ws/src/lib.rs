//! An I/O-free RFC 6455 WebSocket codec that allocates nothing per message: frames and messages
//! are read out of the caller's receive buffers (unmasked in place, text checked as it
//! arrives), and frames are written into the caller's send buffers.
//!
//! ```
//! use bufslab_ws::{Decoder, Event, FrameHeader, OpCode, Role, MAX_HEADER_LEN};
//!
//! // Per connection, after the handshake (see `accept`):
//! let mut dec = Decoder::new(Role::Server);
//!
//! // A client's masked text frame, as received into a block.
//! let mut block = vec![0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
//! let mut reply = [0u8; MAX_HEADER_LEN + 125];
//! let mut reply_len = 0;
//! let mut at = 0;
//! while let Some(event) = {
//!     let step = dec.decode(&mut block[at..])?;
//!     at += step.consumed;
//!     step.event
//! } {
//!     if let Event::Data(text) = event {
//!         // Echo: the payload goes behind room for the header, the header in front of it.
//!         reply[MAX_HEADER_LEN..][..text.len()].copy_from_slice(text);
//!         reply_len = text.len();
//!     }
//! }
//! let head = FrameHeader::new(OpCode::Text, reply_len as u64);
//! let start = head.write_before(&mut reply, MAX_HEADER_LEN)?;
//! assert_eq!(&reply[start..MAX_HEADER_LEN + reply_len], b"\x81\x05Hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Design
//!
//! **Frames** (RFC 6455 §5.2) are a 2-byte header (FIN, three reserved bits, a 4-bit opcode,
//! the MASK bit and a 7-bit length), a 16- or 64-bit extended length when the 7-bit one is 126
//! or 127, a 4-byte masking key on every frame a client sends, and the payload.
//! [`FrameHeader::parse`] reads one from however many bytes are there (2 to 14 make a
//! header) and applies every rule the header alone decides: reserved bits, reserved opcodes,
//! control frames over 125 bytes or fragmented, a 64-bit length with its top bit set, and the
//! mask's direction for the endpoint's [`Role`]. Each is a 1002. The first-two-byte rules are
//! checked on the first two bytes, before the length or the key arrive. Lengths need not be
//! in the minimal form: RFC 6455 §5.2 asks it of senders, and tungstenite, the browsers and
//! Autobahn accept the others.
//!
//! **The decoder** ([`Decoder`]) is a state machine that takes the connection's bytes in
//! successive `&mut [u8]` pieces (pooled receive blocks, a ring's slots) and returns one
//! [`Event`] a call, with how many bytes it used:
//!
//! ```text
//!            ┌───────────── Ping / Pong ─────────────┐
//!            ▼                                       │
//!  Header ──Frame──► (Text/Binary: MessageStart) ──► Payload ──Data…──► MessageEnd (FIN)
//!    ▲   └──Frame──► Control (≤125 B) ──► Ping | Pong | Close ──► Closed
//!    └──────────────── continuation frames: Frame, Data… ───────┘
//! ```
//!
//! It copies a header into a 14-byte array only as it arrives, and a control payload into a
//! 125-byte array only when it is split across pieces; payload is unmasked in place
//! ([`apply_mask`], resumable at any byte) and handed out as slices of the caller's piece.
//! A piece is fully used when an event is `None`, so a block can go back to its pool at once
//! and no byte is ever carried from one block to the next by the caller. Message rules
//! (§5.4): a continuation frame with no message open, or a new text or binary frame while one
//! is, is a 1002; control frames may come between a message's fragments. Text messages are
//! checked as UTF-8 as their bytes arrive ([`Utf8Validator`]: a code point split across
//! frames or pieces keeps up to 3 bytes), so invalid text is a 1007 as soon as it is certain.
//! Close frames (§5.5.1) carry nothing or a valid code (see [`CloseCode::is_valid`]) and a
//! UTF-8 reason; a 1-byte payload or a reserved code is a 1002, a non-UTF-8 reason a 1007.
//!
//! **Limits** ([`Limits`]): a data frame longer than `max_frame`, or a message whose frames
//! add up to more than `max_message`, is a 1009 as soon as the header declaring it is read,
//! before any of its payload. The defaults are tungstenite's (16 MiB, 64 MiB); the decoder
//! holds none of a message, so the limits are the application's choice of what it will
//! accept, not what the decoder can hold.
//!
//! **Errors** ([`Error`]) name the close code to answer with ([`Error::close_code`],
//! [`CloseCode::server_frame`]); after an error the decoder repeats it, as the stream cannot be
//! resynchronised.
//!
//! **Writing**: [`FrameHeader::write`] writes a header (2, 4 or 10 bytes, 4 more for a client's
//! mask) and [`FrameHeader::write_before`] writes it just in front of a payload already in a
//! buffer, so a server that reads or builds a payload at offset [`MAX_HEADER_LEN`] frames it
//! without a copy. [`encode_close`], [`encode_pong`] and [`encode_control`] write whole control
//! frames; [`frames`] holds the common ones as constants.
//!
//! **Handshake**: [`accept`] checks `Sec-WebSocket-Key` and `Sec-WebSocket-Version` and
//! computes `Sec-WebSocket-Accept` into a `[u8; 28]`.
//!
//! # Out of scope
//!
//! * **I/O**: sockets, timers and the closing handshake's timing are the caller's.
//! * **Extensions**: permessage-deflate (RFC 7692) and every other extension. Frames with a
//!   reserved bit set are refused, so a server must not accept an extension offer.
//! * **Subprotocols**: choosing a `Sec-WebSocket-Protocol` is the application's.
//! * **The HTTP request**: the codec checks the two WebSocket-specific fields; the rest of the
//!   upgrade request (method, `Upgrade`, `Connection`, `Host`, `Origin`) is the HTTP parser's
//!   and the application's (bufslab-http parses it).
//! * **Masking keys**: a client must draw each frame's key from a strong random source; the
//!   codec takes the key as given.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod close;
mod decoder;
mod encode;
mod error;
mod handshake;
mod header;
mod mask;
mod utf8;

pub use close::CloseCode;
pub use decoder::{parse_close, CloseFrame, Decoded, Decoder, Event, Limits, MessageKind};
pub use encode::{encode_close, encode_control, encode_pong, frames};
pub use error::{EncodeError, Error, HandshakeError};
pub use handshake::{accept, accept_key, validate_key, validate_version, GUID, VERSION};
pub use header::{
    header_len, FrameHeader, OpCode, Parsed, Role, MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN,
};
pub use mask::apply_mask;
pub use utf8::Utf8Validator;

// The README's example compiles and runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
