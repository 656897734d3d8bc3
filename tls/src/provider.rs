//! The crypto library under both halves of the layer: `ring` by default, AWS-LC (through
//! `aws-lc-rs`) with the `aws-lc-rs` feature. rustls's handshake and this crate's record layer
//! always use the same one, chosen here and nowhere else.
//!
//! Why a choice: the two give the same AEADs with the same API (`LessSafeKey`,
//! `seal_in_place_separate_tag`, `open_in_place`) but not the same speed. ring builds in
//! seconds and is the default, so that a server that never asks builds quickly; AWS-LC compiles
//! its C sources (about half a minute of two cores), and seals and opens large AES-GCM records
//! about 30 % faster
//! (`BENCHMARKS.md`, "TLS record layer"): worth it where responses are large. Cargo unifies
//! features, so where any crate of a build turns this one on, every user of this crate in it
//! gets AWS-LC; `ring` stays a dependency either way (the feature only adds).

#[cfg(feature = "aws-lc-rs")]
pub(crate) use aws_lc_rs::aead;
#[cfg(not(feature = "aws-lc-rs"))]
pub(crate) use ring::aead;

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::ProducesTickets;

/// The name of the crypto library in use: `"ring"` or `"aws-lc-rs"`.
///
/// # Examples
///
/// ```
/// assert!(["ring", "aws-lc-rs"].contains(&bufslab_tls::CRYPTO_LIBRARY));
/// ```
pub const CRYPTO_LIBRARY: &str = if cfg!(feature = "aws-lc-rs") {
    "aws-lc-rs"
} else {
    "ring"
};

/// rustls's provider on the crypto library in use ([`CRYPTO_LIBRARY`]), with its default suites
/// and key exchange groups: what [`Config`](crate::Config) builds on, for a rustls peer (a
/// client in a test, another server to compare with) that must use the same library.
///
/// # Examples
///
/// ```
/// let provider = bufslab_tls::crypto_provider();
/// assert!(!provider.cipher_suites.is_empty());
/// ```
pub fn crypto_provider() -> CryptoProvider {
    #[cfg(feature = "aws-lc-rs")]
    return rustls::crypto::aws_lc_rs::default_provider();
    #[cfg(not(feature = "aws-lc-rs"))]
    return rustls::crypto::ring::default_provider();
}

/// The rotating ticket encrypter of the crypto library in use, as [`Config`](crate::Config)
/// resumes sessions with.
///
/// # Errors
/// The crypto library's failure to make a key.
pub fn ticketer() -> Result<Arc<dyn ProducesTickets>, rustls::Error> {
    #[cfg(feature = "aws-lc-rs")]
    return rustls::crypto::aws_lc_rs::Ticketer::new();
    #[cfg(not(feature = "aws-lc-rs"))]
    return rustls::crypto::ring::Ticketer::new();
}
