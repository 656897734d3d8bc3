//! The records target's check: a stream of records built from the input (sealed apart from
//! the crate with ring, or by the crate's own `Sealer`, some with a bit flipped, some plain
//! garbage), delivered to an `Opener` in chunks cut where the input says, as a server would
//! read them into one receive buffer. The first byte picks the suite and, by its high bit,
//! TLS 1.2 instead of 1.3.
//!
//! Asserts: no panic; every record up to the first error opens to exactly what a model of
//! RFC 8446 §5 (or RFC 5246 §6.2.3.3 with RFC 5288 and RFC 7905) says (content, type, or the
//! error); a record holding a flipped bit or garbage never opens; after the first error every
//! call returns that error and nothing else.

use bufslab_tls::record::{
    self, ContentType, Opener, Sealer, Suite, Version, HEADER_LEN, MAX_CIPHERTEXT_LEN,
    MAX_EMPTY_RECORDS, MAX_PLAINTEXT_LEN, MAX_RECORD_LEN, TAG_LEN,
};
use bufslab_tls::{AlertDescription, Error};
use ring::aead;

const KEY: [u8; 32] = [0x42; 32];
const IV: [u8; 12] = [0x24; 12];

/// What opening one record must give: `None` for a record with a flipped bit or garbage
/// (any error), else the model's verdict.
type Expected = Option<Result<(ContentType, Vec<u8>), Error>>;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u16(&mut self) -> Option<usize> {
        Some(usize::from(u16::from_be_bytes([
            self.byte()?,
            self.byte()?,
        ])))
    }

    /// `len` bytes: as many as the input has, then `fill` repeated.
    fn bytes(&mut self, len: usize, fill: u8) -> Vec<u8> {
        let take = len.min(self.0.len());
        let mut out = self.0[..take].to_vec();
        self.0 = &self.0[take..];
        out.resize(len, fill);
        out
    }
}

fn suite_of(b: u8) -> (Suite, &'static aead::Algorithm) {
    match b % 3 {
        0 => (Suite::Aes128Gcm, &aead::AES_128_GCM),
        1 => (Suite::Aes256Gcm, &aead::AES_256_GCM),
        _ => (Suite::Chacha20Poly1305, &aead::CHACHA20_POLY1305),
    }
}

/// Seals `inner` (content, type, padding) as one record, with its own nonce computation.
fn raw_seal(alg: &'static aead::Algorithm, seq: u64, inner: &[u8]) -> Vec<u8> {
    let key = aead::LessSafeKey::new(
        aead::UnboundKey::new(alg, &KEY[..alg.key_len()]).expect("fixed key"),
    );
    let mut nonce = IV;
    for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
        *n ^= s;
    }
    let len = inner.len() + TAG_LEN;
    let header = [23, 3, 3, (len >> 8) as u8, len as u8];
    let mut body = inner.to_vec();
    key.seal_in_place_append_tag(
        aead::Nonce::assume_unique_for_key(nonce),
        aead::Aad::from(header),
        &mut body,
    )
    .expect("seal");
    let mut record = header.to_vec();
    record.extend_from_slice(&body);
    record
}

/// A TLS 1.2 record of outer type `typ` carrying `plaintext`, with its own nonce computation:
/// AES-GCM's explicit nonce is the sequence number (as OpenSSL sends it, not as the crate
/// does), ChaCha20-Poly1305's nonce the IV XOR the sequence number.
fn raw_seal12(alg: &'static aead::Algorithm, seq: u64, typ: u8, plaintext: &[u8]) -> Vec<u8> {
    let key = aead::LessSafeKey::new(
        aead::UnboundKey::new(alg, &KEY[..alg.key_len()]).expect("fixed key"),
    );
    let gcm = !std::ptr::eq(alg, &aead::CHACHA20_POLY1305);
    let mut nonce = IV;
    let explicit = seq.to_be_bytes();
    if gcm {
        nonce[4..].copy_from_slice(&explicit);
    } else {
        for (n, s) in nonce[4..].iter_mut().zip(explicit) {
            *n ^= s;
        }
    }
    let mut aad = [0u8; 13];
    aad[..8].copy_from_slice(&seq.to_be_bytes());
    aad[8] = typ;
    aad[9] = 3;
    aad[10] = 3;
    aad[11..].copy_from_slice(&(plaintext.len() as u16).to_be_bytes());
    let mut body = plaintext.to_vec();
    key.seal_in_place_append_tag(
        aead::Nonce::assume_unique_for_key(nonce),
        aead::Aad::from(aad),
        &mut body,
    )
    .expect("seal");
    let explicit: &[u8] = if gcm { &explicit } else { &[] };
    let len = explicit.len() + body.len();
    let mut record = vec![typ, 3, 3, (len >> 8) as u8, len as u8];
    record.extend_from_slice(explicit);
    record.extend_from_slice(&body);
    record
}

/// RFC 5246 §6.2.3.3 as a second, plain reading: what opening an authentic TLS 1.2 record of
/// type `typ` with this plaintext gives.
fn model12(
    suite: Suite,
    typ: u8,
    plaintext: &[u8],
    empty_run: &mut u8,
) -> Result<(ContentType, Vec<u8>), Error> {
    let typ = match typ {
        21 => ContentType::Alert,
        22 => ContentType::Handshake,
        23 => ContentType::ApplicationData,
        other => return Err(Error::UnexpectedRecordType(other)),
    };
    if suite.explicit_nonce_len(Version::Tls12) + plaintext.len() + TAG_LEN > MAX_CIPHERTEXT_LEN
        || plaintext.len() > MAX_PLAINTEXT_LEN
    {
        return Err(Error::RecordOverflow);
    }
    if plaintext.is_empty() {
        if typ != ContentType::ApplicationData {
            return Err(Error::EmptyControlRecord);
        }
        if *empty_run >= MAX_EMPTY_RECORDS {
            return Err(Error::TooManyEmptyRecords);
        }
        *empty_run += 1;
    } else {
        *empty_run = 0;
    }
    Ok((typ, plaintext.to_vec()))
}

/// The outer type of a raw TLS 1.2 record: mostly the three valid ones.
fn type12(b: u8) -> u8 {
    match b % 8 {
        0..=2 => 23,
        3 => 21,
        4 => 22,
        5 => 20,
        6 => 24,
        _ => b,
    }
}

/// RFC 8446 §5 as a second, plain reading: what opening an authentic record with this inner
/// plaintext gives.
fn model(inner: &[u8], empty_run: &mut u8) -> Result<(ContentType, Vec<u8>), Error> {
    if inner.len() + TAG_LEN > MAX_CIPHERTEXT_LEN {
        return Err(Error::RecordOverflow);
    }
    let Some(at) = inner.iter().rposition(|&b| b != 0) else {
        return Err(Error::MissingContentType);
    };
    if at > MAX_PLAINTEXT_LEN {
        return Err(Error::RecordOverflow);
    }
    let typ = match inner[at] {
        21 => ContentType::Alert,
        22 => ContentType::Handshake,
        23 => ContentType::ApplicationData,
        other => return Err(Error::UnexpectedContentType(other)),
    };
    if at == 0 {
        if typ != ContentType::ApplicationData {
            return Err(Error::EmptyControlRecord);
        }
        if *empty_run >= MAX_EMPTY_RECORDS {
            return Err(Error::TooManyEmptyRecords);
        }
        *empty_run += 1;
    } else {
        *empty_run = 0;
    }
    Ok((typ, inner[..at].to_vec()))
}

pub fn check(data: &[u8]) {
    let mut input = Input(data);
    let Some(suite_byte) = input.byte() else {
        return;
    };
    let (suite, alg) = suite_of(suite_byte);
    let version = if suite_byte & 0x80 != 0 {
        Version::Tls12
    } else {
        Version::Tls13
    };
    let tls12 = version == Version::Tls12;
    let sealer = |seq| {
        Sealer::with_version(version, suite, &KEY[..suite.key_len()], IV, seq).expect("fixed key")
    };
    let mut stream = Vec::new();
    let mut expected: Vec<Expected> = Vec::new();
    let mut cuts = Vec::new();
    let mut seq = 0u64;
    let mut empty_run = 0u8;
    // A record's model verdict depends on the empty records before it: the model runs as
    // the records are made, and stops at the first record that is to fail.
    let mut model_failed = false;

    while let Some(op) = input.byte() {
        let mut bytes;
        // The inner plaintext (TLS 1.3), or the type and plaintext (TLS 1.2), of an
        // authentic record.
        let mut inner = None;
        match op % 4 {
            0 => {
                let len = input.u16().unwrap_or(0) % 17_000;
                let fill = op >> 2;
                let body = input.bytes(len, fill);
                if tls12 {
                    let typ = type12(input.byte().unwrap_or(0));
                    bytes = raw_seal12(alg, seq, typ, &body);
                    inner = Some((typ, body));
                } else {
                    bytes = raw_seal(alg, seq, &body);
                    inner = Some((23, body));
                }
                seq += 1;
            }
            1 => {
                let len = input.u16().unwrap_or(0) % (MAX_PLAINTEXT_LEN + 1);
                // TLS 1.2 has no padding.
                let padding = usize::from(input.byte().unwrap_or(0)) * usize::from(!tls12);
                let plaintext = input.bytes(len, b'a');
                let mut sealer = sealer(seq);
                let start = sealer.plaintext_start();
                let mut buf = vec![0u8; sealer.sealed_len(len, padding)];
                buf[start..start + len].copy_from_slice(&plaintext);
                match sealer.seal_in_place(&mut buf, len, padding) {
                    Ok(n) => {
                        assert_eq!(n, buf.len());
                        let mut body = plaintext;
                        if !tls12 {
                            body.push(23);
                            body.resize(body.len() + padding, 0);
                        }
                        bytes = buf;
                        inner = Some((23, body));
                        seq += 1;
                    }
                    Err(e) => {
                        assert_eq!(e, Error::PlaintextTooLarge);
                        assert!(len + 1 + padding > MAX_PLAINTEXT_LEN + 1);
                        continue;
                    }
                }
            }
            2 => {
                let len = usize::from(input.byte().unwrap_or(0));
                bytes = input.bytes(len, 0);
                if bytes.is_empty() {
                    continue;
                }
            }
            _ => {
                let what = input.byte().unwrap_or(0);
                let mut sealer = sealer(seq);
                let mut buf = [0u8; 64];
                let (n, body) = if what & 1 == 0 || tls12 {
                    let alert = AlertDescription::from_code(what >> 1);
                    let n = sealer.seal_alert(&mut buf, alert).expect("alert");
                    let level = match alert {
                        AlertDescription::CloseNotify
                        | AlertDescription::UserCanceled
                        | AlertDescription::NoRenegotiation => 1,
                        _ => 2,
                    };
                    if tls12 {
                        (n, (21, vec![level, alert.code()]))
                    } else {
                        (n, (23, vec![level, alert.code(), 21]))
                    }
                } else {
                    let request = what & 2 != 0;
                    let n = sealer
                        .seal_key_update(&mut buf, request)
                        .expect("key update");
                    (n, (23, vec![24, 0, 0, 1, u8::from(request), 22]))
                };
                bytes = buf[..n].to_vec();
                inner = Some(body);
                seq += 1;
            }
        }
        let mut corrupted = inner.is_none();
        if op & 0x80 != 0 {
            let at = input.u16().unwrap_or(0) % bytes.len();
            let bit = input.byte().unwrap_or(0) % 8;
            bytes[at] ^= 1 << bit;
            corrupted = true;
        }
        if op & 0x40 != 0 {
            let at = input.u16().unwrap_or(0) % (bytes.len() + 1);
            cuts.push(stream.len() + at);
        }
        let verdict = match inner {
            Some((typ, body)) if !corrupted && !model_failed => {
                let verdict = if tls12 {
                    model12(suite, typ, &body, &mut empty_run)
                } else {
                    model(&body, &mut empty_run)
                };
                model_failed = verdict.is_err();
                Some(verdict)
            }
            _ => {
                model_failed = true;
                None
            }
        };
        expected.push(verdict);
        stream.extend_from_slice(&bytes);
    }

    deliver(version, suite, &stream, &cuts, &expected);
}

/// Feeds `stream` to an opener in the chunks `cuts` make, through one receive buffer of the
/// largest record's size, and compares each record opened with `expected`.
fn deliver(version: Version, suite: Suite, stream: &[u8], cuts: &[usize], expected: &[Expected]) {
    let mut opener =
        Opener::with_version(version, suite, &KEY[..suite.key_len()], IV, 0).expect("fixed key");
    let mut joiner = record::HandshakeJoiner::default();
    let mut guard = record::RenegotiationGuard::default();
    let mut rx = vec![0u8; MAX_RECORD_LEN];
    let mut filled = 0;
    let mut next = 0;
    let mut cuts: Vec<usize> = cuts.to_vec();
    cuts.sort_unstable();
    cuts.push(stream.len());
    let mut from = 0;
    for &to in &cuts {
        let mut chunk = &stream[from..to];
        from = to;
        while !chunk.is_empty() {
            let take = chunk.len().min(rx.len() - filled);
            rx[filled..filled + take].copy_from_slice(&chunk[..take]);
            filled += take;
            chunk = &chunk[take..];
            loop {
                let result = match opener.next_record_len(&rx[..filled]) {
                    Ok(Some(len)) if len <= filled => {
                        let opened = opener
                            .open_in_place(&mut rx[..len])
                            .map(|o| (o.content_type, rx[o.plaintext.clone()].to_vec()));
                        if let Ok((typ, content)) = &opened {
                            // The parsers above the record layer never panic either, and the
                            // joiner holds nothing after an error.
                            match typ {
                                ContentType::Alert => {
                                    let _ = record::parse_alert(content);
                                    let _ = record::parse_alert_tls12(content);
                                }
                                ContentType::Handshake if version == Version::Tls12 => {
                                    let failed = guard.push(content).is_err();
                                    assert!(!(failed && guard.is_pending()));
                                }
                                ContentType::Handshake => {
                                    let _ = record::parse_handshake(content);
                                    if joiner.push(content).is_err() {
                                        assert!(!joiner.is_pending());
                                    }
                                }
                                _ => {}
                            }
                        }
                        rx.copy_within(len..filled, 0);
                        filled -= len;
                        opened
                    }
                    // The buffer holds the largest record: a record that does not fit is
                    // impossible.
                    Ok(_) => {
                        assert!(filled < rx.len(), "a full buffer without a record");
                        break;
                    }
                    Err(e) => Err(e),
                };
                let want = expected
                    .get(next)
                    .expect("more records opened than were made");
                next += 1;
                match (want, &result) {
                    (None, Ok(_)) => panic!("record {} opened though altered", next - 1),
                    (None, Err(_)) => {}
                    (Some(want), got) => assert_eq!(want, got, "record {}", next - 1),
                }
                if let Err(e) = result {
                    assert_poisoned(&mut opener, &mut rx[..filled.max(HEADER_LEN)], &e);
                    return;
                }
            }
        }
    }
}

/// After an error, everything returns that error.
fn assert_poisoned(opener: &mut Opener, rest: &mut [u8], e: &Error) {
    assert_eq!(opener.next_record_len(rest).as_ref().err(), Some(e));
    assert_eq!(opener.open_in_place(rest).as_ref().err(), Some(e));
    let mut sealer = Sealer::with_version(
        opener.version(),
        opener.suite(),
        &KEY[..opener.suite().key_len()],
        IV,
        opener.sequence(),
    )
    .expect("fixed key");
    let mut good = vec![0u8; sealer.sealed_len(1, 0)];
    sealer.seal_in_place(&mut good, 1, 0).expect("seal");
    assert_eq!(opener.open_in_place(&mut good).as_ref().err(), Some(e));
}
