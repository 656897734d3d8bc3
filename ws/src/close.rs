//! Close status codes (RFC 6455 §7.4).

use std::fmt;

/// A close frame's status code (RFC 6455 §7.4).
///
/// Any `u16` can be held, so a code read off the wire or chosen by the application fits; the
/// constants name the ones RFC 6455 defines. [`CloseCode::is_valid`] tells whether a code may
/// appear in a close frame at all.
///
/// # Examples
///
/// ```
/// use bufslab_ws::CloseCode;
///
/// assert_eq!(CloseCode::PROTOCOL_ERROR.get(), 1002);
/// assert!(CloseCode::new(4000).is_valid()); // private use
/// assert!(!CloseCode::ABNORMAL.is_valid()); // never sent: it means "no close frame came"
/// assert_eq!(CloseCode::MESSAGE_TOO_BIG.to_string(), "1009 (message too big)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(u16);

impl CloseCode {
    /// 1000: the purpose of the connection is fulfilled.
    pub const NORMAL: Self = Self(1000);
    /// 1001: the endpoint is going away (a server shutting down, a page navigated away).
    pub const GOING_AWAY: Self = Self(1001);
    /// 1002: the peer broke the protocol. Every framing error of this crate but three asks for it.
    pub const PROTOCOL_ERROR: Self = Self(1002);
    /// 1003: a kind of data the endpoint cannot accept (binary for a text-only endpoint).
    pub const UNSUPPORTED_DATA: Self = Self(1003);
    /// 1005: reserved; stands for "the close frame had no code" and is never sent.
    pub const NO_STATUS: Self = Self(1005);
    /// 1006: reserved; stands for "closed without a close frame" and is never sent.
    pub const ABNORMAL: Self = Self(1006);
    /// 1007: data inconsistent with its type: a text message or close reason that is not UTF-8.
    pub const INVALID_PAYLOAD: Self = Self(1007);
    /// 1008: a message violates the endpoint's policy (the generic refusal).
    pub const POLICY_VIOLATION: Self = Self(1008);
    /// 1009: a frame or message larger than the endpoint accepts.
    pub const MESSAGE_TOO_BIG: Self = Self(1009);
    /// 1010: (client) the server did not negotiate an extension the client requires.
    pub const MANDATORY_EXTENSION: Self = Self(1010);
    /// 1011: (server) an unexpected condition stopped the server from serving the request.
    pub const INTERNAL_ERROR: Self = Self(1011);
    /// 1015: reserved; stands for "the TLS handshake failed" and is never sent.
    pub const TLS_HANDSHAKE: Self = Self(1015);

    /// Any code, valid or not: see [`CloseCode::is_valid`].
    pub const fn new(code: u16) -> Self {
        Self(code)
    }

    /// The code as a number.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// Whether the code may be sent in, and accepted from, a close frame: 1000-1003 and
    /// 1007-1011 (RFC 6455 §7.4.1), and 3000-4999 (registered and private use, §7.4.2).
    ///
    /// 1004-1006 and 1015 are reserved, 0-999 unused, and 1012-2999 are for later revisions of
    /// the protocol or its extensions: a receiver that meets one fails the connection with
    /// 1002. IANA has since registered 1012-1014 (restart, try again later, bad gateway); like
    /// the Autobahn test suite, this crate holds to RFC 6455's list (see `DESIGN.md`).
    pub const fn is_valid(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1011 | 3000..=4999)
    }

    /// What RFC 6455 calls the code, for messages and logs.
    pub const fn name(self) -> &'static str {
        match self.0 {
            1000 => "normal closure",
            1001 => "going away",
            1002 => "protocol error",
            1003 => "unsupported data",
            1004 => "reserved",
            1005 => "no status received",
            1006 => "abnormal closure",
            1007 => "invalid frame payload data",
            1008 => "policy violation",
            1009 => "message too big",
            1010 => "mandatory extension",
            1011 => "internal error",
            1015 => "TLS handshake",
            3000..=3999 => "registered",
            4000..=4999 => "private use",
            _ => "not a valid code",
        }
    }

    /// The two bytes a close frame's payload starts with: the code in network byte order.
    pub const fn to_be_bytes(self) -> [u8; 2] {
        self.0.to_be_bytes()
    }

    /// A whole close frame with this code and no reason, as a server sends it (unmasked): the
    /// four bytes to queue when failing a connection with the code an [`Error`](crate::Error)
    /// gives.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_ws::CloseCode;
    ///
    /// const BYE: [u8; 4] = CloseCode::NORMAL.server_frame();
    /// assert_eq!(BYE, [0x88, 0x02, 0x03, 0xe8]);
    /// ```
    pub const fn server_frame(self) -> [u8; 4] {
        let [hi, lo] = self.to_be_bytes();
        [0x88, 0x02, hi, lo]
    }
}

impl From<CloseCode> for u16 {
    fn from(code: CloseCode) -> u16 {
        code.0
    }
}

impl From<u16> for CloseCode {
    fn from(code: u16) -> CloseCode {
        CloseCode(code)
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.0, self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::CloseCode;

    #[test]
    fn validity_follows_rfc_6455_section_7_4() {
        for code in 0..=u16::MAX {
            let want = matches!(
                code,
                1000 | 1001 | 1002 | 1003 | 1007 | 1008 | 1009 | 1010 | 1011
            ) || (3000..=4999).contains(&code);
            assert_eq!(CloseCode::new(code).is_valid(), want, "{code}");
        }
        for reserved in [
            1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 2999, 999, 0, 5000,
        ] {
            assert!(!CloseCode::new(reserved).is_valid(), "{reserved}");
        }
    }

    #[test]
    fn server_frame_is_a_close_frame_with_the_code() {
        assert_eq!(
            CloseCode::PROTOCOL_ERROR.server_frame(),
            [0x88, 2, 0x03, 0xea]
        );
        assert_eq!(u16::from(CloseCode::from(4321)), 4321);
        assert_eq!(CloseCode::new(3000).to_string(), "3000 (registered)");
    }
}
