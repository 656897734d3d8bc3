//! HTTPS through the engine, under each driver, with rustls as the client: keep-alive,
//! pipelining and bodies; a key update from the client; `close_notify` on `Connection: close`
//! and on shutdown; a record that does not open (an alert, the connection closed, and no byte
//! of it served); the bound on handshakes in progress; the handshake's deadline.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use server_demo::{Config, ServerHandle, TlsConfig};

mod common;
use common::{driver_test, wait_until};

struct Pki {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    client: Arc<ClientConfig>,
}

fn pki() -> Pki {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let der = cert.cert.der().clone();
    let mut roots = RootCertStore::empty();
    roots.add(der.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut client = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.alpn_protocols = vec![b"http/1.1".to_vec()];
    Pki {
        chain: vec![der],
        key: PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into()),
        client: Arc::new(client),
    }
}

fn start(pki: &Pki, tweak: impl FnOnce(&mut Config, &mut TlsConfig)) -> ServerHandle {
    let tls = bufslab_tls::Config::with_single_cert(pki.chain.clone(), pki.key.clone_key());
    let mut tls = TlsConfig::new(tls.unwrap());
    let mut cfg = common::config();
    tweak(&mut cfg, &mut tls);
    cfg.tls = Some(tls);
    common::start(cfg)
}

type Tls = StreamOwned<ClientConnection, TcpStream>;

fn connect(pki: &Pki, addr: SocketAddr) -> Tls {
    let name = ServerName::try_from("localhost").unwrap();
    let conn = ClientConnection::new(Arc::clone(&pki.client), name).unwrap();
    StreamOwned::new(conn, common::connect(addr))
}

/// Reads one response (Content-Length or chunked) and returns its status and body.
fn response(s: &mut impl Read, buf: &mut Vec<u8>) -> (u16, Vec<u8>) {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut r = httparse::Response::new(&mut headers);
            assert!(r.parse(&buf[..end + 4]).unwrap().is_complete());
            let code = r.code.unwrap();
            let header = |name: &str| {
                r.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned())
            };
            let chunked = header("transfer-encoding").is_some_and(|v| v == "chunked");
            let len: Option<usize> = header("content-length").map(|v| v.parse().unwrap());
            buf.drain(..end + 4);
            let mut body = Vec::new();
            if chunked {
                loop {
                    let line_end = loop {
                        if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                            break i;
                        }
                        fill(s, buf);
                    };
                    let size = std::str::from_utf8(&buf[..line_end]).unwrap();
                    let n = usize::from_str_radix(size.split(';').next().unwrap(), 16).unwrap();
                    buf.drain(..line_end + 2);
                    while buf.len() < n + 2 {
                        fill(s, buf);
                    }
                    body.extend_from_slice(&buf[..n]);
                    buf.drain(..n + 2);
                    if n == 0 {
                        return (code, body);
                    }
                }
            }
            let n = len.unwrap_or(0);
            while buf.len() < n {
                fill(s, buf);
            }
            body.extend(buf.drain(..n));
            return (code, body);
        }
        fill(s, buf);
    }
}

fn fill(s: &mut impl Read, buf: &mut Vec<u8>) {
    let mut chunk = [0u8; 16384];
    let n = s.read(&mut chunk).expect("read");
    assert!(n > 0, "closed mid-response");
    buf.extend_from_slice(&chunk[..n]);
}

/// Reads to the end of the stream: `Ok(())` when it ended with `close_notify`.
fn read_to_end(s: &mut Tls) -> std::io::Result<Vec<u8>> {
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).map(|_| rest)
}

const PLAIN: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n";

driver_test! {
    fn keep_alive_pipelining_and_bodies() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut s = connect(&pki, server.local_addr());
        let mut buf = Vec::new();
        for _ in 0..3 {
            s.write_all(PLAIN).unwrap();
            assert_eq!(response(&mut s, &mut buf), (200, b"Hello, World!".to_vec()));
        }
        assert_eq!(s.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
        s.write_all(&PLAIN.repeat(16)).unwrap();
        for _ in 0..16 {
            assert_eq!(response(&mut s, &mut buf).0, 200);
        }
        // Bodies across records and receive blocks, both ways.
        for len in [0, 1, 1024, 16 * 1024 - 1, 16 * 1024 + 1, 100_000] {
            let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut req = format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {len}\r\n\r\n")
                .into_bytes();
            req.extend_from_slice(&body);
            s.write_all(&req).unwrap();
            assert_eq!(response(&mut s, &mut buf), (200, body.clone()), "echo of {len}");
        }
        let body: Vec<u8> = (0..65536).map(|i| (i % 241) as u8).collect();
        let mut req = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for piece in body.chunks(5000) {
            req.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            req.extend_from_slice(piece);
            req.extend_from_slice(b"\r\n");
        }
        req.extend_from_slice(b"0\r\n\r\n");
        s.write_all(&req).unwrap();
        assert_eq!(response(&mut s, &mut buf), (200, body));
        drop(s);
        server.stop().unwrap();
    }
}

driver_test! {
    fn a_key_update_from_the_client_is_honoured() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut s = connect(&pki, server.local_addr());
        let mut buf = Vec::new();
        for _ in 0..3 {
            s.write_all(PLAIN).unwrap();
            assert_eq!(response(&mut s, &mut buf).0, 200);
            // The next request goes under a new key; rustls asks the server to update too.
            s.conn.refresh_traffic_keys().unwrap();
        }
        s.write_all(PLAIN).unwrap();
        assert_eq!(response(&mut s, &mut buf).0, 200);
        assert_eq!(server.stats().bad_requests, 0);
        drop(s);
        server.stop().unwrap();
    }
}

driver_test! {
    fn connection_close_and_shutdown_send_close_notify() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let addr = server.local_addr();
        let mut s = connect(&pki, addr);
        s.write_all(b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").unwrap();
        let rest = read_to_end(&mut s).expect("a clean close: close_notify, then FIN");
        assert!(rest.ends_with(b"Hello, World!"));

        // An idle connection when the server stops.
        let mut idle = connect(&pki, addr);
        idle.write_all(PLAIN).unwrap();
        let mut buf = Vec::new();
        assert_eq!(response(&mut idle, &mut buf).0, 200);
        server.stop().unwrap();
        assert!(read_to_end(&mut idle).expect("close_notify on shutdown").is_empty());
    }
}

driver_test! {
    fn a_forged_record_gets_an_alert_and_reaches_no_service() {
        let pki = pki();
        let server = start(&pki, |_, _| {});
        let mut s = connect(&pki, server.local_addr());
        let mut buf = Vec::new();
        s.write_all(PLAIN).unwrap();
        assert_eq!(response(&mut s, &mut buf).0, 200);
        let served = server.stats().requests;
        // An application-data record whose tag cannot be right: a request's worth of bytes.
        let mut record = vec![23, 3, 3, 0, 64];
        record.extend_from_slice(&[b'G'; 64]);
        s.sock.write_all(&record).unwrap();
        let e = read_to_end(&mut s).expect_err("the server's alert");
        assert!(e.to_string().contains("BadRecordMac"), "{e}");
        wait_until("the connection closed", || server.stats().connections_open == 0);
        assert_eq!(server.stats().requests, served, "no request was served");
        server.stop().unwrap();
    }
}

driver_test! {
    fn handshakes_in_progress_are_bounded() {
        let pki = pki();
        let server = start(&pki, |cfg, tls| {
            cfg.workers = 1;
            tls.max_handshakes = 1;
        });
        let addr = server.local_addr();
        // One handshake in progress: a client that says nothing yet.
        let silent = common::connect(addr);
        wait_until("the first accepted", || server.stats().connections_accepted == 1);
        let mut refused = common::connect(addr);
        let mut byte = [0u8; 1];
        match refused.read(&mut byte) {
            Ok(0) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            other => panic!("the second handshake must be refused, got {other:?}"),
        }
        assert_eq!(server.stats().tls_refused, 1);
        drop(silent);
        wait_until("the first closed", || server.stats().tls_handshakes == 0);
        let mut s = connect(&pki, addr);
        s.write_all(PLAIN).unwrap();
        assert_eq!(response(&mut s, &mut Vec::new()).0, 200);
        drop(s);
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
            Some(t) => format!(
                "{} {} {} {} {}",
                t.version(),
                t.cipher_suite(),
                String::from_utf8_lossy(t.alpn_protocol().unwrap_or(b"-")),
                t.server_name().unwrap_or("-"),
                t.is_resumed()
            ),
            None => "plain".to_owned(),
        };
        let _ = ex.respond(200).body(seen.as_bytes());
    }
}

driver_test! {
    fn the_service_sees_the_tls_session() {
        let pki = pki();
        let tls = bufslab_tls::Config::with_single_cert(pki.chain.clone(), pki.key.clone_key());
        let cfg = Config {
            tls: Some(TlsConfig::new(tls.unwrap())),
            ..common::config()
        };
        let server = bufslab_server::Server::start(cfg, |_: bufslab_server::WorkerInfo| TlsEcho)
            .expect("server starts");
        let mut s = connect(&pki, server.local_addr());
        s.write_all(PLAIN).unwrap();
        let (code, body) = response(&mut s, &mut Vec::new());
        assert_eq!(code, 200);
        let suite = s.conn.negotiated_cipher_suite().unwrap().suite();
        // rustls names TLS 1.3 suites `TLS13_*`; IANA (and OpenSSL) `TLS_*`.
        let suite = suite.as_str().unwrap_or("?").replace("TLS13_", "TLS_");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!("TLSv1.3 {suite} http/1.1 localhost false")
        );
        drop(s);
        server.stop().unwrap();
    }
}

driver_test! {
    fn the_server_updates_its_key_at_the_record_limit() {
        let pki = pki();
        let server = start(&pki, |_, tls| tls.record_limit = Some(3));
        let mut s = connect(&pki, server.local_addr());
        let mut buf = Vec::new();
        // One record per response: a KeyUpdate before every third, each read by rustls
        // under the key it announces.
        for _ in 0..20 {
            s.write_all(PLAIN).unwrap();
            assert_eq!(response(&mut s, &mut buf), (200, b"Hello, World!".to_vec()));
        }
        s.write_all(&PLAIN.repeat(16)).unwrap();
        for _ in 0..16 {
            assert_eq!(response(&mut s, &mut buf).0, 200);
        }
        // A response of many records: the limit comes due between two of them.
        let body: Vec<u8> = (0..200_000).map(|i| (i % 251) as u8).collect();
        let mut req = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n".to_vec();
        req.extend_from_slice(&body);
        s.write_all(&req).unwrap();
        assert_eq!(response(&mut s, &mut buf), (200, body));
        // Pipelined echoes: their responses are queued together and sealed as several records
        // in one go, with the limit coming due between two of them.
        let piece: Vec<u8> = (0..8000).map(|i| (i % 241) as u8).collect();
        let mut req = format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n", piece.len())
            .into_bytes();
        req.extend_from_slice(&piece);
        s.write_all(&req.repeat(4)).unwrap();
        for _ in 0..4 {
            assert_eq!(response(&mut s, &mut buf), (200, piece.clone()));
        }
        // 300 pipelined heads: their responses, over 16 KiB, queue in one turn of the core.
        s.write_all(&PLAIN.repeat(300)).unwrap();
        for _ in 0..300 {
            assert_eq!(response(&mut s, &mut buf).0, 200);
        }
        let updates = server.stats().tls_key_updates;
        assert!(updates >= 10, "{updates} key updates for 30-odd response records");
        drop(s);
        server.stop().unwrap();
    }
}
