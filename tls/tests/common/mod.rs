//! What the tests share: a certificate made at run time, client configurations, and an
//! in-memory handshake between the crate's server driver and a rustls client.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::sync::Arc;

use bufslab_tls::record::{Suite, MAX_RECORD_LEN};
use bufslab_tls::{Config, Connection, Error, Handshake, Received, Status};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

pub const HOST: &str = "localhost";

pub struct Pki {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

pub fn pki() -> Pki {
    let certified = rcgen::generate_simple_self_signed(vec![HOST.to_owned()]).expect("rcgen");
    Pki {
        chain: vec![certified.cert.der().clone()],
        key: PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()).into(),
    }
}

/// A certificate with an RSA key (from `tests/data/rsa-key.pem`: ring signs with RSA keys
/// but does not make them), for TLS 1.2's ECDHE-RSA suites.
pub fn rsa_pki() -> Pki {
    let pem = include_str!("../data/rsa-key.pem");
    let key_pair =
        rcgen::KeyPair::from_pem_and_sign_algo(pem, &rcgen::PKCS_RSA_SHA256).expect("rsa key");
    let cert = rcgen::CertificateParams::new(vec![HOST.to_owned()])
        .expect("params")
        .self_signed(&key_pair)
        .expect("rsa cert");
    Pki {
        chain: vec![cert.der().clone()],
        key: PrivatePkcs8KeyDer::from(key_pair.serialize_der()).into(),
    }
}

pub fn server_config(pki: &Pki) -> Config {
    Config::with_single_cert(pki.chain.clone(), pki.key.clone_key()).expect("server config")
}

pub fn rustls_suite(suite: Suite) -> rustls::SupportedCipherSuite {
    use rustls::crypto::ring::cipher_suite as cs;
    match suite {
        Suite::Aes128Gcm => cs::TLS13_AES_128_GCM_SHA256,
        Suite::Aes256Gcm => cs::TLS13_AES_256_GCM_SHA384,
        Suite::Chacha20Poly1305 => cs::TLS13_CHACHA20_POLY1305_SHA256,
        _ => unreachable!(),
    }
}

pub const SUITES: [Suite; 3] = [Suite::Aes128Gcm, Suite::Aes256Gcm, Suite::Chacha20Poly1305];

/// A client that trusts `pki`, offers `http/1.1`, speaks only `suite` (all three if `None`),
/// and can hand out its traffic secrets (for crafting records a real client never sends).
pub fn client_config(pki: &Pki, suite: Option<Suite>) -> Arc<ClientConfig> {
    let suites = match suite {
        Some(suite) => vec![rustls_suite(suite)],
        None => rustls::crypto::ring::DEFAULT_CIPHER_SUITES.to_vec(),
    };
    client_config_with(pki, suites, &rustls::version::TLS13)
}

/// The TLS 1.2 suites rustls offers (all ECDHE), ECDSA's then RSA's, each with its AEAD.
pub fn tls12_suites() -> Vec<(rustls::SupportedCipherSuite, Suite)> {
    use rustls::crypto::ring::cipher_suite as cs;
    vec![
        (
            cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            Suite::Aes128Gcm,
        ),
        (
            cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            Suite::Aes256Gcm,
        ),
        (
            cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            Suite::Chacha20Poly1305,
        ),
        (cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, Suite::Aes128Gcm),
        (cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, Suite::Aes256Gcm),
        (
            cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
            Suite::Chacha20Poly1305,
        ),
    ]
}

/// Whether a TLS 1.2 suite signs with RSA (its server needs [`rsa_pki`]).
pub fn is_rsa(suite: rustls::SupportedCipherSuite) -> bool {
    format!("{:?}", suite.suite()).contains("_RSA_")
}

/// A TLS 1.2-only client speaking `suites`, as [`client_config`] otherwise.
pub fn client_config_tls12(
    pki: &Pki,
    suites: &[rustls::SupportedCipherSuite],
) -> Arc<ClientConfig> {
    client_config_with(pki, suites.to_vec(), &rustls::version::TLS12)
}

/// A client that trusts `pki`, offers `http/1.1`, speaks `version` with `suites`, and can
/// hand out its traffic secrets.
pub fn client_config_with(
    pki: &Pki,
    suites: Vec<rustls::SupportedCipherSuite>,
    version: &'static rustls::SupportedProtocolVersion,
) -> Arc<ClientConfig> {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = suites;
    let mut roots = RootCertStore::empty();
    roots.add(pki.chain[0].clone()).expect("root");
    let mut config = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[version])
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.enable_secret_extraction = true;
    Arc::new(config)
}

/// Sends everything the client has queued to `to_server`.
pub fn client_flush(client: &mut ClientConnection, to_server: &mut Vec<u8>) {
    while client.wants_write() {
        client.write_tls(to_server).expect("client write_tls");
    }
}

/// Gives `bytes` to the client and lets it process them.
pub fn client_receive(
    client: &mut ClientConnection,
    mut bytes: &[u8],
) -> Result<(), rustls::Error> {
    while !bytes.is_empty() {
        client.read_tls(&mut bytes).expect("client read_tls");
        client.process_new_packets()?;
    }
    Ok(())
}

/// Reads all the plaintext the client has.
pub fn client_read_all(client: &mut ClientConnection) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match client.reader().read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("client read: {e}"),
        }
    }
    out
}

pub struct Established {
    pub client: ClientConnection,
    pub conn: Connection,
    /// Bytes received after the client's `Finished`, not yet opened.
    pub rx: Vec<u8>,
}

/// Runs a handshake in memory. `early_app_data` is written by the client as soon as its side
/// of the handshake is done, so it travels in the same flight as its `Finished`.
pub fn handshake(
    config: &Config,
    client_config: &Arc<ClientConfig>,
    early_app_data: &[u8],
) -> Result<Established, Error> {
    handshake_with(
        config,
        client_config,
        early_app_data,
        2 * MAX_RECORD_LEN,
        usize::MAX,
    )
}

/// [`handshake`] with an outgoing buffer of `out_len` bytes, the client's bytes reaching the
/// server at most `step` at a time.
pub fn handshake_with(
    config: &Config,
    client_config: &Arc<ClientConfig>,
    early_app_data: &[u8],
    out_len: usize,
    step: usize,
) -> Result<Established, Error> {
    let mut client = ClientConnection::new(
        Arc::clone(client_config),
        ServerName::try_from(HOST).expect("name"),
    )
    .expect("client");
    let mut hs = Handshake::new(config)?;
    let mut in_flight = Vec::new();
    let mut rx = Vec::new();
    let mut out = vec![0u8; out_len];
    let mut early_sent = early_app_data.is_empty();
    for _ in 0..100_000 {
        if !early_sent && !client.is_handshaking() {
            client
                .writer()
                .write_all(early_app_data)
                .expect("client write");
            early_sent = true;
        }
        client_flush(&mut client, &mut in_flight);
        let n = in_flight.len().min(step);
        rx.extend(in_flight.drain(..n));
        let progress = hs.advance(&mut rx, &mut out);
        rx.drain(..progress.consumed);
        // The server's failure first: the client would only refuse its alert.
        let status = progress.status?;
        if let Err(e) = client_receive(&mut client, &out[..progress.written]) {
            panic!("client refused the server's bytes: {e} (server status {status:?})");
        }
        match status {
            Status::Done => {
                assert_eq!(hs.server_name(), Some(HOST));
                let conn = hs.into_connection()?;
                client_flush(&mut client, &mut in_flight);
                rx.extend(in_flight);
                return Ok(Established { client, conn, rx });
            }
            Status::NeedInput | Status::FlushOutput => {}
            _ => unreachable!(),
        }
    }
    panic!("handshake did not finish");
}

/// One receive step of a server: opens every whole record at the front of `rx`, collecting
/// data into `data` and the other events into the returned list. Stops at the first error.
pub fn server_receive(
    conn: &mut Connection,
    rx: &mut Vec<u8>,
    data: &mut Vec<u8>,
) -> Result<Vec<Received>, Error> {
    let mut events = Vec::new();
    while let Some(len) = conn.next_record_len(rx)? {
        if len > rx.len() {
            break;
        }
        match conn.open_in_place(&mut rx[..len])? {
            Received::Data(range) => data.extend_from_slice(&rx[range]),
            other => events.push(other),
        }
        rx.drain(..len);
    }
    Ok(events)
}

/// Seals `plaintext` with `padding` as one record from the server.
pub fn server_seal(conn: &mut Connection, plaintext: &[u8], padding: usize) -> Vec<u8> {
    let mut buf = vec![0u8; conn.sealed_len(plaintext.len(), padding)];
    let start = conn.plaintext_start();
    buf[start..start + plaintext.len()].copy_from_slice(plaintext);
    let n = conn
        .seal_in_place(&mut buf, plaintext.len(), padding)
        .expect("seal");
    assert_eq!(n, buf.len());
    buf
}

pub fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
        .collect()
}

/// One direction of a peer written apart from the crate (ring directly, its own nonce), for
/// records a real client never sends.
pub struct RawDirection {
    key: ring::aead::LessSafeKey,
    iv: [u8; 12],
    pub seq: u64,
}

/// ring's key for `secrets`, its IV, and whether the suite is AES-GCM.
fn raw_key(
    secrets: &rustls::ConnectionTrafficSecrets,
) -> (ring::aead::LessSafeKey, [u8; 12], bool) {
    use rustls::ConnectionTrafficSecrets as S;
    let (alg, key, iv, gcm) = match secrets {
        S::Aes128Gcm { key, iv } => (&ring::aead::AES_128_GCM, key, iv, true),
        S::Aes256Gcm { key, iv } => (&ring::aead::AES_256_GCM, key, iv, true),
        S::Chacha20Poly1305 { key, iv } => (&ring::aead::CHACHA20_POLY1305, key, iv, false),
        _ => unreachable!(),
    };
    let key = ring::aead::UnboundKey::new(alg, key.as_ref()).expect("key");
    let iv = iv.as_ref().try_into().expect("iv");
    (ring::aead::LessSafeKey::new(key), iv, gcm)
}

/// `iv` with `seq` XORed into its last 8 bytes: TLS 1.3's nonce, and ChaCha20's in TLS 1.2.
fn iv_xor_seq(iv: [u8; 12], seq: u64) -> [u8; 12] {
    let mut nonce = iv;
    for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
        *n ^= s;
    }
    nonce
}

impl RawDirection {
    pub fn new((seq, secrets): (u64, rustls::ConnectionTrafficSecrets)) -> Self {
        let (key, iv, _) = raw_key(&secrets);
        Self { key, iv, seq }
    }

    fn nonce(&mut self) -> ring::aead::Nonce {
        let nonce = iv_xor_seq(self.iv, self.seq);
        self.seq += 1;
        ring::aead::Nonce::assume_unique_for_key(nonce)
    }

    /// A record of outer type 23 whose inner plaintext (content, type, padding) is `inner`.
    pub fn seal(&mut self, inner: &[u8]) -> Vec<u8> {
        let len = inner.len() + 16;
        let header = [23, 3, 3, (len >> 8) as u8, len as u8];
        let mut record = header.to_vec();
        let mut body = inner.to_vec();
        let nonce = self.nonce();
        self.key
            .seal_in_place_append_tag(nonce, ring::aead::Aad::from(header), &mut body)
            .expect("seal");
        record.extend_from_slice(&body);
        record
    }

    /// The inner plaintext of a record (content, type, padding).
    pub fn open(&mut self, record: &[u8]) -> Vec<u8> {
        let header: [u8; 5] = record[..5].try_into().unwrap();
        let mut body = record[5..].to_vec();
        let nonce = self.nonce();
        let plain = self
            .key
            .open_in_place(nonce, ring::aead::Aad::from(header), &mut body)
            .expect("open");
        plain.to_vec()
    }
}

/// A connection whose client is replaced by raw directions: `to_server` seals what the client
/// would, `from_server` opens what the server sends.
pub struct RawClient {
    pub conn: Connection,
    pub to_server: RawDirection,
    pub from_server: RawDirection,
}

pub fn raw_client(pki: &Pki, suite: Option<Suite>) -> RawClient {
    let config = server_config(pki);
    let est = handshake(&config, &client_config(pki, suite), b"").expect("handshake");
    let secrets = est
        .client
        .dangerous_extract_secrets()
        .expect("client secrets");
    RawClient {
        conn: est.conn,
        to_server: RawDirection::new(secrets.tx),
        from_server: RawDirection::new(secrets.rx),
    }
}

/// Gives `bytes` to the client a little at a time, reading the plaintext as it comes (rustls
/// holds only so much unread).
pub fn client_receive_all(client: &mut ClientConnection, bytes: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut bytes = bytes;
    while !bytes.is_empty() {
        client.read_tls(&mut bytes).expect("client read_tls");
        client
            .process_new_packets()
            .expect("client refused a record");
        got.extend(client_read_all(client));
    }
    got
}

/// One TLS 1.2 direction of a peer written apart from the crate (ring directly): AES-GCM
/// with the salt and an explicit nonce that is the sequence number itself (as OpenSSL sends
/// it, not rustls's IV-masked one), ChaCha20-Poly1305 with the IV XOR the sequence number;
/// additional data `seq || type || version || length`.
pub struct RawDirection12 {
    key: ring::aead::LessSafeKey,
    iv: [u8; 12],
    gcm: bool,
    pub seq: u64,
}

impl RawDirection12 {
    pub fn new((seq, secrets): (u64, rustls::ConnectionTrafficSecrets)) -> Self {
        let (key, iv, gcm) = raw_key(&secrets);
        Self { key, iv, gcm, seq }
    }

    fn aad(&self, typ: u8, len: usize) -> ring::aead::Aad<[u8; 13]> {
        let mut aad = [0u8; 13];
        aad[..8].copy_from_slice(&self.seq.to_be_bytes());
        aad[8] = typ;
        aad[9] = 3;
        aad[10] = 3;
        aad[11..].copy_from_slice(&(len as u16).to_be_bytes());
        ring::aead::Aad::from(aad)
    }

    /// A record of type `typ` carrying `plaintext`.
    pub fn seal(&mut self, typ: u8, plaintext: &[u8]) -> Vec<u8> {
        let explicit = self.seq.to_be_bytes();
        let mut nonce = iv_xor_seq(self.iv, self.seq);
        if self.gcm {
            nonce[4..].copy_from_slice(&explicit);
        }
        let aad = self.aad(typ, plaintext.len());
        let mut body = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(
                ring::aead::Nonce::assume_unique_for_key(nonce),
                aad,
                &mut body,
            )
            .expect("seal");
        self.seq += 1;
        let explicit: &[u8] = if self.gcm { &explicit } else { &[] };
        let len = explicit.len() + body.len();
        let mut record = vec![typ, 3, 3, (len >> 8) as u8, len as u8];
        record.extend_from_slice(explicit);
        record.extend_from_slice(&body);
        record
    }

    /// The type and plaintext of a record.
    pub fn open(&mut self, record: &[u8]) -> (u8, Vec<u8>) {
        let typ = record[0];
        let mut nonce = iv_xor_seq(self.iv, self.seq);
        let body_at = if self.gcm {
            nonce[4..].copy_from_slice(&record[5..13]);
            13
        } else {
            5
        };
        let mut body = record[body_at..].to_vec();
        let aad = self.aad(typ, body.len() - 16);
        let plain = self
            .key
            .open_in_place(
                ring::aead::Nonce::assume_unique_for_key(nonce),
                aad,
                &mut body,
            )
            .expect("open");
        self.seq += 1;
        (typ, plain.to_vec())
    }
}

/// A TLS 1.2 connection whose client is replaced by raw directions.
pub struct RawClient12 {
    pub conn: Connection,
    pub to_server: RawDirection12,
    pub from_server: RawDirection12,
}

/// A TLS 1.2 handshake with a rustls client speaking `suite`, then its directions taken over.
pub fn raw_client12(suite: rustls::SupportedCipherSuite) -> RawClient12 {
    let pki = if is_rsa(suite) { rsa_pki() } else { pki() };
    let est = handshake(
        &server_config(&pki),
        &client_config_tls12(&pki, &[suite]),
        b"",
    )
    .expect("handshake");
    let secrets = est
        .client
        .dangerous_extract_secrets()
        .expect("client secrets");
    RawClient12 {
        conn: est.conn,
        to_server: RawDirection12::new(secrets.tx),
        from_server: RawDirection12::new(secrets.rx),
    }
}
