//! After the handshake, sealing and opening a record allocate nothing; the handshake's own
//! allocations (server side only) are measured and printed, under a loose bound. dhat counts
//! every heap allocation of the process, so only the server's calls are inside the measured
//! windows, never the rustls client's.
//!
//! The file is its own `main` (`harness = false`): libtest's main thread goes on allocating
//! after it starts a test's thread, and those blocks would land inside the measured windows.

mod common;

use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

use bufslab_tls::record::{Version, MAX_PLAINTEXT_LEN, MAX_RECORD_LEN};
use bufslab_tls::{Config, Connection, Handshake, Received, Status};
use common::*;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn blocks() -> u64 {
    dhat::HeapStats::get().total_blocks
}

/// A handshake like `common::handshake`, counting the blocks the server's calls allocate.
fn measured_handshake(
    config: &Config,
    client_config: &Arc<ClientConfig>,
) -> (u64, ClientConnection, Connection) {
    let mut client = ClientConnection::new(
        Arc::clone(client_config),
        ServerName::try_from(HOST).unwrap(),
    )
    .unwrap();
    let mut rx = Vec::with_capacity(64 * 1024);
    let mut out = vec![0u8; 2 * MAX_RECORD_LEN];
    let mut allocs = 0;
    let before = blocks();
    let mut hs = Handshake::new(config).unwrap();
    allocs += blocks() - before;
    loop {
        client_flush(&mut client, &mut rx);
        let before = blocks();
        let progress = hs.advance(&mut rx, &mut out);
        allocs += blocks() - before;
        rx.drain(..progress.consumed);
        client_receive(&mut client, &out[..progress.written]).unwrap();
        if progress.status.unwrap() == Status::Done {
            break;
        }
    }
    let before = blocks();
    let conn = hs.into_connection().unwrap();
    allocs += blocks() - before;
    (allocs, client, conn)
}

const RECORDS: usize = 300;

fn size(i: usize) -> usize {
    match i % 4 {
        0 => i,
        1 => MAX_PLAINTEXT_LEN,
        2 => 0,
        _ => 1000 + i,
    }
}

fn padding(i: usize) -> usize {
    if size(i) == MAX_PLAINTEXT_LEN {
        0
    } else {
        i % 3
    }
}

/// Seals and opens [`RECORDS`] records of every size on `conn`; returns the blocks the
/// server's calls allocated sealing and opening them, and the records opened.
fn records(conn: &mut Connection, client: &mut ClientConnection) -> (u64, u64, usize) {
    // TLS 1.2 has no padding.
    let tls12 = conn.version() == Version::Tls12;
    let padding = |i: usize| if tls12 { 0 } else { padding(i) };
    // Sealing: every record laid out in one preallocated buffer.
    let start = conn.plaintext_start();
    let total: usize = (0..RECORDS)
        .map(|i| conn.sealed_len(size(i), padding(i)))
        .sum();
    let mut wire = vec![0u8; total];
    let mut expected = Vec::new();
    let mut at = 0;
    for i in 0..RECORDS {
        let len = size(i);
        let plaintext = pattern(len, i as u8);
        wire[at + start..at + start + len].copy_from_slice(&plaintext);
        expected.extend_from_slice(&plaintext);
        at += conn.sealed_len(len, padding(i));
    }
    let before = blocks();
    let mut at = 0;
    for i in 0..RECORDS {
        let n = conn
            .seal_in_place(&mut wire[at..], size(i), padding(i))
            .unwrap();
        at += n;
    }
    let sealed = blocks() - before;
    assert_eq!(at, total);
    assert_eq!(client_receive_all(client, &wire), expected);

    // Opening: records from the client, opened where they lie.
    let mut rx = Vec::new();
    let mut expected = Vec::new();
    for i in 0..RECORDS {
        let plaintext = pattern(size(i).max(1), i as u8);
        client.writer().write_all(&plaintext).unwrap();
        client_flush(client, &mut rx);
        expected.extend_from_slice(&plaintext);
    }
    let mut ranges: Vec<Range<usize>> = Vec::with_capacity(4 * RECORDS);
    let before = blocks();
    let mut at = 0;
    while let Some(len) = conn.next_record_len(&rx[at..]).unwrap() {
        if len > rx.len() - at {
            break;
        }
        if let Received::Data(range) = conn.open_in_place(&mut rx[at..at + len]).unwrap() {
            ranges.push(at + range.start..at + range.end);
        }
        at += len;
    }
    let opened = blocks() - before;
    assert_eq!(at, rx.len());
    let got: Vec<u8> = ranges.iter().flat_map(|r| rx[r.clone()].to_vec()).collect();
    assert_eq!(got, expected);
    (sealed, opened, ranges.len())
}

fn main() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let pki = pki();
    let config = server_config(&pki);
    let client_config = client_config(&pki, None);
    // Warm-up: rustls and ring set up what they keep for the process.
    drop(measured_handshake(&config, &client_config));

    // A client config with no ticket yet makes a full handshake; the next one resumes.
    let fresh = common::client_config(&pki, None);
    let (full, _, conn) = measured_handshake(&config, &fresh);
    assert!(!conn.is_resumed());
    let (resumed, mut client, mut conn) = measured_handshake(&config, &fresh);
    assert!(conn.is_resumed());
    println!("allocations per full handshake (server side): {full}");
    println!("allocations per resumed handshake (server side): {resumed}");
    assert!(full < 5_000 && resumed < 5_000, "{full} {resumed}");

    let (sealed, opened, opened_records) = records(&mut conn, &mut client);

    // A key update each way: rustls's key schedule, per update (not per record).
    let mut buf = [0u8; 64];
    conn.update_keys(false);
    let before = blocks();
    let n = conn.write_control(&mut buf).unwrap();
    let tx_update = blocks() - before;
    client_receive(&mut client, &buf[..n]).unwrap();
    client.refresh_traffic_keys().unwrap();
    let mut rx = Vec::new();
    client_flush(&mut client, &mut rx);
    let before = blocks();
    let got = conn.open_in_place(&mut rx).unwrap();
    let rx_update = blocks() - before;
    assert_eq!(got, Received::Control);

    println!("allocations per sealed record: {sealed} over {RECORDS} records");
    println!("allocations per opened record: {opened} over {opened_records} records");
    println!("allocations per KeyUpdate sent: {tx_update}, received: {rx_update}");
    assert_eq!(sealed, 0, "sealing allocated");
    assert_eq!(opened, 0, "opening allocated");

    // TLS 1.2, AES-GCM (explicit nonce) and ChaCha20-Poly1305: the same.
    for (suite, _) in tls12_suites().into_iter().filter(|&(s, _)| !is_rsa(s)) {
        let client_config = client_config_tls12(&pki, &[suite]);
        let (full, mut client, mut conn) = measured_handshake(&config, &client_config);
        assert_eq!(conn.version(), Version::Tls12);
        let (sealed, opened, opened_records) = records(&mut conn, &mut client);
        println!(
            "TLS 1.2 {:?}: allocations per full handshake {full}, per sealed record {sealed} \
             over {RECORDS}, per opened record {opened} over {opened_records}",
            suite.suite()
        );
        assert!(full < 5_000, "{full}");
        assert_eq!(sealed, 0, "TLS 1.2 sealing allocated");
        assert_eq!(opened, 0, "TLS 1.2 opening allocated");
    }
}
