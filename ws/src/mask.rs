//! Masking (RFC 6455 §5.3), resumable across buffers.

/// XORs `buf` with the masking key `key` in place, starting at byte `offset` of the payload
/// (any value; only `offset % 4` matters), and returns the offset after `buf`. Masking and
/// unmasking are the same operation.
///
/// A payload that arrives in several buffers is unmasked one buffer at a time by passing each
/// call the offset the last one returned. Eight bytes are XORed at a time with a word of the
/// rotated key; the compiler vectorises the loop.
///
/// # Examples
///
/// ```
/// use bufslab_ws::apply_mask;
///
/// let key = [0x37, 0xfa, 0x21, 0x3d];
/// let mut whole = *b"Hello, masked world";
/// apply_mask(&mut whole, key, 0);
///
/// // The same payload split at an odd place gives the same bytes.
/// let mut split = *b"Hello, masked world";
/// let (a, b) = split.split_at_mut(5);
/// let at = apply_mask(a, key, 0);
/// apply_mask(b, key, at);
/// assert_eq!(whole, split);
///
/// apply_mask(&mut whole, key, 0);
/// assert_eq!(&whole, b"Hello, masked world");
/// ```
pub fn apply_mask(buf: &mut [u8], key: [u8; 4], offset: usize) -> usize {
    let r = offset % 4;
    // The key as seen from buf[0]: byte i of the payload is XORed with key[(offset + i) % 4].
    let k = [key[r], key[(r + 1) % 4], key[(r + 2) % 4], key[(r + 3) % 4]];
    // Every word starts at a multiple of 8 bytes from buf[0], so the same rotation holds for
    // each.
    let word = u64::from_ne_bytes([k[0], k[1], k[2], k[3], k[0], k[1], k[2], k[3]]);
    let mut words = buf.chunks_exact_mut(8);
    for chunk in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(w) ^ word).to_ne_bytes());
    }
    for (byte, m) in words.into_remainder().iter_mut().zip(k.iter().cycle()) {
        *byte ^= m;
    }
    offset.wrapping_add(buf.len()) % 4
}

#[cfg(test)]
mod tests {
    use super::apply_mask;

    fn naive(buf: &mut [u8], key: [u8; 4], offset: usize) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= key[(offset + i) % 4];
        }
    }

    #[test]
    fn matches_the_bytewise_definition_at_every_offset_and_split() {
        let key = [0x01, 0x80, 0xfe, 0x5a];
        let data: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for len in 0..data.len() {
            for offset in 0..8 {
                let mut want = data[..len].to_vec();
                naive(&mut want, key, offset);
                let mut got = data[..len].to_vec();
                assert_eq!(apply_mask(&mut got, key, offset), (offset + len) % 4);
                assert_eq!(got, want, "len {len} offset {offset}");
            }
            for cut in 0..=len {
                let mut want = data[..len].to_vec();
                naive(&mut want, key, 0);
                let mut got = data[..len].to_vec();
                let (a, b) = got.split_at_mut(cut);
                let at = apply_mask(a, key, 0);
                apply_mask(b, key, at);
                assert_eq!(got, want);
            }
        }
        assert_eq!(apply_mask(&mut [], key, usize::MAX), usize::MAX % 4);
    }
}
