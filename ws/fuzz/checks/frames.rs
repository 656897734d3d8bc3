//! What the frames target checks, shared with `tests/fuzz_seeds.rs` (which replays every seed
//! of `seeds/frames/` through it under `cargo test`) and with the split tests: an input's
//! events and verdict do not depend on how it is cut into buffers, and each event keeps the
//! decoder's promises.
//!
//! The input is a mode byte (the role and the limits) and then the bytes of a connection.

use bufslab_ws::{Decoder, Error, Event, FrameHeader, Limits, MessageKind, Parsed, Role};

/// An event, owned, so runs over different cuts can be compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    Frame(FrameHeader),
    Start(MessageKind),
    /// Consecutive `Data` events joined: their boundaries are the cuts'.
    Data(Vec<u8>),
    End,
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, String)>),
}

/// Everything a run gave: the events, then the error that ended it, if one did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub events: Vec<Ev>,
    pub error: Option<Error>,
}

/// The decoder a mode byte picks: bit 0 the role, bits 1-2 the limits.
pub fn decoder(mode: u8) -> Decoder {
    let role = if mode & 1 == 0 {
        Role::Server
    } else {
        Role::Client
    };
    let limits = match mode >> 1 & 3 {
        0 => Limits::default(),
        1 => Limits::new(64, 100),
        2 => Limits::new(0, 0),
        _ => Limits::new(200, 1000),
    };
    Decoder::with_limits(role, limits)
}

/// Decodes `input` cut at `cuts` (offsets, ascending), each piece in a buffer of its own.
pub fn decode_pieces(mut dec: Decoder, input: &[u8], cuts: &[usize]) -> Outcome {
    let mut out = Outcome {
        events: Vec::new(),
        error: None,
    };
    let mut start = 0;
    for end in cuts.iter().copied().chain([input.len()]) {
        let end = end.clamp(start, input.len());
        let mut piece = input[start..end].to_vec();
        start = end;
        if let Err(e) = feed(&mut dec, &mut piece, &mut out.events) {
            // Repeated from then on.
            assert_eq!(dec.decode(&mut [0x81]).err(), Some(e));
            out.error = Some(e);
            // The open message's bytes that came before the error depend on where the input was
            // cut (text is checked one piece at a time): only complete events compare.
            if let Some(Ev::Data(_)) = out.events.last() {
                out.events.pop();
            }
            break;
        }
    }
    check_events(&dec, &out.events);
    out
}

/// Feeds one piece until the decoder needs more; appends its events to `events`.
fn feed(dec: &mut Decoder, piece: &mut [u8], events: &mut Vec<Ev>) -> Result<(), Error> {
    let len = piece.len();
    let mut at = 0;
    // Each event but a message's start and end and an empty control frame's consumes bytes,
    // and those follow one that did.
    for _ in 0..4 * len + 8 {
        let step = dec.decode(&mut piece[at..])?;
        assert!(step.consumed <= len - at);
        at += step.consumed;
        let ev = match step.event {
            None => {
                assert_eq!(at, len, "more needed with bytes left");
                return Ok(());
            }
            Some(Event::Frame(h)) => Ev::Frame(h),
            Some(Event::MessageStart(kind)) => Ev::Start(kind),
            Some(Event::Data(data)) => {
                assert!(!data.is_empty(), "empty Data");
                if let Some(Ev::Data(last)) = events.last_mut() {
                    last.extend_from_slice(data);
                    continue;
                }
                Ev::Data(data.to_vec())
            }
            Some(Event::MessageEnd) => Ev::End,
            Some(Event::Ping(p)) => Ev::Ping(p.to_vec()),
            Some(Event::Pong(p)) => Ev::Pong(p.to_vec()),
            Some(Event::Close(c)) => Ev::Close(c.map(|c| (c.code.get(), c.reason.to_owned()))),
            Some(other) => panic!("an event this check does not know: {other:?}"),
        };
        events.push(ev);
    }
    panic!("the decoder made no progress on a piece of {len} bytes");
}

/// The decoder's promises over a run's events: every header valid for its role and written
/// back the same, messages framed by start and end with text valid UTF-8, control payloads of
/// at most 125 bytes, and nothing after a close.
fn check_events(dec: &Decoder, events: &[Ev]) {
    let mut open: Option<(MessageKind, Vec<u8>)> = None;
    let mut frame: Option<FrameHeader> = None;
    for (i, ev) in events.iter().enumerate() {
        match ev {
            Ev::Frame(h) => {
                assert_eq!(h.mask.is_some(), dec.role() == Role::Server);
                let mut wire = [0u8; bufslab_ws::MAX_HEADER_LEN];
                let n = h.write(&mut wire).expect("a parsed header can be written");
                assert_eq!(
                    FrameHeader::parse(&wire[..n], dec.role()),
                    Ok(Parsed::Complete(*h, n))
                );
                if !h.opcode.is_control() {
                    assert!(h.payload_len <= dec.limits().max_frame);
                }
                frame = Some(*h);
            }
            Ev::Start(kind) => {
                assert!(open.is_none(), "a message inside a message");
                assert!(matches!(events.get(i.wrapping_sub(1)), Some(Ev::Frame(_))));
                open = Some((*kind, Vec::new()));
            }
            Ev::Data(data) => {
                let (_, bytes) = open.as_mut().expect("data outside a message");
                bytes.extend_from_slice(data);
                assert!(bytes.len() as u64 <= dec.limits().max_message);
            }
            Ev::End => {
                let (kind, bytes) = open.take().expect("an end outside a message");
                assert!(frame.is_some_and(|h| h.fin));
                if kind == MessageKind::Text {
                    assert!(std::str::from_utf8(&bytes).is_ok(), "invalid text passed");
                }
            }
            Ev::Ping(p) | Ev::Pong(p) => assert!(p.len() <= 125),
            Ev::Close(c) => {
                assert_eq!(i + 1, events.len(), "an event after the close");
                if let Some((code, reason)) = c {
                    assert!(bufslab_ws::CloseCode::new(*code).is_valid());
                    assert!(reason.len() <= 123);
                }
            }
        }
    }
}

/// The target's body: the whole input at once, then cut before every byte (inputs up to 1 KiB,
/// to keep executions fast) and at two points the input picks, all give the same outcome.
pub fn check(data: &[u8]) {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    let whole = decode_pieces(decoder(mode), input, &[]);
    if let Some(e) = whole.error {
        assert!(!e.to_string().is_empty());
        assert!(matches!(e.close_code().get(), 1002 | 1007 | 1009), "{e:?}");
    }
    let len = input.len();
    if len <= 1024 {
        let every: Vec<usize> = (1..len).collect();
        assert_eq!(
            decode_pieces(decoder(mode), input, &every),
            whole,
            "cut at every byte"
        );
    }
    let a = (usize::from(mode) * 7 + len / 2) % (len + 1);
    let b = (a + len / 3) % (len + 1);
    let mut two = [a, b];
    two.sort_unstable();
    assert_eq!(
        decode_pieces(decoder(mode), input, &two),
        whole,
        "cut at {two:?}"
    );
}
