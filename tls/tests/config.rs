//! The configuration's choices: certificates by SNI, no SNI, resumption off, ALPN lists.

mod common;

use std::sync::Arc;

use bufslab_tls::Config;
use common::*;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::sign::CertifiedKey;

fn certified(names: &[&str]) -> (CertificateDer<'static>, CertifiedKey) {
    let made =
        rcgen::generate_simple_self_signed(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .unwrap();
    let cert = made.cert.der().clone();
    let key: PrivateKeyDer<'static> =
        PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()).into();
    let provider = rustls::crypto::ring::default_provider();
    let ck = CertifiedKey::from_der(vec![cert.clone()], key, &provider).unwrap();
    (cert, ck)
}

/// A client trusting `roots`, offering `http/1.1`.
fn client_for(roots: &[CertificateDer<'static>]) -> Arc<rustls::ClientConfig> {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .unwrap()
    .with_root_certificates(store)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// The shared test certificate, as the one certificate for every name.
fn single_cert(pki: &Pki) -> Arc<rustls::sign::SingleCertAndKey> {
    let provider = rustls::crypto::ring::default_provider();
    let ck = CertifiedKey::from_der(pki.chain.clone(), pki.key.clone_key(), &provider).unwrap();
    Arc::new(rustls::sign::SingleCertAndKey::from(ck))
}

/// Runs a handshake to `name` and returns the connection.
fn connect(
    config: &Config,
    client: &Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
) -> bufslab_tls::Connection {
    let mut client = rustls::ClientConnection::new(Arc::clone(client), name).unwrap();
    let mut hs = bufslab_tls::Handshake::new(config).unwrap();
    let mut rx = Vec::new();
    let mut out = vec![0u8; 64 * 1024];
    loop {
        client_flush(&mut client, &mut rx);
        let progress = hs.advance(&mut rx, &mut out);
        rx.drain(..progress.consumed);
        client_receive(&mut client, &out[..progress.written]).expect("the client accepts");
        if progress.status.unwrap() == bufslab_tls::Status::Done {
            return hs.into_connection().unwrap();
        }
    }
}

#[test]
fn certificate_chosen_by_sni() {
    let (cert_a, ck_a) = certified(&["a.example"]);
    let (cert_b, ck_b) = certified(&["b.example"]);
    let mut resolver = rustls::server::ResolvesServerCertUsingSni::new();
    resolver.add("a.example", ck_a).unwrap();
    resolver.add("b.example", ck_b).unwrap();
    let config = Config::builder(Arc::new(resolver)).build().unwrap();
    // Each client trusts only its own name's certificate: the handshake succeeds only if
    // the resolver picked by SNI.
    for (name, cert) in [("a.example", cert_a), ("b.example", cert_b)] {
        let client = client_for(&[cert]);
        for _ in 0..2 {
            let conn = connect(&config, &client, ServerName::try_from(name).unwrap());
            assert_eq!(conn.server_name(), Some(name));
        }
    }
}

#[test]
fn no_sni_is_none_and_does_not_leak_from_an_earlier_connection() {
    let (cert, ck) = certified(&["localhost", "127.0.0.1"]);
    let config = Config::builder(Arc::new(rustls::sign::SingleCertAndKey::from(ck)))
        .build()
        .unwrap();
    let client = client_for(&[cert]);
    let named = connect(&config, &client, ServerName::try_from("localhost").unwrap());
    assert_eq!(named.server_name(), Some("localhost"));
    // rustls sends no SNI to an IP address.
    let ip = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let unnamed = connect(&config, &client, ip);
    assert_eq!(unnamed.server_name(), None);
}

#[test]
fn resumption_off() {
    let pki = pki();
    let resolver = single_cert(&pki);
    let config = Config::builder(resolver).resumption(false).build().unwrap();
    let client = client_config(&pki, None);
    for _ in 0..3 {
        let est = handshake(&config, &client, b"").unwrap();
        assert!(!est.conn.is_resumed());
    }
}

#[test]
fn an_http10_client_gets_http10_by_default() {
    let pki = pki();
    let config = Config::builder(single_cert(&pki)).build().unwrap();
    let mut client = (*client_config(&pki, None)).clone();
    client.alpn_protocols = vec![b"http/1.0".to_vec()];
    let est = handshake(&config, &Arc::new(client), b"").unwrap();
    assert_eq!(est.conn.alpn_protocol(), Some(&b"http/1.0"[..]));
}

#[test]
fn alpn_preference_is_the_servers() {
    let pki = pki();
    let resolver = single_cert(&pki);
    let config = Config::builder(resolver)
        .alpn_protocols(&[b"h2", b"http/1.1"])
        .build()
        .unwrap();
    let mut client = (*client_config(&pki, None)).clone();
    client.alpn_protocols = vec![b"http/1.1".to_vec(), b"h2".to_vec()];
    let est = handshake(&config, &Arc::new(client), b"").unwrap();
    assert_eq!(est.conn.alpn_protocol(), Some(&b"h2"[..]));
}
