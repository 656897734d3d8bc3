//! An I/O-free TLS 1.3 and TLS 1.2 server layer for servers that must not touch the heap on
//! their hot path: rustls does the handshake, and application data is sealed and opened in
//! place, in the caller's buffers, by this crate's own small record layer, with no allocation
//! per record.
//!
//! ```
//! use bufslab_tls::record::MAX_RECORD_LEN;
//! use bufslab_tls::{Config, Handshake, Received, Status};
//! # fn demo(chain: Vec<rustls::pki_types::CertificateDer<'static>>,
//! #         key: rustls::pki_types::PrivateKeyDer<'static>,
//! #         mut read: impl FnMut(&mut [u8]) -> usize,
//! #         mut send: impl FnMut(&[u8])) -> Result<(), bufslab_tls::Error> {
//! let config = Config::with_single_cert(chain, key)?; // one per server
//!
//! // Per connection: an incoming and an outgoing buffer of at least MAX_RECORD_LEN each.
//! let mut rx = vec![0u8; 2 * MAX_RECORD_LEN];
//! let mut filled = 0;
//! let mut tx = vec![0u8; 2 * MAX_RECORD_LEN];
//! let mut handshake = Handshake::new(&config)?;
//! loop {
//!     let progress = handshake.advance(&mut rx[..filled], &mut tx);
//!     send(&tx[..progress.written]); // before anything else, even on failure (an alert)
//!     rx.copy_within(progress.consumed..filled, 0);
//!     filled -= progress.consumed;
//!     match progress.status? {
//!         Status::Done => break,
//!         Status::NeedInput => filled += read(&mut rx[filled..]),
//!         Status::FlushOutput => {}
//!         _ => unreachable!(),
//!     }
//! }
//! let mut conn = handshake.into_connection()?;
//! assert_eq!(conn.alpn_protocol(), Some(&b"http/1.1"[..]));
//!
//! // Receiving: whole records are opened where they lie (here, already in `rx`).
//! while let Some(len) = conn.next_record_len(&rx[..filled])? {
//!     if len > filled {
//!         break; // read more
//!     }
//!     match conn.open_in_place(&mut rx[..len])? {
//!         Received::Data(range) => { /* the request bytes are rx[range] */ }
//!         Received::Closed => { /* the client sends no more */ }
//!         _ => {}
//!     }
//!     rx.copy_within(len..filled, 0);
//!     filled -= len;
//! }
//!
//! // Sending: the response is written at `plaintext_start()` (after the 5-byte header, and
//! // in TLS 1.2 with AES-GCM the 8-byte explicit nonce), sealed where it lies.
//! let n = conn.write_control(&mut tx)?; // a KeyUpdate, if one is due
//! send(&tx[..n]);
//! let body = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
//! let start = conn.plaintext_start();
//! tx[start..start + body.len()].copy_from_slice(body);
//! let n = conn.seal_in_place(&mut tx, body.len(), 0)?;
//! assert_eq!(n, conn.sealed_len(body.len(), 0));
//! send(&tx[..n]);
//! let n = conn.write_close_notify(&mut tx)?;
//! send(&tx[..n]);
//! # Ok(())
//! # }
//! ```
//!
//! # Design
//!
//! **The split.** rustls 0.23's unbuffered API copies every received application-data record
//! into a new `Vec` and builds every record it sends in another. This crate keeps rustls for
//! what it is good at, the handshake, and takes over once it is done, as kTLS and h2o with
//! picotls do: [`Handshake`] drives rustls's `UnbufferedServerConnection` over the caller's
//! buffers, and when rustls reports the handshake complete, [`Handshake::into_connection`]
//! calls rustls's `dangerous_into_kernel_connection`, which hands over the traffic keys and
//! IVs of both directions with their sequence numbers (`ExtractedSecrets`) and a
//! `KernelConnection` that keeps the key schedule. From then on [`Connection`] seals and opens
//! records itself ([`record::Sealer`], [`record::Opener`], on the AEADs of the crypto library
//! rustls uses: `ring`, or AWS-LC with the `aws-lc-rs` feature), and asks the
//! `KernelConnection` for the next key at each `KeyUpdate`: no key derivation here.
//!
//! **Nothing is lost at the switch.** rustls is shown one whole record at a time, never the
//! bytes past the record it works on. So the client's first request, which usually arrives in
//! the same read as its `Finished`, is never decrypted into rustls's own buffers (where the
//! kernel connection would not give it back): it stays in the caller's buffer for the record
//! layer. rustls's `NewSessionTicket`s, written as the handshake completes, are written out
//! before [`Status::Done`] (rustls refuses the switch while it has bytes to send).
//!
//! **In place.** A record to send is laid out by the caller in one buffer:
//! `[5 bytes header room][plaintext][1 type byte + padding + 16 tag bytes]`;
//! [`Connection::seal_in_place`] writes the header, the inner type, the padding and the tag
//! around the plaintext and encrypts it where it lies. A received record is opened where it
//! lies: [`Connection::open_in_place`] returns the range of the plaintext inside it.
//!
//! **Nonces and sequence numbers.** Each direction has its own key, IV and 64-bit sequence
//! number; a record's nonce is the IV XORed with the sequence number (RFC 8446 §5.3). One
//! function makes every nonce and advances the number in the same step, and refuses at the
//! limit, so no path seals or opens two records under one nonce.
//!
//! **TLS 1.2.** The same record layer with TLS 1.2's AEAD records ([`record::Version`]): no
//! inner type and no padding, an 8-byte explicit nonce for AES-GCM, additional data
//! `seq || type || version || length`. There is no `KeyUpdate`: a key at its record limit ends
//! the connection ([`Connection::keys_exhausted`]), and a renegotiation (a `ClientHello` after
//! the handshake) is refused with a `no_renegotiation` warning, then a second one with
//! `unexpected_message`, as rustls does. [`ConfigBuilder::tls12`] switches 1.2 off.
//!
//! **Limits.** As RFC 8446 and rustls apply them: ciphertext over 2^14 + 256 bytes or
//! plaintext over 2^14 is `record_overflow`; after the handshake only the outer type
//! `application_data` with version 0x0303 is accepted (a `change_cipher_spec` is
//! `unexpected_message`); more than 32 empty records in a row, an all-zero inner plaintext,
//! an unknown inner type, an empty alert or handshake record, any handshake message other than
//! `KeyUpdate` (a `ClientHello` would be a renegotiation) are `unexpected_message`; a failed
//! tag is `bad_record_mac`. AES-GCM keys seal at most 2^24 records (the confidentiality
//! limit rustls uses): [`Connection::wants_control`] turns true two records before, and
//! [`Connection::write_control`] sends a `KeyUpdate`. Each error names its alert
//! ([`Error::alert`]), and poisons its direction: nothing is opened after a failed tag,
//! nothing sealed after a sealing failure.
//!
//! **Client certificates** are asked for only where [`ConfigBuilder::client_auth`] says so,
//! with a rustls verifier ([`client_verifier`] makes one from a CA file); the chain a client
//! presented is kept in [`Connection::peer_certificates`].
//!
//! **Allocation.** After the handshake, sealing and opening a record allocate nothing
//! (`tests/no_alloc.rs` checks it with dhat). The handshake allocates (rustls), and so does
//! each `KeyUpdate` (rustls's key schedule: two blocks).
//!
//! # Not done yet
//!
//! 0-RTT (off) and a client side. `bufslab-server` serves HTTPS on this crate (its
//! `Config::tls`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
pub mod handshake;
mod load;
mod provider;
pub mod record;

pub use error::{AlertDescription, Error};
pub use handshake::{Config, ConfigBuilder, Connection, Handshake, Progress, Received, Status};
pub use load::{client_verifier, pem_files, LoadError};
pub use provider::{crypto_provider, ticketer, CRYPTO_LIBRARY};
