//! Debug aids (cargo feature `debug`), after Kestrel's DiagnosticMemoryPool: poison returned
//! blocks and catch writes after return, catch blocks routed to a pool or class that does not own
//! them and blocks returned twice, and report blocks still out when a pool closes.
//!
//! They cost a pass over the block on every rent and return: for tests and staging, not for
//! production.

use std::sync::atomic::Ordering;

use crate::slab::{FreeBlock, Slab};

/// The byte every free block is filled with.
pub const POISON: u8 = 0xA5;

const FREE: u8 = 0;
const RENTED: u8 = 1;

/// Fills a new slab's blocks with the poison byte.
///
/// # Safety
/// No block of the slab is out.
pub(crate) unsafe fn poison_slab(slab: &Slab) {
    let bytes = slab.block_size() * slab.blocks() as usize;
    // SAFETY: the block memory spans `bytes` from `base`, owned by the pool with no block out.
    unsafe { slab.base().as_ptr().write_bytes(POISON, bytes) };
}

/// The block's index in its slab, after checking that its address is a block boundary there
/// (a corrupted block word would lead to some other memory).
fn check_block(block: FreeBlock, slab: &Slab) -> u32 {
    let offset = (block.ptr().as_ptr() as usize).wrapping_sub(slab.base().as_ptr() as usize);
    assert!(
        offset % slab.block_size() == 0 && offset / slab.block_size() < slab.blocks() as usize,
        "bufslab debug: {block:?} is not a block of the slab its address leads to"
    );
    slab.index_of(block.ptr())
}

/// Checks that blocks handed to the free list of class `class` of the pool at `pool` are that
/// class's: a block parked in the wrong cache or list would be handed out with the wrong size.
pub(crate) fn on_put(pool: *const (), class: usize, blocks: &[FreeBlock]) {
    for &block in blocks {
        // SAFETY: the caller owns the blocks.
        let slab = unsafe { block.header() };
        assert!(
            slab.pool() == pool && slab.class() == class,
            "bufslab debug: block {:p} given to the wrong pool or class",
            block.ptr()
        );
    }
}

pub(crate) fn on_rent(block: FreeBlock) {
    // SAFETY: the block is owned by the caller.
    let slab = unsafe { block.header() };
    let i = check_block(block, slab);
    let before = slab.state(i).swap(RENTED, Ordering::AcqRel);
    assert_eq!(
        before,
        FREE,
        "bufslab debug: block {:p} handed out twice",
        block.ptr()
    );
    // SAFETY: the block was free and is now owned by the caller; all bytes are initialised.
    let bytes = unsafe { std::slice::from_raw_parts(block.ptr().as_ptr(), slab.block_size()) };
    if let Some(at) = bytes.iter().position(|&b| b != POISON) {
        panic!(
            "bufslab debug: block {:p} was written at offset {at} after it was returned",
            block.ptr()
        );
    }
}

pub(crate) fn on_return(block: FreeBlock) {
    // SAFETY: the block is owned by the caller.
    let slab = unsafe { block.header() };
    let i = check_block(block, slab);
    let before = slab.state(i).swap(FREE, Ordering::AcqRel);
    assert_eq!(
        before,
        RENTED,
        "bufslab debug: block {:p} returned twice",
        block.ptr()
    );
    // SAFETY: the caller owns the block and is giving it up; nothing else reads it now.
    unsafe { block.ptr().as_ptr().write_bytes(POISON, slab.block_size()) };
}

pub(crate) fn report_outstanding(block_size: usize, out: usize) {
    eprintln!(
        "bufslab debug: pool dropped with {out} block(s) of {block_size} bytes still out \
         (rented, or parked in threads' caches until those threads exit); their slabs are \
         freed when the last one comes back"
    );
}
