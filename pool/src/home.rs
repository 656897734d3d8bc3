//! The way home every block takes when its last owner lets go, whatever the owner (a dropped
//! [`PoolBuf`](crate::PoolBuf), the last [`PoolBytes`](crate::PoolBytes) view, a local cache's
//! flush) and whatever the thread.
//!
//! A block carries no pointer to its pool: its slab header names the pool and the type-erased
//! `put` of the pool's free list. First choice is this thread's cache of that pool (no atomic
//! read-modify-write, no lock); a thread without one, or with a full one, takes the slow path:
//! flush half of the full cache, or push straight onto the pool's shared free list (the
//! remote-return path). Either way the block is back in its own pool, owned once.

use crate::slab::FreeBlock;
use crate::thread_cache;

/// Returns a block to its pool: this thread's cache of the pool if it has one and room, else
/// the slow path.
#[inline]
pub(crate) fn give_back(block: FreeBlock) {
    #[cfg(feature = "debug")]
    crate::debug::on_return(block);
    if !thread_cache::park(block) {
        give_back_slow(block);
    }
}

/// A full cache (flush half of it, then park) or no cache at all (the shared free list). Kept
/// out of line so the fast path above needs no stack frame.
#[cold]
#[inline(never)]
fn give_back_slow(block: FreeBlock) {
    // SAFETY: the caller owns the block.
    let slab = unsafe { block.header() };
    let (pool, class) = (slab.pool(), slab.class());
    if thread_cache::put_local(pool, class, block) {
        return;
    }
    // SAFETY: `pool` and `class` come from the block's own slab, and the caller gives the block
    // up. `slab` is not used after this call, which may free it.
    unsafe { (slab.home().put)(pool, class, std::slice::from_ref(&block)) };
}
