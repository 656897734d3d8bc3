//! Helpers shared by the integration tests.
#![allow(dead_code)]

use bufslab::PoolBuf;

/// Scales a test size down under Miri, which runs thousands of times slower.
pub const fn scaled(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

/// Fills the whole block with a stamp derived from `id`, so aliasing shows up as a bad stamp.
pub fn stamp(buf: &mut PoolBuf, id: u64) {
    buf.clear();
    let cap = buf.capacity();
    let bytes = id.to_le_bytes();
    let spare = buf.spare_mut();
    for (i, b) in spare.iter_mut().enumerate() {
        *b = bytes[i % 8] ^ (i as u8);
    }
    buf.commit(cap);
}

/// Checks a stamp written by [`stamp`]; returns false if any byte differs.
pub fn check(buf: &[u8], id: u64) -> bool {
    check_from(buf, id, 0)
}

/// Checks the part of a stamp that starts `offset` bytes into the block.
pub fn check_from(buf: &[u8], id: u64, offset: usize) -> bool {
    let bytes = id.to_le_bytes();
    buf.iter()
        .enumerate()
        .all(|(i, &b)| b == bytes[(i + offset) % 8] ^ ((i + offset) as u8))
}
