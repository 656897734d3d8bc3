//! The crate's server against a real rustls client, in memory: every record the own layer
//! seals must read back in rustls, and every record rustls writes must open here.

mod common;

use std::io::Write;

use bufslab_tls::record::{sealed_len, Suite, MAX_PLAINTEXT_LEN, MAX_RECORD_LEN};
use bufslab_tls::{AlertDescription, Received};
use common::*;

/// Opens what arrived behind the client's `Finished`: the data it held.
fn received_with_finished(est: &mut Established) -> Vec<u8> {
    let mut data = Vec::new();
    server_receive(&mut est.conn, &mut est.rx, &mut data).unwrap();
    data
}

/// Hands all the client has written to the server: the events and the data it opened.
fn client_to_server(est: &mut Established) -> (Vec<Received>, Vec<u8>) {
    let mut rx = Vec::new();
    client_flush(&mut est.client, &mut rx);
    let mut data = Vec::new();
    let events = server_receive(&mut est.conn, &mut rx, &mut data).unwrap();
    (events, data)
}

/// Seals `plaintext` as one server record and has the client read it.
fn server_to_client(est: &mut Established, plaintext: &[u8]) {
    let record = server_seal(&mut est.conn, plaintext, 0);
    client_receive(&mut est.client, &record).unwrap();
}

/// A fresh connection, the suite left to rustls.
fn connected() -> Established {
    let pki = pki();
    handshake(&server_config(&pki), &client_config(&pki, None), b"").unwrap()
}

/// Runs `test` on a fresh connection for each suite.
fn each_suite(mut test: impl FnMut(Suite, &mut Established)) {
    let pki = pki();
    let config = server_config(&pki);
    for suite in SUITES {
        let mut est = handshake(&config, &client_config(&pki, Some(suite)), b"").unwrap();
        test(suite, &mut est);
    }
}

fn sizes() -> Vec<usize> {
    let mut sizes: Vec<usize> = (0..=300).collect();
    sizes.extend((301..MAX_PLAINTEXT_LEN).step_by(509));
    sizes.extend([4096, 8192, MAX_PLAINTEXT_LEN - 1, MAX_PLAINTEXT_LEN]);
    sizes
}

#[test]
fn handshake_reports_alpn_sni_version_suite() {
    each_suite(|suite, est| {
        assert_eq!(est.conn.suite(), suite);
        assert_eq!(est.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
        assert_eq!(est.conn.server_name(), Some(HOST));
        assert_eq!(
            est.conn.protocol_version(),
            rustls::ProtocolVersion::TLSv1_3
        );
        assert!(!est.conn.is_resumed());
        assert_eq!(
            est.client.negotiated_cipher_suite(),
            Some(rustls_suite(suite))
        );
        assert!(est.rx.is_empty());
    });
}

#[test]
fn handshake_with_bytes_trickling_in_and_the_smallest_outgoing_buffer() {
    let pki = pki();
    let config = server_config(&pki);
    let client_config = client_config(&pki, None);
    let request = b"GET / HTTP/1.1\r\n\r\n";
    for step in [1, 2, 5, 13, 100, 1000] {
        for out_len in [MAX_RECORD_LEN, 3 * MAX_RECORD_LEN] {
            let mut est = handshake_with(&config, &client_config, request, out_len, step).unwrap();
            assert_eq!(
                received_with_finished(&mut est),
                request,
                "step {step} out {out_len}"
            );
        }
    }
}

#[test]
fn handshake_messages_fragmented_into_small_records() {
    // rustls coalesces a handshake message's fragments inside the caller's buffer: the
    // window the driver shows it must follow, whatever the TCP cuts.
    let pki = pki();
    let config = server_config(&pki);
    let mut client_config = (*client_config(&pki, None)).clone();
    client_config.max_fragment_size = Some(32);
    let client_config = std::sync::Arc::new(client_config);
    let request = b"GET /fragmented HTTP/1.1\r\nHost: localhost\r\n\r\n";
    for step in [1, 7, 64, usize::MAX] {
        for _resumed in 0..2 {
            let mut est =
                handshake_with(&config, &client_config, request, MAX_RECORD_LEN, step).unwrap();
            let mut records = 0;
            let mut at = 0;
            while let Some(len) = bufslab_tls::record::record_len(&est.rx[at..]).unwrap() {
                at += len;
                records += 1;
            }
            assert!(records >= 2, "the request came in {records} records");
            assert_eq!(received_with_finished(&mut est), request, "step {step}");
        }
    }
}

#[test]
fn resumed_handshake_by_ticket() {
    let pki = pki();
    let config = server_config(&pki);
    let client_config = client_config(&pki, None);
    let first = handshake(&config, &client_config, b"").unwrap();
    assert!(!first.conn.is_resumed());
    let second = handshake(&config, &client_config, b"").unwrap();
    assert!(second.conn.is_resumed());
    assert_eq!(second.conn.server_name(), Some(HOST));
    assert_eq!(second.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
}

#[test]
fn own_layer_seals_rustls_reads_every_suite_and_size() {
    each_suite(|suite, est| {
        for len in sizes() {
            let max_padding = MAX_PLAINTEXT_LEN - len;
            for padding in [0, 1, 17, 300].into_iter().filter(|&p| p <= max_padding) {
                let plaintext = pattern(len, len as u8 ^ padding as u8);
                let record = server_seal(&mut est.conn, &plaintext, padding);
                assert_eq!(record.len(), sealed_len(len, padding));
                client_receive(&mut est.client, &record)
                    .unwrap_or_else(|e| panic!("{suite:?} len {len} padding {padding}: {e}"));
                assert_eq!(
                    client_read_all(&mut est.client),
                    plaintext,
                    "{suite:?} {len}"
                );
            }
        }
        // The most padding a record may carry.
        let record = server_seal(&mut est.conn, b"", MAX_PLAINTEXT_LEN);
        client_receive(&mut est.client, &record).unwrap();
    });
}

#[test]
fn rustls_writes_own_layer_opens_split_at_every_offset() {
    each_suite(|suite, est| {
        for len in 1..=40 {
            let plaintext = pattern(len, 3);
            est.client.writer().write_all(&plaintext).unwrap();
            let mut wire = Vec::new();
            client_flush(&mut est.client, &mut wire);
            for cut in 0..=wire.len() {
                // The same record again at each cut: the client seals a new one each time.
                if cut > 0 {
                    est.client.writer().write_all(&plaintext).unwrap();
                    wire.clear();
                    client_flush(&mut est.client, &mut wire);
                }
                let mut rx = Vec::new();
                let mut data = Vec::new();
                rx.extend_from_slice(&wire[..cut]);
                assert!(server_receive(&mut est.conn, &mut rx, &mut data)
                    .unwrap()
                    .is_empty());
                if cut < wire.len() {
                    assert!(data.is_empty(), "a partial record gave data");
                }
                rx.extend_from_slice(&wire[cut..]);
                server_receive(&mut est.conn, &mut rx, &mut data).unwrap();
                assert_eq!(data, plaintext, "{suite:?} len {len} cut {cut}");
                assert!(rx.is_empty());
            }
        }
        // Large writes: rustls cuts them into full records.
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
fn data_in_the_finished_flight_is_kept_for_the_record_layer() {
    let pki = pki();
    let config = server_config(&pki);
    let request = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut est = handshake(&config, &client_config(&pki, None), request).unwrap();
    assert!(
        !est.rx.is_empty(),
        "the request was to arrive with the Finished"
    );
    assert_eq!(received_with_finished(&mut est), request);
}

#[test]
fn key_update_from_the_client() {
    each_suite(|_, est| {
        for round in 0..3u8 {
            est.client.refresh_traffic_keys().unwrap();
            est.client.writer().write_all(&[round; 100]).unwrap();
            let (events, data) = client_to_server(est);
            assert_eq!(events, vec![Received::Control]);
            assert_eq!(data, vec![round; 100]);
            // rustls asks for ours: data waits until it is written.
            assert!(est.conn.wants_control());
            let mut buf = vec![0u8; 64];
            assert_eq!(
                est.conn.seal_in_place(&mut buf, 1, 0),
                Err(bufslab_tls::Error::ControlPending)
            );
            let n = est.conn.write_control(&mut buf).unwrap();
            assert!(n > 0);
            assert_eq!(est.conn.sealer().sequence(), 0);
            client_receive(&mut est.client, &buf[..n]).unwrap();
            server_to_client(est, b"after the update");
            assert_eq!(client_read_all(&mut est.client), b"after the update");
        }
    });
}

#[test]
fn key_update_from_the_server() {
    let pki = pki();
    let config = server_config(&pki);
    for suite in SUITES {
        for request_peer in [false, true] {
            let mut est = handshake(&config, &client_config(&pki, Some(suite)), b"").unwrap();
            est.conn.update_keys(request_peer);
            let mut buf = vec![0u8; 64];
            let n = est.conn.write_control(&mut buf).unwrap();
            client_receive(&mut est.client, &buf[..n]).unwrap();
            server_to_client(&mut est, b"new key");
            assert_eq!(client_read_all(&mut est.client), b"new key");
            // The client answers a request with its own update, before its next data.
            est.client.writer().write_all(b"reply").unwrap();
            let (events, data) = client_to_server(&mut est);
            let expected = if request_peer {
                vec![Received::Control]
            } else {
                vec![]
            };
            assert_eq!(events, expected, "{suite:?} request_peer {request_peer}");
            assert_eq!(data, b"reply");
            // Our update answered theirs: nothing more is owed.
            assert!(!est.conn.wants_control());
        }
    }
}

#[test]
fn record_limit_triggers_a_key_update_rustls_accepts() {
    let pki = pki();
    let config = server_config(&pki);
    let mut est = handshake(&config, &client_config(&pki, Some(SUITES[0])), b"").unwrap();
    let start = est.conn.sealer().sequence();
    est.conn.set_record_limit(start + 5);
    let mut sent = Vec::new();
    let mut buf = vec![0u8; 64];
    for i in 0..20u8 {
        if est.conn.wants_control() {
            let n = est.conn.write_control(&mut buf).unwrap();
            client_receive(&mut est.client, &buf[..n]).unwrap();
        }
        server_to_client(&mut est, &[i]);
        sent.push(i);
    }
    assert_eq!(client_read_all(&mut est.client), sent);
}

#[test]
fn close_notify_from_the_client_then_server() {
    let mut est = connected();
    est.client.writer().write_all(b"last words").unwrap();
    est.client.send_close_notify();
    let (events, data) = client_to_server(&mut est);
    assert_eq!(events, vec![Received::Closed]);
    assert_eq!(data, b"last words");
    assert!(est.conn.received_close_notify());
    // Half-closed: the server still sends, then closes.
    server_to_client(&mut est, b"reply");
    let mut buf = [0u8; 64];
    let n = est.conn.write_close_notify(&mut buf).unwrap();
    client_receive(&mut est.client, &buf[..n]).unwrap();
    assert_eq!(client_read_all(&mut est.client), b"reply");
    let mut byte = [0u8; 1];
    assert_eq!(
        std::io::Read::read(&mut est.client.reader(), &mut byte).unwrap(),
        0
    );
    // Nothing after the peer's close_notify, nothing sealed after ours.
    assert_eq!(
        est.conn.seal_in_place(&mut buf, 1, 0),
        Err(bufslab_tls::Error::Closed)
    );
}

#[test]
fn close_notify_from_the_server_then_client() {
    let mut est = connected();
    let mut buf = [0u8; 64];
    let n = est.conn.write_close_notify(&mut buf).unwrap();
    client_receive(&mut est.client, &buf[..n]).unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(
        std::io::Read::read(&mut est.client.reader(), &mut byte).unwrap(),
        0
    );
    est.client.writer().write_all(b"still here").unwrap();
    est.client.send_close_notify();
    let (events, data) = client_to_server(&mut est);
    assert_eq!(data, b"still here");
    assert_eq!(events, vec![Received::Closed]);
}

#[test]
fn fatal_alert_reaches_rustls() {
    let mut est = connected();
    let mut buf = [0u8; 64];
    let n = est
        .conn
        .write_alert(AlertDescription::InternalError, &mut buf)
        .unwrap();
    let err = client_receive(&mut est.client, &buf[..n]).unwrap_err();
    assert_eq!(
        err,
        rustls::Error::AlertReceived(rustls::AlertDescription::InternalError)
    );
}
