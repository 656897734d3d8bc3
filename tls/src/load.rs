//! A certificate chain and its private key from PEM files, checked against each other before
//! a server starts, so that a wrong file stops start-up with a clear message instead of
//! failing every handshake later.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;

/// Why a certificate chain or key could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read or is not valid PEM.
    Pem {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The certificate file holds no `CERTIFICATE` section.
    NoCertificate(PathBuf),
    /// The key file holds no private key (`PRIVATE KEY`, `RSA PRIVATE KEY` or
    /// `EC PRIVATE KEY`).
    NoKey(PathBuf),
    /// The private key is not the one the (leaf) certificate was issued for.
    KeyMismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
    },
    /// rustls refused the pair: a key of a kind it cannot sign with.
    Rejected(rustls::Error),
}

/// A configuration that does not build ([`ConfigBuilder::build`](crate::ConfigBuilder::build)
/// after [`Config::pem_files_builder`](crate::Config::pem_files_builder)): rustls refused it.
impl From<crate::Error> for LoadError {
    fn from(e: crate::Error) -> Self {
        match e {
            crate::Error::Handshake(e) => LoadError::Rejected(e),
            other => LoadError::Rejected(rustls::Error::General(other.to_string())),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pem { path, reason } => write!(f, "{}: {reason}", path.display()),
            Self::NoCertificate(path) => {
                write!(f, "{}: no CERTIFICATE section in the file", path.display())
            }
            Self::NoKey(path) => write!(f, "{}: no private key in the file", path.display()),
            Self::KeyMismatch { cert, key } => write!(
                f,
                "{}: the private key does not match the certificate in {}",
                key.display(),
                cert.display()
            ),
            Self::Rejected(e) => write!(f, "certificate and key refused: {e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Rejected(e) => Some(e),
            _ => None,
        }
    }
}

/// A verifier of client certificates ([`ConfigBuilder::client_auth`]) that accepts chains
/// issued by one of the CA certificates in the PEM file `ca`. With `required`, a client that
/// sends no certificate is refused (`certificate_required`); without, it is served, and the
/// service sees no certificate. Revocation lists are not consulted.
///
/// [`ConfigBuilder::client_auth`]: crate::ConfigBuilder::client_auth
///
/// # Errors
/// A file that cannot be read, is not PEM or holds no certificate, or a certificate rustls
/// cannot use as a trust anchor.
pub fn client_verifier(
    ca: &Path,
    required: bool,
) -> Result<Arc<dyn ClientCertVerifier>, LoadError> {
    let certs = CertificateDer::pem_file_iter(ca)
        .map_err(|e| pem_error(ca, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(ca, e))?;
    if certs.is_empty() {
        return Err(LoadError::NoCertificate(ca.to_owned()));
    }
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(LoadError::Rejected)?;
    }
    let provider = Arc::new(crate::provider::crypto_provider());
    let builder = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
    let builder = if required {
        builder
    } else {
        builder.allow_unauthenticated()
    };
    builder
        .build()
        .map_err(|e| LoadError::Rejected(rustls::Error::General(e.to_string())))
}

/// `e`, reading `path`.
fn pem_error(path: &Path, e: pem::Error) -> LoadError {
    LoadError::Pem {
        path: path.to_owned(),
        reason: match e {
            pem::Error::Io(io) => io.to_string(),
            other => format!("not valid PEM ({other:?})"),
        },
    }
}

/// Reads a certificate chain (leaf first) and a private key from PEM files.
///
/// # Errors
/// A file that cannot be read, is not PEM, or holds no certificate or no key. Whether the key
/// belongs to the certificate is checked by [`Config::from_pem_files`](crate::Config::from_pem_files).
pub fn pem_files(
    cert: &Path,
    key: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), LoadError> {
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| pem_error(cert, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(cert, e))?;
    if chain.is_empty() {
        return Err(LoadError::NoCertificate(cert.to_owned()));
    }
    let key_der = match PrivateKeyDer::from_pem_file(key) {
        Ok(k) => k,
        Err(pem::Error::NoItemsFound) => return Err(LoadError::NoKey(key.to_owned())),
        Err(e) => return Err(pem_error(key, e)),
    };
    Ok((chain, key_der))
}
