//! A slab: one allocation carved into equal blocks, with its header just past a power-of-two
//! boundary so that any block finds it from its own address.
//!
//! Layout of one allocation, aligned to its window `W`, the smallest power of two (at least a
//! page) that holds the block memory:
//!
//! ```text
//! [ block 0 | block 1 | ... | block n-1 | (unused) | Slab header | RefCount x n | (debug: state x n) ]
//!   ^ W-aligned                                     ^ offset W
//! ```
//!
//! A block at address `a` has its header at `(a | (W - 1)) + 1`. So a block is one word (its
//! address, with `log2(W)` in the low bits a 64-byte-aligned block never uses), a buffer handle
//! is two words and travels in registers, and a block finds its way home from its address
//! alone, whatever thread drops it and whether or not a `Pool` handle is left.
//!
//! The cost is address space: when the block memory is not a power of two, the gap up to `W`
//! is reserved but never written, so the allocator never backs it with memory once the slab is
//! large enough to be mapped on its own (glibc: 128 KiB and up). The default slab, 32 blocks of
//! 4 KiB, is exactly 128 KiB and wastes nothing.

use std::alloc::{self, Layout};
use std::mem::{align_of, size_of};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::ref_count::RefCount;

/// The smallest window: slabs start on a page boundary, so blocks of a page or a multiple of one
/// are page-aligned.
const MIN_WINDOW: usize = 4096;

/// Block sizes are multiples of this, so headers and blocks never share a cache line, and a
/// block address has six low bits free for its window's `log2`.
pub(crate) const BLOCK_ALIGN: usize = 64;

const TAG_MASK: usize = BLOCK_ALIGN - 1;

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

/// A block as free lists and local caches hold it: one word, its address tagged with its slab's
/// window (see the module docs).
///
/// Only the pool makes these; holding one is owning the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct FreeBlock(NonNull<u8>);

impl FreeBlock {
    /// A placeholder for empty slots of a local cache's stash; never dereferenced.
    pub(crate) const EMPTY: FreeBlock = FreeBlock(NonNull::dangling());

    /// The first byte of the block.
    #[inline]
    pub(crate) fn ptr(self) -> NonNull<u8> {
        let tagged = self.0.as_ptr();
        // Offsetting the pointer (rather than making one from an integer) keeps its provenance.
        let ptr = tagged.wrapping_sub(tagged as usize & TAG_MASK);
        // SAFETY: a block address is a non-zero multiple of 64 (its slab is aligned to a window
        // of at least a page), so clearing the tag bits leaves it non-null.
        unsafe { NonNull::new_unchecked(ptr) }
    }

    /// The header of the block's slab. Dereferencing it is sound while the caller owns the
    /// block (or holds a count on it): a slab outlives its blocks.
    #[inline]
    pub(crate) fn slab(self) -> NonNull<Slab> {
        let tagged = self.0.as_ptr();
        let addr = tagged as usize;
        let window = 1usize << (addr & TAG_MASK);
        // The tag is below `window - 1`, so or-ing that in covers it. Offsetting the block's
        // pointer keeps its provenance, which spans the whole slab allocation, header included.
        let header = tagged.wrapping_add(((addr | (window - 1)) + 1) - addr);
        // SAFETY: the header address is past the block, so it is non-null.
        unsafe { NonNull::new_unchecked(header.cast()) }
    }

    /// The header of the block's slab, borrowed: the one place the pool dereferences the
    /// address [`slab`](Self::slab) computes.
    ///
    /// # Safety
    /// The caller owns the block (rented it, took it from a free list or stash, or holds the
    /// last count of a frozen view) or otherwise keeps its slab from being freed, for as long
    /// as the borrow lives.
    #[inline]
    pub(crate) unsafe fn header<'a>(self) -> &'a Slab {
        // SAFETY: `slab` leads from a block to its own slab's header, written when the slab was
        // made (`Slab::new`) and left untouched until `Slab::free`. A slab is freed only when
        // none of its blocks is out of the pool's free list, so while the caller owns one of
        // them (the contract above) the header is live, initialised and only read, or written
        // through atomics.
        unsafe { self.slab().as_ref() }
    }
}

// SAFETY: a FreeBlock is the address of a block its holder owns, like a `Box<[u8]>`; the slab
// header it leads to is only read, or written through atomics.
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

    /// Allocates a slab, every block byte zeroed. `None` if the allocator refuses or the slab
    /// is too large to lay out.
    ///
    /// The caller has checked (in the pool's config) that `block_size` is a non-zero multiple of
    /// [`BLOCK_ALIGN`].
    pub(crate) fn new(
        block_size: usize,
        blocks: u32,
        class: u8,
        pool: *const (),
        home: &'static HomeVTable,
    ) -> Option<NonNull<Slab>> {
        let n = blocks as usize;
        let data = Self::data_bytes(block_size, n);
        let window = data.checked_next_power_of_two()?.max(MIN_WINDOW);
        let refs_at = window + size_of::<Slab>();
        let end = refs_at + n * size_of::<RefCount>();
        #[cfg(feature = "debug")]
        let (states_at, end) = (end, end + n);
        let layout = Layout::from_size_align(end, window).ok()?;
        // SAFETY: `layout` has a non-zero size (at least the header).
        let base = NonNull::new(unsafe { alloc::alloc(layout) })?;
        // SAFETY: all offsets are within the allocation just made. `window` is a multiple of 64
        // and the header needs at most that alignment; `refs_at` follows a header whose size is
        // a multiple of its alignment (8), which is more than `RefCount`'s (4). Zeroing the
        // blocks and the tail, not the gap between them, keeps the gap untouched.
        let (header, refs) = unsafe {
            base.write_bytes(0, data);
            base.add(refs_at).write_bytes(0, end - refs_at);
            (
                base.add(window).cast::<Slab>(),
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

    #[inline]
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
    /// `i < self.blocks()`, and the block is not owned elsewhere.
    pub(crate) unsafe fn block(&self, i: u32) -> FreeBlock {
        debug_assert!(i < self.blocks);
        // SAFETY: `i < blocks`, so the offset is within the block memory of the allocation.
        let ptr = unsafe { self.base.add(i as usize * self.block_size) };
        let tag = self.layout.align().trailing_zeros() as usize;
        // SAFETY: the block is 64-aligned, so adding the tag (under 64) stays within its first
        // 64 bytes: in bounds and non-null.
        FreeBlock(unsafe { ptr.add(tag) })
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

#[cfg(all(test, not(bufslab_loom)))]
mod tests {
    use super::*;

    unsafe fn no_put(_: *const (), _: usize, _: &[FreeBlock]) {}
    static NO_HOME: HomeVTable = HomeVTable { put: no_put };

    /// Every block of slabs with power-of-two and odd block memory, below and above a page,
    /// leads back to its own header and index.
    #[test]
    fn every_block_finds_its_slab() {
        for (block_size, blocks) in [(64, 1), (64, 3), (192, 5), (4096, 2), (128, 40)] {
            let slab = Slab::new(block_size, blocks, 0, std::ptr::null(), &NO_HOME).unwrap();
            // SAFETY: just made; freed below after the last use.
            let s = unsafe { slab.as_ref() };
            for i in 0..blocks {
                // SAFETY: `i < blocks`, and nothing else owns the block.
                let block = unsafe { s.block(i) };
                assert_eq!(block.slab(), slab);
                assert_eq!(s.index_of(block.ptr()), i);
                assert_eq!(block.ptr().as_ptr() as usize % BLOCK_ALIGN, 0);
                // SAFETY: the block is owned here, `block_size` bytes long and initialised.
                let bytes = unsafe { std::slice::from_raw_parts(block.ptr().as_ptr(), block_size) };
                // Zeroed when made (the pool's debug feature poisons them afterwards).
                assert!(bytes.iter().all(|&b| b == 0));
            }
            // SAFETY: no block is out or listed anywhere.
            unsafe { Slab::free(slab) };
        }
    }
}
