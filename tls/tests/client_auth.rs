//! Client certificates: a verifier from a CA file ([`bufslab_tls::client_verifier`]), required
//! or optional, with rustls clients that send a certificate the CA issued, one another CA
//! issued, or none; and the chain the connection keeps for the service.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use bufslab_tls::{client_verifier, Config, Connection, LoadError};
use common::*;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ClientConfig, RootCertStore};

/// A CA, and a client certificate it issued.
struct Ca {
    pem: String,
    client_chain: Vec<CertificateDer<'static>>,
    client_key: PrivateKeyDer<'static>,
}

fn new_ca() -> Ca {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test CA");
    let ca_cert = params.self_signed(&ca_key).unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["client.test".to_owned()]).unwrap();
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = params.signed_by(&client_key, &ca_cert, &ca_key).unwrap();
    Ca {
        pem: ca_cert.pem(),
        client_chain: vec![client_cert.der().clone()],
        client_key: PrivatePkcs8KeyDer::from(client_key.serialize_der()).into(),
    }
}

/// `contents` in a file of its own under the system's temporary directory.
fn file(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "bufslab-tls-client-auth-{}-{name}",
        std::process::id()
    ));
    std::fs::write(&path, contents).unwrap();
    path
}

/// The server of `pki`, asking for certificates from `ca`.
fn server(pki: &Pki, ca: &Ca, required: bool, name: &str) -> Config {
    let path = file(name, &ca.pem);
    let verifier = client_verifier(&path, required).expect("the CA file loads");
    std::fs::remove_file(&path).unwrap();
    Config::single_cert_builder(pki.chain.clone(), pki.key.clone_key())
        .unwrap()
        .client_auth(verifier)
        .build()
        .unwrap()
}

/// A TLS 1.3 client trusting `pki`, presenting `cert` if given.
fn client(pki: &Pki, cert: Option<&Ca>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(pki.chain[0].clone()).unwrap();
    let builder =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots);
    let mut config = match cert {
        Some(ca) => builder
            .with_client_auth_cert(ca.client_chain.clone(), ca.client_key.clone_key())
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// Runs the handshake in memory: the connection, or the server's error.
fn connect(config: &Config, client: &Arc<ClientConfig>) -> Result<Connection, String> {
    handshake(config, client, b"")
        .map(|done| done.conn)
        .map_err(|e| format!("{e:?}"))
}

#[test]
fn a_required_certificate_from_the_ca_is_accepted_and_kept() {
    let (pki, ca) = (pki(), new_ca());
    let config = server(&pki, &ca, true, "required-ca.pem");
    let conn = connect(&config, &client(&pki, Some(&ca))).expect("accepted");
    assert_eq!(conn.peer_certificates(), Some(&ca.client_chain[..]));
}

#[test]
fn a_required_certificate_missing_or_from_another_ca_is_refused() {
    let (pki, ca, other) = (pki(), new_ca(), new_ca());
    let config = server(&pki, &ca, true, "refuse-ca.pem");
    let none = connect(&config, &client(&pki, None)).expect_err("no certificate");
    assert!(none.contains("NoCertificatesPresented"), "{none}");
    let stranger = connect(&config, &client(&pki, Some(&other))).expect_err("unknown issuer");
    // Same issuer name, another key: its signature does not verify.
    assert!(
        stranger.contains("InvalidCertificate(BadSignature)"),
        "{stranger}"
    );
}

#[test]
fn an_optional_certificate_may_be_left_out() {
    let (pki, ca) = (pki(), new_ca());
    let config = server(&pki, &ca, false, "optional-ca.pem");
    let anonymous = connect(&config, &client(&pki, None)).expect("served without one");
    assert_eq!(anonymous.peer_certificates(), None);
    let known = connect(&config, &client(&pki, Some(&ca))).expect("served with one");
    assert_eq!(known.peer_certificates(), Some(&ca.client_chain[..]));
    // One that is sent must still verify.
    let other = new_ca();
    assert!(connect(&config, &client(&pki, Some(&other))).is_err());
}

#[test]
fn without_client_auth_no_certificate_is_asked_for() {
    let (pki, ca) = (pki(), new_ca());
    let conn = connect(&server_config(&pki), &client(&pki, Some(&ca))).expect("served");
    assert_eq!(conn.peer_certificates(), None);
}

#[test]
fn a_ca_file_that_does_not_load_is_named() {
    let missing = std::env::temp_dir().join("bufslab-tls-client-auth-no-such-file.pem");
    match client_verifier(&missing, true) {
        Err(LoadError::Pem { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
    let empty = file("empty.pem", "no PEM here\n");
    match client_verifier(&empty, true) {
        Err(LoadError::NoCertificate(path)) => assert_eq!(path, empty),
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(&empty).unwrap();
}
