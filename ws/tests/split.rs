//! The decoder's events and verdict do not depend on where the input is cut into buffers:
//! every 2-way cut of fixed streams, then random multi-way cuts of generated ones.

mod common;

use bufslab_ws::{Decoder, Limits, Role};
use common::{client, decode_pieces, server, stream, Outcome};
use proptest::prelude::*;

/// Asserts that every 2-way cut of `input` gives `whole`'s outcome.
fn every_two_way_cut(dec: &Decoder, input: &[u8]) -> Outcome {
    let whole = decode_pieces(dec.clone(), input, &[]);
    for cut in 0..=input.len() {
        assert_eq!(
            decode_pieces(dec.clone(), input, &[cut]),
            whole,
            "cut at {cut}"
        );
    }
    whole
}

fn conversation() -> Vec<u8> {
    stream(&[
        client(0x01, "κόσμε 𝄞".as_bytes()),
        client(0x89, b"ping in between"),
        client(0x00, &"✓".as_bytes()[..1]),
        client(0x80, &"✓".as_bytes()[1..]),
        client(0x82, &[0xaa; 300]),
        client(0x8a, &[]),
        client(0x81, &[]),
        client(0x88, b"\x03\xe8done"),
    ])
}

#[test]
fn a_conversation_at_every_two_way_cut() {
    let out = every_two_way_cut(&Decoder::new(Role::Server), &conversation());
    assert_eq!(out.error, None);
    assert_eq!(out.events.len(), 8 + 3 * 3 + 3 + 1);
}

#[test]
fn a_server_stream_at_every_two_way_cut() {
    let input = stream(&[
        server(0x82, &(0..=255).collect::<Vec<u8>>()),
        server(0x81, "ü".repeat(40).as_bytes()),
        server(0x88, b""),
    ]);
    let out = every_two_way_cut(&Decoder::new(Role::Client), &input);
    assert_eq!(out.error, None);
}

#[test]
fn failures_at_every_two_way_cut() {
    let failing = [
        stream(&[
            client(0x81, b"ok"),
            client(0x81, b"bad \xf0\x28\x8c\x28 utf-8"),
        ]),
        stream(&[client(0x01, b"\xe2\x82"), client(0x80, b"\x41")]),
        stream(&[client(0x01, b"a"), client(0x89, b""), client(0x82, b"b")]),
        stream(&[client(0x82, &[1; 200]), client(0x82, &[1; 201])]),
        stream(&[client(0x88, b"\x03\xee"), client(0x81, b"after")]),
        stream(&[client(0x88, b""), client(0x81, b"after")]),
        vec![0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4],
    ];
    let limits = Limits::new(200, 1000);
    for input in failing {
        let out = every_two_way_cut(&Decoder::with_limits(Role::Server, limits), &input);
        assert!(out.error.is_some(), "{input:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 256 } else { 2048 }))]

    #[test]
    fn random_cuts_of_generated_streams(
        small in any::<bool>(),
        (server_side, input) in any::<bool>().prop_flat_map(|s| (Just(s), common::arb::stream(s))),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..24),
    ) {
        let role = if server_side { Role::Server } else { Role::Client };
        let limits = if small { Limits::new(64, 100) } else { Limits::default() };
        let dec = Decoder::with_limits(role, limits);
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        let whole = decode_pieces(dec.clone(), &input, &[]);
        prop_assert_eq!(decode_pieces(dec, &input, &cuts), whole);
    }
}
