//! The server's side of the opening handshake's WebSocket fields (RFC 6455 §4.2). The HTTP
//! request itself (`GET`, `Upgrade: websocket`, `Connection: Upgrade`, `Host`) is the HTTP
//! layer's to check, and `Sec-WebSocket-Protocol` selection the application's.

use crate::HandshakeError;

/// The GUID RFC 6455 §1.3 appends to the client's key.
pub const GUID: &[u8; 36] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The only `Sec-WebSocket-Version` this crate speaks; also the value to send with a 426 answer.
pub const VERSION: &[u8; 2] = b"13";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)), 28
/// ASCII bytes, computed on the stack.
///
/// The key is taken as sent (it is not decoded); check it first with [`validate_key`].
///
/// # Examples
///
/// The example of RFC 6455 §1.3:
///
/// ```
/// let accept = bufslab_ws::accept_key(b"dGhlIHNhbXBsZSBub25jZQ==");
/// assert_eq!(&accept, b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
/// ```
pub fn accept_key(key: &[u8]) -> [u8; 28] {
    let mut sha = sha1_smol::Sha1::new();
    sha.update(key);
    sha.update(GUID);
    base64_20(&sha.digest().bytes())
}

/// base64 (padded, standard alphabet) of 20 bytes: six 3-byte groups, then two bytes and `=`.
fn base64_20(digest: &[u8; 20]) -> [u8; 28] {
    let mut out = [b'='; 28];
    for (group, chars) in digest.chunks(3).zip(out.chunks_mut(4)) {
        let b = [
            group[0],
            *group.get(1).unwrap_or(&0),
            *group.get(2).unwrap_or(&0),
        ];
        let n = u32::from_be_bytes([0, b[0], b[1], b[2]]);
        // One character per 6 bits of input present; the rest stay '='.
        for (i, c) in chars.iter_mut().take(group.len() + 1).enumerate() {
            *c = ALPHABET[(n >> (18 - 6 * i) & 0x3f) as usize];
        }
    }
    out
}

/// Checks a `Sec-WebSocket-Key` value: the base64 of 16 bytes (RFC 6455 §4.1), so 22
/// characters of the base64 alphabet, the last with its unused low 4 bits zero, then `==`.
/// The value is taken as the HTTP parser gives it, without its surrounding whitespace.
///
/// # Examples
///
/// ```
/// use bufslab_ws::{validate_key, HandshakeError};
///
/// assert_eq!(validate_key(b"dGhlIHNhbXBsZSBub25jZQ=="), Ok(()));
/// assert_eq!(validate_key(b"dGhlIHNhbXBsZSBub25jZQ="), Err(HandshakeError::InvalidKey));
/// assert_eq!(validate_key(b"dGhlIHNhbXBsZSBub25jZR=="), Err(HandshakeError::InvalidKey));
/// ```
pub fn validate_key(key: &[u8]) -> Result<(), HandshakeError> {
    let Some((chars, b"==")) = (key.len() == 24).then(|| key.split_at(22)) else {
        return Err(HandshakeError::InvalidKey);
    };
    let value = |c: u8| ALPHABET.iter().position(|&a| a == c);
    let valid = chars.iter().all(|&c| value(c).is_some())
        // The 22nd character carries the 16th byte's low 2 bits and 4 bits of padding.
        && chars.last().and_then(|&c| value(c)).is_some_and(|v| v & 0xf == 0);
    if valid {
        Ok(())
    } else {
        Err(HandshakeError::InvalidKey)
    }
}

/// Checks a `Sec-WebSocket-Version` value: exactly `13`. On an error, answer 426 with
/// `Sec-WebSocket-Version: 13` (RFC 6455 §4.4).
pub fn validate_version(version: &[u8]) -> Result<(), HandshakeError> {
    if version == VERSION {
        Ok(())
    } else {
        Err(HandshakeError::UnsupportedVersion)
    }
}

/// Both checks, then the accept value: what a server needs from the request's
/// `Sec-WebSocket-Key` and `Sec-WebSocket-Version` to answer `101 Switching Protocols`.
///
/// # Examples
///
/// ```
/// use bufslab_ws::{accept, HandshakeError};
///
/// let value = accept(b"dGhlIHNhbXBsZSBub25jZQ==", b"13")?;
/// let mut head = Vec::new();
/// head.extend_from_slice(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n");
/// head.extend_from_slice(b"Connection: Upgrade\r\nSec-WebSocket-Accept: ");
/// head.extend_from_slice(&value);
/// head.extend_from_slice(b"\r\n\r\n");
///
/// assert_eq!(accept(b"dGhlIHNhbXBsZSBub25jZQ==", b"8"), Err(HandshakeError::UnsupportedVersion));
/// # Ok::<(), HandshakeError>(())
/// ```
pub fn accept(key: &[u8], version: &[u8]) -> Result<[u8; 28], HandshakeError> {
    validate_version(version)?;
    validate_key(key)?;
    Ok(accept_key(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_values_of_known_keys() {
        // RFC 6455 §1.3 and §4.2.2, and a key from a browser session.
        assert_eq!(
            &accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(
            &accept_key(b"x3JJHMbDL1EzLkh9GBhXDw=="),
            b"HSmrc0sMlYUkAGmm5OPpG2HaGWk="
        );
    }

    #[test]
    fn base64_of_every_byte_value() {
        // Each byte value in each position of a group, against a bitwise reference.
        for v in 0..=255u8 {
            for pos in 0..20 {
                let mut digest = [0u8; 20];
                digest[pos] = v;
                let got = base64_20(&digest);
                let mut bits = Vec::new();
                for b in digest {
                    bits.extend((0..8).rev().map(|i| b >> i & 1));
                }
                bits.extend([0, 0]); // 160 bits padded to 27 sextets
                for (i, sextet) in bits.chunks(6).enumerate() {
                    let n = sextet
                        .iter()
                        .fold(0usize, |acc, &b| acc << 1 | usize::from(b));
                    assert_eq!(got[i], ALPHABET[n]);
                }
                assert_eq!(got[27], b'=');
            }
        }
    }

    #[test]
    fn keys_and_versions() {
        assert_eq!(validate_key(b"AAAAAAAAAAAAAAAAAAAAAA=="), Ok(()));
        assert_eq!(validate_key(b"/////////////////////w=="), Ok(()));
        for bad in [
            &b""[..],
            b"AAAAAAAAAAAAAAAAAAAAAA=",
            b"AAAAAAAAAAAAAAAAAAAAAA===",
            b"AAAAAAAAAAAAAAAAAAAAAB==",
            b"AAAAAAAAAAAAAAAAAAAA-A==",
            b"AAAAAAAAAAAAAAAAAAAAA===",
            b" AAAAAAAAAAAAAAAAAAAAA==",
            b"AAAAAAAAAAAAAAAAAAAAAAAA",
        ] {
            assert_eq!(
                validate_key(bad),
                Err(HandshakeError::InvalidKey),
                "{bad:?}"
            );
        }
        assert_eq!(validate_version(b"13"), Ok(()));
        for bad in [&b"8"[..], b"13 ", b"", b"14", b"13, 8"] {
            assert_eq!(
                validate_version(bad),
                Err(HandshakeError::UnsupportedVersion)
            );
        }
        assert_eq!(accept(b"bad", b"13"), Err(HandshakeError::InvalidKey));
    }
}
