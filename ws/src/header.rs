//! The frame header (RFC 6455 §5.2): parsing with every header-only check, and writing.

use crate::{EncodeError, Error};

/// The longest header: 2 bytes, an 8-byte length and a 4-byte mask.
pub const MAX_HEADER_LEN: usize = 14;

/// The longest payload a control frame (close, ping, pong) may carry (§5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;

/// Which end of the connection this endpoint is: it decides which frames must be masked.
///
/// Clients mask every frame they send and servers none (§5.1); each end fails the connection
/// on a frame masked the wrong way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Accepts masked frames only, and sends unmasked ones.
    Server,
    /// Accepts unmasked frames only, and sends masked ones.
    Client,
}

/// A frame's opcode. The reserved ones (0x3-0x7, 0xB-0xF) fail parsing, so they have no variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OpCode {
    /// 0x0: the next fragment of the open message.
    Continuation = 0x0,
    /// 0x1: the first frame of a text (UTF-8) message.
    Text = 0x1,
    /// 0x2: the first frame of a binary message.
    Binary = 0x2,
    /// 0x8: close.
    Close = 0x8,
    /// 0x9: ping.
    Ping = 0x9,
    /// 0xA: pong.
    Pong = 0xA,
}

impl OpCode {
    /// The opcode for a 4-bit value, `None` for a reserved one.
    pub const fn from_u8(op: u8) -> Option<OpCode> {
        Some(match op {
            0x0 => OpCode::Continuation,
            0x1 => OpCode::Text,
            0x2 => OpCode::Binary,
            0x8 => OpCode::Close,
            0x9 => OpCode::Ping,
            0xA => OpCode::Pong,
            _ => return None,
        })
    }

    /// Close, ping and pong: at most 125 bytes, never fragmented, allowed between the fragments
    /// of a message.
    pub const fn is_control(self) -> bool {
        self as u8 & 0x8 != 0
    }
}

/// A frame header: what precedes every frame's payload (§5.2).
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// ```
///
/// # Examples
///
/// Parsing, from as many bytes as have arrived:
///
/// ```
/// use bufslab_ws::{FrameHeader, OpCode, Parsed, Role};
///
/// let wire = [0x82, 0xfe, 0x01, 0x00, 1, 2, 3, 4]; // binary, masked, 256 bytes
/// assert_eq!(FrameHeader::parse(&wire[..1], Role::Server), Ok(Parsed::Incomplete(2)));
/// assert_eq!(FrameHeader::parse(&wire[..2], Role::Server), Ok(Parsed::Incomplete(8)));
/// let Ok(Parsed::Complete(head, len)) = FrameHeader::parse(&wire, Role::Server) else {
///     panic!()
/// };
/// assert_eq!((head.opcode, head.payload_len, head.mask, len), (OpCode::Binary, 256, Some([1, 2, 3, 4]), 8));
/// ```
///
/// Writing, in front of a payload already in place:
///
/// ```
/// use bufslab_ws::{FrameHeader, OpCode, MAX_HEADER_LEN};
///
/// let mut block = [0u8; MAX_HEADER_LEN + 5];
/// block[MAX_HEADER_LEN..].copy_from_slice(b"hello");
/// let start = FrameHeader::new(OpCode::Text, 5).write_before(&mut block, MAX_HEADER_LEN)?;
/// assert_eq!(&block[start..], b"\x81\x05hello");
/// # Ok::<(), bufslab_ws::EncodeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FrameHeader {
    /// FIN: the last frame of its message (always set on control frames).
    pub fin: bool,
    /// RSV1: for an extension (permessage-deflate uses it); parsing refuses it.
    pub rsv1: bool,
    /// RSV2: for an extension; parsing refuses it.
    pub rsv2: bool,
    /// RSV3: for an extension; parsing refuses it.
    pub rsv3: bool,
    /// The opcode.
    pub opcode: OpCode,
    /// The masking key, when the frame is masked (every client frame).
    pub mask: Option<[u8; 4]>,
    /// The payload's length in bytes.
    pub payload_len: u64,
}

/// What [`FrameHeader::parse`] makes of the bytes it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A valid header, and how many bytes it took (2 to 14).
    Complete(FrameHeader, usize),
    /// Not enough bytes: the header is at least this long. Call again with at least this many.
    Incomplete(usize),
}

impl FrameHeader {
    /// A final, unmasked frame header with no reserved bits.
    pub const fn new(opcode: OpCode, payload_len: u64) -> FrameHeader {
        FrameHeader {
            fin: true,
            rsv1: false,
            rsv2: false,
            rsv3: false,
            opcode,
            mask: None,
            payload_len,
        }
    }

    /// The same header with FIN set or cleared: a message sent in fragments clears it on all
    /// frames but the last.
    pub const fn with_fin(mut self, fin: bool) -> FrameHeader {
        self.fin = fin;
        self
    }

    /// The same header masked with `key`, as a client sends every frame. The key should come
    /// from a strong random source, one per frame (§5.3); the payload must be masked with it
    /// ([`apply_mask`](crate::apply_mask)).
    pub const fn with_mask(mut self, key: [u8; 4]) -> FrameHeader {
        self.mask = Some(key);
        self
    }

    /// Parses a header from the start of `bytes`, which may hold only part of it, and checks
    /// everything the header alone decides, for an endpoint of role `role`: the reserved bits
    /// (no extension is negotiated), the opcode, the control-frame rules, the length encoding
    /// and the masking direction.
    ///
    /// The checks that need the first two bytes only are made as soon as they are there, so
    /// a bad frame is refused before its length or mask arrive. Lengths need not be minimally
    /// encoded (a 5 in the 16-bit form is accepted): RFC 6455 §5.2 asks senders for the
    /// minimal form but no receiver check, and tungstenite, browsers and Autobahn accept it.
    /// Never panics.
    pub fn parse(bytes: &[u8], role: Role) -> Result<Parsed, Error> {
        let (b0, b1) = match bytes {
            [b0, b1, ..] => (*b0, *b1),
            _ => return Ok(Parsed::Incomplete(2)),
        };
        if b0 & 0x70 != 0 {
            return Err(Error::ReservedBits);
        }
        let opcode = OpCode::from_u8(b0 & 0x0f).ok_or(Error::ReservedOpcode(b0 & 0x0f))?;
        let fin = b0 & 0x80 != 0;
        let masked = b1 & 0x80 != 0;
        let len7 = b1 & 0x7f;
        if opcode.is_control() {
            if !fin {
                return Err(Error::FragmentedControlFrame);
            }
            if usize::from(len7) > MAX_CONTROL_PAYLOAD {
                return Err(Error::ControlFrameTooLong);
            }
        }
        match (role, masked) {
            (Role::Server, false) => return Err(Error::UnmaskedFrame),
            (Role::Client, true) => return Err(Error::MaskedFrame),
            _ => {}
        }
        let ext = match len7 {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        let total = 2 + ext + if masked { 4 } else { 0 };
        let Some(rest) = bytes.get(2..total) else {
            return Ok(Parsed::Incomplete(total));
        };
        let (len_bytes, key) = rest.split_at(ext);
        let payload_len = match *len_bytes {
            [a, b] => u64::from(u16::from_be_bytes([a, b])),
            [a, b, c, d, e, f, g, h] => u64::from_be_bytes([a, b, c, d, e, f, g, h]),
            _ => u64::from(len7),
        };
        if payload_len >> 63 != 0 {
            return Err(Error::LengthOverflow);
        }
        let mask = match *key {
            [a, b, c, d] => Some([a, b, c, d]),
            _ => None,
        };
        let header = FrameHeader {
            fin,
            rsv1: false,
            rsv2: false,
            rsv3: false,
            opcode,
            mask,
            payload_len,
        };
        Ok(Parsed::Complete(header, total))
    }

    /// The number of bytes [`FrameHeader::write`] writes: 2, 4 or 10, plus 4 when masked.
    pub const fn encoded_len(&self) -> usize {
        header_len(self.payload_len, self.mask.is_some())
    }

    /// Writes the header at the start of `out`, in the minimal length form, and returns its
    /// length ([`FrameHeader::encoded_len`]). The payload is not touched: a client masks it
    /// with [`apply_mask`](crate::apply_mask).
    ///
    /// Refuses a control frame over 125 bytes or without FIN, and a length with bit 63 set; the
    /// reserved bits are written as they are, for an extension the caller implements.
    pub fn write(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        if self.opcode.is_control() && (!self.fin || self.payload_len > MAX_CONTROL_PAYLOAD as u64)
        {
            return Err(EncodeError::InvalidControlFrame);
        }
        if self.payload_len >> 63 != 0 {
            return Err(EncodeError::LengthOverflow);
        }
        let needed = self.encoded_len();
        let Some(out) = out.get_mut(..needed) else {
            return Err(EncodeError::BufferTooSmall { needed });
        };
        out[0] = u8::from(self.fin) << 7
            | u8::from(self.rsv1) << 6
            | u8::from(self.rsv2) << 5
            | u8::from(self.rsv3) << 4
            | self.opcode as u8;
        let mask_bit = if self.mask.is_some() { 0x80 } else { 0 };
        let len = self.payload_len;
        let key_at = match len {
            0..=125 => {
                out[1] = mask_bit | len as u8;
                2
            }
            126..=0xffff => {
                out[1] = mask_bit | 126;
                out[2..4].copy_from_slice(&(len as u16).to_be_bytes());
                4
            }
            _ => {
                out[1] = mask_bit | 127;
                out[2..10].copy_from_slice(&len.to_be_bytes());
                10
            }
        };
        if let Some(key) = self.mask {
            out[key_at..].copy_from_slice(&key);
        }
        Ok(needed)
    }

    /// Writes the header so that it ends at `payload_start` in `buf`, and returns where it
    /// starts: a server that reads or builds a payload at offset [`MAX_HEADER_LEN`] of a block
    /// frames it in place, with no copy, and sends `buf[start..]`.
    pub fn write_before(&self, buf: &mut [u8], payload_start: usize) -> Result<usize, EncodeError> {
        let needed = self.encoded_len();
        let Some(start) = payload_start.checked_sub(needed) else {
            return Err(EncodeError::BufferTooSmall { needed });
        };
        let Some(room) = buf.get_mut(start..payload_start) else {
            return Err(EncodeError::BufferTooSmall {
                needed: payload_start,
            });
        };
        self.write(room)?;
        Ok(start)
    }
}

/// The length of a header for a payload of `payload_len` bytes: 2, 4 or 10, plus 4 when masked.
///
/// # Examples
///
/// ```
/// assert_eq!(bufslab_ws::header_len(125, false), 2);
/// assert_eq!(bufslab_ws::header_len(126, true), 8);
/// assert_eq!(bufslab_ws::header_len(65536, false), 10);
/// ```
pub const fn header_len(payload_len: u64, masked: bool) -> usize {
    let len = match payload_len {
        0..=125 => 2,
        126..=0xffff => 4,
        _ => 10,
    };
    if masked {
        len + 4
    } else {
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8], role: Role) -> Result<Parsed, Error> {
        FrameHeader::parse(bytes, role)
    }

    #[test]
    fn lengths_in_each_form_and_need_more_at_every_prefix() {
        for (len, form) in [
            (0u64, vec![0x00]),
            (125, vec![125]),
            (126, vec![126, 0, 126]),
            (0xffff, vec![126, 0xff, 0xff]),
            (0x1_0000, vec![127, 0, 0, 0, 0, 0, 1, 0, 0]),
            (
                (1 << 63) - 1,
                vec![127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
        ] {
            for masked in [false, true] {
                let mut wire = vec![0x82];
                wire.extend(&form);
                wire[1] |= if masked { 0x80 } else { 0 };
                if masked {
                    wire.extend([9, 8, 7, 6]);
                }
                let role = if masked { Role::Server } else { Role::Client };
                let want = FrameHeader {
                    mask: masked.then_some([9, 8, 7, 6]),
                    ..FrameHeader::new(OpCode::Binary, len)
                };
                assert_eq!(parse(&wire, role), Ok(Parsed::Complete(want, wire.len())));
                // Trailing payload bytes are not the header's.
                wire.push(0xaa);
                assert_eq!(
                    parse(&wire, role),
                    Ok(Parsed::Complete(want, wire.len() - 1))
                );
                wire.pop();
                for cut in 0..wire.len() {
                    let Ok(Parsed::Incomplete(n)) = parse(&wire[..cut], role) else {
                        panic!("{wire:?} cut at {cut}");
                    };
                    assert!(n > cut && n <= wire.len());
                }
                let mut out = [0u8; MAX_HEADER_LEN];
                assert_eq!(want.write(&mut out), Ok(wire.len()));
                assert_eq!(&out[..wire.len()], &wire[..]);
                assert_eq!(header_len(len, masked), wire.len());
            }
        }
    }

    #[test]
    fn non_minimal_lengths_are_accepted() {
        let wire = [0x81, 126, 0, 5];
        let Ok(Parsed::Complete(h, 4)) = parse(&wire, Role::Client) else {
            panic!()
        };
        assert_eq!(h.payload_len, 5);
        let wire = [0x81, 127, 0, 0, 0, 0, 0, 0, 0, 5];
        let Ok(Parsed::Complete(h, 10)) = parse(&wire, Role::Client) else {
            panic!()
        };
        assert_eq!(h.payload_len, 5);
    }

    #[test]
    fn header_rules_fail_with_1002() {
        let role = Role::Client;
        for rsv in [0x40, 0x20, 0x10, 0x70] {
            assert_eq!(parse(&[0x81 | rsv, 0], role), Err(Error::ReservedBits));
        }
        for op in (0x3..=0x7).chain(0xb..=0xf) {
            assert_eq!(parse(&[0x80 | op, 0], role), Err(Error::ReservedOpcode(op)));
        }
        for op in [0x8, 0x9, 0xa] {
            assert_eq!(parse(&[op, 0], role), Err(Error::FragmentedControlFrame));
            for len in [126, 127] {
                assert_eq!(
                    parse(&[0x80 | op, len], role),
                    Err(Error::ControlFrameTooLong)
                );
            }
            assert!(matches!(
                parse(&[0x80 | op, 125], role),
                Ok(Parsed::Complete(..))
            ));
        }
        let mut big = [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(parse(&big, role), Err(Error::LengthOverflow));
        big[2] = 0x7f;
        assert!(matches!(parse(&big, role), Ok(Parsed::Complete(..))));
        assert_eq!(parse(&[0x81, 0x80], Role::Client), Err(Error::MaskedFrame));
        assert_eq!(
            parse(&[0x81, 0x00], Role::Server),
            Err(Error::UnmaskedFrame)
        );
        // Checks on the first two bytes do not wait for the rest.
        assert_eq!(
            parse(&[0x8a, 0xfe], Role::Server),
            Err(Error::ControlFrameTooLong)
        );
    }

    #[test]
    fn writes_refuse_what_parsing_would() {
        let mut out = [0u8; MAX_HEADER_LEN];
        let ping = FrameHeader::new(OpCode::Ping, 126);
        assert_eq!(ping.write(&mut out), Err(EncodeError::InvalidControlFrame));
        let ping = FrameHeader::new(OpCode::Ping, 0).with_fin(false);
        assert_eq!(ping.write(&mut out), Err(EncodeError::InvalidControlFrame));
        let huge = FrameHeader::new(OpCode::Binary, 1 << 63);
        assert_eq!(huge.write(&mut out), Err(EncodeError::LengthOverflow));
        let h = FrameHeader::new(OpCode::Binary, 70_000).with_mask([1, 2, 3, 4]);
        assert_eq!(
            h.write(&mut out[..13]),
            Err(EncodeError::BufferTooSmall { needed: 14 })
        );
        assert_eq!(
            h.write_before(&mut out, 13),
            Err(EncodeError::BufferTooSmall { needed: 14 })
        );
        assert_eq!(
            h.write_before(&mut out[..3], 14),
            Err(EncodeError::BufferTooSmall { needed: 14 })
        );
        assert_eq!(h.write_before(&mut out, 14), Ok(0));
        let mut rsv = FrameHeader::new(OpCode::Text, 1).with_fin(false);
        rsv.rsv1 = true;
        assert_eq!(rsv.write(&mut out), Ok(2));
        assert_eq!(out[..2], [0x41, 0x01]);
    }
}
