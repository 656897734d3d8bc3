//! Masking and decoding throughput: `apply_mask` (eight bytes per XOR) against the bytewise
//! definition, and the decoder over masked 64 KiB binary and text messages (the text one
//! includes UTF-8 validation) and over a stream of 32-byte messages, in 4 KiB receive blocks,
//! and tungstenite reading the same 64 KiB binary stream as a yardstick.
//!
//! Run: `cargo bench -p bufslab-ws --bench decode -- --warm-up-time 1 --measurement-time 3`
//! (pin with `taskset -c N` on a shared machine).

use std::hint::black_box;

use bufslab_ws::{apply_mask, Decoder, Event, FrameHeader, OpCode, Role};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "../tests/common/drive.rs"]
mod drive;
use drive::{decode_each, Mem};

const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// The definition in RFC 6455 §5.3: one byte at a time.
fn mask_bytewise(buf: &mut [u8], key: [u8; 4]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b ^= key[i % 4];
    }
}

/// Client frames carrying `payload` `count` times, masked.
fn client_frames(opcode: OpCode, payload: &[u8], count: usize) -> Vec<u8> {
    let mut wire = Vec::new();
    for _ in 0..count {
        let head = FrameHeader::new(opcode, payload.len() as u64).with_mask(KEY);
        let mut room = [0u8; 14];
        let n = head.write(&mut room).expect("room for a header");
        wire.extend_from_slice(&room[..n]);
        let at = wire.len();
        wire.extend_from_slice(payload);
        apply_mask(&mut wire[at..], KEY, 0);
    }
    wire
}

/// Decodes `wire` as received in 4 KiB blocks; returns the payload bytes seen.
fn decode_blocks(dec: &mut Decoder, wire: &[u8], block: &mut [u8; 4096]) -> usize {
    let mut seen = 0;
    for piece in wire.chunks(block.len()) {
        let block = &mut block[..piece.len()];
        block.copy_from_slice(piece);
        decode_each(dec, block, |event| {
            if let Event::Data(d) = event {
                seen += black_box(d).len();
            }
        });
    }
    seen
}

fn mask(c: &mut Criterion) {
    let mut g = c.benchmark_group("mask/64KiB");
    let mut buf = vec![0x55u8; 64 << 10];
    g.throughput(Throughput::Bytes(buf.len() as u64));
    g.bench_function("apply_mask", |b| {
        b.iter(|| apply_mask(black_box(&mut buf), KEY, 1))
    });
    g.bench_function("bytewise", |b| {
        b.iter(|| mask_bytewise(black_box(&mut buf), KEY))
    });
    g.finish();
}

fn decode(c: &mut Criterion) {
    let mut text = "héllo wörld ✓ ".repeat(4096);
    // Cut at a code point, then pad to exactly 64 KiB.
    while text.len() > 64 << 10 {
        text.pop();
    }
    while text.len() < 64 << 10 {
        text.push('x');
    }
    let text = text.into_bytes();
    let binary = vec![0xa5u8; 64 << 10];
    let cases = [
        ("binary-64KiB", client_frames(OpCode::Binary, &binary, 4)),
        ("text-64KiB", client_frames(OpCode::Text, &text, 4)),
        (
            "binary-32B",
            client_frames(OpCode::Binary, &binary[..32], 2048),
        ),
    ];
    let mut block = [0u8; 4096];
    for (name, wire) in &cases {
        let mut g = c.benchmark_group(format!("decode/{name}"));
        g.throughput(Throughput::Bytes(wire.len() as u64));
        g.bench_function("bufslab-ws", |b| {
            b.iter(|| {
                let mut dec = Decoder::new(Role::Server);
                decode_blocks(&mut dec, wire, &mut block)
            })
        });
        g.bench_function("tungstenite", |b| b.iter(|| tungstenite_read(wire)));
        g.finish();
    }
}

/// tungstenite's server reading every message of `wire` (its own buffering and copies
/// included, as a server using it pays them).
fn tungstenite_read(wire: &[u8]) -> usize {
    use tungstenite::protocol::{Role as TRole, WebSocket};
    let mut ws = WebSocket::from_raw_socket(Mem::sent(wire), TRole::Server, None);
    let mut seen = 0;
    while let Ok(msg) = ws.read() {
        seen += black_box(msg).len();
    }
    seen
}

criterion_group!(benches, mask, decode);
criterion_main!(benches);
