//! What a pool holds, read from relaxed counters: cheap enough to poll, exact when quiescent.

/// One size class's counters (see [`Pool::class_stats`](crate::Pool::class_stats)).
///
/// Non-exhaustive: counters may be added in minor releases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClassStats {
    /// Block size of the class.
    pub block_size: usize,
    /// Bytes of block memory per slab.
    pub slab_bytes: usize,
    /// Live slabs.
    pub slabs: usize,
    /// Blocks waiting in the shared free list.
    pub free_blocks: usize,
    /// Blocks parked in threads' local caches (free, but not in the shared list).
    pub cached_blocks: usize,
    /// Blocks rented: held by a buffer or a frozen view right now.
    pub rented_blocks: usize,
    /// The most blocks ever out of the shared free list at once. Blocks parked in local caches
    /// count as out there, so with local caches this bounds the true peak of rented blocks
    /// from above (by at most the caches' capacity).
    pub peak_out_blocks: usize,
    /// Gets that found the free list empty (and then grew, or failed).
    pub misses: u64,
    /// Slabs given back to the allocator by `trim` and `evict_idle`.
    pub evicted_slabs: u64,
}

/// A pool's counters summed over its classes (see [`Pool::stats`](crate::Pool::stats)).
///
/// Non-exhaustive: counters may be added in minor releases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Bytes of block memory in live slabs.
    pub allocated_bytes: usize,
    /// Bytes of free blocks, in the shared free lists and in local caches.
    pub pooled_bytes: usize,
    /// Bytes of rented blocks.
    pub rented_bytes: usize,
    /// Rented blocks.
    pub rented_blocks: usize,
    /// Sum over classes of the peak bytes out (see [`ClassStats::peak_out_blocks`]).
    pub peak_out_bytes: usize,
    /// Live slabs.
    pub slabs: usize,
    /// Slabs given back to the allocator.
    pub evicted_slabs: u64,
    /// Bytes given back to the allocator.
    pub evicted_bytes: u64,
    /// Gets that found a free list empty.
    pub misses: u64,
}

impl Stats {
    pub(crate) fn add(&mut self, class: &ClassStats) {
        let size = class.block_size;
        self.allocated_bytes += class.slabs * class.slab_bytes;
        self.pooled_bytes += (class.free_blocks + class.cached_blocks) * size;
        self.rented_bytes += class.rented_blocks * size;
        self.rented_blocks += class.rented_blocks;
        self.peak_out_bytes += class.peak_out_blocks * size;
        self.slabs += class.slabs;
        self.evicted_slabs += class.evicted_slabs;
        self.evicted_bytes += class.evicted_slabs * class.slab_bytes as u64;
        self.misses += class.misses;
    }
}
