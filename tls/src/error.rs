//! The crate's one error type, and the alert each error answers with.

use core::fmt;

/// A TLS alert description (RFC 8446 §6, RFC 5246 §7.2): the ones this crate sends or names, and any other
/// code as received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AlertDescription {
    /// `close_notify` (0): the sender writes no more.
    CloseNotify,
    /// `unexpected_message` (10).
    UnexpectedMessage,
    /// `bad_record_mac` (20): a record failed authentication.
    BadRecordMac,
    /// `record_overflow` (22).
    RecordOverflow,
    /// `handshake_failure` (40).
    HandshakeFailure,
    /// `illegal_parameter` (47).
    IllegalParameter,
    /// `decode_error` (50).
    DecodeError,
    /// `protocol_version` (70).
    ProtocolVersion,
    /// `internal_error` (80).
    InternalError,
    /// `user_canceled` (90).
    UserCanceled,
    /// `no_renegotiation` (100): TLS 1.2's warning for a renegotiation refused.
    NoRenegotiation,
    /// Any other code.
    Other(u8),
}

impl AlertDescription {
    /// The code on the wire.
    pub const fn code(self) -> u8 {
        match self {
            Self::CloseNotify => 0,
            Self::UnexpectedMessage => 10,
            Self::BadRecordMac => 20,
            Self::RecordOverflow => 22,
            Self::HandshakeFailure => 40,
            Self::IllegalParameter => 47,
            Self::DecodeError => 50,
            Self::ProtocolVersion => 70,
            Self::InternalError => 80,
            Self::UserCanceled => 90,
            Self::NoRenegotiation => 100,
            Self::Other(code) => code,
        }
    }

    /// The description a code on the wire names.
    pub const fn from_code(code: u8) -> Self {
        match code {
            0 => Self::CloseNotify,
            10 => Self::UnexpectedMessage,
            20 => Self::BadRecordMac,
            22 => Self::RecordOverflow,
            40 => Self::HandshakeFailure,
            47 => Self::IllegalParameter,
            50 => Self::DecodeError,
            70 => Self::ProtocolVersion,
            80 => Self::InternalError,
            90 => Self::UserCanceled,
            100 => Self::NoRenegotiation,
            other => Self::Other(other),
        }
    }
}

impl fmt::Display for AlertDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::CloseNotify => "close_notify",
            Self::UnexpectedMessage => "unexpected_message",
            Self::BadRecordMac => "bad_record_mac",
            Self::RecordOverflow => "record_overflow",
            Self::HandshakeFailure => "handshake_failure",
            Self::IllegalParameter => "illegal_parameter",
            Self::DecodeError => "decode_error",
            Self::ProtocolVersion => "protocol_version",
            Self::InternalError => "internal_error",
            Self::UserCanceled => "user_canceled",
            Self::NoRenegotiation => "no_renegotiation",
            Self::Other(code) => return write!(f, "alert {code}"),
        };
        f.write_str(name)
    }
}

/// Everything that can go wrong, on the record layer and in the handshake.
///
/// [`Error::alert`] tells which alert to send to the peer before closing, if any.
/// An error returned by a [`Sealer`](crate::record::Sealer) or an
/// [`Opener`](crate::record::Opener) poisons that direction: every later call returns it
/// again (the one exception, [`Error::KeyUpdateNeeded`], is a refusal that changed nothing).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A record failed authentication (wrong tag, wrong key, or too short to hold a tag).
    BadRecordMac,
    /// A record longer than 2^14 + 256 bytes of ciphertext, or 2^14 bytes of plaintext.
    RecordOverflow,
    /// The outer content type of a record after the handshake is not `application_data`
    /// (a `change_cipher_spec`, a plaintext alert or handshake record, or an unknown type).
    UnexpectedRecordType(u8),
    /// The legacy record version is not 0x0303.
    BadRecordVersion(u16),
    /// The inner plaintext is all zeros: there is no content type.
    MissingContentType,
    /// The inner content type is not application data, alert or handshake.
    UnexpectedContentType(u8),
    /// An alert or handshake record with no content.
    EmptyControlRecord,
    /// More consecutive empty application-data records than
    /// [`MAX_EMPTY_RECORDS`](crate::record::MAX_EMPTY_RECORDS).
    TooManyEmptyRecords,
    /// A handshake message after the handshake that is not a `KeyUpdate` (a `ClientHello`
    /// is a renegotiation attempt); the message type.
    UnexpectedHandshake(u8),
    /// A `KeyUpdate` not at the end of its record, as a key change must be (RFC 8446 §5.1), or
    /// cut short in a message that is to be whole (`parse_handshake`).
    KeyUpdateNotAligned,
    /// Another record type between the pieces of a handshake message split across records
    /// (RFC 8446 §5.1).
    HandshakeInterleaved,
    /// TLS 1.2: more than one renegotiation attempt (a `ClientHello` after the handshake);
    /// the first is answered with a `no_renegotiation` warning, as rustls does.
    TooManyRenegotiations,
    /// TLS 1.2: more warning alerts than
    /// [`MAX_WARNING_ALERTS`](crate::record::MAX_WARNING_ALERTS).
    TooManyWarningAlerts,
    /// A `KeyUpdate` whose `request_update` is neither 0 nor 1.
    BadKeyUpdate,
    /// An alert or handshake message that does not parse.
    Decode,
    /// An alert level that is neither warning nor fatal.
    BadAlertLevel(u8),
    /// A warning alert other than `close_notify` and `user_canceled`, which TLS 1.3 forbids.
    WarningAlert(AlertDescription),
    /// The peer sent a fatal alert; nothing is to be sent back.
    PeerAlert(AlertDescription),
    /// A record was to be sealed after our `close_notify` or fatal alert.
    Closed,
    /// The sequence number of this direction is used up: the connection must end.
    SequenceExhausted,
    /// The key's record limit is reached (for AES-GCM, the confidentiality limit): send a
    /// `KeyUpdate` first. A refusal: nothing was sealed and the direction is not poisoned.
    KeyUpdateNeeded,
    /// TLS 1.2, which has no `KeyUpdate`: the sending key's record limit is reached (for
    /// AES-GCM, the confidentiality limit); send `close_notify` and close, as rustls does. A
    /// refusal: nothing was sealed and the direction is not poisoned.
    KeysExhausted,
    /// TLS 1.2 has no padding: a record was to be sealed with some.
    PaddingUnsupported,
    /// A control record (a `KeyUpdate` the peer asked for or the record limit calls for) must
    /// be written with `Connection::write_control` before more data is sealed. A refusal:
    /// nothing was sealed.
    ControlPending,
    /// The caller's buffer cannot hold the record layout; the bytes it needs.
    BufferTooSmall(usize),
    /// Plaintext (with its content type and padding) over 2^14 + 1 bytes was to be sealed.
    PlaintextTooLarge,
    /// A key whose length does not fit the suite.
    BadKey,
    /// A suite this crate does not seal or open (TLS 1.2 suites among them).
    UnsupportedSuite,
    /// The handshake failed in rustls; the alert it chose, if any, was written for the peer.
    Handshake(rustls::Error),
    /// The peer closed the connection before the handshake completed.
    ClosedDuringHandshake,
    /// A state of rustls this crate does not expect (a bug, here or there).
    Internal(&'static str),
}

impl Error {
    /// The alert to send the peer for this error, or `None` when none is due (the peer
    /// already closed, or the error is the caller's and not the peer's).
    pub fn alert(&self) -> Option<AlertDescription> {
        use AlertDescription as A;
        Some(match self {
            Self::BadRecordMac => A::BadRecordMac,
            Self::RecordOverflow => A::RecordOverflow,
            Self::UnexpectedRecordType(_)
            | Self::MissingContentType
            | Self::UnexpectedContentType(_)
            | Self::EmptyControlRecord
            | Self::TooManyEmptyRecords
            | Self::UnexpectedHandshake(_)
            | Self::TooManyRenegotiations
            | Self::TooManyWarningAlerts
            | Self::KeyUpdateNotAligned
            | Self::HandshakeInterleaved => A::UnexpectedMessage,
            Self::BadRecordVersion(_) | Self::Decode | Self::WarningAlert(_) => A::DecodeError,
            Self::BadKeyUpdate | Self::BadAlertLevel(_) => A::IllegalParameter,
            Self::PeerAlert(_)
            | Self::Closed
            | Self::SequenceExhausted
            | Self::KeyUpdateNeeded
            | Self::KeysExhausted
            | Self::ControlPending
            | Self::Handshake(_)
            | Self::ClosedDuringHandshake => return None,
            Self::BufferTooSmall(_)
            | Self::PlaintextTooLarge
            | Self::PaddingUnsupported
            | Self::BadKey
            | Self::UnsupportedSuite
            | Self::Internal(_) => A::InternalError,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadRecordMac => f.write_str("record failed authentication"),
            Self::RecordOverflow => f.write_str("record too large"),
            Self::UnexpectedRecordType(t) => {
                write!(
                    f,
                    "record type {t} after the handshake (only 23 is allowed)"
                )
            }
            Self::BadRecordVersion(v) => write!(f, "record version {v:#06x} (not 0x0303)"),
            Self::MissingContentType => f.write_str("record without a content type (all zeros)"),
            Self::UnexpectedContentType(t) => write!(f, "unexpected inner content type {t}"),
            Self::EmptyControlRecord => f.write_str("empty alert or handshake record"),
            Self::TooManyEmptyRecords => f.write_str("too many consecutive empty records"),
            Self::UnexpectedHandshake(t) => {
                write!(f, "handshake message type {t} after the handshake")
            }
            Self::KeyUpdateNotAligned => f.write_str("key update not alone in its record"),
            Self::HandshakeInterleaved => {
                f.write_str("other records between the pieces of a handshake message")
            }
            Self::TooManyRenegotiations => f.write_str("more than one renegotiation attempt"),
            Self::TooManyWarningAlerts => f.write_str("too many warning alerts"),
            Self::BadKeyUpdate => f.write_str("key update with an invalid request_update"),
            Self::Decode => f.write_str("alert or handshake message does not parse"),
            Self::BadAlertLevel(l) => write!(f, "alert level {l}"),
            Self::WarningAlert(d) => write!(f, "warning alert {d} (forbidden in TLS 1.3)"),
            Self::PeerAlert(d) => write!(f, "peer sent fatal alert {d}"),
            Self::Closed => f.write_str("connection closed in this direction"),
            Self::SequenceExhausted => f.write_str("record sequence number exhausted"),
            Self::KeyUpdateNeeded => f.write_str("key update needed before more records"),
            Self::KeysExhausted => {
                f.write_str("sending key's record limit reached (TLS 1.2: close the connection)")
            }
            Self::PaddingUnsupported => f.write_str("padding in a TLS 1.2 record"),
            Self::ControlPending => f.write_str("a control record must be written first"),
            Self::BufferTooSmall(n) => write!(f, "buffer too small: {n} bytes needed"),
            Self::PlaintextTooLarge => f.write_str("plaintext over 2^14 bytes"),
            Self::BadKey => f.write_str("key length does not match the suite"),
            Self::UnsupportedSuite => f.write_str("cipher suite not supported"),
            Self::Handshake(e) => write!(f, "handshake failed: {e}"),
            Self::ClosedDuringHandshake => f.write_str("peer closed during the handshake"),
            Self::Internal(what) => write!(f, "internal error: {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Handshake(e) => Some(e),
            _ => None,
        }
    }
}
