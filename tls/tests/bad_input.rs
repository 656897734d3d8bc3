//! Records a conforming client never sends: each ends with the right alert, no plaintext,
//! and a receiving half that refuses everything after.

mod common;

use std::sync::Arc;

use bufslab_tls::record::{MAX_CIPHERTEXT_LEN, MAX_EMPTY_RECORDS, MAX_PLAINTEXT_LEN};
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

#[test]
fn flipped_tag_bit_is_bad_record_mac() {
    let pki = pki();
    for suite in SUITES {
        let mut raw = raw_client(&pki, Some(suite));
        let mut record = raw.to_server.seal(b"hello\x17");
        let last = record.len() - 1;
        record[last] ^= 0x01;
        refuse(
            &mut raw,
            &[record],
            Error::BadRecordMac,
            AlertDescription::BadRecordMac,
        );
    }
}

#[test]
fn flipped_ciphertext_bit_is_bad_record_mac() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut record = raw.to_server.seal(b"hello\x17");
    record[6] ^= 0x80;
    refuse(
        &mut raw,
        &[record],
        Error::BadRecordMac,
        AlertDescription::BadRecordMac,
    );
}

#[test]
fn oversize_ciphertext_is_record_overflow() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let len = MAX_CIPHERTEXT_LEN + 1;
    let mut record = vec![23, 3, 3, (len >> 8) as u8, len as u8];
    record.resize(5 + len, 0);
    refuse(
        &mut raw,
        &[record],
        Error::RecordOverflow,
        AlertDescription::RecordOverflow,
    );
}

#[test]
fn oversize_plaintext_is_record_overflow() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut inner = vec![b'x'; MAX_PLAINTEXT_LEN + 1];
    inner.push(23);
    let record = raw.to_server.seal(&inner);
    refuse(
        &mut raw,
        &[record],
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
        let mut raw = raw_client(&pki, None);
        let mut record = raw.to_server.seal(b"hello\x17");
        record[0] = typ;
        refuse(
            &mut raw,
            &[record],
            Error::UnexpectedRecordType(typ),
            AlertDescription::UnexpectedMessage,
        );
    }
}

#[test]
fn change_cipher_spec_after_the_handshake_is_unexpected() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let record = vec![20, 3, 3, 0, 1, 1];
    refuse(
        &mut raw,
        &[record],
        Error::UnexpectedRecordType(20),
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn wrong_legacy_version_is_refused() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let mut record = raw.to_server.seal(b"hello\x17");
    record[2] = 1;
    refuse(
        &mut raw,
        &[record],
        Error::BadRecordVersion(0x0301),
        AlertDescription::DecodeError,
    );
}

#[test]
fn client_hello_after_the_handshake_is_renegotiation() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    // A (truncated) ClientHello: type 1, a length, some body.
    let record = raw.to_server.seal(&[1, 0, 0, 4, 3, 3, 0, 0, 22]);
    refuse(
        &mut raw,
        &[record],
        Error::UnexpectedHandshake(1),
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn new_session_ticket_from_the_client_is_unexpected() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[4, 0, 0, 1, 0, 22]);
    refuse(
        &mut raw,
        &[record],
        Error::UnexpectedHandshake(4),
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn key_update_with_bad_value_or_trailing_bytes() {
    let pki = pki();
    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[24, 0, 0, 1, 2, 22]);
    refuse(
        &mut raw,
        &[record],
        Error::BadKeyUpdate,
        AlertDescription::IllegalParameter,
    );

    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[24, 0, 0, 1, 0, 24, 0, 0, 1, 0, 22]);
    refuse(
        &mut raw,
        &[record],
        Error::KeyUpdateNotAligned,
        AlertDescription::UnexpectedMessage,
    );

    // The second piece of a split KeyUpdate runs past its end.
    let mut raw = raw_client(&pki, None);
    let first = raw.to_server.seal(&[24, 0, 22]);
    let second = raw.to_server.seal(&[0, 1, 0, 1, 22]);
    refuse(
        &mut raw,
        &[first, second],
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
        let mut raw = raw_client(&pki, None);
        let first = raw.to_server.seal(&[24, 0, 22]);
        let other = raw.to_server.seal(between);
        refuse(
            &mut raw,
            &[first, other],
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
        let mut raw = raw_client(&pki, None);
        let record = raw.to_server.seal(&[b'a', typ, 0, 0]);
        refuse(
            &mut raw,
            &[record],
            Error::UnexpectedContentType(typ),
            AlertDescription::UnexpectedMessage,
        );
    }
    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[0; 10]);
    refuse(
        &mut raw,
        &[record],
        Error::MissingContentType,
        AlertDescription::UnexpectedMessage,
    );
    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[]);
    refuse(
        &mut raw,
        &[record],
        Error::MissingContentType,
        AlertDescription::UnexpectedMessage,
    );
}

#[test]
fn empty_alert_or_handshake_record() {
    let pki = pki();
    for typ in [21u8, 22] {
        let mut raw = raw_client(&pki, None);
        let record = raw.to_server.seal(&[typ, 0]);
        refuse(
            &mut raw,
            &[record],
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
    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[3, 0, 21]);
    refuse(
        &mut raw,
        &[record],
        Error::BadAlertLevel(3),
        AlertDescription::IllegalParameter,
    );
    let mut raw = raw_client(&pki, None);
    let record = raw.to_server.seal(&[2, 0, 0, 21]);
    refuse(
        &mut raw,
        &[record],
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

/// Handshakes that fail: the alert rustls chose is written for the peer.
#[test]
fn garbage_instead_of_a_client_hello() {
    let pki = pki();
    let config = server_config(&pki);
    let mut hs = Handshake::new(&config).unwrap();
    let mut incoming = vec![22, 3, 1, 0, 4, 0xff, 0, 0, 0];
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(&mut incoming, &mut out);
    assert!(
        matches!(progress.status, Err(Error::Handshake(_))),
        "{progress:?}"
    );
    // An alert record: type 21, then level 2.
    assert!(progress.written >= 7, "{progress:?}");
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
    let config = server_config(&pki);
    let mut hs = Handshake::new(&config).unwrap();
    let mut incoming = vec![22, 3, 1, 0xff, 0xff];
    incoming.resize(100, 1);
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(&mut incoming, &mut out);
    assert!(
        matches!(progress.status, Err(Error::Handshake(_))),
        "{progress:?}"
    );
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
    let config = server_config(&pki);
    let mut client_config = (*client_config(&pki, None)).clone();
    client_config.alpn_protocols = vec![b"h2".to_vec()];
    let mut client = rustls::ClientConnection::new(
        Arc::new(client_config),
        rustls::pki_types::ServerName::try_from(HOST).unwrap(),
    )
    .unwrap();
    let mut hs = Handshake::new(&config).unwrap();
    let mut rx = Vec::new();
    client_flush(&mut client, &mut rx);
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(&mut rx, &mut out);
    assert!(matches!(progress.status, Err(Error::Handshake(_))));
    let err = client_receive(&mut client, &out[..progress.written]).unwrap_err();
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
fn tls12_only_client_is_refused() {
    let pki = pki();
    let config = server_config(&pki);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.chain[0].clone()).unwrap();
    let client_config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS12])
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut client = rustls::ClientConnection::new(
        Arc::new(client_config),
        rustls::pki_types::ServerName::try_from(HOST).unwrap(),
    )
    .unwrap();
    let mut hs = Handshake::new(&config).unwrap();
    let mut rx = Vec::new();
    client_flush(&mut client, &mut rx);
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(&mut rx, &mut out);
    assert!(matches!(progress.status, Err(Error::Handshake(_))));
    let err = client_receive(&mut client, &out[..progress.written]).unwrap_err();
    assert_eq!(
        err,
        rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion)
    );
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
    let config = server_config(&pki);
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
    let mut hs = Handshake::new(&config).unwrap();
    let mut out = vec![0u8; 40_000];
    let progress = hs.advance(&mut rx, &mut out);
    assert!(
        matches!(progress.status, Err(Error::Handshake(_))),
        "{progress:?}"
    );
    assert_eq!(out[0], 21, "an alert was written");
}
