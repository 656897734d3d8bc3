//! [`PoolBytes`]: a shared, read-only view of a frozen block, and the path every block takes
//! home.

use std::fmt;
use std::ops::{Bound, Deref, RangeBounds};
use std::ptr::NonNull;

use bytes::Buf;

use crate::slab::{FreeBlock, Slab};

/// Returns a block to its pool: this thread's cache of the pool if it has one and room, else
/// the slow path.
#[inline]
pub(crate) fn give_back(block: FreeBlock) {
    #[cfg(feature = "debug")]
    crate::debug::on_return(block);
    if !crate::local_cache::park(block) {
        give_back_slow(block);
    }
}

/// A full cache (flush half of it, then park) or no cache at all (the shared free list). Kept
/// out of line so the fast path above needs no stack frame.
#[cold]
#[inline(never)]
fn give_back_slow(block: FreeBlock) {
    // SAFETY: the caller owns the block, so its slab is live.
    let slab = unsafe { block.slab().as_ref() };
    let (pool, class) = (slab.pool(), slab.class());
    if crate::local_cache::put_local(pool, class, block) {
        return;
    }
    // SAFETY: `pool` and `class` come from the block's own slab, and the caller gives the block
    // up. `slab` is not used after this call, which may free it.
    unsafe { (slab.home().put)(pool, class, std::slice::from_ref(&block)) };
}

/// A cheaply cloneable, read-only view of bytes in a pooled block (from [`PoolBuf::freeze`]).
///
/// Clones and [`slice`](Self::slice)s share the block and bump one atomic count; the block goes
/// back to its pool when the last view is dropped, on whatever thread. Implements [`Buf`], and
/// converts to [`bytes::Bytes`] with [`into_bytes`](Self::into_bytes).
///
/// [`PoolBuf::freeze`]: crate::PoolBuf::freeze
pub struct PoolBytes {
    slab: NonNull<Slab>,
    ptr: NonNull<u8>,
    len: usize,
    index: u32,
}

// SAFETY: the viewed bytes are immutable while any view exists, and the block's lifetime is
// governed by an atomic reference count, exactly like `Arc<[u8]>`.
unsafe impl Send for PoolBytes {}
// SAFETY: as above; `&PoolBytes` gives read access only.
unsafe impl Sync for PoolBytes {}

impl PoolBytes {
    /// The first view of `block`, over `len` bytes at `offset`.
    ///
    /// # Safety
    /// The caller owns `block` (no other handle or view) and gives it up; `offset + len` is
    /// within the block.
    pub(crate) unsafe fn from_block(block: FreeBlock, offset: usize, len: usize) -> Self {
        // SAFETY: the caller owns the block, so its slab is live.
        let slab = unsafe { block.slab().as_ref() };
        let index = slab.index_of(block.ptr());
        slab.refs(index).init();
        PoolBytes {
            slab: block.slab(),
            // SAFETY: within the block, per the caller.
            ptr: unsafe { block.ptr().add(offset) },
            len,
            index,
        }
    }

    /// A view of `range` of these bytes, sharing the block (no copy).
    ///
    /// # Panics
    /// If the range is out of bounds or decreasing, as slicing does.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> PoolBytes {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1).expect("range start overflows"),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1).expect("range end overflows"),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        assert!(
            start <= end && end <= self.len,
            "slice {start}..{end} out of 0..{}",
            self.len
        );
        let mut view = self.clone();
        // SAFETY: `start <= len`, so the pointer stays within the viewed bytes.
        view.ptr = unsafe { self.ptr.add(start) };
        view.len = end - start;
        view
    }

    /// Converts into [`bytes::Bytes`] without copying, via [`Bytes::from_owner`](bytes::Bytes::from_owner)
    /// (one small heap allocation for the owner record).
    pub fn into_bytes(self) -> bytes::Bytes {
        bytes::Bytes::from_owner(self)
    }

    fn slab(&self) -> &Slab {
        // SAFETY: a live view holds a count on its block, so the slab is live.
        unsafe { self.slab.as_ref() }
    }
}

impl Clone for PoolBytes {
    #[inline]
    fn clone(&self) -> Self {
        self.slab().refs(self.index).acquire();
        PoolBytes { ..*self }
    }
}

impl Drop for PoolBytes {
    #[inline]
    fn drop(&mut self) {
        let slab = self.slab();
        if slab.refs(self.index).release() {
            // SAFETY: the last view is gone, so this thread owns the block again.
            let block = unsafe { slab.block(self.index) };
            give_back(block);
        }
    }
}

impl Deref for PoolBytes {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: the viewed range is within the block, initialised, and immutable while any
        // view lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for PoolBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq<[u8]> for PoolBytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl fmt::Debug for PoolBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBytes").field("len", &self.len).finish()
    }
}

impl Buf for PoolBytes {
    #[inline]
    fn remaining(&self) -> usize {
        self.len
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        self
    }

    #[inline]
    fn advance(&mut self, cnt: usize) {
        assert!(cnt <= self.len, "advance past the end of the view");
        // SAFETY: `cnt <= len`, so the pointer stays within the viewed bytes.
        self.ptr = unsafe { self.ptr.add(cnt) };
        self.len -= cnt;
    }
}
