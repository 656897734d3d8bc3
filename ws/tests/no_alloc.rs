//! After warm-up, an echo of text and binary messages of 32 B, 4 KiB and 64 KiB, whole and in
//! fragments with pings between them, allocates nothing: the client's masked frames written,
//! the server's decoding (4 KiB receive blocks), its echo framed in place and its pongs, and the
//! client's decoding of the echo. dhat counts every heap allocation of the process.
//!
//! The file is its own `main` (`harness = false`): libtest's main thread goes on allocating
//! (recording and announcing the test) after it starts the test's thread, and those blocks
//! would land inside the measured window.

use bufslab_ws::{
    apply_mask, encode_control, encode_pong, Decoder, Event, FrameHeader, MessageKind, OpCode,
    Role, MAX_HEADER_LEN,
};

#[path = "common/drive.rs"]
mod drive;
use drive::decode_each;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const BLOCK: usize = 4096;
const KEY: [u8; 4] = [0x12, 0x9a, 0x5c, 0xe7];

/// A message of the exercise, and the number of frames the client sends it in.
struct Message {
    kind: MessageKind,
    payload: Vec<u8>,
    fragments: usize,
}

/// Text of exactly `len` bytes, with 2- and 3-byte code points throughout.
fn text(len: usize) -> Vec<u8> {
    let mut s = String::with_capacity(len);
    for c in "héllo wörld ✓ ".chars().cycle() {
        if s.len() + c.len_utf8() > len {
            break;
        }
        s.push(c);
    }
    while s.len() < len {
        s.push('x');
    }
    s.into_bytes()
}

fn messages() -> Vec<Message> {
    let mut out = Vec::new();
    for size in [32, 4096, 65536] {
        for fragments in [1, 4] {
            out.push(Message {
                kind: MessageKind::Text,
                payload: text(size),
                fragments,
            });
            out.push(Message {
                kind: MessageKind::Binary,
                payload: (0..size).map(|i| (i * 7 % 256) as u8).collect(),
                fragments,
            });
        }
    }
    out
}

/// Every buffer the exchange uses, made once.
struct Echo {
    server: Decoder,
    client: Decoder,
    /// The client's frames, rewritten each round within the capacity reserved at warm-up.
    wire: Vec<u8>,
    /// The server's receive block.
    block: [u8; BLOCK],
    /// The server's send buffer: header room, then the echoed payload.
    out: Vec<u8>,
    out_len: usize,
    kind: MessageKind,
    pong: [u8; MAX_HEADER_LEN + 125],
    echoed: usize,
}

impl Echo {
    /// The client's side: each message masked, in its fragments, a ping after the first.
    fn write_client_frames(&mut self, msgs: &[Message]) {
        self.wire.clear();
        for msg in msgs {
            let step = msg.payload.len().div_ceil(msg.fragments);
            for (i, part) in msg.payload.chunks(step).enumerate() {
                let opcode = match (i, msg.kind) {
                    (0, MessageKind::Text) => OpCode::Text,
                    (0, MessageKind::Binary) => OpCode::Binary,
                    _ => OpCode::Continuation,
                };
                let last = (i + 1) * step >= msg.payload.len();
                let head = FrameHeader::new(opcode, part.len() as u64)
                    .with_fin(last)
                    .with_mask(KEY);
                let mut room = [0u8; MAX_HEADER_LEN];
                let n = head.write(&mut room).expect("room for a header");
                self.wire.extend_from_slice(&room[..n]);
                let at = self.wire.len();
                self.wire.extend_from_slice(part);
                apply_mask(&mut self.wire[at..], KEY, 0);
                if i == 0 {
                    let n = encode_control(&mut self.pong, OpCode::Ping, b"hb", Some(KEY))
                        .expect("room");
                    self.wire.extend_from_slice(&self.pong[..n]);
                }
            }
        }
    }

    /// The server's side, one receive block at a time, then the client reading the echo.
    fn serve(&mut self, msgs: &[Message]) {
        let mut sent = 0;
        while sent < self.wire.len() {
            let n = BLOCK.min(self.wire.len() - sent);
            self.block[..n].copy_from_slice(&self.wire[sent..sent + n]);
            sent += n;
            decode_each(
                &mut self.server,
                &mut self.block[..n],
                |event| match event {
                    Event::MessageStart(kind) => {
                        self.kind = kind;
                        self.out_len = 0;
                    }
                    Event::Data(data) => {
                        let from = MAX_HEADER_LEN + self.out_len;
                        self.out[from..from + data.len()].copy_from_slice(data);
                        self.out_len += data.len();
                    }
                    Event::MessageEnd => {
                        let opcode = match self.kind {
                            MessageKind::Text => OpCode::Text,
                            MessageKind::Binary => OpCode::Binary,
                        };
                        let head = FrameHeader::new(opcode, self.out_len as u64);
                        let start = head
                            .write_before(&mut self.out, MAX_HEADER_LEN)
                            .expect("room");
                        let end = MAX_HEADER_LEN + self.out_len;
                        read_echo(
                            &mut self.client,
                            &mut self.out[start..end],
                            &msgs[self.echoed],
                        );
                        self.echoed += 1;
                    }
                    Event::Ping(p) => {
                        let n = encode_pong(&mut self.pong, p, None).expect("room");
                        assert_eq!(&self.pong[..n], b"\x8a\x02hb");
                    }
                    _ => {}
                },
            );
        }
    }
}

/// The client decoding the server's echo frame, which must be `want`.
fn read_echo(client: &mut Decoder, frame: &mut [u8], want: &Message) {
    let mut got = 0;
    decode_each(client, frame, |event| match event {
        Event::MessageStart(kind) => assert_eq!(kind, want.kind),
        Event::Data(d) => {
            assert_eq!(d, &want.payload[got..got + d.len()]);
            got += d.len();
        }
        _ => {}
    });
    assert_eq!(got, want.payload.len());
}

fn round(echo: &mut Echo, msgs: &[Message]) {
    echo.echoed = 0;
    echo.write_client_frames(msgs);
    echo.serve(msgs);
    assert_eq!(echo.echoed, msgs.len());
}

fn main() {
    echo_allocates_nothing();
    println!("test echo_allocates_nothing ... ok");
}

fn echo_allocates_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let msgs = messages();
    let mut echo = Echo {
        server: Decoder::new(Role::Server),
        client: Decoder::new(Role::Client),
        wire: Vec::new(),
        block: [0; BLOCK],
        out: vec![0; MAX_HEADER_LEN + 65536],
        out_len: 0,
        kind: MessageKind::Binary,
        pong: [0; MAX_HEADER_LEN + 125],
        echoed: 0,
    };
    // Warm-up: `wire` grows to the exchange's size once.
    round(&mut echo, &msgs);
    let before = dhat::HeapStats::get();
    for _ in 0..10 {
        round(&mut echo, &msgs);
    }
    let after = dhat::HeapStats::get();
    dhat::assert_eq!(after.total_blocks - before.total_blocks, 0);
    dhat::assert_eq!(after.total_bytes - before.total_bytes, 0);
    println!(
        "echo of {} messages ({} bytes of frames) x 10: {} allocations, {} bytes",
        msgs.len(),
        echo.wire.len(),
        after.total_blocks - before.total_blocks,
        after.total_bytes - before.total_bytes
    );
}
