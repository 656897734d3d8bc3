//! The certificates a TLS client of the harness trusts: those of a PEM file (the self-signed
//! one the scripts make with openssl).

use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::RootCertStore;

/// The certificates in the PEM file `ca`, as rustls's root store.
///
/// # Errors
/// A file that cannot be read, a certificate rustls refuses, or no certificate at all; the
/// message names the file.
pub fn root_store(ca: &Path) -> Result<RootCertStore, String> {
    let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", ca.display());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(|e| bad(&e))? {
        roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
    }
    if roots.is_empty() {
        return Err(bad(&"no certificate in the file"));
    }
    Ok(roots)
}
