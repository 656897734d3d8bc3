//! HTTPS for the tests: a self-signed certificate for `localhost` made at run time, the
//! server's configuration for it, and a rustls client that trusts it.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use server_demo::TlsConfig;

use super::Client;

/// A certificate and key for the server, and a client configuration that trusts it.
pub struct Pki {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    pub client: Arc<ClientConfig>,
}

/// A new certificate for `localhost`, self-signed, and a client that trusts only it.
pub fn pki() -> Pki {
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

/// The server's side of `pki`.
pub fn tls_config(pki: &Pki) -> TlsConfig {
    let tls = bufslab_tls::Config::with_single_cert(pki.chain.clone(), pki.key.clone_key());
    TlsConfig::new(tls.unwrap())
}

pub type Tls = StreamOwned<ClientConnection, TcpStream>;

/// A TLS connection to `addr`, verifying the server as `localhost`.
pub fn connect(pki: &Pki, addr: SocketAddr) -> Client<Tls> {
    connect_with(&pki.client, addr)
}

/// A TLS connection to `addr` with the client configuration `client`, as `localhost`.
pub fn connect_with(client: &Arc<ClientConfig>, addr: SocketAddr) -> Client<Tls> {
    let name = ServerName::try_from("localhost").unwrap();
    let conn = ClientConnection::new(Arc::clone(client), name).unwrap();
    Client::over(StreamOwned::new(conn, super::connect(addr)))
}

/// A CA (its certificate in PEM) and a client certificate it issued, with the client's key.
pub struct ClientCa {
    pub pem: String,
    pub client_chain: Vec<CertificateDer<'static>>,
    pub client_key: PrivateKeyDer<'static>,
}

/// A new CA and a client certificate from it, for client authentication.
pub fn client_ca() -> ClientCa {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = params.self_signed(&ca_key).unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["client.test".to_owned()]).unwrap();
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client = params.signed_by(&client_key, &ca, &ca_key).unwrap();
    ClientCa {
        pem: ca.pem(),
        client_chain: vec![client.der().clone()],
        client_key: PrivatePkcs8KeyDer::from(client_key.serialize_der()).into(),
    }
}
