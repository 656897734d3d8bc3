//! The server handshake, done by rustls's unbuffered API over the caller's buffers, and the
//! connection it turns into: the record layer of [`crate::record`] with rustls's
//! [`KernelConnection`] for key updates.

use core::cell::Cell;
use core::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rustls::kernel::KernelConnection;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{
    ClientHello, ResolvesServerCert, ServerConfig, ServerConnectionData, UnbufferedServerConnection,
};
use rustls::sign::CertifiedKey;
use rustls::unbuffered::ConnectionState;
use rustls::{ConnectionTrafficSecrets, HandshakeKind};

use crate::error::{AlertDescription, Error};
use crate::load::LoadError;
use crate::record::{
    self, AlertEvent, ContentType, HandshakeJoiner, KeyUpdate, Opener, RenegotiationGuard, Sealer,
    Suite, Version, MAX_RECORD_LEN, MAX_WARNING_ALERTS,
};

/// A server configuration: TLS 1.3, and TLS 1.2 unless switched off
/// ([`ConfigBuilder::tls12`]), the crate's crypto library (`ring`, or AWS-LC with the
/// `aws-lc-rs` feature: [`CRYPTO_LIBRARY`](crate::CRYPTO_LIBRARY)), ALPN, tickets, no 0-RTT,
/// and the secret extraction the switch to the own record layer needs. Cheap to clone; share
/// one among all connections (resumption tickets are keyed per configuration).
#[derive(Clone, Debug)]
pub struct Config {
    rustls: Arc<ServerConfig>,
    tls12: bool,
}

impl Config {
    /// A builder serving the certificates `resolver` picks (by SNI, or one for all).
    pub fn builder(resolver: Arc<dyn ResolvesServerCert>) -> ConfigBuilder {
        ConfigBuilder {
            resolver,
            alpn: vec![b"http/1.1".to_vec(), b"http/1.0".to_vec()],
            resumption: true,
            suites: None,
            tls12: true,
            client_auth: None,
        }
    }

    /// A configuration with the defaults serving one certificate chain and its key.
    pub fn with_single_cert(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> Result<Self, Error> {
        Self::single_cert_builder(chain, key)?.build()
    }

    /// A builder serving one certificate chain and its key, for settings other than the
    /// defaults.
    ///
    /// # Errors
    /// A key rustls cannot sign with, or one that does not belong to the certificate.
    pub fn single_cert_builder(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> Result<ConfigBuilder, Error> {
        let provider = crate::provider::crypto_provider();
        let certified = CertifiedKey::from_der(chain, key, &provider).map_err(Error::Handshake)?;
        Ok(Self::builder(Arc::new(
            rustls::sign::SingleCertAndKey::from(certified),
        )))
    }

    /// A configuration with the defaults serving the certificate chain (leaf first) and the
    /// private key in two PEM files.
    ///
    /// # Errors
    /// A file that cannot be read or holds no certificate or key, a key that does not belong
    /// to the certificate ([`LoadError::KeyMismatch`]), or one rustls cannot use
    /// ([`LoadError::Rejected`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let config = bufslab_tls::Config::from_pem_files(
    ///     "cert.pem".as_ref(),
    ///     "key.pem".as_ref(),
    /// )?;
    /// # Ok::<(), bufslab_tls::LoadError>(())
    /// ```
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, LoadError> {
        Self::pem_files_builder(cert, key)?
            .build()
            .map_err(|e| load_error(e, cert, key))
    }

    /// A builder serving the certificate chain and key in two PEM files, for settings other
    /// than the defaults (errors as [`Config::from_pem_files`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let config = bufslab_tls::Config::pem_files_builder("cert.pem".as_ref(), "key.pem".as_ref())?
    ///     .tls12(false)
    ///     .build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pem_files_builder(cert: &Path, key: &Path) -> Result<ConfigBuilder, LoadError> {
        let (chain, key_der) = crate::load::pem_files(cert, key)?;
        Self::single_cert_builder(chain, key_der).map_err(|e| load_error(e, cert, key))
    }

    /// The rustls configuration underneath, for reading.
    pub fn rustls_config(&self) -> &Arc<ServerConfig> {
        &self.rustls
    }

    /// Whether TLS 1.2 clients are served ([`ConfigBuilder::tls12`]).
    pub fn tls12(&self) -> bool {
        self.tls12
    }
}

fn load_error(e: Error, cert: &Path, key: &Path) -> LoadError {
    match e {
        Error::Handshake(rustls::Error::InconsistentKeys(
            rustls::InconsistentKeys::KeyMismatch,
        )) => LoadError::KeyMismatch {
            cert: cert.to_owned(),
            key: key.to_owned(),
        },
        other => other.into(),
    }
}

/// Builds a [`Config`].
#[derive(Debug)]
pub struct ConfigBuilder {
    resolver: Arc<dyn ResolvesServerCert>,
    alpn: Vec<Vec<u8>>,
    resumption: bool,
    suites: Option<Vec<Suite>>,
    tls12: bool,
    client_auth: Option<Arc<dyn ClientCertVerifier>>,
}

impl ConfigBuilder {
    /// The ALPN protocols offered, in order of preference (default: `http/1.1`, then `http/1.0`
    /// for clients that offer only that, as curl's `--http1.0` does). A client
    /// that offers ALPN with none of them is refused (`no_application_protocol`); one that
    /// offers none gets no ALPN.
    pub fn alpn_protocols(mut self, protocols: &[&[u8]]) -> Self {
        self.alpn = protocols.iter().map(|p| p.to_vec()).collect();
        self
    }

    /// Resumption by tickets (the crypto library's rotating `Ticketer`) and by the server's
    /// session cache; on by default.
    pub fn resumption(mut self, on: bool) -> Self {
        self.resumption = on;
        self
    }

    /// The AEADs offered, in order of preference, in both versions (default: all three,
    /// AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, as rustls orders them; in TLS 1.2 the
    /// ECDHE suites with them, ECDSA or RSA as the certificate's key signs). A client that
    /// offers none of them is refused (`handshake_failure`).
    pub fn cipher_suites(mut self, suites: &[Suite]) -> Self {
        self.suites = Some(suites.to_vec());
        self
    }

    /// Whether TLS 1.2 clients are served (default: yes, as rustls's defaults, curl, nginx
    /// and most servers have it; TLS 1.3 is preferred whenever the client offers it). Off,
    /// a client that offers only TLS 1.2 is refused with `protocol_version`. TLS 1.2 goes
    /// through the same record layer, with no allocation per record either; it has no
    /// `KeyUpdate` (a key at its record limit ends the connection) and refuses
    /// renegotiation.
    pub fn tls12(mut self, on: bool) -> Self {
        self.tls12 = on;
        self
    }

    /// Asks every client for a certificate and checks what it sends with `verifier` (default:
    /// no certificate is asked for). [`client_verifier`](crate::client_verifier) makes one
    /// from CA certificates in a PEM file, refusing clients without a certificate or serving
    /// them too; any rustls `ClientCertVerifier` will do. A client whose certificate does not
    /// verify is refused with the alert the verifier names. The chain a client presented is in
    /// [`Connection::peer_certificates`]: copied out of rustls once per handshake, the only
    /// memory it adds to an established connection.
    pub fn client_auth(mut self, verifier: Arc<dyn ClientCertVerifier>) -> Self {
        self.client_auth = Some(verifier);
        self
    }

    /// The configuration.
    pub fn build(self) -> Result<Config, Error> {
        let mut provider = crate::provider::crypto_provider();
        if let Some(suites) = &self.suites {
            let all = std::mem::take(&mut provider.cipher_suites);
            provider.cipher_suites = suites
                .iter()
                .flat_map(|want| {
                    all.iter()
                        .filter(|s| Suite::of(s.suite()) == Some(*want))
                        .copied()
                })
                .collect();
        }
        let provider = Arc::new(provider);
        let versions: &[&rustls::SupportedProtocolVersion] = if self.tls12 {
            &[&rustls::version::TLS13, &rustls::version::TLS12]
        } else {
            &[&rustls::version::TLS13]
        };
        let builder = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .map_err(Error::Handshake)?;
        let builder = match self.client_auth {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(Arc::new(RecordSni(self.resolver)));
        config.alpn_protocols = self.alpn;
        // Early data would reach rustls's own buffers, and replay protection is the
        // application's: off until both are designed.
        config.max_early_data_size = 0;
        // The switch to the own record layer takes the traffic secrets out of rustls.
        config.enable_secret_extraction = true;
        if self.resumption {
            config.ticketer = crate::provider::ticketer().map_err(Error::Handshake)?;
        } else {
            config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
            config.send_tls13_tickets = 0;
        }
        Ok(Config {
            rustls: Arc::new(config),
            tls12: self.tls12,
        })
    }
}

thread_local! {
    /// The SNI of the ClientHello rustls resolved last on this thread. rustls's unbuffered
    /// server does not expose the name, and its certificate resolver is shared by every
    /// connection, but rustls calls it synchronously inside `process_tls_records`: the driver
    /// clears this before the call and takes it after, on the same thread.
    static SNI_SEEN: Cell<Option<String>> = const { Cell::new(None) };
}

#[derive(Debug)]
struct RecordSni(Arc<dyn ResolvesServerCert>);

impl ResolvesServerCert for RecordSni {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        SNI_SEEN.with(|seen| seen.set(client_hello.server_name().map(str::to_owned)));
        self.0.resolve(client_hello)
    }

    fn only_raw_public_keys(&self) -> bool {
        self.0.only_raw_public_keys()
    }
}

/// What [`Handshake::advance`] did and what the caller does next.
#[derive(Debug)]
#[non_exhaustive]
pub struct Progress {
    /// Bytes to drop from the front of the incoming buffer (before reading more into it).
    pub consumed: usize,
    /// Bytes written at the front of the outgoing buffer: send them, in order, before
    /// anything else. Also set on failure: the alert rustls chose.
    pub written: usize,
    /// What to do next, or why the handshake failed (then send `written` and close).
    pub status: Result<Status, Error>,
}

/// The next step of a handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Send what was written, read more, append it to what was not consumed, call again.
    NeedInput,
    /// The outgoing buffer is full: send what was written, then call again with an emptied
    /// one (the incoming bytes as they are).
    FlushOutput,
    /// The handshake is complete: send what was written, then [`Handshake::into_connection`].
    /// The incoming bytes not consumed are the first application records.
    Done,
}

/// A server handshake in progress, over rustls's `UnbufferedServerConnection`.
///
/// I/O-free: the caller reads from its socket into an incoming buffer, passes the bytes not
/// yet consumed to [`Handshake::advance`] with a buffer for outgoing bytes (at least
/// [`MAX_RECORD_LEN`] long), and sends what was written.
///
/// rustls is shown one whole record at a time and nothing past the record it is working on,
/// so it never reads, and never keeps, an application-data record that arrives behind the
/// client's `Finished` in the same read: that record is still in the caller's buffer when
/// [`Status::Done`] comes, for the record layer to open.
pub struct Handshake {
    conn: UnbufferedServerConnection,
    /// Bytes at the front of the caller's incoming buffer that rustls has been shown and has
    /// not yet released (`discard`).
    shown: usize,
    sni: Option<String>,
    failed: Option<Error>,
    done: bool,
}

impl core::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Handshake")
            .field("shown", &self.shown)
            .field("sni", &self.sni)
            .field("failed", &self.failed)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

enum Next {
    Continue,
    MoreInput,
    Traffic,
    Fail(Error),
}

impl Handshake {
    /// A handshake for one accepted connection.
    pub fn new(config: &Config) -> Result<Self, Error> {
        Ok(Self {
            conn: UnbufferedServerConnection::new(Arc::clone(&config.rustls))
                .map_err(Error::Handshake)?,
            shown: 0,
            sni: None,
            failed: None,
            done: false,
        })
    }

    /// Runs the handshake as far as `incoming` allows, writing what is to be sent into
    /// `outgoing`. `incoming` holds the received bytes not consumed by earlier calls (the
    /// caller drops `consumed` bytes from its front after each call and appends new ones).
    pub fn advance(&mut self, incoming: &mut [u8], outgoing: &mut [u8]) -> Progress {
        let mut consumed = 0;
        let mut written = 0;
        let status = self.run(incoming, outgoing, &mut consumed, &mut written);
        if let Err(e) = &status {
            if self.failed.is_none() {
                self.failed = Some(e.clone());
            }
        }
        Progress {
            consumed,
            written,
            status,
        }
    }

    fn run(
        &mut self,
        incoming: &mut [u8],
        outgoing: &mut [u8],
        consumed: &mut usize,
        written: &mut usize,
    ) -> Result<Status, Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.done {
            return Ok(Status::Done);
        }
        if self.shown > incoming.len() {
            return Err(Error::Internal(
                "incoming bytes shown to rustls were dropped before it consumed them",
            ));
        }
        loop {
            // rustls drops a record that does not fit the buffer it is given: keep room for
            // the largest.
            if outgoing.len() - *written < MAX_RECORD_LEN {
                return if *written > 0 {
                    Ok(Status::FlushOutput)
                } else {
                    Err(Error::BufferTooSmall(MAX_RECORD_LEN))
                };
            }
            SNI_SEEN.with(|seen| seen.set(None));
            let window = &mut incoming[*consumed..*consumed + self.shown];
            let status = self.conn.process_tls_records(window);
            let discard = status.discard;
            let next = match status.state {
                Ok(ConnectionState::EncodeTlsData(mut data)) => {
                    match data.encode(&mut outgoing[*written..]) {
                        Ok(n) => {
                            *written += n;
                            Next::Continue
                        }
                        Err(_) => Next::Fail(Error::Internal("handshake record over a record")),
                    }
                }
                // The bytes are in `outgoing`, which the caller sends before anything else.
                Ok(ConnectionState::TransmitTlsData(data)) => {
                    data.done();
                    Next::Continue
                }
                Ok(ConnectionState::BlockedHandshake) => Next::MoreInput,
                Ok(ConnectionState::WriteTraffic(_)) => Next::Traffic,
                Ok(ConnectionState::PeerClosed | ConnectionState::Closed) => {
                    Next::Fail(Error::ClosedDuringHandshake)
                }
                Ok(_) => Next::Fail(Error::Internal("application data during the handshake")),
                Err(e) => Next::Fail(Error::Handshake(e)),
            };
            *consumed += discard;
            self.shown -= discard;
            if let Some(name) = SNI_SEEN.with(Cell::take) {
                self.sni = Some(name);
            }
            match next {
                Next::Continue => {}
                Next::Fail(e @ Error::Handshake(_)) => {
                    self.drain_alert(incoming, outgoing, consumed, written);
                    return Err(e);
                }
                Next::Fail(e) => return Err(e),
                // A server may write from its own `Finished` on: the handshake is over only
                // once the client's `Finished` is in.
                Next::Traffic if !self.conn.is_handshaking() => {
                    if self.shown != 0 {
                        return Err(Error::Internal("rustls holds bytes past the handshake"));
                    }
                    self.done = true;
                    return Ok(Status::Done);
                }
                Next::Traffic | Next::MoreInput => {
                    let next_at = *consumed + self.shown;
                    match record::record_len(&incoming[next_at..]) {
                        Ok(Some(len)) if len <= incoming.len() - next_at => self.shown += len,
                        Ok(_) => return Ok(Status::NeedInput),
                        // Shown as is, for rustls to refuse with its own alert.
                        Err(_) => self.shown = incoming.len() - *consumed,
                    }
                }
            }
        }
    }

    /// After a failure, rustls still has the alert it chose queued (behind any records it
    /// queued before failing): write them out. Each call pops one queued record before rustls
    /// reads any input; once the queue is empty it is not called again, as it would read the
    /// window anew and fail on it a second time. The window is the one it failed on, not an
    /// empty buffer: rustls may keep the place of a partial message in it.
    fn drain_alert(
        &mut self,
        incoming: &mut [u8],
        outgoing: &mut [u8],
        consumed: &mut usize,
        written: &mut usize,
    ) {
        while self.conn.wants_write() {
            let window = &mut incoming[*consumed..*consumed + self.shown];
            let status = self.conn.process_tls_records(window);
            let discard = status.discard;
            let encoded = match status.state {
                Ok(ConnectionState::EncodeTlsData(mut data)) => {
                    match data.encode(&mut outgoing[*written..]) {
                        Ok(n) => {
                            *written += n;
                            true
                        }
                        Err(_) => false,
                    }
                }
                _ => false,
            };
            *consumed += discard;
            self.shown -= discard;
            if !encoded {
                break;
            }
        }
    }

    /// Whether [`Status::Done`] was reached.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The server name the client asked for, once its ClientHello is in.
    pub fn server_name(&self) -> Option<&str> {
        self.sni.as_deref()
    }

    /// The connection, once the handshake is [`Status::Done`]: rustls's traffic secrets and
    /// sequence numbers go into the own record layer, rustls keeps only the key schedule.
    pub fn into_connection(self) -> Result<Connection, Error> {
        if !self.done {
            return Err(Error::Internal(
                "into_connection before the handshake is done",
            ));
        }
        let alpn = self.conn.alpn_protocol().map(<[u8]>::to_vec);
        let peer_certificates = self.conn.peer_certificates().map(<[_]>::to_vec);
        let resumed = self.conn.handshake_kind() == Some(HandshakeKind::Resumed);
        let (secrets, kernel) = self
            .conn
            .dangerous_into_kernel_connection()
            .map_err(Error::Handshake)?;
        let version = match kernel.protocol_version() {
            rustls::ProtocolVersion::TLSv1_3 => Version::Tls13,
            rustls::ProtocolVersion::TLSv1_2 => Version::Tls12,
            _ => return Err(Error::Internal("protocol version")),
        };
        let (tx_seq, tx) = secrets.tx;
        let (rx_seq, rx) = secrets.rx;
        let (suite, key, iv) = traffic_keys(&tx)?;
        let sealer = Sealer::with_version(version, suite, key, iv, tx_seq)?;
        let (suite, key, iv) = traffic_keys(&rx)?;
        let opener = Opener::with_version(version, suite, key, iv, rx_seq)?;
        Ok(Connection {
            sealer,
            opener,
            cipher_suite: kernel.negotiated_cipher_suite().suite(),
            kernel,
            alpn,
            sni: self.sni,
            peer_certificates,
            resumed,
            owed_key_update: None,
            joiner: HandshakeJoiner::default(),
            renegotiation: RenegotiationGuard::default(),
            refused_renegotiation: false,
            owed_no_renegotiation: false,
            warnings: 0,
            sent_close: false,
            received_close: false,
        })
    }
}

fn traffic_keys(secrets: &ConnectionTrafficSecrets) -> Result<(Suite, &[u8], [u8; 12]), Error> {
    let (suite, key, iv) = match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (Suite::Aes128Gcm, key, iv),
        ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (Suite::Aes256Gcm, key, iv),
        ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
            (Suite::Chacha20Poly1305, key, iv)
        }
        _ => return Err(Error::UnsupportedSuite),
    };
    let iv = iv.as_ref().try_into().map_err(|_| Error::BadKey)?;
    Ok((suite, key.as_ref(), iv))
}

/// What [`Connection::open_in_place`] found in a record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Received {
    /// Application data: `record[range]`.
    Data(Range<usize>),
    /// Nothing for the application: an empty record, a `KeyUpdate` (if the peer asked for
    /// ours, [`Connection::wants_control`] is now true), a `user_canceled` warning; in TLS 1.2
    /// a warning alert, or a renegotiation `ClientHello` (then [`Connection::wants_control`] is
    /// true: a `no_renegotiation` warning is owed).
    Control,
    /// The peer's `close_notify`: it sends no more. We may still send, then close. Every
    /// record after it is ignored, unopened, and reported as `Closed` again.
    Closed,
}

/// An established TLS 1.3 or TLS 1.2 connection: the own record layer in both directions, and
/// rustls's key schedule for TLS 1.3's `KeyUpdate`s. I/O-free: records are opened and sealed
/// in the caller's buffers, with no allocation per record.
pub struct Connection {
    sealer: Sealer,
    opener: Opener,
    cipher_suite: rustls::CipherSuite,
    kernel: KernelConnection<ServerConnectionData>,
    alpn: Option<Vec<u8>>,
    sni: Option<String>,
    /// The client's certificate chain, where it was asked for one and sent it.
    peer_certificates: Option<Vec<CertificateDer<'static>>>,
    resumed: bool,
    /// A `KeyUpdate` of ours to send before the next data; `true`: asking the peer for its own.
    owed_key_update: Option<bool>,
    /// The first bytes of a `KeyUpdate` split across records.
    joiner: HandshakeJoiner,
    /// TLS 1.2: the renegotiation `ClientHello`s the client sends.
    renegotiation: RenegotiationGuard,
    /// TLS 1.2: one renegotiation was refused (rustls allows one; the next is an error).
    refused_renegotiation: bool,
    /// TLS 1.2: a `no_renegotiation` warning is to be written.
    owed_no_renegotiation: bool,
    /// TLS 1.2: warning alerts received.
    warnings: u8,
    sent_close: bool,
    received_close: bool,
}

impl core::fmt::Debug for Connection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Connection")
            .field("sealer", &self.sealer)
            .field("opener", &self.opener)
            .field("alpn", &self.alpn)
            .field("sni", &self.sni)
            .field("resumed", &self.resumed)
            .field(
                "peer_certificates",
                &self.peer_certificates.as_ref().map(Vec::len),
            )
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// The ALPN protocol agreed, if the client offered ALPN.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.alpn.as_deref()
    }

    /// The certificate chain the client presented (its own first), where
    /// [`ConfigBuilder::client_auth`] asked for one and the client sent one; `None` otherwise.
    /// The verifier accepted it before the handshake finished.
    pub fn peer_certificates(&self) -> Option<&[CertificateDer<'static>]> {
        self.peer_certificates.as_deref()
    }

    /// The server name (SNI) the client asked for.
    pub fn server_name(&self) -> Option<&str> {
        self.sni.as_deref()
    }

    /// The protocol version: TLS 1.3, or TLS 1.2 where the configuration allows it and the
    /// client offers no better.
    pub fn protocol_version(&self) -> rustls::ProtocolVersion {
        self.kernel.protocol_version()
    }

    /// The record layer's version.
    pub fn version(&self) -> Version {
        self.sealer.version()
    }

    /// The AEAD ([`Connection::cipher_suite`] names the whole suite).
    pub fn suite(&self) -> Suite {
        self.sealer.suite()
    }

    /// The cipher suite negotiated (in TLS 1.2, with its key exchange and signature).
    pub fn cipher_suite(&self) -> rustls::CipherSuite {
        self.cipher_suite
    }

    /// The IANA name of [`Connection::cipher_suite`], e.g. `TLS_AES_128_GCM_SHA256` or
    /// `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`.
    pub fn cipher_suite_name(&self) -> &'static str {
        match self.version() {
            // rustls names them `TLS13_*`.
            Version::Tls13 => self.suite().name(),
            _ => self.cipher_suite.as_str().unwrap_or(self.suite().name()),
        }
    }

    /// Where the plaintext goes in the buffer given to [`Connection::seal_in_place`]
    /// ([`Sealer::plaintext_start`]): [`record::HEADER_LEN`], or 13 for TLS 1.2 AES-GCM.
    pub fn plaintext_start(&self) -> usize {
        self.sealer.plaintext_start()
    }

    /// The length of the record `plaintext_len` bytes with `padding` zeros seal into
    /// ([`Sealer::sealed_len`]).
    pub fn sealed_len(&self, plaintext_len: usize, padding: usize) -> usize {
        self.sealer.sealed_len(plaintext_len, padding)
    }

    /// Whether the handshake resumed an earlier session.
    pub fn is_resumed(&self) -> bool {
        self.resumed
    }

    /// The sending half, for reading its state (sequence number, limit).
    pub fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    /// The receiving half, for reading its state.
    pub fn opener(&self) -> &Opener {
        &self.opener
    }

    /// Lowers the number of records one sending key may seal before a `KeyUpdate` (tests
    /// reach it this way); see [`Sealer::set_record_limit`].
    pub fn set_record_limit(&mut self, limit: u64) {
        self.sealer.set_record_limit(limit);
    }

    /// The length of the next record in `buf` ([`record::record_len`]); an error poisons the
    /// receiving half, and its alert is to be sent.
    pub fn next_record_len(&mut self, buf: &[u8]) -> Result<Option<usize>, Error> {
        self.opener.next_record_len(buf)
    }

    /// Opens one whole record in place and acts on what it holds: alerts and `KeyUpdate`s are
    /// handled here (the peer's new key is taken from rustls). On error nothing is returned,
    /// the receiving half is poisoned, and [`Error::alert`] is the alert to send
    /// ([`Connection::write_alert`]).
    pub fn open_in_place(&mut self, record: &mut [u8]) -> Result<Received, Error> {
        if self.received_close {
            // RFC 8446 §6.1: data after a closure alert is ignored (as rustls does), not
            // opened.
            return Ok(Received::Closed);
        }
        let opened = self.opener.open_in_place(record)?;
        let plaintext = &record[opened.plaintext.clone()];
        let tls12 = self.version() == Version::Tls12;
        if (self.joiner.is_pending() || self.renegotiation.is_pending())
            && opened.content_type != ContentType::Handshake
        {
            return Err(self.opener.fail(Error::HandshakeInterleaved));
        }
        match opened.content_type {
            ContentType::ApplicationData if plaintext.is_empty() => Ok(Received::Control),
            ContentType::ApplicationData => Ok(Received::Data(opened.plaintext)),
            ContentType::Alert => {
                let event = if tls12 {
                    record::parse_alert_tls12(plaintext)
                } else {
                    record::parse_alert(plaintext)
                };
                match event {
                    Ok(AlertEvent::CloseNotify) => {
                        self.received_close = true;
                        Ok(Received::Closed)
                    }
                    // rustls counts `user_canceled` among the warnings too.
                    Ok(AlertEvent::Warning(_) | AlertEvent::UserCanceled) if tls12 => {
                        if self.warnings >= MAX_WARNING_ALERTS {
                            return Err(self.opener.fail(Error::TooManyWarningAlerts));
                        }
                        self.warnings += 1;
                        Ok(Received::Control)
                    }
                    Ok(_) => Ok(Received::Control),
                    Err(e) => Err(self.opener.fail(e)),
                }
            }
            // A renegotiation: the first is refused with a warning (RFC 5746 §4.4), and the
            // connection goes on, as rustls does; a second is an error.
            ContentType::Handshake if tls12 => {
                let hellos = self
                    .renegotiation
                    .push(plaintext)
                    .map_err(|e| self.opener.fail(e))?;
                if hellos == 0 {
                    return Ok(Received::Control);
                }
                if hellos > 1 || self.refused_renegotiation {
                    return Err(self.opener.fail(Error::TooManyRenegotiations));
                }
                self.refused_renegotiation = true;
                self.owed_no_renegotiation = !self.sent_close;
                Ok(Received::Control)
            }
            ContentType::Handshake => {
                let Some(update) = self
                    .joiner
                    .push(plaintext)
                    .map_err(|e| self.opener.fail(e))?
                else {
                    return Ok(Received::Control);
                };
                let (_, secrets) = self
                    .kernel
                    .update_rx_secret()
                    .map_err(|e| self.opener.fail(Error::Handshake(e)))?;
                let (_, key, iv) = traffic_keys(&secrets).map_err(|e| self.opener.fail(e))?;
                self.opener.rekey(key, iv)?;
                if update == KeyUpdate::Requested && !self.sent_close {
                    self.owed_key_update.get_or_insert(false);
                }
                Ok(Received::Control)
            }
            // `ContentType` is non-exhaustive for users, not here: no other type opens.
            #[allow(unreachable_patterns)]
            _ => Err(self.opener.fail(Error::Internal("content type"))),
        }
    }

    /// Whether a control record must be written ([`Connection::write_control`]) before more
    /// data is sealed: in TLS 1.3 a `KeyUpdate` the peer asked for, one asked for with
    /// [`Connection::update_keys`], or one the record limit calls for; in TLS 1.2 the
    /// `no_renegotiation` warning that answers a renegotiation.
    pub fn wants_control(&self) -> bool {
        !self.sent_close
            && match self.version() {
                Version::Tls13 => self.owed_key_update.is_some() || self.sealer.key_update_due(),
                Version::Tls12 => self.owed_no_renegotiation,
            }
    }

    /// Whether the sending key is at its record limit in TLS 1.2, which has no `KeyUpdate`:
    /// [`Connection::seal_in_place`] refuses with [`Error::KeysExhausted`], and the connection
    /// is to be closed with [`Connection::write_close_notify`] (the limit keeps room for it),
    /// as rustls does.
    pub fn keys_exhausted(&self) -> bool {
        self.version() == Version::Tls12 && self.sealer.key_update_due()
    }

    /// Schedules a `KeyUpdate` of ours (written by [`Connection::write_control`]);
    /// `request_peer` asks the peer to update its sending key too. TLS 1.2 has none: nothing
    /// is scheduled.
    pub fn update_keys(&mut self, request_peer: bool) {
        if self.version() == Version::Tls12 {
            return;
        }
        let owed = self.owed_key_update.get_or_insert(false);
        *owed |= request_peer;
    }

    /// Writes the pending control record into `out` (at least
    /// [`record::CONTROL_RECORD_LEN`] bytes) and returns its length, 0 when none is
    /// pending. After a `KeyUpdate` the sending key is the next one, from rustls.
    pub fn write_control(&mut self, out: &mut [u8]) -> Result<usize, Error> {
        if !self.wants_control() {
            return Ok(0);
        }
        if self.version() == Version::Tls12 {
            let n = self
                .sealer
                .seal_alert(out, AlertDescription::NoRenegotiation)?;
            self.owed_no_renegotiation = false;
            return Ok(n);
        }
        let request_peer = self.owed_key_update.unwrap_or(false);
        let n = self.sealer.seal_key_update(out, request_peer)?;
        let (_, secrets) = self.kernel.update_tx_secret().map_err(Error::Handshake)?;
        let (_, key, iv) = traffic_keys(&secrets)?;
        self.sealer.rekey(key, iv)?;
        self.owed_key_update = None;
        Ok(n)
    }

    /// Seals `buf[start..start + plaintext_len]`, `start` being
    /// [`Connection::plaintext_start`] (`HEADER_LEN` in TLS 1.3), as one application-data
    /// record in place, with `padding` zeros (see [`Sealer::seal_in_place`] for the layout;
    /// TLS 1.2 has no padding); returns the record's length. Refuses with
    /// [`Error::ControlPending`] while [`Connection::wants_control`], and with
    /// [`Error::KeysExhausted`] once [`Connection::keys_exhausted`].
    pub fn seal_in_place(
        &mut self,
        buf: &mut [u8],
        plaintext_len: usize,
        padding: usize,
    ) -> Result<usize, Error> {
        if self.sent_close {
            return Err(Error::Closed);
        }
        if self.wants_control() {
            return Err(Error::ControlPending);
        }
        self.sealer.seal_in_place(buf, plaintext_len, padding)
    }

    /// Writes our `close_notify` into `out` (at least [`record::ALERT_RECORD_LEN`] bytes);
    /// nothing is sealed after it.
    pub fn write_close_notify(&mut self, out: &mut [u8]) -> Result<usize, Error> {
        self.write_alert(AlertDescription::CloseNotify, out)
    }

    /// Writes an alert into `out` (at least [`record::ALERT_RECORD_LEN`] bytes): for an error,
    /// the one [`Error::alert`] names. Nothing is sealed after it.
    pub fn write_alert(&mut self, alert: AlertDescription, out: &mut [u8]) -> Result<usize, Error> {
        if self.sent_close {
            return Err(Error::Closed);
        }
        let n = self.sealer.seal_alert(out, alert)?;
        self.sent_close = true;
        Ok(n)
    }

    /// Whether the peer's `close_notify` was received.
    pub fn received_close_notify(&self) -> bool {
        self.received_close
    }

    /// Whether ours was sent (or a fatal alert).
    pub fn sent_close(&self) -> bool {
        self.sent_close
    }
}
