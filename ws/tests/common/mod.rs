//! Frame building and decoding for the integration tests.
// Each test file uses its own part of this module.
#![allow(dead_code)]

pub mod drive;
#[path = "../../fuzz/checks/frames.rs"]
pub mod frames;

pub use frames::{decode_pieces, Ev, Outcome};

use bufslab_ws::{apply_mask, Decoder, Limits, Role};

/// The masking key of every client frame built here.
pub const KEY: [u8; 4] = [0x5a, 0x01, 0xc3, 0xfe];

/// A frame with first byte `b0` (FIN, RSV and opcode as given) and `payload`, its length in
/// the minimal form, masked with `KEY` when `masked`.
pub fn raw(b0: u8, payload: &[u8], masked: bool) -> Vec<u8> {
    let mut out = vec![b0];
    let m = if masked { 0x80 } else { 0 };
    let len = payload.len();
    if len < 126 {
        out.push(m | len as u8);
    } else if len <= 0xffff {
        out.push(m | 126);
        out.extend((len as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend((len as u64).to_be_bytes());
    }
    let at = out.len() + if masked { 4 } else { 0 };
    if masked {
        out.extend(KEY);
    }
    out.extend_from_slice(payload);
    if masked {
        apply_mask(&mut out[at..], KEY, 0);
    }
    out
}

/// A client's (masked) frame.
pub fn client(b0: u8, payload: &[u8]) -> Vec<u8> {
    raw(b0, payload, true)
}

/// A server's (unmasked) frame.
pub fn server(b0: u8, payload: &[u8]) -> Vec<u8> {
    raw(b0, payload, false)
}

/// Frames joined into one stream.
pub fn stream(frames: &[Vec<u8>]) -> Vec<u8> {
    frames.concat()
}

/// `input` decoded whole by a server with `limits`.
pub fn serve(input: &[u8], limits: Limits) -> Outcome {
    decode_pieces(Decoder::with_limits(Role::Server, limits), input, &[])
}

/// The messages and control frames of an outcome, without the frame headers: what an
/// application sees.
pub fn messages(out: &Outcome) -> Vec<Ev> {
    out.events
        .iter()
        .filter(|e| !matches!(e, Ev::Frame(_)))
        .cloned()
        .collect()
}

/// Generated streams: mostly frames a peer of the given kind might send, valid or not, with
/// every rule of RFC 6455 broken now and then.
pub mod arb {
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// First bytes, weighted towards the valid ones; `any` brings reserved bits and opcodes.
    fn first_byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            8 => Just(0x81u8),
            8 => Just(0x82),
            4 => Just(0x01),
            4 => Just(0x02),
            2 => Just(0x00),
            3 => Just(0x80),
            3 => Just(0x89),
            3 => Just(0x8a),
            2 => Just(0x88),
            1 => Just(0x09),
            1 => Just(0xc1),
            1 => any::<u8>(),
        ]
    }

    /// Payloads: text (any Unicode), bytes, a few longer than a control frame may be, and
    /// close payloads around the edges of the valid code ranges.
    fn payload() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            6 => ".{0,30}".prop_map(String::into_bytes),
            3 => vec(any::<u8>(), 0..40),
            1 => vec(any::<u8>(), 120..300),
            3 => (
                prop_oneof![0u16..20, 990u16..1020, 2990u16..3010, 4990u16..5010, Just(u16::MAX)],
                ".{0,10}",
                any::<bool>(),
            )
                .prop_map(|(code, reason, bad)| {
                    let mut p = code.to_be_bytes().to_vec();
                    p.extend(reason.as_bytes());
                    if bad {
                        p.push(0xff);
                    }
                    p
                }),
            1 => Just(vec![0x03]),
        ]
    }

    /// One or two frames: either one frame, or a text split at any byte into a first
    /// fragment and its continuation (code points split across frames).
    fn frames(masked_ok: bool) -> impl Strategy<Value = Vec<u8>> {
        let masked = prop_oneof![19 => Just(masked_ok), 1 => Just(!masked_ok)];
        prop_oneof![
            6 => (first_byte(), payload(), masked)
                .prop_map(|(b0, p, m)| super::raw(b0, &p, m)),
            1 => (".{0,12}", any::<prop::sample::Index>()).prop_map(move |(s, cut)| {
                let s = s.into_bytes();
                let cut = cut.index(s.len() + 1);
                let mut out = super::raw(0x01, &s[..cut], masked_ok);
                out.extend(super::raw(0x80, &s[cut..], masked_ok));
                out
            }),
        ]
    }

    /// A stream of up to 8 frame groups for a server (`masked_ok`: client frames are masked) or
    /// a client.
    pub fn stream(masked_ok: bool) -> impl Strategy<Value = Vec<u8>> {
        vec(frames(masked_ok), 0..8).prop_map(|groups| groups.concat())
    }
}
