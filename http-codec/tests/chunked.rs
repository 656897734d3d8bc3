//! Chunked transfer coding (RFC 9112 §7.1): decoding at every split point, and rejection of
//! malformed framing.

use bufslab_http::{BodyDecoder, BodyFraming, ChunkedDecoder, Config, Error};
use proptest::prelude::*;

#[path = "common/chunked_ref.rs"]
mod chunked_ref;
use chunked_ref::{recognise, Verdict};

/// Decodes `input` fed in pieces cut at `cuts`; returns (body, bytes consumed, done).
fn decode_split(input: &[u8], cuts: &[usize]) -> Result<(Vec<u8>, usize, bool), Error> {
    decode_split_with(ChunkedDecoder::new(), input, cuts)
}

/// [`decode_split`] with a given decoder.
fn decode_split_with(
    mut dec: ChunkedDecoder,
    input: &[u8],
    cuts: &[usize],
) -> Result<(Vec<u8>, usize, bool), Error> {
    let mut body = Vec::new();
    let mut pos = 0; // consumed so far
    for &end in cuts.iter().chain(std::iter::once(&input.len())) {
        let end = end.clamp(pos, input.len());
        // The caller keeps unconsumed bytes and appends new ones: feed input[pos..end].
        loop {
            let step = dec.decode(&input[pos..end])?;
            body.extend_from_slice(step.data);
            pos += step.consumed;
            if step.done {
                return Ok((body, pos, true));
            }
            if step.consumed == 0 {
                break;
            }
        }
    }
    Ok((body, pos, false))
}

const VALID: &[(&str, &[u8], &[u8])] = &[
    (
        "9112 §7.1 single chunk",
        b"5\r\nhello\r\n0\r\n\r\n",
        b"hello",
    ),
    (
        "9112 §7.1 several chunks",
        b"5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n",
        b"hello world",
    ),
    (
        "9112 §7.1 hex sizes, upper and lower case",
        b"A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n",
        b"0123456789abcdefghij",
    ),
    (
        "9112 §7.1 leading zeros in size",
        b"0005\r\nhello\r\n000\r\n\r\n",
        b"hello",
    ),
    (
        "9112 §7.1.1 chunk extensions ignored",
        b"5;name=value;flag\r\nhello\r\n0;last\r\n\r\n",
        b"hello",
    ),
    (
        "9112 §7.1.1 BWS before extension",
        b"5 ;a=\"q s\"\r\nhello\r\n0\t;x\r\n\r\n",
        b"hello",
    ),
    (
        "9112 §7.1.1 BWS around ; and =, quoted value",
        b"2 ; a=\"x\"\r\naa\r\n0\r\n\r\n",
        b"aa",
    ),
    (
        "9112 §7.1.1 token value, then quoted value with a quoted-pair",
        b"2;a=b;c=\"d\\\"e\"\r\naa\r\n0\r\n\r\n",
        b"aa",
    ),
    (
        "9112 §7.1.1 BWS before = and after it, tabs",
        b"2;a\t=\t b ;c\r\naa\r\n0\r\n\r\n",
        b"aa",
    ),
    (
        "9110 §5.6.4 quoted-string with ; , = SP HTAB and obs-text",
        b"2;a=\"; ,=\t\x80\xff\"\r\naa\r\n0\r\n\r\n",
        b"aa",
    ),
    (
        "9112 §7.1.3 trailers that name framing fields are discarded",
        b"2\r\naa\r\n0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"aa",
    ),
    (
        "9112 §7.1.2 trailer fields",
        b"5\r\nhello\r\n0\r\nExpires: never\r\nX-Sum:abc\r\n\r\n",
        b"hello",
    ),
    ("9112 §7.1 empty body", b"0\r\n\r\n", b""),
    (
        "9112 §7.1 data containing CRLF",
        b"4\r\n\r\n\r\n\r\n0\r\n\r\n",
        b"\r\n\r\n",
    ),
];

#[test]
fn valid_bodies_at_every_split_point() {
    for &(rule, wire, body) in VALID {
        let mut input = wire.to_vec();
        input.extend_from_slice(b"GET /next");
        for k in 0..=wire.len() {
            let got = decode_split(&input, &[k]).unwrap_or_else(|e| panic!("{rule} @{k}: {e}"));
            assert_eq!(
                got,
                (body.to_vec(), wire.len(), true),
                "{rule} split at {k}"
            );
        }
        let every: Vec<usize> = (0..input.len()).collect();
        assert_eq!(
            decode_split(&input, &every).unwrap(),
            (body.to_vec(), wire.len(), true),
            "{rule}"
        );
    }
}

const INVALID: &[(&str, &[u8], Error)] = &[
    (
        "9112 §7.1 missing size",
        b"\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkSize,
    ),
    ("9112 §7.1 non-hex size", b"g\r\n", Error::InvalidChunkSize),
    (
        "9112 §7.1 negative size",
        b"-5\r\nhello\r\n",
        Error::InvalidChunkSize,
    ),
    (
        "9112 §7.1 0x prefix",
        b"0x5\r\nhello\r\n",
        Error::InvalidChunkSize,
    ),
    (
        "9112 §7.1 bare LF after size",
        b"5\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkSize,
    ),
    (
        "9112 §7.1 CR without LF after size",
        b"5\rhello",
        Error::InvalidChunkSize,
    ),
    (
        "9112 §7.1 whitespace without extension",
        b"5 \r\nhello\r\n",
        Error::InvalidChunkSize,
    ),
    (
        "9112 §7.1 size overflow",
        b"10000000000000000\r\n",
        Error::ChunkSizeOverflow,
    ),
    (
        "9112 §7.1 size overflow with many digits",
        b"fffffffffffffffff\r\n",
        Error::ChunkSizeOverflow,
    ),
    (
        "9112 §7.1 data longer than size",
        b"3\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkTerminator,
    ),
    (
        "9112 §7.1 data without CRLF",
        b"5\r\nhelloX\r\n",
        Error::InvalidChunkTerminator,
    ),
    (
        "9112 §7.1 data with bare LF",
        b"5\r\nhello\n0\r\n\r\n",
        Error::InvalidChunkTerminator,
    ),
    (
        "9112 §7.1.1 ; without a name",
        b"2;\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 = without a name",
        b"2;=x\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 = without a value",
        b"2;a=\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 unterminated quoted-string",
        b"2;a=\"x\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 two tokens in a value",
        b"2;a=b c\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 delimiter in a name",
        b"2;a@b\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 quoted-string running over the line end",
        b"5;a=\"abc\";b=\"def; ghi\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 whitespace after the last extension",
        b"2;a=b \r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 whitespace after a name",
        b"2;a \r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 ; ; empty extension",
        b"2;a;;b\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9110 §5.6.4 DEL in a quoted-string",
        b"2;a=\"\x7f\"\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9110 §5.6.4 quoted-pair escaping a control byte",
        b"2;a=\"\\\x01\"\r\naa\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 extension on the last chunk is checked too",
        b"0;=\r\n\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 control byte in extension",
        b"5;a\x01b\r\nhello\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.1 LF in extension",
        b"5;a\nhello\r\n",
        Error::InvalidChunkExtension,
    ),
    (
        "9112 §7.1.2 trailer obs-fold",
        b"0\r\nX: a\r\n b\r\n\r\n",
        Error::InvalidTrailer,
    ),
    (
        "9112 §7.1.2 trailer without colon",
        b"0\r\nXa\r\n\r\n",
        Error::InvalidTrailer,
    ),
    (
        "9112 §7.1.2 trailer with NUL",
        b"0\r\nX: a\0\r\n\r\n",
        Error::InvalidTrailer,
    ),
    (
        "9112 §7.1.2 final CR without LF",
        b"0\r\n\rX",
        Error::InvalidTrailer,
    ),
];

#[test]
fn invalid_bodies_rejected_at_every_split_point() {
    for &(rule, wire, want) in INVALID {
        for k in 0..=wire.len() {
            assert_eq!(decode_split(wire, &[k]), Err(want), "{rule} split at {k}");
        }
        assert_eq!(want.status(), 400);
    }
}

#[test]
fn extension_and_trailer_limits() {
    let mut dec = ChunkedDecoder::with_config(
        &Config::DEFAULT
            .with_max_chunk_extension_bytes(8)
            .with_max_trailer_bytes(8),
    );
    assert_eq!(
        dec.decode(b"1;123456789\r\n").err(),
        Some(Error::InvalidChunkExtension)
    );
    let mut dec = ChunkedDecoder::with_config(
        &Config::DEFAULT
            .with_max_chunk_extension_bytes(8)
            .with_max_trailer_bytes(8),
    );
    assert_eq!(
        dec.decode(b"0\r\nX: 12345678\r\n\r\n").err(),
        Some(Error::InvalidTrailer)
    );
    // The extension limit is per body, not per chunk: many small extensions add up.
    let mut dec = ChunkedDecoder::with_config(
        &Config::DEFAULT
            .with_max_chunk_extension_bytes(16)
            .with_max_trailer_bytes(8),
    );
    let many = b"1;abcde\r\nx\r\n1;abcde\r\nx\r\n1;abcde\r\nx\r\n".as_slice();
    let mut input = many;
    let mut err = None;
    while !input.is_empty() {
        match dec.decode(input) {
            Ok(s) => input = &input[s.consumed..],
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    assert_eq!(err, Some(Error::InvalidChunkExtension));
}

#[test]
fn skip_consumes_without_copying_and_stops_at_the_end() {
    let mut d = BodyDecoder::new(BodyFraming::Chunked);
    let wire = b"5\r\nhello\r\n0\r\n\r\nNEXT";
    assert_eq!(d.skip(&wire[..7]).unwrap(), (7, false));
    assert_eq!(d.skip(&wire[7..]).unwrap(), (wire.len() - 4 - 7, true));
    // Once done, further input is not consumed.
    assert_eq!(d.skip(b"more").unwrap(), (0, true));
}

#[test]
fn huge_chunk_is_streamed_in_place() {
    let mut dec = ChunkedDecoder::new();
    let step = dec.decode(b"ffffffffffffffff\r\nabc").unwrap();
    assert_eq!(
        (step.consumed, step.data, step.done),
        (21, &b"abc"[..], false)
    );
    let step = dec.decode(b"defg").unwrap();
    assert_eq!(step.data, b"defg");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random chunkings of random data, with random extensions and trailers, decode to the
    /// data at random split points.
    #[test]
    fn encode_decode_roundtrip(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..40), 0..6),
        upper in any::<bool>(),
        ext in any::<bool>(),
        trailer in any::<bool>(),
        cuts in proptest::collection::vec(0usize..400, 0..6),
    ) {
        let mut wire = Vec::new();
        let mut body = Vec::new();
        for c in &chunks {
            let size = if upper { format!("{:X}", c.len()) } else { format!("{:x}", c.len()) };
            wire.extend_from_slice(size.as_bytes());
            if ext { wire.extend_from_slice(b";e=\"v\""); }
            wire.extend_from_slice(b"\r\n");
            wire.extend_from_slice(c);
            wire.extend_from_slice(b"\r\n");
            body.extend_from_slice(c);
        }
        wire.extend_from_slice(b"0\r\n");
        if trailer { wire.extend_from_slice(b"X-T: 1\r\n"); }
        wire.extend_from_slice(b"\r\n");
        let len = wire.len();
        wire.extend_from_slice(b"tail");
        let mut cuts = cuts;
        cuts.sort_unstable();
        prop_assert_eq!(decode_split(&wire, &cuts).unwrap(), (body, len, true));
    }

    /// Arbitrary bytes never panic, and the result does not depend on how the input is split.
    #[test]
    fn arbitrary_input_split_independent(input in proptest::collection::vec(any::<u8>(), 0..64), k in 0usize..64) {
        let whole = decode_split(&input, &[]);
        prop_assert_eq!(decode_split(&input, &[k]), whole);
    }
}

/// Bytes that exercise every transition of the extension grammar, and some that break it.
fn ext_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        6 => prop::sample::select(b";=\" \ta".to_vec()),
        2 => prop::sample::select(b"\\bZ9!~,@()[]{}/:".to_vec()),
        1 => prop::sample::select(vec![0u8, 0x01, 0x7f, 0x80, 0xff, b'\r', b'\n']),
    ]
}

/// Extension text built along the grammar, `BWS ";" BWS name [ BWS "=" BWS value ]` per
/// extension, where every part is usually right and sometimes a near miss (a missing or extra
/// piece, a stray byte), then a tail that is usually empty.
fn extension() -> impl Strategy<Value = Vec<u8>> {
    fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
        prop::sample::select(options)
    }
    let item = (
        pick(&["", "", " ", "\t "]),
        pick(&[";", ";", ";", "", ","]),
        pick(&["", "", " "]),
        pick(&["a", "tok", "a", "", "@", "a b"]),
        pick(&["", "=", "=", " =", "= ", " = \t"]),
        pick(&[
            "b",
            "tok",
            "\"q s\"",
            "\"\\\"\"",
            "\"\\\x01\"",
            "\"",
            "",
            "\"a",
            "b c",
            "\x01",
            "\x7f",
        ]),
    )
        .prop_map(|(a, b, c, d, e, f)| {
            // Without `=` there is no value.
            let f = if e.is_empty() { "" } else { f };
            [a, b, c, d, e, f].concat().into_bytes()
        });
    (
        proptest::collection::vec(item, 0..4),
        pick(&["", "", "", " ", "\t", ";", "=", "\x7f"]),
    )
        .prop_map(|(items, tail)| [items.concat(), tail.as_bytes().to_vec()].concat())
}

/// A chunked body whose size lines carry arbitrary extensions (and whose other parts are
/// mostly valid, sometimes not).
fn body_with_extensions() -> impl Strategy<Value = Vec<u8>> {
    let chunk = (1usize..6, 0usize..3, extension());
    (
        proptest::collection::vec(chunk, 0..3),
        extension(),
        prop::sample::select(vec![
            &b""[..],
            b"X: 1\r\n",
            b"Content-Length: 9\r\n",
            b"X:\x01\r\n",
        ]),
    )
        .prop_map(|(chunks, last_ext, trailer)| {
            let mut wire = Vec::new();
            for (len, zeros, ext) in chunks {
                wire.extend_from_slice("0".repeat(zeros).as_bytes());
                wire.extend_from_slice(format!("{len:x}").as_bytes());
                wire.extend_from_slice(&ext);
                wire.extend_from_slice(b"\r\n");
                wire.extend_from_slice(&b"abcdef"[..len]);
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend_from_slice(b"0");
            wire.extend_from_slice(&last_ext);
            wire.extend_from_slice(b"\r\n");
            wire.extend_from_slice(trailer);
            wire.extend_from_slice(b"\r\nNEXT");
            wire
        })
}

/// The decoder's verdict on `input` cut at `cuts`, in the reference's terms. The limits are
/// out of reach so that only the grammar decides.
fn decoder_verdict(input: &[u8], cuts: &[usize]) -> Verdict {
    let unlimited = Config::DEFAULT
        .with_max_chunk_extension_bytes(u64::MAX)
        .with_max_trailer_bytes(u64::MAX);
    match decode_split_with(ChunkedDecoder::with_config(&unlimited), input, cuts) {
        Ok((body, consumed, true)) => Verdict::Done { body, consumed },
        Ok((_, _, false)) => Verdict::Incomplete,
        Err(_) => Verdict::Invalid,
    }
}

#[test]
fn reference_agrees_with_the_tables() {
    for &(rule, wire, body) in VALID {
        let want = Verdict::Done {
            body: body.to_vec(),
            consumed: wire.len(),
        };
        assert_eq!(recognise(wire), want, "{rule}");
    }
    for &(rule, wire, _) in INVALID {
        assert_eq!(recognise(wire), Verdict::Invalid, "{rule}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// RFC 9112 §7.1.1: the decoder, fed in pieces split anywhere, accepts exactly the chunk
    /// extensions the grammar does, and reaches the reference's verdict on the whole body.
    #[test]
    fn chunk_extensions_match_the_reference(
        wire in body_with_extensions(),
        cuts in proptest::collection::vec(0usize..120, 0..4),
    ) {
        let mut cuts = cuts;
        cuts.sort_unstable();
        let want = recognise(&wire);
        prop_assert_eq!(decoder_verdict(&wire, &cuts), want.clone());
        // Every prefix agrees too (what a server sees while the body is arriving).
        for k in 0..wire.len() {
            let prefix = decoder_verdict(&wire[..k], &[]);
            prop_assert_eq!(&prefix, &recognise(&wire[..k]), "prefix {}", k);
        }
    }

    /// Arbitrary bytes: the decoder and the reference agree.
    #[test]
    fn arbitrary_bytes_match_the_reference(
        input in proptest::collection::vec(prop_oneof![3 => ext_byte(), 1 => any::<u8>()], 0..48),
        k in 0usize..48,
    ) {
        prop_assert_eq!(decoder_verdict(&input, &[k]), recognise(&input));
    }
}
