//! TLS 1.2: the crate's server against a real rustls client for every TLS 1.2 suite rustls
//! offers (ECDHE with ECDSA or RSA, and AES-128-GCM, AES-256-GCM or ChaCha20-Poly1305), in
//! memory; records a real client never sends (a renegotiation, warnings, forgeries) from a
//! client written apart from the crate.

mod common;

use std::io::Write;
use std::sync::Arc;

use bufslab_tls::record::Suite;
use bufslab_tls::record::{Version, MAX_PLAINTEXT_LEN, MAX_RECORD_LEN, MAX_WARNING_ALERTS};
use bufslab_tls::{AlertDescription, Config, Error, Received};
use common::*;

/// A fresh TLS 1.2 connection for each suite; the server's certificate signs as the suite
/// wants.
fn each_suite(mut test: impl FnMut(rustls::SupportedCipherSuite, Suite, &mut Established)) {
    let ecdsa = pki();
    let rsa = rsa_pki();
    let (ecdsa_config, rsa_config) = (server_config(&ecdsa), server_config(&rsa));
    for (rustls_suite, suite) in tls12_suites() {
        let (pki, config) = if is_rsa(rustls_suite) {
            (&rsa, &rsa_config)
        } else {
            (&ecdsa, &ecdsa_config)
        };
        let mut est = handshake(config, &client_config_tls12(pki, &[rustls_suite]), b"")
            .unwrap_or_else(|e| panic!("{rustls_suite:?}: {e}"));
        test(rustls_suite, suite, &mut est);
    }
}

/// Hands all the client has written to the server: the events and the data it opened.
fn client_to_server(est: &mut Established) -> (Vec<Received>, Vec<u8>) {
    let mut rx = std::mem::take(&mut est.rx);
    client_flush(&mut est.client, &mut rx);
    let mut data = Vec::new();
    let events = server_receive(&mut est.conn, &mut rx, &mut data).unwrap();
    (events, data)
}

fn sizes() -> Vec<usize> {
    let mut sizes: Vec<usize> = (0..=64).collect();
    sizes.extend((65..MAX_PLAINTEXT_LEN).step_by(1021));
    sizes.extend([4096, MAX_PLAINTEXT_LEN - 1, MAX_PLAINTEXT_LEN]);
    sizes
}

#[test]
fn handshake_reports_version_suite_alpn_sni() {
    each_suite(|rustls_suite, suite, est| {
        assert_eq!(est.conn.version(), Version::Tls12);
        assert_eq!(
            est.conn.protocol_version(),
            rustls::ProtocolVersion::TLSv1_2
        );
        assert_eq!(est.conn.suite(), suite);
        assert_eq!(est.conn.cipher_suite(), rustls_suite.suite());
        assert_eq!(
            Some(est.conn.cipher_suite_name()),
            rustls_suite.suite().as_str()
        );
        assert_eq!(est.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
        assert_eq!(est.conn.server_name(), Some(HOST));
        assert_eq!(est.client.negotiated_cipher_suite(), Some(rustls_suite));
        let explicit = if suite == Suite::Chacha20Poly1305 {
            0
        } else {
            8
        };
        assert_eq!(est.conn.plaintext_start(), 5 + explicit);
        assert_eq!(est.conn.sealed_len(10, 0), 5 + explicit + 10 + 16);
    });
}

#[test]
fn a_client_offering_both_versions_gets_tls13() {
    let pki = pki();
    let est = handshake(&server_config(&pki), &client_config(&pki, None), b"").unwrap();
    assert_eq!(est.conn.version(), Version::Tls13);
}

#[test]
fn tls12_switched_off_refuses_a_tls12_client_with_protocol_version() {
    let pki = pki();
    let config = Config::single_cert_builder(pki.chain.clone(), pki.key.clone_key())
        .unwrap()
        .tls12(false)
        .build()
        .unwrap();
    let suites: Vec<_> = tls12_suites().into_iter().map(|(s, _)| s).collect();
    let mut client = rustls::ClientConnection::new(
        client_config_tls12(&pki, &suites),
        rustls::pki_types::ServerName::try_from(HOST).unwrap(),
    )
    .unwrap();
    let mut hs = bufslab_tls::Handshake::new(&config).unwrap();
    let mut rx = Vec::new();
    client_flush(&mut client, &mut rx);
    let mut out = vec![0u8; MAX_RECORD_LEN];
    let progress = hs.advance(&mut rx, &mut out);
    assert!(matches!(progress.status, Err(Error::Handshake(_))));
    assert_eq!(
        client_receive(&mut client, &out[..progress.written]).unwrap_err(),
        rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion)
    );
    // The same configuration still serves TLS 1.3.
    assert!(handshake(&config, &client_config(&pki, None), b"").is_ok());
}

#[test]
fn cipher_suites_choose_the_aead_in_tls12_too() {
    let pki = pki();
    let config = Config::single_cert_builder(pki.chain.clone(), pki.key.clone_key())
        .unwrap()
        .cipher_suites(&[Suite::Chacha20Poly1305])
        .build()
        .unwrap();
    let suites: Vec<_> = tls12_suites().into_iter().map(|(s, _)| s).collect();
    let est = handshake(&config, &client_config_tls12(&pki, &suites), b"").unwrap();
    assert_eq!(est.conn.suite(), Suite::Chacha20Poly1305);
    assert_eq!(
        est.conn.cipher_suite(),
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
    );
}

#[test]
fn own_layer_seals_rustls_reads_every_suite_and_size() {
    each_suite(|rustls_suite, _, est| {
        for len in sizes() {
            let plaintext = pattern(len, len as u8);
            let record = server_seal(&mut est.conn, &plaintext, 0);
            client_receive(&mut est.client, &record)
                .unwrap_or_else(|e| panic!("{rustls_suite:?} len {len}: {e}"));
            assert_eq!(client_read_all(&mut est.client), plaintext, "{len}");
        }
    });
}

#[test]
fn rustls_writes_own_layer_opens_split_at_every_offset() {
    each_suite(|rustls_suite, _, est| {
        for len in [1, 2, 17, 100] {
            let plaintext = pattern(len, 5);
            est.client.writer().write_all(&plaintext).unwrap();
            let mut wire = Vec::new();
            client_flush(&mut est.client, &mut wire);
            for cut in 0..=wire.len() {
                if cut > 0 {
                    est.client.writer().write_all(&plaintext).unwrap();
                    wire.clear();
                    client_flush(&mut est.client, &mut wire);
                }
                let mut rx = wire[..cut].to_vec();
                let mut data = Vec::new();
                assert!(server_receive(&mut est.conn, &mut rx, &mut data)
                    .unwrap()
                    .is_empty());
                rx.extend_from_slice(&wire[cut..]);
                server_receive(&mut est.conn, &mut rx, &mut data).unwrap();
                assert_eq!(data, plaintext, "{rustls_suite:?} len {len} cut {cut}");
            }
        }
        let big = pattern(100_000, 9);
        let mut rx = Vec::new();
        for chunk in big.chunks(40_000) {
            est.client.writer().write_all(chunk).unwrap();
            client_flush(&mut est.client, &mut rx);
        }
        let mut data = Vec::new();
        server_receive(&mut est.conn, &mut rx, &mut data).unwrap();
        assert_eq!(data, big);
    });
}

#[test]
fn resumed_handshake_keeps_the_data_sent_with_the_finished() {
    // In a resumed TLS 1.2 handshake the client's Finished comes last, with its first
    // request behind it.
    let pki = pki();
    let config = server_config(&pki);
    let suites: Vec<_> = tls12_suites().into_iter().map(|(s, _)| s).collect();
    let client_config = client_config_tls12(&pki, &suites);
    let request = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let first = handshake(&config, &client_config, request).unwrap();
    assert!(!first.conn.is_resumed());
    let mut second = handshake(&config, &client_config, request).unwrap();
    assert!(second.conn.is_resumed());
    assert_eq!(second.conn.version(), Version::Tls12);
    let (events, data) = client_to_server(&mut second);
    assert!(events.is_empty());
    assert_eq!(data, request);
}

#[test]
fn close_notify_both_ways_and_nothing_after() {
    each_suite(|_, _, est| {
        est.client.writer().write_all(b"last words").unwrap();
        est.client.send_close_notify();
        let (events, data) = client_to_server(est);
        assert_eq!(events, vec![Received::Closed]);
        assert_eq!(data, b"last words");
        let record = server_seal(&mut est.conn, b"reply", 0);
        client_receive(&mut est.client, &record).unwrap();
        let mut buf = [0u8; bufslab_tls::record::ALERT_RECORD_LEN];
        let n = est.conn.write_close_notify(&mut buf).unwrap();
        assert_eq!(n, est.conn.sealed_len(2, 0));
        client_receive(&mut est.client, &buf[..n]).unwrap();
        assert_eq!(client_read_all(&mut est.client), b"reply");
        let mut byte = [0u8; 1];
        assert_eq!(
            std::io::Read::read(&mut est.client.reader(), &mut byte).unwrap(),
            0
        );
        assert_eq!(est.conn.seal_in_place(&mut buf, 1, 0), Err(Error::Closed));
    });
}

#[test]
fn fatal_alert_reaches_rustls() {
    each_suite(|_, _, est| {
        let mut buf = [0u8; bufslab_tls::record::ALERT_RECORD_LEN];
        let n = est
            .conn
            .write_alert(AlertDescription::InternalError, &mut buf)
            .unwrap();
        assert_eq!(
            client_receive(&mut est.client, &buf[..n]).unwrap_err(),
            rustls::Error::AlertReceived(rustls::AlertDescription::InternalError)
        );
    });
}

#[test]
fn record_limit_ends_the_connection_with_close_notify() {
    // TLS 1.2 has no KeyUpdate: at the limit, data is refused and close_notify still goes,
    // as rustls does.
    each_suite(|_, _, est| {
        let start = est.conn.sealer().sequence();
        est.conn.set_record_limit(start + 5);
        let mut sent = Vec::new();
        for i in 0..3u8 {
            assert!(!est.conn.keys_exhausted());
            let record = server_seal(&mut est.conn, &[i], 0);
            client_receive(&mut est.client, &record).unwrap();
            sent.push(i);
        }
        assert!(est.conn.keys_exhausted());
        assert!(!est.conn.wants_control(), "no KeyUpdate in TLS 1.2");
        let mut buf = [0u8; 64];
        assert_eq!(
            est.conn.seal_in_place(&mut buf, 1, 0),
            Err(Error::KeysExhausted)
        );
        assert_eq!(est.conn.write_control(&mut buf), Ok(0));
        est.conn.update_keys(true);
        assert!(!est.conn.wants_control());
        let n = est.conn.write_close_notify(&mut buf).unwrap();
        client_receive(&mut est.client, &buf[..n]).unwrap();
        assert_eq!(client_read_all(&mut est.client), sent);
    });
}

#[test]
fn padding_is_refused() {
    each_suite(|_, _, est| {
        let mut buf = [0u8; 64];
        assert_eq!(
            est.conn.seal_in_place(&mut buf, 1, 1),
            Err(Error::PaddingUnsupported)
        );
    });
}

/// A renegotiation `ClientHello`'s message: type 1, a 24-bit length, a body.
fn client_hello(body_len: usize) -> Vec<u8> {
    let mut message = vec![1, 0, (body_len >> 8) as u8, body_len as u8];
    message.extend(pattern(body_len, 1));
    message
}

fn raw_each_suite(mut test: impl FnMut(rustls::SupportedCipherSuite, &mut RawClient12)) {
    for (suite, _) in tls12_suites() {
        let mut raw = raw_client12(suite);
        test(suite, &mut raw);
    }
}

/// Sends `record` and returns what the server made of it.
fn send(raw: &mut RawClient12, record: Vec<u8>) -> Result<Vec<Received>, Error> {
    let mut rx = record;
    let mut data = Vec::new();
    let events = server_receive(&mut raw.conn, &mut rx, &mut data)?;
    assert!(rx.is_empty());
    Ok(events)
}

#[test]
fn records_from_an_independent_client_open() {
    // The client's AES-GCM explicit nonce is its sequence number, not rustls's masked one:
    // the opener takes the nonce from the wire.
    raw_each_suite(|suite, raw| {
        for len in [0, 1, 100, MAX_PLAINTEXT_LEN] {
            let plaintext = pattern(len, 7);
            let mut rx = raw.to_server.seal(23, &plaintext);
            let mut data = Vec::new();
            server_receive(&mut raw.conn, &mut rx, &mut data).unwrap();
            assert_eq!(data, plaintext, "{suite:?} {len}");
        }
        let record = server_seal(&mut raw.conn, b"from the server", 0);
        assert_eq!(
            raw.from_server.open(&record),
            (23, b"from the server".to_vec())
        );
    });
}

#[test]
fn renegotiation_is_refused_with_a_warning_then_the_connection_goes_on() {
    raw_each_suite(|suite, raw| {
        let hello = raw.to_server.seal(22, &client_hello(200));
        assert_eq!(send(raw, hello), Ok(vec![Received::Control]));
        assert!(raw.conn.wants_control());
        let mut buf = [0u8; 64];
        assert_eq!(
            raw.conn.seal_in_place(&mut buf, 1, 0),
            Err(Error::ControlPending)
        );
        let n = raw.conn.write_control(&mut buf).unwrap();
        assert_eq!(
            raw.from_server.open(&buf[..n]),
            (21, vec![1, 100]),
            "{suite:?}: a no_renegotiation warning"
        );
        assert!(!raw.conn.wants_control());
        // Data goes on both ways.
        let data = raw.to_server.seal(23, b"still talking");
        let mut rx = data;
        let mut got = Vec::new();
        server_receive(&mut raw.conn, &mut rx, &mut got).unwrap();
        assert_eq!(got, b"still talking");
        let record = server_seal(&mut raw.conn, b"so am I", 0);
        assert_eq!(raw.from_server.open(&record), (23, b"so am I".to_vec()));
        // A second attempt ends the connection.
        let hello = raw.to_server.seal(22, &client_hello(10));
        let err = send(raw, hello).unwrap_err();
        assert_eq!(err, Error::TooManyRenegotiations);
        assert_eq!(err.alert(), Some(AlertDescription::UnexpectedMessage));
    });
}

#[test]
fn a_warning_rustls_accepts_from_the_server() {
    // What the rustls client does with the server's no_renegotiation warning: nothing.
    let pki = pki();
    let suites: Vec<_> = tls12_suites().into_iter().map(|(s, _)| s).collect();
    let mut est = handshake(
        &server_config(&pki),
        &client_config_tls12(&pki, &suites),
        b"",
    )
    .unwrap();
    let mut buf = [0u8; 64];
    let n = est
        .conn
        .write_alert(AlertDescription::NoRenegotiation, &mut buf)
        .unwrap();
    assert_eq!(buf[0], 21);
    client_receive(&mut est.client, &buf[..n]).unwrap();
}

#[test]
fn renegotiation_split_across_records() {
    raw_each_suite(|_, raw| {
        let message = client_hello(300);
        let mut events = Vec::new();
        for piece in [
            &message[..2],
            &message[2..3],
            &message[3..150],
            &message[150..],
        ] {
            let record = raw.to_server.seal(22, piece);
            events.extend(send(raw, record).unwrap());
        }
        assert_eq!(events, vec![Received::Control; 4]);
        assert!(raw.conn.wants_control());
        // Another record type inside a split message is refused.
        let mut raw2 = raw_client12(tls12_suites()[0].0);
        let record = raw2.to_server.seal(22, &message[..10]);
        send(&mut raw2, record).unwrap();
        let record = raw2.to_server.seal(23, b"x");
        assert_eq!(send(&mut raw2, record), Err(Error::HandshakeInterleaved));
    });
}

#[test]
fn handshake_messages_other_than_client_hello_are_unexpected() {
    raw_each_suite(|_, raw| {
        let record = raw.to_server.seal(22, &[20, 0, 0, 12]);
        let err = send(raw, record).unwrap_err();
        assert_eq!(err, Error::UnexpectedHandshake(20));
        assert_eq!(err.alert(), Some(AlertDescription::UnexpectedMessage));
    });
    let mut raw = raw_client12(tls12_suites()[0].0);
    let record = raw.to_server.seal(22, &[1, 1, 0, 0]);
    assert_eq!(send(&mut raw, record), Err(Error::Decode));
}

#[test]
fn warnings_are_ignored_up_to_rustls_limit() {
    raw_each_suite(|_, raw| {
        for i in 0..MAX_WARNING_ALERTS {
            // user_canceled counts as a warning too, as in rustls.
            let alert = if i == 1 { [1, 90] } else { [1, 100] };
            let record = raw.to_server.seal(21, &alert);
            assert_eq!(send(raw, record), Ok(vec![Received::Control]));
        }
        let record = raw.to_server.seal(21, &[1, 100]);
        assert_eq!(send(raw, record), Err(Error::TooManyWarningAlerts));
    });
    let mut raw = raw_client12(tls12_suites()[0].0);
    let record = raw.to_server.seal(21, &[2, 40]);
    assert_eq!(
        send(&mut raw, record),
        Err(Error::PeerAlert(AlertDescription::HandshakeFailure))
    );
    let mut raw = raw_client12(tls12_suites()[0].0);
    let record = raw.to_server.seal(21, &[1, 0]);
    assert_eq!(send(&mut raw, record), Ok(vec![Received::Closed]));
}

#[test]
fn bad_records_are_refused_with_rustls_alerts() {
    raw_each_suite(|suite, raw| {
        // A change_cipher_spec after the handshake.
        let record = raw.to_server.seal(20, &[1]);
        let err = send(raw, record).unwrap_err();
        assert_eq!(err, Error::UnexpectedRecordType(20), "{suite:?}");
        assert_eq!(err.alert(), Some(AlertDescription::UnexpectedMessage));
    });
    raw_each_suite(|suite, raw| {
        // A flipped bit anywhere, explicit nonce included.
        for at in [5, 9, 12, 13, 20, 26] {
            let mut raw2 = raw_client12(suite);
            let mut record = raw2.to_server.seal(23, b"forged");
            record[at] ^= 1;
            let err = send(&mut raw2, record).unwrap_err();
            assert_eq!(err, Error::BadRecordMac, "{suite:?} at {at}");
        }
        // Replayed: the sequence number is in the additional data.
        let record = raw.to_server.seal(23, b"once");
        assert_eq!(send(raw, record.clone()), Ok(vec![]));
        assert_eq!(send(raw, record), Err(Error::BadRecordMac));
    });
    raw_each_suite(|_, raw| {
        // Too short to hold the tag (and explicit nonce).
        let record = vec![23, 3, 3, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(send(raw, record), Err(Error::BadRecordMac));
    });
    raw_each_suite(|_, raw| {
        let record = raw.to_server.seal(23, &vec![0; MAX_PLAINTEXT_LEN + 1]);
        let err = send(raw, record).unwrap_err();
        assert_eq!(err, Error::RecordOverflow);
    });
    raw_each_suite(|_, raw| {
        let record = raw.to_server.seal(21, &[]);
        assert_eq!(send(raw, record), Err(Error::EmptyControlRecord));
    });
    raw_each_suite(|_, raw| {
        for _ in 0..32 {
            let record = raw.to_server.seal(23, &[]);
            assert_eq!(send(raw, record), Ok(vec![Received::Control]));
        }
        let record = raw.to_server.seal(23, &[]);
        assert_eq!(send(raw, record), Err(Error::TooManyEmptyRecords));
    });
}

#[test]
fn rustls_client_with_the_largest_records_both_ways() {
    let pki = rsa_pki();
    let suites: Vec<_> = tls12_suites()
        .into_iter()
        .map(|(s, _)| s)
        .filter(|&s| is_rsa(s))
        .collect();
    let config = Arc::new(server_config(&pki));
    let mut est = handshake(&config, &client_config_tls12(&pki, &suites), b"").unwrap();
    let big = pattern(3 * MAX_PLAINTEXT_LEN, 2);
    let mut got = Vec::new();
    for chunk in big.chunks(MAX_PLAINTEXT_LEN) {
        let record = server_seal(&mut est.conn, chunk, 0);
        assert_eq!(record.len(), est.conn.sealed_len(MAX_PLAINTEXT_LEN, 0));
        got.extend(client_receive_all(&mut est.client, &record));
    }
    assert_eq!(got, big);
    for chunk in big.chunks(MAX_PLAINTEXT_LEN) {
        est.client.writer().write_all(chunk).unwrap();
    }
    let (_, data) = client_to_server(&mut est);
    assert_eq!(data, big);
}
