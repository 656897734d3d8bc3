//! The sending side: whole control frames, and the constant ones.

use crate::header::{FrameHeader, OpCode, MAX_CONTROL_PAYLOAD};
use crate::{apply_mask, CloseCode, EncodeError};

/// Common control frames as a server sends them (unmasked), ready to queue.
pub mod frames {
    use crate::CloseCode;

    /// A close frame with no code: "closing, no reason given".
    pub const CLOSE_EMPTY: [u8; 2] = [0x88, 0x00];
    /// A close frame with 1000 (normal closure).
    pub const CLOSE_NORMAL: [u8; 4] = CloseCode::NORMAL.server_frame();
    /// A close frame with 1001 (going away): a server shutting down.
    pub const CLOSE_GOING_AWAY: [u8; 4] = CloseCode::GOING_AWAY.server_frame();
    /// A close frame with 1002 (protocol error).
    pub const CLOSE_PROTOCOL_ERROR: [u8; 4] = CloseCode::PROTOCOL_ERROR.server_frame();
    /// A close frame with 1007 (invalid payload: text that is not UTF-8).
    pub const CLOSE_INVALID_PAYLOAD: [u8; 4] = CloseCode::INVALID_PAYLOAD.server_frame();
    /// A close frame with 1009 (message too big).
    pub const CLOSE_MESSAGE_TOO_BIG: [u8; 4] = CloseCode::MESSAGE_TOO_BIG.server_frame();
    /// A ping with no payload: a keep-alive probe.
    pub const PING_EMPTY: [u8; 2] = [0x89, 0x00];
    /// A pong with no payload: the answer to an empty ping, or an unsolicited heartbeat.
    pub const PONG_EMPTY: [u8; 2] = [0x8a, 0x00];
}

/// Writes a whole control frame (close, ping or pong) into `out` and returns its length: the
/// header, then `payload`, masked with `mask` when given (a client's frames).
///
/// # Examples
///
/// ```
/// use bufslab_ws::{encode_control, OpCode};
///
/// let mut out = [0u8; 2 + 125];
/// let n = encode_control(&mut out, OpCode::Ping, b"are you there", None)?;
/// assert_eq!(&out[..n], b"\x89\x0dare you there");
/// # Ok::<(), bufslab_ws::EncodeError>(())
/// ```
pub fn encode_control(
    out: &mut [u8],
    opcode: OpCode,
    payload: &[u8],
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    encode_parts(out, opcode, &[], payload, mask)
}

/// Writes the pong that answers a ping with payload `ping` (§5.5.3: the same payload).
///
/// # Examples
///
/// ```
/// use bufslab_ws::encode_pong;
///
/// let mut out = [0u8; 8];
/// let n = encode_pong(&mut out, b"t=1", None)?;
/// assert_eq!(&out[..n], b"\x8a\x03t=1");
/// # Ok::<(), bufslab_ws::EncodeError>(())
/// ```
pub fn encode_pong(
    out: &mut [u8],
    ping: &[u8],
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    encode_control(out, OpCode::Pong, ping, mask)
}

/// Writes a close frame with `code` and `reason` (at most 123 bytes: a control payload is 125
/// at most, and the code takes two). Refuses a code [`CloseCode::is_valid`] rejects: 1005,
/// 1006 and 1015 stand for situations with no close frame, and a peer fails the connection on
/// them.
///
/// # Examples
///
/// ```
/// use bufslab_ws::{encode_close, CloseCode};
///
/// let mut out = [0u8; 2 + 125];
/// let n = encode_close(&mut out, CloseCode::GOING_AWAY, "restarting", None)?;
/// assert_eq!(&out[..n], b"\x88\x0c\x03\xe9restarting");
/// # Ok::<(), bufslab_ws::EncodeError>(())
/// ```
pub fn encode_close(
    out: &mut [u8],
    code: CloseCode,
    reason: &str,
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    if !code.is_valid() {
        return Err(EncodeError::InvalidCloseCode(code.get()));
    }
    encode_parts(
        out,
        OpCode::Close,
        &code.to_be_bytes(),
        reason.as_bytes(),
        mask,
    )
}

/// A control frame whose payload is `head` then `tail` (a close's code and reason).
fn encode_parts(
    out: &mut [u8],
    opcode: OpCode,
    head: &[u8],
    tail: &[u8],
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    let len = head.len() + tail.len();
    if !opcode.is_control() || len > MAX_CONTROL_PAYLOAD {
        return Err(EncodeError::InvalidControlFrame);
    }
    let mut header = FrameHeader::new(opcode, len as u64);
    header.mask = mask;
    let start = header.encoded_len();
    let needed = start + len;
    let Some(out) = out.get_mut(..needed) else {
        return Err(EncodeError::BufferTooSmall { needed });
    };
    header.write(out)?;
    let (code, reason) = out[start..].split_at_mut(head.len());
    code.copy_from_slice(head);
    reason.copy_from_slice(tail);
    if let Some(key) = mask {
        apply_mask(&mut out[start..], key, 0);
    }
    Ok(needed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_close, Error};

    #[test]
    fn control_frames_refuse_what_a_peer_would() {
        let mut out = [0u8; 200];
        let long = [b'x'; 126];
        assert_eq!(
            encode_control(&mut out, OpCode::Ping, &long, None),
            Err(EncodeError::InvalidControlFrame)
        );
        assert_eq!(
            encode_control(&mut out, OpCode::Text, b"", None),
            Err(EncodeError::InvalidControlFrame)
        );
        let reason = "r".repeat(124);
        assert_eq!(
            encode_close(&mut out, CloseCode::NORMAL, &reason, None),
            Err(EncodeError::InvalidControlFrame)
        );
        assert_eq!(
            encode_close(&mut out, CloseCode::NORMAL, &reason[1..], None),
            Ok(127)
        );
        for bad in [1004, 1005, 1006, 1015, 999, 2000, 5000] {
            assert_eq!(
                encode_close(&mut out, CloseCode::new(bad), "", None),
                Err(EncodeError::InvalidCloseCode(bad))
            );
        }
        assert_eq!(
            encode_pong(&mut out[..4], b"abc", None),
            Err(EncodeError::BufferTooSmall { needed: 5 })
        );
    }

    #[test]
    fn masked_close_unmasks_to_its_code_and_reason() {
        let mut out = [0u8; 32];
        let key = [0xde, 0xad, 0xbe, 0xef];
        let n = encode_close(&mut out, CloseCode::new(4001), "ciao", Some(key)).unwrap();
        assert_eq!(&out[..6], &[0x88, 0x86, 0xde, 0xad, 0xbe, 0xef]);
        apply_mask(&mut out[6..n], key, 0);
        let close = parse_close(&out[6..n]).unwrap().unwrap();
        assert_eq!((close.code.get(), close.reason), (4001, "ciao"));
        assert_eq!(parse_close(&out[6..7]), Err(Error::CloseFrameTooShort));
    }

    #[test]
    fn constant_frames() {
        assert_eq!(frames::CLOSE_NORMAL, [0x88, 2, 0x03, 0xe8]);
        assert_eq!(frames::CLOSE_GOING_AWAY, [0x88, 2, 0x03, 0xe9]);
        assert_eq!(frames::CLOSE_PROTOCOL_ERROR, [0x88, 2, 0x03, 0xea]);
        assert_eq!(frames::CLOSE_INVALID_PAYLOAD, [0x88, 2, 0x03, 0xef]);
        assert_eq!(frames::CLOSE_MESSAGE_TOO_BIG, [0x88, 2, 0x03, 0xf1]);
        let mut out = [0u8; 2];
        assert_eq!(encode_control(&mut out, OpCode::Ping, b"", None), Ok(2));
        assert_eq!(out, frames::PING_EMPTY);
        assert_eq!(encode_pong(&mut out, b"", None), Ok(2));
        assert_eq!(out, frames::PONG_EMPTY);
        assert_eq!(encode_control(&mut out, OpCode::Close, b"", None), Ok(2));
        assert_eq!(out, frames::CLOSE_EMPTY);
    }
}
