//! Zero heap allocations per keep-alive HTTPS request after the handshake, under each driver
//! and with each TLS 1.3 cipher suite and each TLS 1.2 ECDHE-ECDSA suite: plaintext, json, 16
//! pipelined, a 1 KiB echo and a 64 KiB chunked echo, from Python's `ssl` client (OpenSSL) in
//! a process of its own, so that dhat counts the server alone. Then the allocations of full and
//! resumed handshakes, which rustls makes, bounded so that a regression fails. dhat allows one
//! profiler per process: one test in this file.

use std::io::{Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

use bufslab_tls::record::Suite;
use server_demo::{Config, Server, TlsConfig};

mod common;
use common::each_driver;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const ROUNDS: usize = 100;
const HANDSHAKES: u64 = 20;
/// Allocations per connection with a full and with a resumed handshake, at most: rustls's
/// (102 and 111 on rustls 0.23.27 with ring; 94 and 74 in TLS 1.2 on rustls 0.23.46; with
/// AWS-LC, the `aws-lc-rs` feature, 121 and 134 on rustls 0.23.46), with a little room for a
/// rustls update, none for a new allocation per record.
const FULL_HANDSHAKE_MAX: u64 = if cfg!(feature = "aws-lc-rs") {
    130
} else {
    110
};
const RESUMED_HANDSHAKE_MAX: u64 = if cfg!(feature = "aws-lc-rs") {
    145
} else {
    120
};

/// The client's next line, read into `buf` without allocating.
fn line<'b>(out: &mut ChildStdout, buf: &'b mut [u8; 64]) -> &'b str {
    let mut n = 0;
    let mut byte = [0u8; 1];
    while out.read(&mut byte).expect("client output") == 1 && byte[0] != b'\n' {
        if n < buf.len() {
            buf[n] = byte[0];
            n += 1;
        }
    }
    std::str::from_utf8(&buf[..n]).unwrap_or("?")
}

fn go(input: &mut ChildStdin) {
    input.write_all(b"go\n").expect("client input");
    input.flush().unwrap();
}

fn blocks() -> u64 {
    dhat::HeapStats::get().total_blocks
}

fn have_python() -> bool {
    Command::new("python3").arg("--version").output().is_ok()
}

#[test]
fn https_requests_allocate_nothing_after_the_handshake() {
    if !have_python() {
        println!("skipped: no python3 to run the TLS client (tests/tls/client.py)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("bufslab-dhat-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let ca = dir.join("cert.pem");
    std::fs::write(&ca, cert.cert.pem()).unwrap();
    let chain = vec![cert.cert.der().clone()];
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into());

    let _profiler = dhat::Profiler::builder().testing().build();
    // Each suite as OpenSSL names it in each version.
    for (suite, version, name) in [
        (Suite::Aes128Gcm, "1.3", "TLS_AES_128_GCM_SHA256"),
        (Suite::Aes256Gcm, "1.3", "TLS_AES_256_GCM_SHA384"),
        (
            Suite::Chacha20Poly1305,
            "1.3",
            "TLS_CHACHA20_POLY1305_SHA256",
        ),
        (Suite::Aes128Gcm, "1.2", "ECDHE-ECDSA-AES128-GCM-SHA256"),
        (Suite::Aes256Gcm, "1.2", "ECDHE-ECDSA-AES256-GCM-SHA384"),
        (
            Suite::Chacha20Poly1305,
            "1.2",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
        ),
    ] {
        each_driver(
            "https_requests_allocate_nothing_after_the_handshake",
            || {
                let tls = bufslab_tls::Config::single_cert_builder(chain.clone(), key.clone_key())
                    .unwrap()
                    .cipher_suites(&[suite])
                    .build()
                    .unwrap();
                // No eviction timer: it allocates bookkeeping every 10 s, not per request.
                let cfg = Config {
                    workers: 1,
                    max_conns: 64,
                    tls: Some(TlsConfig::new(tls)),
                    ..common::config()
                };
                let server = Server::start(cfg).unwrap();
                let addr = server.local_addr();
                let mut client = Command::new("python3")
                    .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls/client.py"))
                    .args([
                        addr.ip().to_string(),
                        addr.port().to_string(),
                        ca.display().to_string(),
                        ROUNDS.to_string(),
                        HANDSHAKES.to_string(),
                        name.to_owned(),
                        version.to_owned(),
                    ])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("python3 runs");
                let mut input = client.stdin.take().unwrap();
                let mut output = client.stdout.take().unwrap();
                let mut buf = [0u8; 64];
                let driver = server.stats().driver;
                loop {
                    let tag = line(&mut output, &mut buf).to_owned();
                    if tag == "full" {
                        break;
                    }
                    assert!(tag.starts_with("warm "), "client said {tag:?}");
                    let before = blocks();
                    go(&mut input);
                    let done = line(&mut output, &mut buf);
                    let after = blocks();
                    assert!(done.starts_with("done "), "client said {done:?}");
                    eprintln!(
                        "dhat: {driver}, TLS {version} {name}: {} HTTPS rounds of {}: {} allocations",
                        ROUNDS,
                        &tag[5..],
                        after - before
                    );
                    dhat::assert_eq!(after - before, 0);
                    go(&mut input);
                }
                let before = blocks();
                go(&mut input);
                assert_eq!(line(&mut output, &mut buf), "resumed");
                let full = (blocks() - before) / HANDSHAKES;
                let before = blocks();
                go(&mut input);
                assert_eq!(line(&mut output, &mut buf), "end");
                let resumed = (blocks() - before) / HANDSHAKES;
                go(&mut input);
                eprintln!(
                "dhat: {driver}, TLS {version} {name}: allocations per connection with a full handshake {full}, with a resumed one {resumed}"
            );
                assert!(
                    full <= FULL_HANDSHAKE_MAX,
                    "{full} allocations per full handshake"
                );
                assert!(
                    resumed <= RESUMED_HANDSHAKE_MAX,
                    "{resumed} per resumed handshake"
                );
                assert!(client.wait().unwrap().success(), "the client failed");
                server.stop().unwrap();
            },
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
