//! Every rule of RFC 6455 the decoder enforces, each with the close code it fails with.

mod common;

use bufslab_ws::{
    CloseCode, Decoder, Error, Event, FrameHeader, Limits, MessageKind, OpCode, Role,
};
use common::{client, messages, serve, server, stream, Ev};

const TEXT: u8 = 0x81;
const BINARY: u8 = 0x82;
const CLOSE: u8 = 0x88;
const PING: u8 = 0x89;
const PONG: u8 = 0x8a;
/// First bytes without FIN.
const TEXT_MORE: u8 = 0x01;
const BINARY_MORE: u8 = 0x02;
const CONT_MORE: u8 = 0x00;
const CONT: u8 = 0x80;

fn default() -> Limits {
    Limits::default()
}

fn error_of(input: &[u8]) -> Option<Error> {
    serve(input, default()).error
}

#[test]
fn a_text_message_in_one_frame() {
    let out = serve(&client(TEXT, b"hello"), default());
    assert_eq!(out.error, None);
    let Ev::Frame(h) = &out.events[0] else {
        panic!("{out:?}")
    };
    assert_eq!((h.fin, h.opcode, h.payload_len), (true, OpCode::Text, 5));
    assert_eq!(h.mask, Some(common::KEY));
    assert_eq!(
        out.events[1..],
        [
            Ev::Start(MessageKind::Text),
            Ev::Data(b"hello".to_vec()),
            Ev::End
        ]
    );
}

#[test]
fn fragments_with_control_frames_between_them() {
    let input = stream(&[
        client(TEXT_MORE, "ça ".as_bytes()),
        client(PING, b"p1"),
        client(CONT_MORE, b""),
        client(PONG, b""),
        client(CONT, b"va"),
        client(BINARY, &[0, 1, 2]),
        client(CLOSE, b"\x03\xe8bye"),
    ]);
    let out = serve(&input, default());
    assert_eq!(out.error, None);
    assert_eq!(
        messages(&out),
        [
            Ev::Start(MessageKind::Text),
            Ev::Data("ça ".as_bytes().to_vec()),
            Ev::Ping(b"p1".to_vec()),
            Ev::Pong(vec![]),
            Ev::Data(b"va".to_vec()),
            Ev::End,
            Ev::Start(MessageKind::Binary),
            Ev::Data(vec![0, 1, 2]),
            Ev::End,
            Ev::Close(Some((1000, "bye".into()))),
        ]
    );
    assert_eq!(
        out.events
            .iter()
            .filter(|e| matches!(e, Ev::Frame(_)))
            .count(),
        7
    );
}

#[test]
fn empty_messages_and_frames() {
    let input = stream(&[
        client(TEXT, b""),
        client(BINARY_MORE, b""),
        client(CONT_MORE, b""),
        client(CONT, b""),
    ]);
    let out = serve(&input, default());
    assert_eq!(out.error, None);
    assert_eq!(
        messages(&out),
        [
            Ev::Start(MessageKind::Text),
            Ev::End,
            Ev::Start(MessageKind::Binary),
            Ev::End
        ]
    );
}

#[test]
fn continuation_rules_fail_with_1002() {
    let lone = client(CONT, b"x");
    assert_eq!(error_of(&lone), Some(Error::UnexpectedContinuation));
    let after_end = stream(&[client(TEXT, b"a"), client(CONT, b"b")]);
    assert_eq!(error_of(&after_end), Some(Error::UnexpectedContinuation));
    for next in [TEXT, BINARY, TEXT_MORE, BINARY_MORE] {
        let input = stream(&[client(BINARY_MORE, b"a"), client(next, b"b")]);
        let e = error_of(&input);
        assert_eq!(e, Some(Error::ExpectedContinuation));
        assert_eq!(e.map(|e| e.close_code()), Some(CloseCode::PROTOCOL_ERROR));
    }
}

#[test]
fn control_frame_rules_fail_with_1002() {
    for op in [CLOSE, PING, PONG] {
        assert_eq!(
            error_of(&client(op, &[b'x'; 126])),
            Some(Error::ControlFrameTooLong)
        );
        assert_eq!(
            error_of(&client(op & 0x7f, b"")),
            Some(Error::FragmentedControlFrame)
        );
        // 125 bytes is the most a control frame carries (a close's must be UTF-8 after the code).
        let mut most = [b'x'; 125];
        most[..2].copy_from_slice(&1000u16.to_be_bytes());
        assert_eq!(error_of(&client(op, &most)), None);
    }
    // A control frame claiming a 16-bit length is refused on its first two bytes.
    assert_eq!(error_of(&[0x89, 0xfe]), Some(Error::ControlFrameTooLong));
}

#[test]
fn reserved_bits_and_opcodes_fail_with_1002() {
    for rsv in [0x40, 0x20, 0x10] {
        assert_eq!(
            error_of(&client(TEXT | rsv, b"x")),
            Some(Error::ReservedBits)
        );
    }
    for op in (0x3..=0x7).chain(0xb..=0xf) {
        assert_eq!(
            error_of(&client(0x80 | op, b"")),
            Some(Error::ReservedOpcode(op))
        );
    }
}

#[test]
fn length_rules() {
    // Top bit of the 64-bit length: 1002 even before the key.
    let mut wire = vec![0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1];
    assert_eq!(error_of(&wire), None); // the key is still missing
    wire.extend(common::KEY);
    assert_eq!(error_of(&wire), Some(Error::LengthOverflow));
    // A non-minimal length is accepted (RFC 6455 §5.2 binds the sender only).
    let mut padded = vec![0x82, 0xfe, 0, 3, 0, 0, 0, 0, 7, 8, 9];
    let out = serve(&padded, default());
    assert_eq!(out.error, None);
    assert_eq!(messages(&out)[1], Ev::Data(vec![7, 8, 9]));
    padded[1] = 0xff;
    padded.splice(2..4, [0, 0, 0, 0, 0, 0, 0, 3]);
    assert_eq!(
        messages(&serve(&padded, default()))[1],
        Ev::Data(vec![7, 8, 9])
    );
}

#[test]
fn masking_direction_fails_with_1002() {
    assert_eq!(error_of(&server(TEXT, b"x")), Some(Error::UnmaskedFrame));
    let out = common::decode_pieces(Decoder::new(Role::Client), &client(TEXT, b"x"), &[]);
    assert_eq!(out.error, Some(Error::MaskedFrame));
    let out = common::decode_pieces(Decoder::new(Role::Client), &server(TEXT, b"x"), &[]);
    assert_eq!(out.error, None);
    assert_eq!(messages(&out)[1], Ev::Data(b"x".to_vec()));
}

#[test]
fn frame_and_message_limits_fail_with_1009_before_the_payload() {
    let limits = Limits::new(10, 15);
    assert_eq!(serve(&client(BINARY, &[0; 10]), limits).error, None);
    // Only the header: the limit is known from it.
    let head = &client(BINARY, &[0; 11])[..6];
    let e = serve(head, limits).error;
    assert_eq!(e, Some(Error::FrameTooLarge { len: 11, max: 10 }));
    assert_eq!(e.map(|e| e.close_code()), Some(CloseCode::MESSAGE_TOO_BIG));
    let fits = stream(&[client(TEXT_MORE, &[b'a'; 10]), client(CONT, &[b'a'; 5])]);
    assert_eq!(serve(&fits, limits).error, None);
    let over = stream(&[client(TEXT_MORE, &[b'a'; 10]), client(CONT, &[b'a'; 6])]);
    let e = serve(&over, limits).error;
    assert_eq!(e, Some(Error::MessageTooLarge { len: 16, max: 15 }));
    assert_eq!(e.map(|e| e.close_code().get()), Some(1009));
    // Control frames are bounded by the protocol, not the limits.
    assert_eq!(
        serve(&client(PING, &[1; 100]), Limits::new(0, 0)).error,
        None
    );
    // The count starts again with each message.
    let two = stream(&[client(TEXT, &[b'a'; 10]), client(TEXT, &[b'a'; 10])]);
    assert_eq!(serve(&two, limits).error, None);
}

#[test]
fn text_is_checked_across_frames_and_buffers() {
    let euro = "€".as_bytes(); // e2 82 ac
    let split = stream(&[client(TEXT_MORE, &euro[..1]), client(CONT, &euro[1..])]);
    let out = serve(&split, default());
    assert_eq!(out.error, None);
    let cut = common::decode_pieces(Decoder::new(Role::Server), &split, &[7, 8, 14]);
    assert_eq!(cut, out);
    // Invalid: 1007, in a single frame, across frames, or cut short at the message's end.
    let bad = Some(Error::InvalidUtf8);
    assert_eq!(error_of(&client(TEXT, b"ok\xff")), bad);
    let across = stream(&[client(TEXT_MORE, b"\xe2\x82"), client(CONT, b"A")]);
    assert_eq!(error_of(&across), bad);
    let short = stream(&[client(TEXT_MORE, b"a"), client(CONT, &euro[..2])]);
    assert_eq!(error_of(&short), bad);
    assert_eq!(
        bad.map(|e| e.close_code()),
        Some(CloseCode::INVALID_PAYLOAD)
    );
    // A surrogate is refused on its second byte, before the frame is over.
    assert_eq!(error_of(&client(TEXT_MORE, b"\xed\xa0")), bad);
    // Binary is not text.
    assert_eq!(error_of(&client(BINARY, b"\xff\xfe")), None);
}

#[test]
fn close_frames() {
    let close = |payload: &[u8]| serve(&client(CLOSE, payload), default());
    assert_eq!(messages(&close(b"")), [Ev::Close(None)]);
    assert_eq!(close(b"\x03").error, Some(Error::CloseFrameTooShort));
    assert_eq!(
        messages(&close(b"\x0f\xa0")),
        [Ev::Close(Some((4000, String::new())))]
    );
    for code in 0..=5100u16 {
        let out = close(&code.to_be_bytes());
        let valid = matches!(code, 1000..=1003 | 1007..=1011 | 3000..=4999);
        if valid {
            assert_eq!(messages(&out), [Ev::Close(Some((code, String::new())))]);
        } else {
            assert_eq!(out.error, Some(Error::InvalidCloseCode(code)), "{code}");
            assert_eq!(out.error.map(|e| e.close_code().get()), Some(1002));
        }
    }
    let e = close(b"\x03\xe8not \xff utf-8").error;
    assert_eq!(e, Some(Error::InvalidCloseReason));
    assert_eq!(e.map(|e| e.close_code().get()), Some(1007));
    // Nothing may follow a close frame, not even a byte.
    let after = stream(&[client(CLOSE, b""), vec![0x81]]);
    assert_eq!(error_of(&after), Some(Error::FrameAfterClose));
}

#[test]
fn a_control_payload_split_over_pieces_is_gathered() {
    let ping = client(PING, &[7; 125]);
    for cut in 6..ping.len() {
        let out = common::decode_pieces(Decoder::new(Role::Server), &ping, &[cut, cut + 1]);
        assert_eq!(messages(&out), [Ev::Ping(vec![7; 125])], "cut at {cut}");
    }
}

#[test]
fn large_payloads_unmask_block_by_block() {
    let payload: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
    let wire = client(BINARY, &payload);
    let cuts: Vec<usize> = (1..=wire.len() / 4096).map(|i| i * 4096 - i % 3).collect();
    let out = common::decode_pieces(Decoder::new(Role::Server), &wire, &cuts);
    assert_eq!(out.error, None);
    assert_eq!(messages(&out)[1], Ev::Data(payload));
}

#[test]
fn data_is_a_slice_of_the_callers_buffer() {
    let mut wire = client(TEXT, b"in place");
    let base = wire.as_ptr() as usize;
    let mut dec = Decoder::new(Role::Server);
    let mut at = 0;
    loop {
        let step = dec.decode(&mut wire[at..]).unwrap();
        at += step.consumed;
        match step.event {
            Some(Event::Data(d)) => {
                assert_eq!(d, b"in place");
                assert_eq!(d.as_ptr() as usize - base, 6);
            }
            Some(_) => {}
            None => break,
        }
    }
    // Unmasked where it lay.
    assert_eq!(&wire[6..], b"in place");
}

#[test]
fn errors_repeat_and_reset_starts_over() {
    let mut dec = Decoder::new(Role::Server);
    let mut bad = server(TEXT, b"x");
    assert_eq!(dec.decode(&mut bad).err(), Some(Error::UnmaskedFrame));
    assert_eq!(
        dec.decode(&mut client(TEXT, b"x")).err(),
        Some(Error::UnmaskedFrame)
    );
    dec.reset();
    let mut good = client(TEXT, b"x");
    let step = dec.decode(&mut good).unwrap();
    assert!(matches!(step.event, Some(Event::Frame(_))));
    assert_eq!(dec.open_message(), Some(MessageKind::Text));
    assert_eq!(dec.role(), Role::Server);
    assert_eq!(dec.limits(), Limits::default());
    assert!(!dec.is_closed());
}

#[test]
fn written_frames_decode_to_what_was_written() {
    let mut block = [0u8; 14 + 300];
    let payload = [b'z'; 300];
    block[14..].copy_from_slice(&payload);
    let head = FrameHeader::new(OpCode::Binary, 300).with_mask([1, 2, 3, 4]);
    let start = head.write_before(&mut block, 14).unwrap();
    bufslab_ws::apply_mask(&mut block[14..], [1, 2, 3, 4], 0);
    let out = serve(&block[start..], default());
    assert_eq!(out.events[0], Ev::Frame(head));
    assert_eq!(messages(&out)[1], Ev::Data(payload.to_vec()));
}

#[test]
fn a_decoder_is_small_and_fixed() {
    // Per connection, on the stack or inline in the connection's state: no heap behind it.
    let size = std::mem::size_of::<Decoder>();
    assert!(size <= 256, "{size}");
}
