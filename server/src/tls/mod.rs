//! HTTPS: the TLS configuration of a server ([`TlsConfig`], `Config::tls`) and the layer each
//! connection runs between its driver and the I/O-free core (`layer.rs`), on
//! [`bufslab_tls`]: rustls does the handshake, and records are sealed and opened in place in
//! pooled blocks, with no allocation per request.

pub(crate) mod layer;

use std::path::Path;

/// Handshakes one worker runs at once by default ([`TlsConfig::max_handshakes`]).
pub const DEFAULT_MAX_HANDSHAKES: usize = 128;

/// How a server speaks TLS ([`Config::tls`](crate::Config::tls)): the certificate and
/// settings of [`bufslab_tls::Config`] (TLS 1.3 and TLS 1.2, ALPN `http/1.1` or `http/1.0`,
/// resumption by tickets, no 0-RTT), and the engine's limits around it.
///
/// # Examples
///
/// ```no_run
/// use bufslab_server::{Config, TlsConfig};
///
/// let mut config = Config::default();
/// config.tls = Some(TlsConfig::from_pem_files("cert.pem".as_ref(), "key.pem".as_ref())?);
/// # Ok::<(), bufslab_tls::LoadError>(())
/// ```
///
/// TLS 1.2 is served unless switched off ([`bufslab_tls::ConfigBuilder::tls12`]); a client
/// that offers TLS 1.3 always gets it. Every other setting (suites, ALPN, client
/// certificates) goes through the same builder:
///
/// ```no_run
/// use bufslab_server::TlsConfig;
///
/// let tls = bufslab_tls::Config::pem_files_builder("cert.pem".as_ref(), "key.pem".as_ref())?
///     .tls12(false)
///     .build()?;
/// let tls = TlsConfig::new(tls);
/// assert!(!tls.tls12());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TlsConfig {
    tls: bufslab_tls::Config,
    /// Handshakes one worker runs at once. At the bound the worker stops accepting on its
    /// HTTPS listeners until a handshake ends (counted in
    /// [`ServerStats::tls_accept_holds`](crate::ServerStats::tls_accept_holds)): new
    /// connections wait in the listen backlog, none is closed, and a flood of handshakes, the
    /// expensive part of TLS, cannot take the worker's time from the connections it already
    /// serves. Plain HTTP listeners of the same server accept as before. Under the io_uring
    /// driver each HTTPS listener keeps one accept armed below the bound, so with several of
    /// them the bound can be passed by one handshake per further HTTPS listener. A handshake
    /// must also finish within [`Config::header_timeout`](crate::Config::header_timeout) of
    /// the accept.
    pub max_handshakes: usize,
    /// The most records one sending key seals before the server sends a `KeyUpdate` (`None`:
    /// the suite's limit, 2^24 records for AES-GCM, which rustls applies too). Lowered, it
    /// makes every connection change keys often: for tests and soaks of the key update, which
    /// [`ServerStats::tls_key_updates`](crate::ServerStats::tls_key_updates) counts.
    pub record_limit: Option<u64>,
}

impl TlsConfig {
    /// Serves with `tls`.
    #[must_use]
    pub fn new(tls: bufslab_tls::Config) -> TlsConfig {
        TlsConfig {
            tls,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            record_limit: None,
        }
    }

    /// Serves the certificate chain (leaf first) and private key in two PEM files.
    ///
    /// # Errors
    /// A file that cannot be read or holds no certificate or key, or a key that does not
    /// belong to the certificate.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<TlsConfig, bufslab_tls::LoadError> {
        bufslab_tls::Config::from_pem_files(cert, key).map(TlsConfig::new)
    }

    /// Whether TLS 1.2 clients are served (on by default).
    #[must_use]
    pub fn tls12(&self) -> bool {
        self.tls.tls12()
    }

    /// The TLS settings.
    #[must_use]
    pub fn tls(&self) -> &bufslab_tls::Config {
        &self.tls
    }
}
