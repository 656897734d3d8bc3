//! The certificate the servers of the HTTPS scenarios present: self-signed for `localhost`
//! with an ECDSA P-256 key (as `benches/load/tls.sh` makes with `openssl req`), made once per
//! run with rcgen, so nothing is kept on disk between runs and no key is in the tree.

use std::fmt;
use std::sync::OnceLock;

use rustls::pki_types::CertificateDer;

/// A certificate and its key, in the PEM files a server reads and the DER a client trusts.
#[derive(Debug)]
pub struct Certificate {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// Its private key, PKCS#8 PEM.
    pub key_pem: String,
    /// The certificate, DER: the client's only root.
    pub der: CertificateDer<'static>,
}

/// Why the certificate could not be made.
#[derive(Clone, Debug)]
pub struct CertificateError(String);

impl fmt::Display for CertificateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot make a self-signed certificate: {}", self.0)
    }
}

impl std::error::Error for CertificateError {}

/// The run's certificate for `localhost`, made on first use.
///
/// # Errors
/// [`CertificateError`] when rcgen cannot make it.
pub fn localhost() -> Result<&'static Certificate, CertificateError> {
    static CERT: OnceLock<Result<Certificate, CertificateError>> = OnceLock::new();
    CERT.get_or_init(|| {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
            .map_err(|e| CertificateError(e.to_string()))?;
        Ok(Certificate {
            cert_pem: made.cert.pem(),
            key_pem: made.key_pair.serialize_pem(),
            der: made.cert.der().clone(),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}
