//! HTTPS through the engine, under each driver, with rustls as the client: keep-alive,
//! pipelining and bodies; a key update from the client; `close_notify` on `Connection: close`
//! and on shutdown; a record that does not open (an alert, the connection closed, and no byte
//! of it served); the bound on handshakes in progress (connections past it wait, none is
//! closed); the handshake's deadline; plain HTTP and HTTPS listeners in one server. TLS 1.2
//! with each ECDHE-ECDSA suite, switched off, a renegotiation refused (at once, with a
//! `no_renegotiation` warning; the second attempt closes), and at its record limit (no
//! `KeyUpdate`: the connection ends with `close_notify`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use bufslab_tls::record::{ContentType, Opener, Sealer, Suite, Version, HEADER_LEN};
use rustls::{ClientConfig, ConnectionTrafficSecrets, RootCertStore, StreamOwned};
use server_demo::{Config, Listener, ServerHandle, TlsConfig};

mod common;
use common::tls::{connect, connect_with, pki, tls_config, Pki, Tls};
use common::{driver_test, payload, wait_until, Client, GET_PLAINTEXT as PLAIN, HELLO};

fn start(pki: &Pki, tweak: impl FnOnce(&mut Config, &mut TlsConfig)) -> ServerHandle {
    let mut tls = tls_config(pki);
    let mut cfg = common::config();
    tweak(&mut cfg, &mut tls);
    cfg.tls = Some(tls);
    common::start(cfg)
}

/// One worker serving HTTPS with at most `max_handshakes` handshakes at once; `more` adds to
/// its configuration (a second listener, a deadline) with the TLS configuration at hand.
fn start_bounded(
    pki: &Pki,
    max_handshakes: usize,
    more: impl FnOnce(&mut Config, &TlsConfig),
) -> ServerHandle {
    start(pki, |cfg, tls| {
        cfg.workers = 1;
        tls.max_handshakes = max_handshakes;
        more(cfg, tls);
    })
}

/// A free port on loopback, for a second listener.
fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The TLS 1.2 suites rustls offers for the test's ECDSA certificate.
const TLS12_SUITES: [rustls::SupportedCipherSuite; 3] = [
    rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
];

/// A rustls client speaking only TLS 1.2, with `suite`, trusting `pki`'s certificate.
fn client_tls12(pki: &Pki, suite: rustls::SupportedCipherSuite) -> Arc<ClientConfig> {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = vec![suite];
    let mut roots = RootCertStore::empty();
    roots.add(pki.chain[0].clone()).unwrap();
    let mut client = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.alpn_protocols = vec![b"http/1.1".to_vec()];
    // For `take_over`.
    client.enable_secret_extraction = true;
    Arc::new(client)
}

/// A TLS 1.2 connection's client side after its handshake, taken over from rustls (AES-GCM
/// only): its socket, and the record layer of `bufslab_tls` with the client's keys, to send
/// what rustls never sends.
fn take_over(c: Client<Tls>) -> (TcpStream, Sealer, Opener) {
    let StreamOwned { conn, sock } = c.stream;
    // A server that does not answer fails the test instead of hanging it.
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let secrets = conn.dangerous_extract_secrets().unwrap();
    let keys = |(seq, secrets): (u64, ConnectionTrafficSecrets)| match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (
            Suite::Aes128Gcm,
            key.as_ref().to_vec(),
            <[u8; 12]>::try_from(iv.as_ref()).unwrap(),
            seq,
        ),
        _ => panic!("the test's client speaks AES-128-GCM"),
    };
    let (suite, key, iv, seq) = keys(secrets.tx);
    let sealer = Sealer::with_version(Version::Tls12, suite, &key, iv, seq).unwrap();
    let (suite, key, iv, seq) = keys(secrets.rx);
    let opener = Opener::with_version(Version::Tls12, suite, &key, iv, seq).unwrap();
    (sock, sealer, opener)
}

/// Seals `message` as one record of type `typ` and sends it.
fn send_record(sock: &mut TcpStream, sealer: &mut Sealer, typ: ContentType, message: &[u8]) {
    let mut out = vec![0u8; sealer.sealed_len(message.len(), 0)];
    let n = sealer.seal_message(&mut out, typ, message).unwrap();
    sock.write_all(&out[..n]).unwrap();
}

/// Reads one record from the server and opens it; `None` at the end of the stream.
fn read_record(sock: &mut TcpStream, opener: &mut Opener) -> Option<(ContentType, Vec<u8>)> {
    let mut record = vec![0u8; HEADER_LEN];
    if sock.read_exact(&mut record).is_err() {
        return None;
    }
    let len = bufslab_tls::record::record_len(&record).unwrap().unwrap();
    record.resize(len, 0);
    sock.read_exact(&mut record[HEADER_LEN..]).unwrap();
    let opened = opener.open_in_place(&mut record).unwrap();
    Some((opened.content_type, record[opened.plaintext].to_vec()))
}

/// Reads to the end of the stream: `Ok` when it ended with `close_notify`.
fn read_to_end(s: &mut Tls) -> std::io::Result<Vec<u8>> {
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).map(|_| rest)
}

/// An echo of `body` with a Content-Length.
fn echo(body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

driver_test! {
    fn keep_alive_pipelining_and_bodies() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut c = connect(&pki, server.local_addr());
        for _ in 0..3 {
            let r = c.request(PLAIN);
            assert_eq!((r.status, r.body), (200, HELLO.to_vec()));
        }
        assert_eq!(c.stream.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
        c.send(&PLAIN.repeat(16));
        for _ in 0..16 {
            assert_eq!(c.response().status, 200);
        }
        // Bodies across records and receive blocks, both ways.
        for len in [0, 1, 1024, 16 * 1024 - 1, 16 * 1024 + 1, 100_000] {
            let body = payload(len);
            let r = c.request(&echo(&body));
            assert_eq!((r.status, r.body), (200, body), "echo of {len}");
        }
        let body = payload(65536);
        let mut req = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for piece in body.chunks(5000) {
            req.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            req.extend_from_slice(piece);
            req.extend_from_slice(b"\r\n");
        }
        req.extend_from_slice(b"0\r\n\r\n");
        let r = c.request(&req);
        assert_eq!((r.status, r.body), (200, body));
        drop(c);
        server.stop().unwrap();
    }
}

/// The exchanges of `keep_alive_pipelining_and_bodies` on one connection.
fn exchanges(c: &mut Client<Tls>) {
    for _ in 0..3 {
        let r = c.request(PLAIN);
        assert_eq!((r.status, r.body), (200, HELLO.to_vec()));
    }
    c.send(&PLAIN.repeat(16));
    for _ in 0..16 {
        assert_eq!(c.response().status, 200);
    }
    for len in [0, 1, 1024, 16 * 1024 - 1, 16 * 1024 + 1, 100_000] {
        let body = payload(len);
        let r = c.request(&echo(&body));
        assert_eq!((r.status, r.body), (200, body), "echo of {len}");
    }
}

driver_test! {
    fn tls12_keep_alive_pipelining_and_bodies_every_suite() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        for suite in TLS12_SUITES {
            let mut c = connect_with(&client_tls12(&pki, suite), server.local_addr());
            exchanges(&mut c);
            assert_eq!(
                c.stream.conn.protocol_version(),
                Some(rustls::ProtocolVersion::TLSv1_2)
            );
            assert_eq!(c.stream.conn.negotiated_cipher_suite(), Some(suite));
            c.send(b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
            let rest = read_to_end(&mut c.stream).expect("close_notify, then FIN");
            assert!(rest.ends_with(HELLO));
        }
        assert_eq!(server.stats().bad_requests, 0);
        // An idle TLS 1.2 connection when the server stops: close_notify (an AES-GCM one, with
        // its explicit nonce) all the same.
        let mut idle = connect_with(&client_tls12(&pki, TLS12_SUITES[1]), server.local_addr());
        assert_eq!(idle.request(PLAIN).status, 200);
        server.stop().unwrap();
        assert!(read_to_end(&mut idle.stream).expect("close_notify on shutdown").is_empty());
    }
}

driver_test! {
    fn tls12_switched_off_is_refused_with_protocol_version() {
        let pki = pki();
        let tls = bufslab_tls::Config::single_cert_builder(pki.chain.clone(), pki.key.clone_key())
            .unwrap()
            .tls12(false)
            .build()
            .unwrap();
        let cfg = Config {
            tls: Some(TlsConfig::new(tls)),
            ..common::config()
        };
        let server = common::start(cfg);
        let mut c = connect_with(&client_tls12(&pki, TLS12_SUITES[0]), server.local_addr());
        c.stream.write_all(PLAIN).unwrap_or_default();
        let e = read_to_end(&mut c.stream).expect_err("the server's alert");
        assert!(e.to_string().contains("ProtocolVersion"), "{e}");
        // TLS 1.3 clients are served as before.
        let mut c = connect(&pki, server.local_addr());
        assert_eq!(c.request(PLAIN).status, 200);
        assert_eq!(server.stats().tls_handshake_failures, 1);
        drop(c);
        server.stop().unwrap();
    }
}

driver_test! {
    fn tls12_renegotiation_is_refused_at_once_then_the_connection_goes_on() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut c = connect_with(&client_tls12(&pki, TLS12_SUITES[0]), server.local_addr());
        assert_eq!(c.request(PLAIN).status, 200);
        let (mut sock, mut sealer, mut opener) = take_over(c);
        // A ClientHello (its header and 4 bytes of body): the server answers at once with a
        // no_renegotiation warning, as rustls does, without waiting for a request.
        let hello = [1, 0, 0, 4, 3, 3, 0, 0];
        send_record(&mut sock, &mut sealer, ContentType::Handshake, &hello);
        assert_eq!(
            read_record(&mut sock, &mut opener),
            Some((ContentType::Alert, vec![1, 100]))
        );
        // Requests go on.
        send_record(&mut sock, &mut sealer, ContentType::ApplicationData, PLAIN);
        let (typ, response) = read_record(&mut sock, &mut opener).unwrap();
        assert_eq!(typ, ContentType::ApplicationData);
        assert!(response.starts_with(b"HTTP/1.1 200 OK"));
        assert!(response.ends_with(HELLO));
        // A second attempt ends the connection: unexpected_message, then the close.
        send_record(&mut sock, &mut sealer, ContentType::Handshake, &hello);
        assert_eq!(
            read_record(&mut sock, &mut opener),
            Some((ContentType::Alert, vec![2, 10]))
        );
        assert_eq!(read_record(&mut sock, &mut opener), None);
        wait_until("the connection closed", || server.stats().connections_open == 0);
        assert_eq!(server.stats().tls_key_updates, 0);
        server.stop().unwrap();
    }
}

driver_test! {
    fn tls12_near_the_record_limit_the_last_response_says_close() {
        let pki = pki();
        // TLS 1.2 cannot change keys. The server's Finished took record 0 and the limit keeps
        // 2 records for control, so records 1 to 149 carry data; a response whose head comes
        // with at most 147 of them left (three times what one call of the core can queue: 16
        // blocks of 32 KiB, 3 records each, and one more) is the last, and says so. Here the
        // third.
        let server = start(&pki, |_, tls| tls.record_limit = Some(152));
        let mut c = connect_with(&client_tls12(&pki, TLS12_SUITES[0]), server.local_addr());
        for _ in 0..2 {
            let r = c.request(PLAIN);
            assert_eq!(r.status, 200);
            assert!(!r.closes(), "a response before the last says keep-alive");
        }
        let last = c.request(PLAIN);
        assert_eq!(last.status, 200, "the request near the limit is answered");
        assert!(last.closes(), "the last response says Connection: close");
        let rest = read_to_end(&mut c.stream).expect("close_notify, then FIN");
        assert!(rest.is_empty(), "nothing after the last response");
        assert_eq!(server.stats().tls_key_updates, 0);
        server.stop().unwrap();
    }
}

driver_test! {
    fn a_key_update_from_the_client_is_honoured() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut c = connect(&pki, server.local_addr());
        for _ in 0..3 {
            assert_eq!(c.request(PLAIN).status, 200);
            // The next request goes under a new key; rustls asks the server to update too.
            c.stream.conn.refresh_traffic_keys().unwrap();
        }
        assert_eq!(c.request(PLAIN).status, 200);
        assert_eq!(server.stats().bad_requests, 0);
        drop(c);
        server.stop().unwrap();
    }
}

driver_test! {
    fn connection_close_and_shutdown_send_close_notify() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let addr = server.local_addr();
        let mut c = connect(&pki, addr);
        c.send(b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        let rest = read_to_end(&mut c.stream).expect("a clean close: close_notify, then FIN");
        assert!(rest.ends_with(HELLO));

        // An idle connection when the server stops.
        let mut idle = connect(&pki, addr);
        assert_eq!(idle.request(PLAIN).status, 200);
        server.stop().unwrap();
        assert!(read_to_end(&mut idle.stream).expect("close_notify on shutdown").is_empty());
    }
}

driver_test! {
    fn a_forged_record_gets_an_alert_and_reaches_no_service() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut c = connect(&pki, server.local_addr());
        assert_eq!(c.request(PLAIN).status, 200);
        let served = server.stats().requests;
        // An application-data record whose tag cannot be right: a request's worth of bytes.
        let mut record = vec![23, 3, 3, 0, 64];
        record.extend_from_slice(&[b'G'; 64]);
        c.stream.sock.write_all(&record).unwrap();
        let e = read_to_end(&mut c.stream).expect_err("the server's alert");
        assert!(e.to_string().contains("BadRecordMac"), "{e}");
        wait_until("the connection closed", || server.stats().connections_open == 0);
        assert_eq!(server.stats().requests, served, "no request was served");
        server.stop().unwrap();
    }
}

driver_test! {
    fn past_the_handshake_bound_connections_wait_in_the_backlog() {
        let pki = pki();
        let server = start_bounded(&pki, 1, |cfg, _| {
            cfg.listeners = vec![Listener::plain(any_port())];
        });
        let addr = server.local_addr();
        let mut served = connect(&pki, addr);
        assert_eq!(served.request(PLAIN).status, 200);
        let holds = server.stats().tls_accept_holds;
        // One handshake in progress: a client that says nothing yet.
        let silent = common::connect(addr);
        wait_until("the second accepted", || server.stats().connections_accepted == 2);
        wait_until("accepting held", || server.stats().tls_accept_holds > holds);
        // The second client's TCP handshake completes in the listen backlog; its TLS handshake
        // waits there until the first ends.
        let client = Arc::clone(&pki.client);
        let second = std::thread::spawn(move || connect_with(&client, addr).request(PLAIN));
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(server.stats().connections_accepted, 2, "not taken past the bound");
        // Meanwhile the connection already served goes on, and the plain listener of the same
        // worker accepts.
        assert_eq!(served.request(PLAIN).status, 200);
        let r = Client::new(server.local_addrs()[1]).request(PLAIN);
        assert_eq!((r.status, &r.body[..]), (200, HELLO));
        assert_eq!(server.stats().connections_accepted, 3);
        drop(silent);
        let response = second.join().expect("the second client is served, not closed");
        assert_eq!((response.status, &response.body[..]), (200, HELLO));
        assert_eq!(server.stats().connections_accepted, 4);
        drop(served);
        server.stop().unwrap();
    }
}

driver_test! {
    fn with_a_bound_of_one_every_https_listener_serves() {
        let pki = pki();
        let server = start_bounded(&pki, 1, |cfg, tls| {
            cfg.listeners = vec![Listener::https(any_port(), tls.clone())];
        });
        let addrs = server.local_addrs().to_vec();
        // Each listener in turn, the other idle: none may wait for the other's next client.
        for _ in 0..3 {
            for &addr in addrs.iter().rev() {
                let r = connect(&pki, addr).request(PLAIN);
                assert_eq!((r.status, &r.body[..]), (200, HELLO));
            }
        }
        wait_until("no handshake left", || server.stats().tls_handshakes == 0);
        server.stop().unwrap();
    }
}

driver_test! {
    fn at_the_handshake_bound_one_listeners_backlog_does_not_hold_up_another() {
        let pki = pki();
        let server = start_bounded(&pki, 1, |cfg, tls| {
            cfg.header_timeout = Duration::from_millis(200);
            cfg.listeners = vec![Listener::https(any_port(), tls.clone())];
        });
        let addrs = server.local_addrs().to_vec();
        // Ten clients that never speak queue on the first listener, each holding the one
        // place until its handshake's deadline; then one real client on the second.
        let silent: Vec<_> = (0..10).map(|_| common::connect(addrs[0])).collect();
        wait_until("the first accepted", || server.stats().connections_accepted == 1);
        let mut c = connect(&pki, addrs[1]);
        assert_eq!(c.request(PLAIN).status, 200);
        let accepted = server.stats().connections_accepted;
        assert!(
            accepted <= 3,
            "the second listener's client waited for {} of the first's",
            accepted - 1
        );
        drop((c, silent));
        server.stop().unwrap();
    }
}

driver_test! {
    fn a_burst_of_clients_past_the_handshake_bound_is_served_whole() {
        let pki = pki();
        let server = start_bounded(&pki, 2, |_, _| {});
        let addr = server.local_addr();
        let clients: Vec<_> = (0..24)
            .map(|_| {
                let client = Arc::clone(&pki.client);
                std::thread::spawn(move || connect_with(&client, addr).request(PLAIN).status)
            })
            .collect();
        for c in clients {
            assert_eq!(c.join().expect("every client is served"), 200);
        }
        let stats = server.stats();
        assert_eq!((stats.connections_accepted, stats.tls_handshakes), (24, 0));
        assert!(stats.tls_accept_holds >= 1, "the bound was reached: {stats:?}");
        server.stop().unwrap();
    }
}

driver_test! {
    fn a_handshake_must_finish_within_the_header_timeout() {
        let pki = pki();
        let server = start(&pki, |cfg, _| {
            cfg.header_timeout = Duration::from_millis(300);
        });
        let mut silent = common::connect(server.local_addr());
        let mut byte = [0u8; 1];
        assert_eq!(silent.read(&mut byte).unwrap(), 0, "closed without a word");
        assert_eq!(server.stats().tls_handshakes, 0);
        assert_eq!(server.stats().tls_handshake_failures, 1);
        server.stop().unwrap();
    }
}

/// Answers with what it sees of the connection's TLS session.
struct TlsEcho;

impl bufslab_server::Service for TlsEcho {
    type State = ();

    fn head(
        &mut self,
        _: &bufslab_http::Request<'_, '_>,
        ex: &mut bufslab_server::Exchange<'_>,
        _: &mut (),
    ) {
        let seen = match ex.tls() {
            Some(t) => {
                let mut seen = format!(
                    "{} {} {} {} {}",
                    t.version(),
                    t.cipher_suite(),
                    String::from_utf8_lossy(t.alpn_protocol().unwrap_or(b"-")),
                    t.server_name().unwrap_or("-"),
                    t.is_resumed()
                );
                // The client's certificate chain, where it was asked for: each one's length.
                for cert in t.peer_certificates() {
                    seen.push_str(&format!(" cert:{}", cert.len()));
                }
                seen
            }
            None => "plain".to_owned(),
        };
        let _ = ex.respond(200).body(seen.as_bytes());
    }
}

driver_test! {
    fn the_service_sees_the_tls_session() {
        let pki = pki();
        let cfg = Config {
            tls: Some(tls_config(&pki)),
            ..common::config()
        };
        let server = bufslab_server::Server::start(cfg, |_: bufslab_server::WorkerInfo| TlsEcho)
            .expect("server starts");
        let mut c = connect(&pki, server.local_addr());
        let r = c.request(PLAIN);
        let (code, body) = (r.status, r.body);
        assert_eq!(code, 200);
        let suite = c.stream.conn.negotiated_cipher_suite().unwrap().suite();
        // rustls names TLS 1.3 suites `TLS13_*`; IANA (and OpenSSL) `TLS_*`.
        let suite = suite.as_str().unwrap_or("?").replace("TLS13_", "TLS_");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!("TLSv1.3 {suite} http/1.1 localhost false")
        );
        drop(c);
        let mut c = connect_with(&client_tls12(&pki, TLS12_SUITES[2]), server.local_addr());
        let r = c.request(PLAIN);
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            "TLSv1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 http/1.1 localhost false"
        );
        drop(c);
        server.stop().unwrap();
    }
}

driver_test! {
    fn the_service_sees_the_client_certificate() {
        let (pki, ca) = (pki(), common::tls::client_ca());
        // A file of its own for each run: the test runs under both drivers at once in this
        // process, and one run's removal must not take the other's file.
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("server-demo-ca-{}-{run}.pem", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, &ca.pem).unwrap();
        let verifier = bufslab_tls::client_verifier(&path, true).unwrap();
        std::fs::remove_file(&path).unwrap();
        let tls = bufslab_tls::Config::single_cert_builder(pki.chain.clone(), pki.key.clone_key())
            .unwrap()
            .client_auth(verifier)
            .build()
            .unwrap();
        let cfg = Config {
            tls: Some(TlsConfig::new(tls)),
            ..common::config()
        };
        let server = bufslab_server::Server::start(cfg, |_: bufslab_server::WorkerInfo| TlsEcho)
            .expect("server starts");
        let addr = server.local_addr();
        let mut roots = RootCertStore::empty();
        roots.add(pki.chain[0].clone()).unwrap();
        let client = ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_client_auth_cert(ca.client_chain.clone(), ca.client_key.clone_key())
        .unwrap();
        let mut c = connect_with(&Arc::new(client), addr);
        let r = c.request(PLAIN);
        assert_eq!(r.status, 200);
        let body = String::from_utf8(r.body).unwrap();
        let leaf = ca.client_chain[0].len();
        assert!(body.ends_with(&format!(" cert:{leaf}")), "{body}");
        drop(c);
        // Without a certificate the handshake fails: no request reaches the service.
        let mut anonymous = connect(&pki, addr);
        anonymous.stream.write_all(PLAIN).unwrap();
        let mut rest = Vec::new();
        let refused = anonymous.stream.read_to_end(&mut rest).expect_err("the server's alert");
        assert!(refused.to_string().contains("CertificateRequired"), "{refused}");
        wait_until("the refused handshake counted", || {
            server.stats().tls_handshake_failures == 1
        });
        assert_eq!(server.stats().requests, 1);
        server.stop().unwrap();
    }
}

driver_test! {
    fn plain_http_and_https_listeners_in_one_server() {
        let pki = pki();
        let mut cfg = Config {
            tls: Some(tls_config(&pki)),
            ..common::config()
        };
        cfg.listeners = vec![
            Listener::plain(any_port()),
            Listener::https(any_port(), tls_config(&pki)),
        ];
        let server = bufslab_server::Server::start(cfg, |_: bufslab_server::WorkerInfo| TlsEcho)
            .expect("server starts");
        let addrs = server.local_addrs().to_vec();
        assert_eq!(addrs.len(), 3);
        assert_eq!(addrs[0], server.local_addr());
        assert!(addrs[0].port() != addrs[1].port() && addrs[1].port() != addrs[2].port());
        for _ in 0..4 {
            for https in [addrs[0], addrs[2]] {
                let mut c = connect(&pki, https);
                let r = c.request(PLAIN);
                assert_eq!(r.status, 200);
                assert!(r.body.starts_with(b"TLSv1.3 "), "{:?}", r.body);
            }
            let mut plain = Client::new(addrs[1]);
            let r = plain.request(PLAIN);
            assert_eq!((r.status, r.body), (200, b"plain".to_vec()));
        }
        assert_eq!(server.stats().tls_handshakes, 0);
        // Each port keeps to its own protocol: a ClientHello on the plain one is a bad
        // request, plain HTTP on an HTTPS one fails the handshake.
        let mut hello = Client::new(addrs[1]);
        let r = hello.request(&[22, 3, 1, 0, 5, 1, 0, 0, 1, 0]);
        assert_eq!(r.status, 400);
        let mut wrong = common::connect(addrs[2]);
        wrong.write_all(PLAIN).unwrap();
        wrong.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = wrong.read_to_end(&mut rest);
        assert!(!rest.windows(4).any(|w| w == b"HTTP"), "no HTTP answer on an HTTPS port");
        wait_until("the failed handshake counted", || {
            server.stats().tls_handshake_failures == 1
        });
        assert_eq!(server.stats().requests, 13);
        server.stop().unwrap();
    }
}

driver_test! {
    fn the_server_updates_its_key_at_the_record_limit() {
        let pki = pki();
        let server = start(&pki, |_, tls| tls.record_limit = Some(3));
        let mut c = connect(&pki, server.local_addr());
        // One record per response: a KeyUpdate before every third, each read by rustls
        // under the key it announces.
        for _ in 0..20 {
            let r = c.request(PLAIN);
            assert_eq!((r.status, r.body), (200, HELLO.to_vec()));
        }
        c.send(&PLAIN.repeat(16));
        for _ in 0..16 {
            assert_eq!(c.response().status, 200);
        }
        // A response of many records: the limit comes due between two of them.
        let body = payload(200_000);
        let r = c.request(&echo(&body));
        assert_eq!((r.status, r.body), (200, body));
        // Pipelined echoes: their responses are queued together and sealed as several records
        // in one go, with the limit coming due between two of them.
        let piece = payload(8000);
        c.send(&echo(&piece).repeat(4));
        for _ in 0..4 {
            let r = c.response();
            assert_eq!((r.status, r.body), (200, piece.clone()));
        }
        // 300 pipelined heads: their responses, over 16 KiB, queue in one turn of the core.
        c.send(&PLAIN.repeat(300));
        for _ in 0..300 {
            assert_eq!(c.response().status, 200);
        }
        let updates = server.stats().tls_key_updates;
        assert!(updates >= 10, "{updates} key updates for 30-odd response records");
        drop(c);
        server.stop().unwrap();
    }
}
