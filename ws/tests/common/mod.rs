//! Frame building and decoding for the integration tests.
// Each test file uses its own part of this module.
#![allow(dead_code)]

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
