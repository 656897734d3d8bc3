//! The TLS 1.3 record layer (RFC 8446 §5) and the TLS 1.2 AEAD record layer (RFC 5246 §6.2.3.3,
//! RFC 5288, RFC 7905), sealing and opening in the caller's buffer.
//!
//! # Sealing
//!
//! The caller lays out one record in one `&mut [u8]`. In TLS 1.3:
//!
//! ```text
//! [ 5 bytes header room ][ plaintext (len) ][ 1 type + padding + 16 tag room ]
//!   ^ buf[0]              ^ buf[HEADER_LEN]
//! ```
//!
//! [`Sealer::seal_in_place`] writes the header, the inner content type, the zero padding and
//! the tag around the plaintext and encrypts it where it lies; the record is
//! `buf[..sealed_len(len, padding)]`.
//!
//! In TLS 1.2 there is no inner type and no padding, and AES-GCM records carry an 8-byte
//! explicit nonce between the header and the ciphertext:
//!
//! ```text
//! [ 5 bytes header room ][ 8 explicit nonce room (AES-GCM only) ][ plaintext ][ 16 tag room ]
//!   ^ buf[0]                                    plaintext_start() ^
//! ```
//!
//! [`Sealer::plaintext_start`] and [`Sealer::sealed_len`] give the layout of either version.
//!
//! # Opening
//!
//! [`record_len`] reads the next record's length from the first bytes of a stream;
//! once the whole record is there, [`Opener::open_in_place`] decrypts it in place and
//! returns the inner content type and where the plaintext lies inside the record.
//!
//! # Nonces, sequence numbers, limits
//!
//! Each direction has its own key, static IV and 64-bit sequence number. The nonce of a record
//! is the IV with the sequence number, big-endian, XORed into its last 8 bytes (RFC 8446 §5.3);
//! one function, `take_nonce`, makes it and advances the number, so no path can reuse one.
//! TLS 1.2 uses the same nonce for sealing with ChaCha20-Poly1305 (RFC 7905) and, as rustls
//! does, for AES-GCM, whose last 8 bytes then go on the wire as the explicit nonce; an AES-GCM
//! record is opened with the 4-byte salt (the IV's first 4 bytes) and the explicit nonce the
//! peer sent. Every TLS 1.2 record's additional data is `seq || type || version || length`
//! (13 bytes), so a record opens only at its own sequence number.
//! A direction seals or opens at most `limit` records per key: the suite's confidentiality
//! limit when sending (2^24 for AES-GCM, as rustls uses; 2^64 - 1 for ChaCha20-Poly1305),
//! 2^64 - 1 when receiving. [`Sealer::key_update_due`] turns true [`CONTROL_RESERVE`] records
//! before the limit, which are kept for the `KeyUpdate` and an alert.

use core::ops::Range;

use crate::provider::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey, NONCE_LEN};

use crate::error::{AlertDescription, Error};

/// The record header: type (1), legacy version (2), length (2).
pub const HEADER_LEN: usize = 5;
/// The AEAD tag of every supported suite.
pub const TAG_LEN: usize = 16;
/// The most plaintext one record carries (2^14).
pub const MAX_PLAINTEXT_LEN: usize = 1 << 14;
/// The most ciphertext one record may carry (2^14 + 256, RFC 8446 §5.2).
pub const MAX_CIPHERTEXT_LEN: usize = MAX_PLAINTEXT_LEN + 256;
/// The longest record, header included: the receive buffer must hold at least this.
pub const MAX_RECORD_LEN: usize = HEADER_LEN + MAX_CIPHERTEXT_LEN;
/// Consecutive empty application-data records accepted before the peer is refused
/// (rustls's and BoringSSL's limit): empty records cost a decryption and give nothing.
pub const MAX_EMPTY_RECORDS: u8 = 32;
/// Records kept under the limit for control records: one `KeyUpdate`, one alert.
pub const CONTROL_RESERVE: u64 = 2;
/// TLS 1.2 AES-GCM's explicit nonce, sent before the ciphertext of each record.
pub const EXPLICIT_NONCE_LEN: usize = 8;
/// Room for a sealed alert record of either version: header, explicit nonce (TLS 1.2 AES-GCM),
/// two bytes, tag. A TLS 1.3 alert takes 24 bytes (two bytes and the inner type).
pub const ALERT_RECORD_LEN: usize = HEADER_LEN + EXPLICIT_NONCE_LEN + 2 + TAG_LEN;
/// A sealed `KeyUpdate` record (TLS 1.3 only): header, handshake header (4), one byte, type,
/// tag.
pub const KEY_UPDATE_RECORD_LEN: usize = HEADER_LEN + 5 + 1 + TAG_LEN;
/// Room for any control record ([`ALERT_RECORD_LEN`], [`KEY_UPDATE_RECORD_LEN`]).
pub const CONTROL_RECORD_LEN: usize = if ALERT_RECORD_LEN > KEY_UPDATE_RECORD_LEN {
    ALERT_RECORD_LEN
} else {
    KEY_UPDATE_RECORD_LEN
};
/// The most a record adds to its plaintext, without padding, in either version: the header
/// and the tag, with the inner type (TLS 1.3) or the explicit nonce (TLS 1.2 AES-GCM).
pub const MAX_OVERHEAD: usize = HEADER_LEN + EXPLICIT_NONCE_LEN + TAG_LEN;

const LEGACY_VERSION: u16 = 0x0303;
/// The most inner plaintext (content, type, padding) a record may carry (RFC 8446 §5.4).
const MAX_INNER_LEN: usize = MAX_PLAINTEXT_LEN + 1;
const KEY_UPDATE: u8 = 24;

/// The length of a TLS 1.3 record whose `plaintext_len` bytes are sealed with `padding` zeros
/// ([`Sealer::sealed_len`] for either version).
pub const fn sealed_len(plaintext_len: usize, padding: usize) -> usize {
    HEADER_LEN + plaintext_len + 1 + padding + TAG_LEN
}

/// The protocol version a record layer speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Version {
    /// TLS 1.2 (RFC 5246) with an AEAD suite: no inner content type, no padding, no
    /// `KeyUpdate`; AES-GCM sends an explicit nonce.
    Tls12,
    /// TLS 1.3 (RFC 8446).
    Tls13,
}

/// The AEADs this record layer seals and opens: in TLS 1.3 the three cipher suites, in TLS 1.2
/// the ECDHE suites (ECDSA or RSA) with the same AEAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Suite {
    /// TLS_AES_128_GCM_SHA256; in TLS 1.2, TLS_ECDHE_{ECDSA,RSA}_WITH_AES_128_GCM_SHA256.
    Aes128Gcm,
    /// TLS_AES_256_GCM_SHA384; in TLS 1.2, TLS_ECDHE_{ECDSA,RSA}_WITH_AES_256_GCM_SHA384.
    Aes256Gcm,
    /// TLS_CHACHA20_POLY1305_SHA256; in TLS 1.2,
    /// TLS_ECDHE_{ECDSA,RSA}_WITH_CHACHA20_POLY1305_SHA256.
    Chacha20Poly1305,
}

impl Suite {
    fn algorithm(self) -> &'static aead::Algorithm {
        match self {
            Self::Aes128Gcm => &aead::AES_128_GCM,
            Self::Aes256Gcm => &aead::AES_256_GCM,
            Self::Chacha20Poly1305 => &aead::CHACHA20_POLY1305,
        }
    }

    /// The AEAD of a rustls cipher suite of either version, if it is one of these.
    pub fn of(suite: rustls::CipherSuite) -> Option<Suite> {
        use rustls::CipherSuite as C;
        match suite {
            C::TLS13_AES_128_GCM_SHA256
            | C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            | C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => Some(Suite::Aes128Gcm),
            C::TLS13_AES_256_GCM_SHA384
            | C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            | C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => Some(Suite::Aes256Gcm),
            C::TLS13_CHACHA20_POLY1305_SHA256
            | C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
            | C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => Some(Suite::Chacha20Poly1305),
            _ => None,
        }
    }

    /// The bytes of explicit nonce a TLS 1.2 record of this suite carries (8 for AES-GCM).
    pub fn explicit_nonce_len(self, version: Version) -> usize {
        match (version, self) {
            (Version::Tls12, Self::Aes128Gcm | Self::Aes256Gcm) => EXPLICIT_NONCE_LEN,
            _ => 0,
        }
    }

    /// rustls's name for the TLS 1.3 suite.
    pub fn rustls(self) -> rustls::CipherSuite {
        match self {
            Suite::Aes128Gcm => rustls::CipherSuite::TLS13_AES_128_GCM_SHA256,
            Suite::Aes256Gcm => rustls::CipherSuite::TLS13_AES_256_GCM_SHA384,
            Suite::Chacha20Poly1305 => rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        }
    }

    /// The key length in bytes.
    pub fn key_len(self) -> usize {
        self.algorithm().key_len()
    }

    /// How many records one key may seal: the confidentiality limit rustls applies
    /// (2^24 for AES-GCM after RFC 8446 §5.5 and the AEAD limits draft, unbounded for
    /// ChaCha20-Poly1305 but for the sequence number itself).
    pub fn confidentiality_limit(self) -> u64 {
        match self {
            Self::Aes128Gcm | Self::Aes256Gcm => 1 << 24,
            Self::Chacha20Poly1305 => u64::MAX,
        }
    }

    /// The IANA name of the TLS 1.3 suite.
    pub fn name(self) -> &'static str {
        match self {
            Self::Aes128Gcm => "TLS_AES_128_GCM_SHA256",
            Self::Aes256Gcm => "TLS_AES_256_GCM_SHA384",
            Self::Chacha20Poly1305 => "TLS_CHACHA20_POLY1305_SHA256",
        }
    }
}

/// The content type of a record's inner plaintext.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentType {
    /// `alert` (21).
    Alert,
    /// `handshake` (22): after the handshake, only `KeyUpdate` is accepted (TLS 1.3), or a
    /// `ClientHello` refused as a renegotiation (TLS 1.2).
    Handshake,
    /// `application_data` (23).
    ApplicationData,
}

impl ContentType {
    const fn code(self) -> u8 {
        match self {
            Self::Alert => 21,
            Self::Handshake => 22,
            Self::ApplicationData => 23,
        }
    }
}

/// The one place a nonce is made and a sequence number advanced (RFC 8446 §5.3).
///
/// Refuses once `*seq` reaches `limit`; otherwise returns the nonce of `*seq` and moves
/// `*seq` on, so the same number can never be handed out twice by this key.
fn take_nonce(iv: &[u8; NONCE_LEN], seq: &mut u64, limit: u64) -> Result<Nonce, Error> {
    if *seq >= limit {
        return Err(Error::SequenceExhausted);
    }
    let mut nonce = *iv;
    for (n, s) in nonce[NONCE_LEN - 8..].iter_mut().zip(seq.to_be_bytes()) {
        *n ^= s;
    }
    // `*seq < limit <= u64::MAX`: no overflow.
    *seq += 1;
    Ok(Nonce::assume_unique_for_key(nonce))
}

fn make_key(suite: Suite, key: &[u8]) -> Result<LessSafeKey, Error> {
    UnboundKey::new(suite.algorithm(), key)
        .map(LessSafeKey::new)
        .map_err(|_| Error::BadKey)
}

fn header(typ: ContentType, outer_len: usize) -> [u8; HEADER_LEN] {
    let [v0, v1] = LEGACY_VERSION.to_be_bytes();
    // Callers bound `outer_len` by MAX_CIPHERTEXT_LEN, under 2^16.
    let [l0, l1] = (outer_len as u16).to_be_bytes();
    [typ.code(), v0, v1, l0, l1]
}

/// A TLS 1.2 record's additional data: `seq || type || version || plaintext length`
/// (RFC 5246 §6.2.3.3).
fn tls12_aad(seq: u64, typ: u8, plaintext_len: usize) -> [u8; 13] {
    let mut aad = [0u8; 13];
    aad[..8].copy_from_slice(&seq.to_be_bytes());
    aad[8] = typ;
    aad[9..11].copy_from_slice(&LEGACY_VERSION.to_be_bytes());
    // Callers bound `plaintext_len` by MAX_CIPHERTEXT_LEN, under 2^16.
    aad[11..].copy_from_slice(&(plaintext_len as u16).to_be_bytes());
    aad
}

/// The length of the record that starts `buf`, header included, once its header is there.
///
/// `Ok(None)`: fewer than [`HEADER_LEN`] bytes, read more. `Ok(Some(n))`: the record is
/// `n` bytes long (`n` may be more than `buf.len()`: read until it is all there).
/// `Err(RecordOverflow)`: the header announces more than [`MAX_CIPHERTEXT_LEN`]; the peer
/// is to be sent `record_overflow`. The type and version are checked when the record is
/// opened, so a stream's records are delimited the same way whatever they hold.
pub fn record_len(buf: &[u8]) -> Result<Option<usize>, Error> {
    let Some(&[_, _, _, l0, l1]) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    let len = usize::from(u16::from_be_bytes([l0, l1]));
    if len > MAX_CIPHERTEXT_LEN {
        return Err(Error::RecordOverflow);
    }
    Ok(Some(HEADER_LEN + len))
}

/// After the handshake every record has version 0x0303 and is `application_data` in TLS 1.3
/// (the real type is inside), `application_data`, `alert` or `handshake` in TLS 1.2 (a
/// `change_cipher_spec` is unexpected once the keys are in use).
fn check_header(version: Version, typ: u8, v0: u8, v1: u8) -> Result<(), Error> {
    let allowed = match version {
        Version::Tls13 => typ == ContentType::ApplicationData.code(),
        Version::Tls12 => content_type(typ).is_some(),
    };
    if !allowed {
        return Err(Error::UnexpectedRecordType(typ));
    }
    let version = u16::from_be_bytes([v0, v1]);
    if version != LEGACY_VERSION {
        return Err(Error::BadRecordVersion(version));
    }
    Ok(())
}

fn content_type(code: u8) -> Option<ContentType> {
    match code {
        21 => Some(ContentType::Alert),
        22 => Some(ContentType::Handshake),
        23 => Some(ContentType::ApplicationData),
        _ => None,
    }
}

/// What the two halves share: one direction's version, traffic key, static IV, sequence
/// number and the error that poisoned it. Nonces come only from [`Direction::next_nonce`].
struct Direction {
    version: Version,
    key: LessSafeKey,
    iv: [u8; NONCE_LEN],
    seq: u64,
    suite: Suite,
    failed: Option<Error>,
}

impl Direction {
    fn new(
        version: Version,
        suite: Suite,
        key: &[u8],
        iv: [u8; NONCE_LEN],
        seq: u64,
    ) -> Result<Self, Error> {
        Ok(Self {
            version,
            key: make_key(suite, key)?,
            iv,
            seq,
            suite,
            failed: None,
        })
    }

    /// The nonce of the next record and its sequence number (TLS 1.2's additional data).
    fn next_nonce(&mut self, limit: u64) -> Result<(Nonce, u64), Error> {
        let seq = self.seq;
        take_nonce(&self.iv, &mut self.seq, limit).map(|nonce| (nonce, seq))
    }

    /// Where the plaintext starts in a record: after the header and any explicit nonce.
    fn plaintext_start(&self) -> usize {
        HEADER_LEN + self.suite.explicit_nonce_len(self.version)
    }

    /// Installs the next key; the caller poisons itself on an error, each half by its own rule.
    fn rekey(&mut self, key: &[u8], iv: [u8; NONCE_LEN]) -> Result<(), Error> {
        self.key = make_key(self.suite, key)?;
        self.iv = iv;
        self.seq = 0;
        Ok(())
    }

    fn debug<'a, 'b>(
        &self,
        f: &'a mut core::fmt::Formatter<'b>,
        name: &str,
    ) -> core::fmt::DebugStruct<'a, 'b> {
        // Never the key or the IV.
        let mut d = f.debug_struct(name);
        d.field("version", &self.version)
            .field("suite", &self.suite)
            .field("seq", &self.seq)
            .field("failed", &self.failed);
        d
    }
}

/// The sending half: seals records in place with one traffic key.
pub struct Sealer {
    dir: Direction,
    limit: u64,
}

impl core::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.dir
            .debug(f, "Sealer")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Sealer {
    /// A TLS 1.3 sealer for `suite` with this traffic key and IV, whose next record has
    /// sequence number `seq` (rustls hands over the number it reached during the handshake).
    pub fn new(suite: Suite, key: &[u8], iv: [u8; NONCE_LEN], seq: u64) -> Result<Self, Error> {
        Self::with_version(Version::Tls13, suite, key, iv, seq)
    }

    /// A sealer of `version`: [`Sealer::new`] for TLS 1.3; for TLS 1.2 `iv` is the 12 bytes
    /// rustls hands over (for AES-GCM, the 4-byte salt and 8 bytes that the sequence number
    /// is XORed into to make each record's explicit nonce).
    pub fn with_version(
        version: Version,
        suite: Suite,
        key: &[u8],
        iv: [u8; NONCE_LEN],
        seq: u64,
    ) -> Result<Self, Error> {
        Ok(Self {
            dir: Direction::new(version, suite, key, iv, seq)?,
            limit: suite.confidentiality_limit(),
        })
    }

    /// Lowers the number of records one key may seal (tests reach the limit this way). Never
    /// raises it above the suite's confidentiality limit, nor under [`CONTROL_RESERVE`].
    pub fn set_record_limit(&mut self, limit: u64) {
        self.limit = limit
            .min(self.dir.suite.confidentiality_limit())
            .max(CONTROL_RESERVE);
    }

    /// The suite.
    pub fn suite(&self) -> Suite {
        self.dir.suite
    }

    /// The protocol version.
    pub fn version(&self) -> Version {
        self.dir.version
    }

    /// Where the plaintext goes in the buffer given to [`Sealer::seal_in_place`]:
    /// [`HEADER_LEN`], or 13 for TLS 1.2 AES-GCM (the explicit nonce comes first).
    pub fn plaintext_start(&self) -> usize {
        self.dir.plaintext_start()
    }

    /// The length of the record that `plaintext_len` bytes with `padding` zeros seal into
    /// (TLS 1.2 has no padding: it must be 0).
    pub fn sealed_len(&self, plaintext_len: usize, padding: usize) -> usize {
        match self.dir.version {
            Version::Tls13 => sealed_len(plaintext_len, padding),
            Version::Tls12 => self.plaintext_start() + plaintext_len + TAG_LEN,
        }
    }

    /// The sequence number of the next record.
    pub fn sequence(&self) -> u64 {
        self.dir.seq
    }

    /// Application-data records this key may still seal before [`Sealer::key_update_due`]:
    /// under TLS 1.2 the connection's last ones, which a server can spend on one last
    /// response (with `Connection: close`) instead of cutting one short.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_tls::record::{Sealer, Suite};
    ///
    /// let mut s = Sealer::new(Suite::Aes128Gcm, &[7; 16], [9; 12], 0)?;
    /// s.set_record_limit(5);
    /// assert_eq!(s.data_records_left(), 3); // two are kept for control
    /// # Ok::<(), bufslab_tls::Error>(())
    /// ```
    pub fn data_records_left(&self) -> u64 {
        (self.limit - CONTROL_RESERVE).saturating_sub(self.dir.seq)
    }

    /// Whether application data must wait: only the records kept for control are left under
    /// this key. In TLS 1.3 a `KeyUpdate` (and new keys, [`Sealer::rekey`]) lets data go on; in
    /// TLS 1.2, which has no `KeyUpdate`, the connection is to be closed.
    pub fn key_update_due(&self) -> bool {
        self.data_records_left() == 0
    }

    /// The error that poisoned this direction, if one did.
    pub fn failure(&self) -> Option<&Error> {
        self.dir.failed.as_ref()
    }

    /// Seals the plaintext at `buf[self.plaintext_start()..]` (`buf[HEADER_LEN..]` in TLS 1.3),
    /// `plaintext_len` bytes, as one application-data record with `padding` zero bytes, in
    /// place; returns the record's length ([`Sealer::sealed_len`]), the record being
    /// `buf[..len]`. TLS 1.2 has no padding: any other than 0 is [`Error::PaddingUnsupported`].
    ///
    /// Refuses (changing nothing) once [`Sealer::key_update_due`]: with
    /// [`Error::KeyUpdateNeeded`] in TLS 1.3, [`Error::KeysExhausted`] in TLS 1.2; any other
    /// error poisons the sealer.
    pub fn seal_in_place(
        &mut self,
        buf: &mut [u8],
        plaintext_len: usize,
        padding: usize,
    ) -> Result<usize, Error> {
        if self.dir.failed.is_none() && self.key_update_due() {
            return Err(match self.dir.version {
                Version::Tls13 => Error::KeyUpdateNeeded,
                Version::Tls12 => Error::KeysExhausted,
            });
        }
        self.seal_as(buf, ContentType::ApplicationData, plaintext_len, padding)
    }

    /// Seals an alert record into `out` (at least [`ALERT_RECORD_LEN`] bytes); returns its
    /// length. `close_notify`, `user_canceled` and `no_renegotiation` go as warnings, every
    /// other as fatal.
    pub fn seal_alert(&mut self, out: &mut [u8], alert: AlertDescription) -> Result<usize, Error> {
        let level = match alert {
            AlertDescription::CloseNotify
            | AlertDescription::UserCanceled
            | AlertDescription::NoRenegotiation => 1,
            _ => 2,
        };
        self.seal_message(out, ContentType::Alert, &[level, alert.code()])
    }

    /// Seals a TLS 1.3 `KeyUpdate` into `out` (at least [`KEY_UPDATE_RECORD_LEN`] bytes) under
    /// the current key; returns its length. The caller then switches to the next key with
    /// [`Sealer::rekey`] before sealing anything else. `request_peer` asks the peer to update
    /// its own sending key. TLS 1.2 has none: [`Error::KeysExhausted`], a refusal.
    pub fn seal_key_update(&mut self, out: &mut [u8], request_peer: bool) -> Result<usize, Error> {
        if self.dir.version == Version::Tls12 {
            return Err(Error::KeysExhausted);
        }
        let message = [KEY_UPDATE, 0, 0, 1, u8::from(request_peer)];
        self.seal_message(out, ContentType::Handshake, &message)
    }

    /// Switches to the next traffic key (after a `KeyUpdate`): sequence numbers start again
    /// at 0. A poisoned sealer stays poisoned.
    pub fn rekey(&mut self, key: &[u8], iv: [u8; NONCE_LEN]) -> Result<(), Error> {
        self.dir.rekey(key, iv).map_err(|e| self.fail(e))
    }

    /// Seals a copy of `message` as one record of type `typ` into `out` (at least
    /// [`Sealer::sealed_len`]`(message.len(), 0)` bytes); returns its length. For control
    /// records [`Sealer::seal_alert`] and [`Sealer::seal_key_update`] are the ones a server
    /// sends; this is the record layer's general form (a test's client sends a TLS 1.2
    /// renegotiation `ClientHello` with it). No limit applies but the sequence number's: the
    /// caller decides what a message may be.
    pub fn seal_message(
        &mut self,
        out: &mut [u8],
        typ: ContentType,
        message: &[u8],
    ) -> Result<usize, Error> {
        let start = self.plaintext_start();
        match out.get_mut(start..start + message.len()) {
            Some(room) => room.copy_from_slice(message),
            None => {
                let need = self.sealed_len(message.len(), 0);
                return Err(self.fail(Error::BufferTooSmall(need)));
            }
        }
        self.seal_as(out, typ, message.len(), 0)
    }

    fn fail(&mut self, e: Error) -> Error {
        self.dir.failed = Some(e.clone());
        e
    }

    fn seal_as(
        &mut self,
        buf: &mut [u8],
        typ: ContentType,
        len: usize,
        padding: usize,
    ) -> Result<usize, Error> {
        if let Some(e) = &self.dir.failed {
            return Err(e.clone());
        }
        let result = match self.dir.version {
            Version::Tls13 => self.seal_tls13(buf, typ, len, padding),
            Version::Tls12 => self.seal_tls12(buf, typ, len, padding),
        };
        result.map_err(|e| self.fail(e))
    }

    fn seal_tls13(
        &mut self,
        buf: &mut [u8],
        typ: ContentType,
        len: usize,
        padding: usize,
    ) -> Result<usize, Error> {
        let inner_len = match len.checked_add(1).and_then(|n| n.checked_add(padding)) {
            Some(n) if n <= MAX_INNER_LEN => n,
            _ => return Err(Error::PlaintextTooLarge),
        };
        let record_len = HEADER_LEN + inner_len + TAG_LEN;
        let Some(record) = buf.get_mut(..record_len) else {
            return Err(Error::BufferTooSmall(record_len));
        };
        let (nonce, _) = self.dir.next_nonce(self.limit)?;
        let hdr = header(ContentType::ApplicationData, inner_len + TAG_LEN);
        let (head, rest) = record.split_at_mut(HEADER_LEN);
        head.copy_from_slice(&hdr);
        let (inner, tag_room) = rest.split_at_mut(inner_len);
        inner[len] = typ.code();
        inner[len + 1..].fill(0);
        let tag = self
            .dir
            .key
            .seal_in_place_separate_tag(nonce, Aad::from(hdr), inner)
            // The AEAD refuses only inputs over its per-call maximum, far above a record.
            .map_err(|_| Error::Internal("AEAD seal refused"))?;
        tag_room.copy_from_slice(tag.as_ref());
        Ok(record_len)
    }

    fn seal_tls12(
        &mut self,
        buf: &mut [u8],
        typ: ContentType,
        len: usize,
        padding: usize,
    ) -> Result<usize, Error> {
        if padding != 0 {
            return Err(Error::PaddingUnsupported);
        }
        if len > MAX_PLAINTEXT_LEN {
            return Err(Error::PlaintextTooLarge);
        }
        let start = self.plaintext_start();
        let record_len = start + len + TAG_LEN;
        let Some(record) = buf.get_mut(..record_len) else {
            return Err(Error::BufferTooSmall(record_len));
        };
        let (nonce, seq) = self.dir.next_nonce(self.limit)?;
        let (head, rest) = record.split_at_mut(start);
        head[..HEADER_LEN].copy_from_slice(&header(typ, record_len - HEADER_LEN));
        // AES-GCM's explicit nonce: the nonce's last 8 bytes, as rustls sends it.
        head[HEADER_LEN..].copy_from_slice(&nonce.as_ref()[NONCE_LEN - (start - HEADER_LEN)..]);
        let (plaintext, tag_room) = rest.split_at_mut(len);
        let aad = Aad::from(tls12_aad(seq, typ.code(), len));
        let tag = self
            .dir
            .key
            .seal_in_place_separate_tag(nonce, aad, plaintext)
            // The AEAD refuses only inputs over its per-call maximum, far above a record.
            .map_err(|_| Error::Internal("AEAD seal refused"))?;
        tag_room.copy_from_slice(tag.as_ref());
        Ok(record_len)
    }
}

/// What [`Opener::open_in_place`] found in a record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Opened {
    /// The content type: the inner one in TLS 1.3, the record's in TLS 1.2.
    pub content_type: ContentType,
    /// Where the plaintext lies inside the record passed in (padding and type stripped).
    pub plaintext: Range<usize>,
}

/// The receiving half: opens records in place with one traffic key.
pub struct Opener {
    dir: Direction,
    empty_run: u8,
}

impl core::fmt::Debug for Opener {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.dir.debug(f, "Opener").finish_non_exhaustive()
    }
}

impl Opener {
    /// A TLS 1.3 opener for `suite` with this traffic key and IV, whose next record has
    /// sequence number `seq`.
    pub fn new(suite: Suite, key: &[u8], iv: [u8; NONCE_LEN], seq: u64) -> Result<Self, Error> {
        Self::with_version(Version::Tls13, suite, key, iv, seq)
    }

    /// An opener of `version` (see [`Sealer::with_version`] for TLS 1.2's `iv`).
    pub fn with_version(
        version: Version,
        suite: Suite,
        key: &[u8],
        iv: [u8; NONCE_LEN],
        seq: u64,
    ) -> Result<Self, Error> {
        Ok(Self {
            dir: Direction::new(version, suite, key, iv, seq)?,
            empty_run: 0,
        })
    }

    /// The suite.
    pub fn suite(&self) -> Suite {
        self.dir.suite
    }

    /// The protocol version.
    pub fn version(&self) -> Version {
        self.dir.version
    }

    /// The sequence number of the next record.
    pub fn sequence(&self) -> u64 {
        self.dir.seq
    }

    /// The error that poisoned this direction, if one did.
    pub fn failure(&self) -> Option<&Error> {
        self.dir.failed.as_ref()
    }

    /// Switches to the peer's next traffic key (after its `KeyUpdate`); sequence numbers
    /// start again at 0. A poisoned opener stays poisoned.
    pub fn rekey(&mut self, key: &[u8], iv: [u8; NONCE_LEN]) -> Result<(), Error> {
        self.dir.rekey(key, iv).map_err(|e| self.fail(e))
    }

    /// Poisons the opener with `e` (for errors found above the record layer, so that
    /// nothing more is opened) and returns it.
    pub fn fail(&mut self, e: Error) -> Error {
        if self.dir.failed.is_none() {
            self.dir.failed = Some(e.clone());
        }
        e
    }

    /// [`record_len`], with the header's type and version checked as soon as they are in
    /// (plain HTTP sent to a TLS port fails on its first five bytes, not after 8 KiB more);
    /// an error poisons the opener.
    pub fn next_record_len(&mut self, buf: &[u8]) -> Result<Option<usize>, Error> {
        if let Some(e) = &self.dir.failed {
            return Err(e.clone());
        }
        if let Some(&[typ, v0, v1, _, _]) = buf.get(..HEADER_LEN) {
            if let Err(e) = check_header(self.dir.version, typ, v0, v1) {
                return Err(self.fail(e));
            }
        }
        record_len(buf).map_err(|e| self.fail(e))
    }

    /// Opens one whole record (`record` is exactly the record: header and ciphertext) in
    /// place. On success the plaintext is `record[opened.plaintext]`; on error nothing is
    /// returned, the opener is poisoned, and [`Error::alert`] is the alert to send.
    pub fn open_in_place(&mut self, record: &mut [u8]) -> Result<Opened, Error> {
        if let Some(e) = &self.dir.failed {
            return Err(e.clone());
        }
        self.open(record).map_err(|e| self.fail(e))
    }

    fn open(&mut self, record: &mut [u8]) -> Result<Opened, Error> {
        let Some(&[typ, v0, v1, l0, l1]) = record.get(..HEADER_LEN) else {
            return Err(Error::Decode);
        };
        let hdr = [typ, v0, v1, l0, l1];
        check_header(self.dir.version, typ, v0, v1)?;
        let len = usize::from(u16::from_be_bytes([l0, l1]));
        if len > MAX_CIPHERTEXT_LEN {
            return Err(Error::RecordOverflow);
        }
        if record.len() != HEADER_LEN + len {
            // The caller cut the stream elsewhere than `record_len` says.
            return Err(Error::Decode);
        }
        let start = self.dir.plaintext_start();
        if len < start - HEADER_LEN + TAG_LEN {
            return Err(Error::BadRecordMac);
        }
        let (nonce, seq) = self.dir.next_nonce(u64::MAX)?;
        let (content_type, plain_len) = match self.dir.version {
            Version::Tls13 => {
                let plain = self
                    .dir
                    .key
                    .open_in_place(nonce, Aad::from(hdr), &mut record[HEADER_LEN..])
                    .map_err(|_| Error::BadRecordMac)?;
                let Some(type_at) = plain.iter().rposition(|&b| b != 0) else {
                    return Err(Error::MissingContentType);
                };
                if type_at > MAX_PLAINTEXT_LEN {
                    return Err(Error::RecordOverflow);
                }
                match content_type(plain[type_at]) {
                    Some(t) => (t, type_at),
                    None => return Err(Error::UnexpectedContentType(plain[type_at])),
                }
            }
            Version::Tls12 => {
                let nonce = if start > HEADER_LEN {
                    // AES-GCM: the salt and the explicit nonce the peer sent.
                    let mut n = [0u8; NONCE_LEN];
                    n[..4].copy_from_slice(&self.dir.iv[..4]);
                    n[4..].copy_from_slice(&record[HEADER_LEN..start]);
                    Nonce::assume_unique_for_key(n)
                } else {
                    nonce
                };
                let aad = Aad::from(tls12_aad(seq, typ, len - (start - HEADER_LEN) - TAG_LEN));
                let plain = self
                    .dir
                    .key
                    .open_in_place(nonce, aad, &mut record[start..])
                    .map_err(|_| Error::BadRecordMac)?;
                if plain.len() > MAX_PLAINTEXT_LEN {
                    return Err(Error::RecordOverflow);
                }
                match content_type(typ) {
                    Some(t) => (t, plain.len()),
                    None => return Err(Error::UnexpectedRecordType(typ)),
                }
            }
        };
        if plain_len == 0 {
            if content_type != ContentType::ApplicationData {
                return Err(Error::EmptyControlRecord);
            }
            if self.empty_run >= MAX_EMPTY_RECORDS {
                return Err(Error::TooManyEmptyRecords);
            }
            self.empty_run += 1;
        } else {
            self.empty_run = 0;
        }
        let start = match self.dir.version {
            Version::Tls13 => HEADER_LEN,
            Version::Tls12 => start,
        };
        Ok(Opened {
            content_type,
            plaintext: start..start + plain_len,
        })
    }
}

/// A received alert that does not end the connection with an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AlertEvent {
    /// `close_notify`: the peer sends no more; we may still send (a half-close).
    CloseNotify,
    /// `user_canceled` as a warning: nothing to do (a `close_notify` is to follow).
    UserCanceled,
    /// TLS 1.2: another warning, which TLS 1.2 lets a peer send and rustls ignores (up to
    /// [`MAX_WARNING_ALERTS`] of them).
    Warning(AlertDescription),
}

/// TLS 1.2: warning alerts (other than `close_notify`; `user_canceled` among them) accepted on
/// one connection, as rustls accepts them; one more is refused.
pub const MAX_WARNING_ALERTS: u8 = 4;

/// Reads the plaintext of an alert record (RFC 8446 §6). A fatal alert, a warning other
/// than `close_notify` and `user_canceled` (`decode_error` in TLS 1.3), a bad level or a
/// malformed alert is an error.
pub fn parse_alert(plaintext: &[u8]) -> Result<AlertEvent, Error> {
    match parse_alert_tls12(plaintext)? {
        AlertEvent::Warning(other) => Err(Error::WarningAlert(other)),
        event => Ok(event),
    }
}

/// Reads the plaintext of a TLS 1.2 alert record (RFC 5246 §7.2): as [`parse_alert`], but a
/// warning is [`AlertEvent::Warning`], not an error.
pub fn parse_alert_tls12(plaintext: &[u8]) -> Result<AlertEvent, Error> {
    let &[level, code] = plaintext else {
        // rustls, as TLS 1.3 requires (RFC 8446 §5.1), takes an alert only whole and alone
        // in its record.
        return Err(Error::Decode);
    };
    let description = AlertDescription::from_code(code);
    match (level, description) {
        (1 | 2, AlertDescription::CloseNotify) => Ok(AlertEvent::CloseNotify),
        (1, AlertDescription::UserCanceled) => Ok(AlertEvent::UserCanceled),
        (1, other) => Ok(AlertEvent::Warning(other)),
        (2, other) => Err(Error::PeerAlert(other)),
        (level, _) => Err(Error::BadAlertLevel(level)),
    }
}

/// A `KeyUpdate` received from the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyUpdate {
    /// `update_not_requested`: only the peer's key changes.
    NotRequested,
    /// `update_requested`: we must send a `KeyUpdate` of our own before our next
    /// application data (RFC 8446 §4.6.3).
    Requested,
}

/// Reads the plaintext of a handshake record received after the handshake: it must be one
/// whole `KeyUpdate` and nothing else (a key change ends its record, RFC 8446 §5.1). Any
/// other handshake message is `unexpected_message` (a `ClientHello` is a renegotiation
/// attempt, which TLS 1.3 does not have).
pub fn parse_handshake(plaintext: &[u8]) -> Result<KeyUpdate, Error> {
    let Some(&[typ, l0, l1, l2]) = plaintext.get(..4) else {
        return match plaintext.first() {
            Some(&KEY_UPDATE) => Err(Error::KeyUpdateNotAligned),
            Some(&other) => Err(Error::UnexpectedHandshake(other)),
            None => Err(Error::EmptyControlRecord),
        };
    };
    if typ != KEY_UPDATE {
        return Err(Error::UnexpectedHandshake(typ));
    }
    let body_len = u32::from_be_bytes([0, l0, l1, l2]);
    if body_len != 1 {
        return Err(Error::Decode);
    }
    match plaintext[4..] {
        [0] => Ok(KeyUpdate::NotRequested),
        [1] => Ok(KeyUpdate::Requested),
        [_] => Err(Error::BadKeyUpdate),
        [] => Err(Error::KeyUpdateNotAligned),
        [_, _, ..] => Err(Error::KeyUpdateNotAligned),
    }
}

/// Joins a `KeyUpdate` that the peer split across handshake records, as RFC 8446 §5.1 allows
/// (and no common implementation does): the at most 4 bytes of an unfinished message wait here
/// for the rest. A record that completes the message must end with it, as a key change must.
#[derive(Clone, Debug, Default)]
pub struct HandshakeJoiner {
    held: [u8; 4],
    len: u8,
}

impl HandshakeJoiner {
    /// Whether part of a message is waiting: until it is whole, no other record type may
    /// come (RFC 8446 §5.1).
    pub fn is_pending(&self) -> bool {
        self.len > 0
    }

    /// Takes the plaintext of one handshake record: `Ok(None)` while the message is not whole,
    /// the `KeyUpdate` once it is. Errors as [`parse_handshake`] gives them for the same
    /// message in one record; the bytes held are dropped on an error.
    pub fn push(&mut self, plaintext: &[u8]) -> Result<Option<KeyUpdate>, Error> {
        const WHOLE: usize = 5;
        let held = usize::from(self.len);
        let total = held + plaintext.len();
        let mut message = [0u8; WHOLE];
        let n = total.min(WHOLE);
        message[..held].copy_from_slice(&self.held[..held]);
        message[held..n].copy_from_slice(&plaintext[..n - held]);
        self.len = 0;
        if total >= WHOLE {
            let update = parse_handshake(&message)?;
            return if total > WHOLE {
                Err(Error::KeyUpdateNotAligned)
            } else {
                Ok(Some(update))
            };
        }
        match message[..n] {
            [] => return Err(Error::EmptyControlRecord),
            [typ, ..] if typ != KEY_UPDATE => return Err(Error::UnexpectedHandshake(typ)),
            [_, l0, l1, l2] if u32::from_be_bytes([0, l0, l1, l2]) != 1 => {
                return Err(Error::Decode)
            }
            _ => {}
        }
        self.held[..n].copy_from_slice(&message[..n]);
        // `n < WHOLE`: fits a u8.
        self.len = n as u8;
        Ok(None)
    }
}

/// The most a handshake message may announce (rustls's limit): a renegotiation `ClientHello`
/// longer than this is `decode_error`.
pub const MAX_HANDSHAKE_MESSAGE_LEN: u32 = 0xffff;

const CLIENT_HELLO: u8 = 1;

/// TLS 1.2: follows the handshake messages a client sends after the handshake, across records,
/// without keeping them. The only one a client may send is a `ClientHello`, a renegotiation,
/// which is refused; any other is `unexpected_message`. Only the message headers are read:
/// the 4 bytes of a header split across records wait here, and the body is counted off.
#[derive(Clone, Debug, Default)]
pub struct RenegotiationGuard {
    header: [u8; 4],
    held: u8,
    body_left: u32,
}

impl RenegotiationGuard {
    /// Whether a message is unfinished: until it is whole, no other record type may come.
    pub fn is_pending(&self) -> bool {
        self.held > 0
    }

    /// Takes the plaintext of one handshake record; returns how many `ClientHello`s it
    /// completed.
    pub fn push(&mut self, mut plaintext: &[u8]) -> Result<usize, Error> {
        let mut hellos = 0;
        loop {
            if self.held == 4 {
                // `take <= body_left`, a u32.
                let take = plaintext.len().min(self.body_left as usize);
                self.body_left -= take as u32;
                plaintext = &plaintext[take..];
                if self.body_left > 0 {
                    return Ok(hellos);
                }
                self.held = 0;
                hellos += 1;
                continue;
            }
            let Some((&byte, rest)) = plaintext.split_first() else {
                return Ok(hellos);
            };
            plaintext = rest;
            self.header[usize::from(self.held)] = byte;
            self.held += 1;
            if self.held == 1 && byte != CLIENT_HELLO {
                self.held = 0;
                return Err(Error::UnexpectedHandshake(byte));
            }
            if self.held == 4 {
                let [_, l0, l1, l2] = self.header;
                self.body_left = u32::from_be_bytes([0, l0, l1, l2]);
                if self.body_left > MAX_HANDSHAKE_MESSAGE_LEN {
                    self.held = 0;
                    self.body_left = 0;
                    return Err(Error::Decode);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_is_iv_xor_sequence_and_advances() {
        let iv = [0xffu8; NONCE_LEN];
        let mut seq = 0x0102_0304_0506_0708;
        let nonce = take_nonce(&iv, &mut seq, u64::MAX).unwrap();
        assert_eq!(
            nonce.as_ref(),
            &[0xff, 0xff, 0xff, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7]
        );
        assert_eq!(seq, 0x0102_0304_0506_0709);
        let mut last = u64::MAX - 1;
        assert!(take_nonce(&iv, &mut last, u64::MAX).is_ok());
        assert_eq!(
            take_nonce(&iv, &mut last, u64::MAX).err(),
            Some(Error::SequenceExhausted)
        );
        assert_eq!(last, u64::MAX);
    }

    fn pair(suite: Suite) -> (Sealer, Opener) {
        let key = vec![7u8; suite.key_len()];
        let iv = [9u8; NONCE_LEN];
        (
            Sealer::new(suite, &key, iv, 0).unwrap(),
            Opener::new(suite, &key, iv, 0).unwrap(),
        )
    }

    #[test]
    fn seal_then_open_every_suite() {
        for suite in [Suite::Aes128Gcm, Suite::Aes256Gcm, Suite::Chacha20Poly1305] {
            let (mut s, mut o) = pair(suite);
            for (len, pad) in [(0, 0), (1, 0), (5, 3), (MAX_PLAINTEXT_LEN, 0), (100, 200)] {
                let mut buf = vec![0u8; sealed_len(len, pad)];
                buf[HEADER_LEN..HEADER_LEN + len].fill(0xab);
                let n = s.seal_in_place(&mut buf, len, pad).unwrap();
                assert_eq!(n, buf.len());
                assert_eq!(record_len(&buf).unwrap(), Some(n));
                let opened = o.open_in_place(&mut buf).unwrap();
                assert_eq!(opened.content_type, ContentType::ApplicationData);
                assert_eq!(opened.plaintext.len(), len);
                assert!(buf[opened.plaintext].iter().all(|&b| b == 0xab));
            }
        }
    }

    #[test]
    fn record_limit_reserves_control_records() {
        let (mut s, _) = pair(Suite::Aes128Gcm);
        s.set_record_limit(4);
        let mut buf = [0u8; 64];
        assert!(s.seal_in_place(&mut buf, 1, 0).is_ok());
        assert!(s.seal_in_place(&mut buf, 1, 0).is_ok());
        assert!(s.key_update_due());
        assert_eq!(s.seal_in_place(&mut buf, 1, 0), Err(Error::KeyUpdateNeeded));
        assert!(s.failure().is_none());
        assert!(s.seal_key_update(&mut buf, false).is_ok());
        assert!(s
            .seal_alert(&mut buf, AlertDescription::CloseNotify)
            .is_ok());
        assert_eq!(
            s.seal_alert(&mut buf, AlertDescription::CloseNotify),
            Err(Error::SequenceExhausted)
        );
        assert_eq!(s.rekey(&[1; 16], [2; NONCE_LEN]), Ok(()));
        // Poisoned stays poisoned, even with a new key.
        assert_eq!(
            s.seal_in_place(&mut buf, 1, 0),
            Err(Error::SequenceExhausted)
        );
    }

    #[test]
    fn next_record_len_refuses_a_bad_header_at_once() {
        let (_, mut o) = pair(Suite::Aes128Gcm);
        assert_eq!(o.next_record_len(b"GET"), Ok(None));
        assert_eq!(
            o.next_record_len(b"GET / HTTP/1.1"),
            Err(Error::UnexpectedRecordType(b'G'))
        );
        assert_eq!(
            o.next_record_len(&[23, 3, 3, 0, 20]),
            Err(Error::UnexpectedRecordType(b'G'))
        );
    }

    #[test]
    fn halves_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Sealer>();
        send_sync::<Opener>();
        send_sync::<crate::Connection>();
        send_sync::<crate::Handshake>();
    }

    #[test]
    fn joiner_takes_a_key_update_whole_or_in_pieces() {
        let whole = [24u8, 0, 0, 1, 1];
        for cuts in [
            vec![5],
            vec![1, 4],
            vec![2, 3],
            vec![4, 1],
            vec![1, 1, 1, 1, 1],
        ] {
            let mut joiner = HandshakeJoiner::default();
            let mut at = 0;
            for (i, len) in cuts.iter().enumerate() {
                let got = joiner.push(&whole[at..at + len]);
                at += len;
                if i + 1 < cuts.len() {
                    assert_eq!(got, Ok(None));
                    assert!(joiner.is_pending());
                } else {
                    assert_eq!(got, Ok(Some(KeyUpdate::Requested)), "{cuts:?}");
                    assert!(!joiner.is_pending());
                }
            }
        }
        let mut joiner = HandshakeJoiner::default();
        assert_eq!(joiner.push(&[24, 0]), Ok(None));
        assert_eq!(joiner.push(&[0, 1, 0, 9]), Err(Error::KeyUpdateNotAligned));
        assert!(!joiner.is_pending());
        assert_eq!(joiner.push(&[1, 0]), Err(Error::UnexpectedHandshake(1)));
        assert_eq!(joiner.push(&[24, 0, 0, 2]), Err(Error::Decode));
        assert_eq!(joiner.push(&[24, 0, 0]), Ok(None));
        assert_eq!(joiner.push(&[2, 0]), Err(Error::Decode));
        assert_eq!(joiner.push(&[24]), Ok(None));
        assert_eq!(joiner.push(&[0, 0, 1, 7]), Err(Error::BadKeyUpdate));
        // Whole records give what `parse_handshake` gives.
        for record in [
            &[24u8, 0, 0, 1, 0][..],
            &[24, 0, 0, 1, 0, 24],
            &[4, 0, 0, 1, 0],
        ] {
            let mut joiner = HandshakeJoiner::default();
            assert_eq!(
                joiner.push(record).map(Option::unwrap),
                parse_handshake(record)
            );
        }
    }

    #[test]
    fn parse_alerts() {
        assert_eq!(parse_alert(&[1, 0]), Ok(AlertEvent::CloseNotify));
        assert_eq!(parse_alert(&[2, 0]), Ok(AlertEvent::CloseNotify));
        assert_eq!(parse_alert(&[1, 90]), Ok(AlertEvent::UserCanceled));
        assert_eq!(
            parse_alert(&[1, 20]),
            Err(Error::WarningAlert(AlertDescription::BadRecordMac))
        );
        assert_eq!(
            parse_alert(&[2, 40]),
            Err(Error::PeerAlert(AlertDescription::HandshakeFailure))
        );
        assert_eq!(parse_alert(&[3, 0]), Err(Error::BadAlertLevel(3)));
        assert_eq!(parse_alert(&[1, 0, 1]), Err(Error::Decode));
        assert_eq!(parse_alert(&[1]), Err(Error::Decode));
    }

    #[test]
    fn parse_handshakes() {
        assert_eq!(
            parse_handshake(&[24, 0, 0, 1, 0]),
            Ok(KeyUpdate::NotRequested)
        );
        assert_eq!(parse_handshake(&[24, 0, 0, 1, 1]), Ok(KeyUpdate::Requested));
        assert_eq!(parse_handshake(&[24, 0, 0, 1, 2]), Err(Error::BadKeyUpdate));
        assert_eq!(parse_handshake(&[24, 0, 0, 2, 0, 0]), Err(Error::Decode));
        assert_eq!(
            parse_handshake(&[24, 0, 0, 1, 0, 24]),
            Err(Error::KeyUpdateNotAligned)
        );
        assert_eq!(parse_handshake(&[24, 0]), Err(Error::KeyUpdateNotAligned));
        assert_eq!(
            parse_handshake(&[1, 0, 0, 0]),
            Err(Error::UnexpectedHandshake(1))
        );
        assert_eq!(parse_handshake(&[4, 0]), Err(Error::UnexpectedHandshake(4)));
    }
}
