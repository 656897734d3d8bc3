//! What can go wrong: on the wire ([`Error`]), when writing frames ([`EncodeError`]) and in the
//! opening handshake ([`HandshakeError`]).

use std::fmt;

use crate::CloseCode;

/// Why a received byte stream fails the WebSocket connection (RFC 6455 §7.1.7).
///
/// Each error names the close code to send in the close frame that answers it
/// ([`Error::close_code`]). A [`Decoder`](crate::Decoder) that returned an error returns the same
/// one for every later call: the stream cannot be resynchronised.
///
/// # Examples
///
/// ```
/// use bufslab_ws::{CloseCode, Decoder, Error, Role};
///
/// let mut dec = Decoder::new(Role::Server);
/// // A client's frame without a mask: RFC 6455 §5.1 has the server fail the connection.
/// let mut wire = [0x81, 0x02, b'h', b'i'];
/// let err = dec.decode(&mut wire).unwrap_err();
/// assert_eq!(err, Error::UnmaskedFrame);
/// assert_eq!(err.close_code(), CloseCode::PROTOCOL_ERROR);
/// let reply = err.close_code().server_frame(); // queue this, then close the socket
/// # let _ = reply;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// RSV1, RSV2 or RSV3 set, and no extension gives them a meaning (§5.2).
    ReservedBits,
    /// An opcode RFC 6455 reserves: 0x3-0x7 or 0xB-0xF (§5.2).
    ReservedOpcode(u8),
    /// A control frame declaring more than 125 bytes of payload (§5.5).
    ControlFrameTooLong,
    /// A control frame without FIN: control frames cannot be fragmented (§5.5).
    FragmentedControlFrame,
    /// A 64-bit payload length with its most significant bit set (§5.2).
    LengthOverflow,
    /// A server received an unmasked frame (§5.1).
    UnmaskedFrame,
    /// A client received a masked frame (§5.1).
    MaskedFrame,
    /// A continuation frame with no fragmented message open (§5.4).
    UnexpectedContinuation,
    /// A text or binary frame while a fragmented message is still open (§5.4).
    ExpectedContinuation,
    /// A data frame longer than [`Limits::max_frame`](crate::Limits::max_frame) (1009).
    FrameTooLarge {
        /// The frame's declared payload length.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A message longer than [`Limits::max_message`](crate::Limits::max_message), counted over
    /// its frames' declared lengths (1009).
    MessageTooLarge {
        /// The message's length with this frame (saturating).
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A text message that is not UTF-8 (§8.1; 1007).
    InvalidUtf8,
    /// A close frame with a 1-byte payload: a code takes two (§5.5.1).
    CloseFrameTooShort,
    /// A close code that may not be sent (see [`CloseCode::is_valid`]; §7.4).
    InvalidCloseCode(u16),
    /// A close reason that is not UTF-8 (§5.5.1; 1007).
    InvalidCloseReason,
    /// Bytes after the peer's close frame: it may send nothing after one (§5.5.1).
    FrameAfterClose,
}

impl Error {
    /// The close code to send when failing the connection for this error.
    pub const fn close_code(&self) -> CloseCode {
        match self {
            Error::FrameTooLarge { .. } | Error::MessageTooLarge { .. } => {
                CloseCode::MESSAGE_TOO_BIG
            }
            Error::InvalidUtf8 | Error::InvalidCloseReason => CloseCode::INVALID_PAYLOAD,
            _ => CloseCode::PROTOCOL_ERROR,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ReservedBits => f.write_str("reserved bits set without an extension"),
            Error::ReservedOpcode(op) => write!(f, "reserved opcode {op:#x}"),
            Error::ControlFrameTooLong => f.write_str("control frame payload over 125 bytes"),
            Error::FragmentedControlFrame => f.write_str("fragmented control frame"),
            Error::LengthOverflow => f.write_str("64-bit payload length with its top bit set"),
            Error::UnmaskedFrame => f.write_str("unmasked frame from a client"),
            Error::MaskedFrame => f.write_str("masked frame from a server"),
            Error::UnexpectedContinuation => f.write_str("continuation frame outside a message"),
            Error::ExpectedContinuation => {
                f.write_str("new data frame inside a fragmented message")
            }
            Error::FrameTooLarge { len, max } => {
                write!(f, "frame of {len} bytes over the limit of {max}")
            }
            Error::MessageTooLarge { len, max } => {
                write!(f, "message of {len} bytes over the limit of {max}")
            }
            Error::InvalidUtf8 => f.write_str("text message is not UTF-8"),
            Error::CloseFrameTooShort => f.write_str("close frame with a 1-byte payload"),
            Error::InvalidCloseCode(code) => write!(f, "invalid close code {code}"),
            Error::InvalidCloseReason => f.write_str("close reason is not UTF-8"),
            Error::FrameAfterClose => f.write_str("data after the close frame"),
        }?;
        write!(f, " (close with {})", self.close_code())
    }
}

impl std::error::Error for Error {}

/// Why a frame could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output buffer is shorter than the frame (or the room before the payload shorter
    /// than the header): `needed` bytes are.
    BufferTooSmall {
        /// Bytes the frame (or header) needs.
        needed: usize,
    },
    /// A control frame with more than 125 bytes of payload, or without FIN (§5.5).
    InvalidControlFrame,
    /// A payload length with bit 63 set: no frame can carry it (§5.2).
    LengthOverflow,
    /// A close code that may not be sent (see [`CloseCode::is_valid`]).
    InvalidCloseCode(u16),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed } => {
                write!(f, "output buffer too small: {needed} bytes needed")
            }
            EncodeError::InvalidControlFrame => {
                f.write_str("control frame over 125 bytes or not final")
            }
            EncodeError::LengthOverflow => f.write_str("payload length over 2^63 - 1"),
            EncodeError::InvalidCloseCode(code) => write!(f, "close code {code} may not be sent"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// Why an opening handshake request is refused (RFC 6455 §4.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeError {
    /// `Sec-WebSocket-Key` is not the base64 encoding of 16 bytes.
    InvalidKey,
    /// `Sec-WebSocket-Version` is not `13`.
    UnsupportedVersion,
}

impl HandshakeError {
    /// The HTTP status to answer with: 400, or 426 for a version this crate does not speak
    /// (send `Sec-WebSocket-Version: 13` with it, RFC 6455 §4.4).
    pub const fn status(&self) -> u16 {
        match self {
            HandshakeError::InvalidKey => 400,
            HandshakeError::UnsupportedVersion => 426,
        }
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::InvalidKey => {
                f.write_str("Sec-WebSocket-Key is not the base64 of 16 bytes")
            }
            HandshakeError::UnsupportedVersion => f.write_str("Sec-WebSocket-Version is not 13"),
        }
    }
}

impl std::error::Error for HandshakeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_names_its_close_code() {
        let cases = [
            (Error::ReservedBits, 1002),
            (Error::ReservedOpcode(3), 1002),
            (Error::ControlFrameTooLong, 1002),
            (Error::FragmentedControlFrame, 1002),
            (Error::LengthOverflow, 1002),
            (Error::UnmaskedFrame, 1002),
            (Error::MaskedFrame, 1002),
            (Error::UnexpectedContinuation, 1002),
            (Error::ExpectedContinuation, 1002),
            (Error::FrameTooLarge { len: 2, max: 1 }, 1009),
            (Error::MessageTooLarge { len: 2, max: 1 }, 1009),
            (Error::InvalidUtf8, 1007),
            (Error::CloseFrameTooShort, 1002),
            (Error::InvalidCloseCode(1005), 1002),
            (Error::InvalidCloseReason, 1007),
            (Error::FrameAfterClose, 1002),
        ];
        for (err, code) in cases {
            assert_eq!(err.close_code().get(), code, "{err:?}");
            assert!(err.to_string().contains(&code.to_string()), "{err}");
        }
        assert!(!EncodeError::BufferTooSmall { needed: 3 }
            .to_string()
            .is_empty());
        assert_eq!(HandshakeError::UnsupportedVersion.status(), 426);
        assert_eq!(HandshakeError::InvalidKey.status(), 400);
    }
}
