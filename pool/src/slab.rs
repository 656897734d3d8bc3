//! A slab: one page-aligned allocation carved into equal blocks, with its header at the tail.
//!
//! Layout of one allocation (zeroed when made, so every byte a block hands out is initialised):
//!
//! ```text
//! [ block 0 | block 1 | ... | block n-1 | Slab header | RefCount x n | (debug: state x n) ]
//!   ^ page-aligned                        ^ block_size * n, a multiple of 64
//! ```
//!
//! The header lives with the blocks so that a slab is one allocation, and a block finds its way
//! home from its slab alone, whatever thread drops it and whether or not a `Pool` handle is left.

use std::alloc::{self, Layout};
use std::mem::{align_of, size_of};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::ref_count::RefCount;

/// Slabs start on a page boundary: blocks of a page or a multiple of one are page-aligned.
pub(crate) const SLAB_ALIGN: usize = 4096;

/// Block sizes are multiples of this, so headers and blocks never share a cache line.
pub(crate) const BLOCK_ALIGN: usize = 64;

const _: () = assert!(align_of::<Slab>() <= BLOCK_ALIGN);

/// The type-erased way home for a block: the owning pool's "give these back" function.
pub(crate) struct HomeVTable {
    /// Pushes `blocks` (all of class `class`) onto the free list of the pool at `pool`.
    ///
    /// # Safety
    /// `pool` is the slab header's `pool`, and every block is out of its free list and owned by
    /// the caller, which gives up ownership.
    pub(crate) put: unsafe fn(pool: *const (), class: usize, blocks: &[FreeBlock]),
}

/// A block as free lists and local caches hold it: its slab and its address.
///
/// Only the pool makes these; holding one is owning the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// 16-aligned: a stash slot then never straddles a cache line, and a block taken by a rent moves
// into its `PoolBuf` as one aligned 16-byte load and store (measured: a local get + touch + put
// takes 17 ns with 8-aligned blocks, 7 ns with 16-aligned ones). `local_cache::copy_narrow` is
// the other half: the return path reads a block back as two words.
#[repr(C, align(16))]
pub struct FreeBlock {
    pub(crate) slab: NonNull<Slab>,
    pub(crate) ptr: NonNull<u8>,
}

impl FreeBlock {
    /// A placeholder for empty slots of a local cache's stash; never dereferenced.
    pub(crate) const EMPTY: FreeBlock = FreeBlock {
        slab: NonNull::dangling(),
        ptr: NonNull::dangling(),
    };
}

// SAFETY: a FreeBlock is a pair of addresses whose holder owns the block, like a `Box<[u8]>`;
// the slab header it points at is only read, or written through atomics.
unsafe impl Send for FreeBlock {}
// SAFETY: as above; `&FreeBlock` gives no access to the block's bytes.
unsafe impl Sync for FreeBlock {}

pub(crate) struct Slab {
    base: NonNull<u8>,
    layout: Layout,
    block_size: usize,
    blocks: u32,
    class: u8,
    /// The owning pool, handed to `home.put`; the slab holds one strong count on it.
    pool: *const (),
    home: &'static HomeVTable,
    /// Free blocks of this slab seen by a trim in progress; touched only under the class lock.
    pub(crate) scratch: AtomicU32,
    refs: NonNull<RefCount>,
    #[cfg(feature = "debug")]
    states: NonNull<std::sync::atomic::AtomicU8>,
}

impl Slab {
    /// Bytes of block memory in a slab of `blocks` blocks of `block_size`.
    pub(crate) fn data_bytes(block_size: usize, blocks: usize) -> usize {
        block_size * blocks
    }

    /// Allocates a zeroed slab. `None` if the allocator refuses.
    ///
    /// The caller has checked (in the pool's config) that `block_size` is a non-zero multiple of
    /// [`BLOCK_ALIGN`] and that the whole slab fits in a `Layout`.
    pub(crate) fn new(
        block_size: usize,
        blocks: u32,
        class: u8,
        pool: *const (),
        home: &'static HomeVTable,
    ) -> Option<NonNull<Slab>> {
        let n = blocks as usize;
        let header_at = Self::data_bytes(block_size, n);
        let refs_at = header_at + size_of::<Slab>();
        let end = refs_at + n * size_of::<RefCount>();
        #[cfg(feature = "debug")]
        let (states_at, end) = (end, end + n);
        let layout = Layout::from_size_align(end, SLAB_ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size (at least the header).
        let base = NonNull::new(unsafe { alloc::alloc_zeroed(layout) })?;
        // SAFETY: all offsets are within the allocation just made. `header_at` is a multiple of
        // 64 and the header needs at most that alignment; `refs_at` follows a header whose size
        // is a multiple of its alignment (8), which is more than `RefCount`'s (4).
        let (header, refs) = unsafe {
            (
                base.add(header_at).cast::<Slab>(),
                base.add(refs_at).cast::<RefCount>(),
            )
        };
        let slab = Slab {
            base,
            layout,
            block_size,
            blocks,
            class,
            pool,
            home,
            scratch: AtomicU32::new(0),
            refs,
            // SAFETY: within the allocation, as computed above; a byte needs no alignment.
            #[cfg(feature = "debug")]
            states: unsafe { base.add(states_at).cast() },
        };
        // SAFETY: `header` is in bounds, aligned, and not yet initialised; the ref counts are
        // zeroed memory, a valid `AtomicU32` (and debug state) zero.
        unsafe { header.as_ptr().write(slab) };
        #[cfg(feature = "debug")]
        // SAFETY: the slab was just made and no block of it is out.
        unsafe {
            crate::debug::poison_slab(header.as_ref())
        };
        Some(header)
    }

    /// Gives the slab's memory back to the allocator.
    ///
    /// # Safety
    /// No block of the slab is out or in any free list, and nothing uses `slab` afterwards.
    pub(crate) unsafe fn free(slab: NonNull<Slab>) {
        // SAFETY: the caller guarantees the header is live; `Slab` has no drop glue, so reading
        // its fields and then freeing the allocation it lives in is all there is to do.
        unsafe {
            let (base, layout) = {
                let s = slab.as_ref();
                (s.base, s.layout)
            };
            alloc::dealloc(base.as_ptr(), layout);
        }
    }

    #[cfg(feature = "debug")]
    pub(crate) fn block_size(&self) -> usize {
        self.block_size
    }

    pub(crate) fn blocks(&self) -> u32 {
        self.blocks
    }

    pub(crate) fn class(&self) -> usize {
        self.class as usize
    }

    pub(crate) fn pool(&self) -> *const () {
        self.pool
    }

    pub(crate) fn home(&self) -> &'static HomeVTable {
        self.home
    }

    /// The `i`th block of the slab, which the caller then owns.
    ///
    /// # Safety
    /// `i < self.blocks()`, `slab` is this slab's address, and the block is not owned elsewhere.
    pub(crate) unsafe fn block(&self, slab: NonNull<Slab>, i: u32) -> FreeBlock {
        debug_assert!(i < self.blocks);
        FreeBlock {
            slab,
            // SAFETY: `i < blocks`, so the offset is within the block memory of the allocation.
            ptr: unsafe { self.base.add(i as usize * self.block_size) },
        }
    }

    /// Index of the block that starts at `ptr`, a block of this slab.
    pub(crate) fn index_of(&self, ptr: NonNull<u8>) -> u32 {
        let offset = ptr.as_ptr() as usize - self.base.as_ptr() as usize;
        debug_assert!(
            offset % self.block_size == 0 && offset / self.block_size < self.blocks as usize
        );
        (offset / self.block_size) as u32
    }

    /// The reference count of block `i`, used while the block is frozen.
    pub(crate) fn refs(&self, i: u32) -> &RefCount {
        assert!(i < self.blocks);
        // SAFETY: `i < blocks`, and the `blocks` ref counts follow the header in the allocation,
        // initialised (zeroed) for the slab's whole life.
        unsafe { self.refs.add(i as usize).as_ref() }
    }

    /// The start of block memory, for debug checks.
    #[cfg(feature = "debug")]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    /// The rent state of block `i` (0 free, 1 rented), for debug checks.
    #[cfg(feature = "debug")]
    pub(crate) fn state(&self, i: u32) -> &std::sync::atomic::AtomicU8 {
        assert!(i < self.blocks);
        // SAFETY: `i < blocks`, and the states follow the ref counts, zeroed for the slab's life.
        unsafe { self.states.add(i as usize).as_ref() }
    }

    /// Resets the trim tally.
    pub(crate) fn clear_scratch(&self) {
        self.scratch.store(0, Ordering::Relaxed);
    }
}
