//! Records a conforming client never sends: each ends with the right alert, no plaintext,
//! and a receiving half that refuses everything after.

mod common;

use std::sync::Arc;

use bufslab_tls::record::{Suite, MAX_CIPHERTEXT_LEN, MAX_EMPTY_RECORDS, MAX_PLAINTEXT_LEN};
use bufslab_tls::{AlertDescription, Error, Handshake, Received};
use common::*;

/// Feeds `records` in order; expects the last one to fail with `expected` and every earlier
/// one to succeed. Then checks the poisoning, and that the alert the server writes is the one
/// `expected` names, as the client reads it.
fn refuse(raw: &mut RawClient, records: &[Vec<u8>], expected: Error, alert: AlertDescription) {
    let (last, earlier) = records.split_last().unwrap();
    for record in earlier {
        let mut record = record.clone();
        raw.conn
            .open_in_place(&mut record)
            .expect("an earlier record");
    }
    let mut record = last.clone();
    let mut data = Vec::new();
    let mut rx = record.clone();
    let err = server_receive(&mut raw.conn, &mut rx, &mut data).unwrap_err();
    assert_eq!(err, expected);
    assert!(data.is_empty(), "plaintext returned with an error");
    assert_eq!(err.alert(), Some(alert));
    // Poisoned: the same error again, even for a good record.
    assert_eq!(raw.conn.open_in_place(&mut record), Err(expected.clone()));
    let mut good = raw.to_server.seal(b"fine\x17");
    assert_eq!(raw.conn.open_in_place(&mut good), Err(expected));
    // The alert, as the peer reads it.
    let mut out = [0u8; 64];
    let n = raw.conn.write_alert(alert, &mut out).unwrap();
    let inner = raw.from_server.open(&out[..n]);
    assert_eq!(inner, [2, alert.code(), 21]);
    // Nothing is sealed after a fatal alert.
    assert_eq!(raw.conn.seal_in_place(&mut out, 1, 0), Err(Error::Closed));
}

/// [`refuse`] on a fresh connection, with the records `make` seals from the client.
fn refuse_fresh(
    pki: &Pki,
    suite: Option<Suite>,
    make: impl FnOnce(&mut RawDirection) -> Vec<Vec<u8>>,
    expected: Error,
    alert: AlertDescription,
) {
    let mut raw = raw_client(pki, suite);
    let records = make(&mut raw.to_server);
    refuse(&mut raw, &records, expected, alert);
}

/// [`refuse`] on a fresh connection, for one record whose inner plaintext is `inner`.
fn refuse_inner(pki: &Pki, inner: &[u8], expected: Error, alert: AlertDescription) {
    refuse_fresh(pki, None, |to| vec![to.seal(inner)], expected, alert);
}

/// A good record from the client, changed by `tamper` after sealing.
fn tampered(to: &mut RawDirection, tamper: impl FnOnce(&mut Vec<u8>)) -> Vec<Vec<u8>> {
    let mut record = to.seal(b"hello\x17");
    tamper(&mut record);
    vec![record]
}

#[test]
fn flipped_tag_bit_is_bad_record_mac() {
    let pki = pki();
    for suite in SUITES {
        refuse_fresh(
            &pki,
            Some(suite),
            |to| {
                tampered(to, |record| {
                    let last = record.len() - 1;
                    record[last] ^= 0x01;
                })
            },
            Error::BadRecordMac,
            AlertDescription::BadRecordMac,
        );
    }
}

#[test]
fn flipped_ciphertext_bit_is_bad_record_mac() {
    let pki = pki();
    refuse_fresh(
        &pki,
        None,
        |to| tampered(to, |record| record[6] ^= 0x80),
        Error::BadRecordMac,
        AlertDescription::BadRecordMac,
    );
}

#[test]
fn oversize_ciphertext_is_record_overflow() {
    let pki = pki();
    let len = MAX_CIPHERTEXT_LEN + 1;
    let mut record = vec![23, 3, 3, (len >> 8) as u8, len as u8];
    record.resize(5 + len, 0);
    refuse_fresh(
        &pki,
        None,
        |_| vec![record],
        Error::RecordOverflow,
        AlertDescription::RecordOverflow,
    );
}

#[test]
fn oversize_plaintext_is_record_overflow() {
    let pki = pki();
    let mut inner = vec![b'x'; MAX_PLAINTEXT_LEN + 1];
    inner.push(23);
    refuse_inner(
        &pki,
        &inner,
        Error::RecordOverflow,
        AlertDescription::RecordOverflow,
    );
}

#[test]
fn plaintext_at_the_limit_with_padding_over_it_opens() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    // 2^14 of content, its type, and padding up to the ciphertext limit.
    let mut inner = vec![b'x'; MAX_PLAINTEXT_LEN];
    inner.push(23);
    inner.resize(MAX_CIPHERTEXT_LEN - 16, 0);
    let mut record = raw.to_server.seal(&inner);
    let got = raw.conn.open_in_place(&mut record).unwrap();
    assert_eq!(got, Received::Data(5..5 + MAX_PLAINTEXT_LEN));
}

#[test]
fn outer_type_other_than_application_data_is_unexpected() {
    let pki = pki();
    for typ in [21u8, 22, 24, 0, 255] {
        refuse_fresh(
            &pki,
            None,
            |to| tampered(to, |record| record[0] = typ),
            Error::UnexpectedRecordType(typ),
            AlertDescription::UnexpectedMessage,
        );
    }
}

#[test]
fn change_cipher_spec_after_the_handshake_is_unexpected() {
    let pki = pki();
    refuse_fresh(
        &pki,
        None,
        |_| vec![vec![20, 3, 3, 0, 1, 1]],
        Error::UnexpectedRecordType(20),
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn wrong_legacy_version_is_refused() {
    let pki = pki();
    refuse_fresh(
        &pki,
        None,
        |to| tampered(to, |record| record[2] = 1),
        Error::BadRecordVersion(0x0301),
        AlertDescription::DecodeError,
    );
}

#[test]
fn client_hello_after_the_handshake_is_renegotiation() {
    let pki = pki();
    // A (truncated) ClientHello: type 1, a length, some body.
    refuse_inner(
        &pki,
        &[1, 0, 0, 4, 3, 3, 0, 0, 22],
        Error::UnexpectedHandshake(1),
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn new_session_ticket_from_the_client_is_unexpected() {
    let pki = pki();
    refuse_inner(
        &pki,
        &[4, 0, 0, 1, 0, 22],
        Error::UnexpectedHandshake(4),
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn key_update_with_bad_value_or_trailing_bytes() {
    let pki = pki();
    refuse_inner(
        &pki,
        &[24, 0, 0, 1, 2, 22],
        Error::BadKeyUpdate,
        AlertDescription::IllegalParameter,
    );

    refuse_inner(
        &pki,
        &[24, 0, 0, 1, 0, 24, 0, 0, 1, 0, 22],
        Error::KeyUpdateNotAligned,
        AlertDescription::UnexpectedMessage,
    );

    // The second piece of a split KeyUpdate runs past its end.
    refuse_fresh(
        &pki,
        None,
        |to| vec![to.seal(&[24, 0, 22]), to.seal(&[0, 1, 0, 1, 22])],
        Error::KeyUpdateNotAligned,
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn key_update_split_across_records_is_joined() {
    let pki = pki();
    for cuts in [vec![1, 4], vec![3, 2], vec![1, 1, 1, 1, 1]] {
        let mut raw = raw_client(&pki, None);
        let message = [24u8, 0, 0, 1, 1];
        let mut at = 0;
        for len in &cuts {
            let mut inner = message[at..at + len].to_vec();
            inner.push(22);
            at += len;
            let mut record = raw.to_server.seal(&inner);
            assert_eq!(raw.conn.open_in_place(&mut record), Ok(Received::Control));
        }
        // The receiving key is the next one: sequence 0, and the old key no longer opens.
        assert_eq!(raw.conn.opener().sequence(), 0);
        assert!(raw.conn.wants_control(), "update_requested asks for ours");
        let mut old_key = raw.to_server.seal(b"old key\x17");
        assert_eq!(
            raw.conn.open_in_place(&mut old_key),
            Err(Error::BadRecordMac)
        );
    }
}

#[test]
fn other_records_between_the_pieces_of_a_key_update() {
    let pki = pki();
    for between in [&b"data\x17"[..], &[1, 0, 21], &[23]] {
        refuse_fresh(
            &pki,
            None,
            |to| vec![to.seal(&[24, 0, 22]), to.seal(between)],
            Error::HandshakeInterleaved,
            AlertDescription::UnexpectedMessage,
        );
    }
}

#[test]
fn too_many_empty_records() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    // Up to the limit, a data record resets the count.
    for _ in 0..MAX_EMPTY_RECORDS {
        let mut record = raw.to_server.seal(&[23]);
        assert_eq!(raw.conn.open_in_place(&mut record), Ok(Received::Control));
    }
    let mut record = raw.to_server.seal(b"x\x17");
    assert_eq!(
        raw.conn.open_in_place(&mut record),
        Ok(Received::Data(5..6))
    );
    let records: Vec<Vec<u8>> = (0..=MAX_EMPTY_RECORDS)
        .map(|_| raw.to_server.seal(&[23, 0, 0]))
        .collect();
    refuse(
        &mut raw,
        &records,
        Error::TooManyEmptyRecords,
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn invalid_inner_type_and_no_inner_type() {
    let pki = pki();
    for typ in [20u8, 24, 99, 255] {
        refuse_inner(
            &pki,
            &[b'a', typ, 0, 0],
            Error::UnexpectedContentType(typ),
            AlertDescription::UnexpectedMessage,
        );
    }
    for inner in [&[0; 10][..], &[]] {
        refuse_inner(
            &pki,
            inner,
            Error::MissingContentType,
            AlertDescription::UnexpectedMessage,
        );
    }
}

#[test]
fn empty_alert_or_handshake_record() {
    let pki = pki();
    for typ in [21u8, 22] {
        refuse_inner(
            &pki,
            &[typ, 0],
            Error::EmptyControlRecord,
            AlertDescription::UnexpectedMessage,
        );
    }
}

#[test]
fn warning_alerts_other_than_close_and_cancel_are_decode_errors() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut record = raw.to_server.seal(&[1, 90, 21]);
    assert_eq!(raw.conn.open_in_place(&mut record), Ok(Received::Control));
    let record = raw.to_server.seal(&[1, 42, 21]);
    refuse(
        &mut raw,
        &[record],
        Error::WarningAlert(AlertDescription::Other(42)),
        AlertDescription::DecodeError,
    );
    refuse_inner(
        &pki,
        &[3, 0, 21],
        Error::BadAlertLevel(3),
        AlertDescription::IllegalParameter,
    );
    refuse_inner(
        &pki,
        &[2, 0, 0, 21],
        Error::Decode,
        AlertDescription::DecodeError,
    );
}

#[test]
fn fatal_alert_from_the_peer_is_answered_with_nothing() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut record = raw.to_server.seal(&[2, 40, 21]);
    let err = raw.conn.open_in_place(&mut record).unwrap_err();
    assert_eq!(err, Error::PeerAlert(AlertDescription::HandshakeFailure));
    assert_eq!(err.alert(), None);
}

#[test]
fn records_after_close_notify_are_ignored() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut record = raw.to_server.seal(&[1, 0, 21]);
    assert_eq!(raw.conn.open_in_place(&mut record), Ok(Received::Closed));
    // Not opened: even a record that would fail is only reported as after the close.
    let mut record = raw.to_server.seal(b"more\x17");
    let last = record.len() - 1;
    record[last] ^= 1;
    assert_eq!(raw.conn.open_in_place(&mut record), Ok(Received::Closed));
    // The server still sends.
    let mut out = [0u8; 64];
    out[5..8].copy_from_slice(b"bye");
    let n = raw.conn.seal_in_place(&mut out, 3, 0).unwrap();
    assert_eq!(raw.from_server.open(&out[..n]), b"bye\x17");
}

#[test]
fn record_cut_elsewhere_than_its_length_is_refused() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut record = raw.to_server.seal(b"hello\x17");
    record.push(0);
    assert_eq!(raw.conn.open_in_place(&mut record), Err(Error::Decode));
}

/// Runs a fresh handshake on `incoming`, which rustls must refuse; returns the handshake,
/// what it wrote, and how much.
fn handshake_refuses(pki: &Pki, incoming: &mut [u8]) -> (Handshake, Vec<u8>, usize) {
    let mut hs = Handshake::new(&server_config(pki)).unwrap();
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(incoming, &mut out);
    assert!(
        matches!(progress.status, Err(Error::Handshake(_))),
        "{progress:?}"
    );
    (hs, out, progress.written)
}

/// Sends `client`'s first flight to a fresh handshake, which must refuse it; returns the
/// error the client reads from the server's answer.
fn client_refused(pki: &Pki, client_config: rustls::ClientConfig) -> rustls::Error {
    let mut client = rustls::ClientConnection::new(
        Arc::new(client_config),
        rustls::pki_types::ServerName::try_from(HOST).unwrap(),
    )
    .unwrap();
    let mut hs = Handshake::new(&server_config(pki)).unwrap();
    let mut rx = Vec::new();
    client_flush(&mut client, &mut rx);
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(&mut rx, &mut out);
    assert!(matches!(progress.status, Err(Error::Handshake(_))));
    client_receive(&mut client, &out[..progress.written]).unwrap_err()
}

/// Handshakes that fail: the alert rustls chose is written for the peer.
#[test]
fn garbage_instead_of_a_client_hello() {
    let pki = pki();
    let mut incoming = vec![22, 3, 1, 0, 4, 0xff, 0, 0, 0];
    let (mut hs, mut out, written) = handshake_refuses(&pki, &mut incoming);
    // An alert record: type 21, then level 2.
    assert!(written >= 7, "{written}");
    assert_eq!(out[0], 21);
    assert_eq!(out[5], 2);
    // Failed for good.
    let again = hs.advance(&mut incoming, &mut out);
    assert!(again.status.is_err());
    assert_eq!(again.written, 0);
}

#[test]
fn oversize_record_during_the_handshake_is_refused_by_rustls() {
    let pki = pki();
    let mut incoming = vec![22, 3, 1, 0xff, 0xff];
    incoming.resize(100, 1);
    let (_, out, _) = handshake_refuses(&pki, &mut incoming);
    // A plaintext alert, fatal; rustls answers a record it cannot frame with decode_error.
    assert_eq!(&out[..2], &[21, 3]);
    assert_eq!(out[5], 2);
    assert_eq!(out[6], AlertDescription::DecodeError.code());
}

#[test]
fn plain_http_after_the_handshake_fails_on_its_first_bytes() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let err = raw.conn.next_record_len(b"GET / HTTP/1.1\r\n").unwrap_err();
    assert_eq!(err, Error::UnexpectedRecordType(b'G'));
    assert_eq!(err.alert(), Some(AlertDescription::UnexpectedMessage));
}

#[test]
fn into_connection_before_done_is_refused() {
    let pki = pki();
    let hs = Handshake::new(&server_config(&pki)).unwrap();
    assert!(matches!(hs.into_connection(), Err(Error::Internal(_))));
}

#[test]
fn client_without_a_common_alpn_is_refused() {
    let pki = pki();
    let mut client_config = (*client_config(&pki, None)).clone();
    client_config.alpn_protocols = vec![b"h2".to_vec()];
    let err = client_refused(&pki, client_config);
    assert_eq!(
        err,
        rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)
    );
}

#[test]
fn client_without_alpn_gets_none() {
    let pki = pki();
    let config = server_config(&pki);
    let mut client_config = (*client_config(&pki, None)).clone();
    client_config.alpn_protocols.clear();
    let est = handshake(&config, &Arc::new(client_config), b"").unwrap();
    assert_eq!(est.conn.alpn_protocol(), None);
}

#[test]
fn outgoing_buffer_under_a_record_is_refused() {
    let pki = pki();
    let config = server_config(&pki);
    let mut hs = Handshake::new(&config).unwrap();
    let mut out = vec![0u8; 100];
    let progress = hs.advance(&mut [], &mut out);
    assert!(matches!(progress.status, Err(Error::BufferTooSmall(_))));
}

#[test]
fn failing_client_hello_with_a_partial_message_behind_it() {
    // rustls keeps the partial message's place in the caller's buffer: the alert must be
    // drained over the same bytes, not an empty buffer.
    let pki = pki();
    let mut client_config = (*client_config(&pki, None)).clone();
    client_config.alpn_protocols = vec![b"h2".to_vec()];
    let mut client = rustls::ClientConnection::new(
        Arc::new(client_config),
        rustls::pki_types::ServerName::try_from(HOST).unwrap(),
    )
    .unwrap();
    let mut rx = Vec::new();
    client_flush(&mut client, &mut rx);
    let len = u16::from_be_bytes([rx[3], rx[4]]) + 2;
    rx[3..5].copy_from_slice(&len.to_be_bytes());
    rx.extend_from_slice(&[11, 0]);
    let (_, out, _) = handshake_refuses(&pki, &mut rx);
    assert_eq!(out[0], 21, "an alert was written");
}
