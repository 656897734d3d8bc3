//! The shared pool: size classes, each a free list over slabs, growth under a bound, trimming.

use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::buf::{from_slow_path, split, PoolBuf};
use crate::config::{Builder, ClassConfig};
use crate::error::{ConfigError, Error};
use crate::free_list::{DefaultFreeList, FreeList};
use crate::out_count::OutCount;
use crate::slab::{FreeBlock, HomeVTable, Slab};
use crate::stats::{ClassStats, Stats};
use crate::thread_cache::{self, Owner, Stash};

/// A preallocated, bounded pool of fixed-size blocks in several size classes.
///
/// Cloning a `Pool` is cheap and gives another handle to the same pool; a `Pool` is
/// `Send + Sync`. Blocks outlive every handle: slab memory goes back to the allocator only when
/// its last block is back. See the [crate docs](crate) for the design.
///
/// Three ways to rent, fastest first when blocks are returned on the renting thread:
///
/// - a [`LocalCache`](crate::LocalCache) (`pool.local_cache()`), one per thread that owns its
///   work (thread-per-core servers, dedicated threads);
/// - [`get_local`](Self::get_local), the same per-thread cache found through the calling thread,
///   for tasks that move between threads (tokio's multi-thread runtime);
/// - [`get`](Self::get), the shared free list: no per-thread state at all.
///
/// # Examples
///
/// ```
/// use bufslab::{ClassConfig, Error, Pool};
/// use bytes::BufMut;
///
/// let pool = Pool::builder()
///     .class(ClassConfig::new(4096).prealloc_slabs(1).max_slabs(2)) // at most 64 blocks
///     .build()?;
/// let mut buf = pool.get(1500)?;
/// buf.put_slice(b"hello");
///
/// let held: Vec<_> = (0..63).map(|_| pool.get(4096)).collect::<Result<_, _>>()?;
/// assert_eq!(pool.get(10).unwrap_err(), Error::Exhausted { block_size: 4096 });
/// drop(held);
/// assert_eq!(pool.stats().rented_blocks, 1);
/// assert_eq!(pool.trim(), 1); // the second slab is free again: back to the allocator
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Pool<F: FreeList = DefaultFreeList> {
    shared: Arc<Shared<F>>,
}

pub(crate) struct Shared<F> {
    pub(crate) classes: Box<[Class<F>]>,
    max_bytes: usize,
    /// Bytes of block memory in live slabs, across classes (checked against `max_bytes`).
    allocated: AtomicUsize,
    /// `Pool` handles (a `LocalCache` holds one); the pool closes when it reaches zero.
    handles: AtomicUsize,
    evict_share: f64,
    /// Each live thread cache's stashes, one per class, for `stats`.
    pub(crate) locals: Mutex<Vec<Arc<[Stash]>>>,
}

// SAFETY: the raw slab pointers inside are owned by the pool and reached only under the class
// mutex (the registry) or through the free-block ownership protocol; everything else is atomics,
// mutexes or immutable configuration.
unsafe impl<F: FreeList> Send for Shared<F> {}
// SAFETY: as above.
unsafe impl<F: FreeList> Sync for Shared<F> {}

/// One size class. Aligned so that two classes' hot counters never share a cache line.
#[repr(align(128))]
pub(crate) struct Class<F> {
    pub(crate) block_size: usize,
    blocks_per_slab: usize,
    prealloc_slabs: usize,
    max_slabs: usize,
    pub(crate) free: F,
    /// Blocks a local cache keeps of this class.
    pub(crate) local_capacity: usize,
    /// Every live slab of the class. Its lock also serialises growth and trimming.
    slabs: Mutex<Vec<NonNull<Slab>>>,
    slab_count: AtomicUsize,
    pub(crate) out: OutCount,
    peak: AtomicUsize,
    misses: AtomicU64,
    evicted: AtomicU64,
    /// Blocks out at the previous `evict_idle`.
    idle_mark: AtomicUsize,
}

/// Marks a slab chosen for release during a trim (a real tally never gets this high).
const DOOMED: u32 = u32::MAX;

impl<F: FreeList> Class<F> {
    fn new(config: &ClassConfig, local_capacity: Option<usize>) -> Self {
        Class {
            block_size: config.block_size,
            blocks_per_slab: config.blocks_per_slab,
            prealloc_slabs: config.prealloc_slabs,
            max_slabs: config.max_slabs,
            free: F::with_capacity(config.max_blocks()),
            local_capacity: local_capacity.unwrap_or_else(|| config.default_local_capacity()),
            slabs: Mutex::new(Vec::with_capacity(config.max_slabs)),
            slab_count: AtomicUsize::new(0),
            out: OutCount::new(),
            peak: AtomicUsize::new(0),
            misses: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            idle_mark: AtomicUsize::new(0),
        }
    }

    /// Counts `n` blocks leaving the free list.
    #[inline]
    pub(crate) fn note_taken(&self, n: usize) {
        let out = self.out.take(n);
        if out > self.peak.load(Ordering::Relaxed) {
            self.peak.fetch_max(out, Ordering::Relaxed);
        }
    }

    fn slab_bytes(&self) -> usize {
        Slab::data_bytes(self.block_size, self.blocks_per_slab)
    }
}

impl Pool {
    /// A pool with the default configuration: one class of 4096-byte blocks, 32 per slab
    /// (128 KiB slabs), one slab preallocated, at most 256.
    ///
    /// # Panics
    /// If the global allocator refuses the preallocated slab (128 KiB). Use
    /// [`Pool::builder`] and [`Builder::build`] to get that as [`ConfigError::OutOfMemory`].
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BufMut;
    ///
    /// let pool = bufslab::Pool::new();
    /// let mut buf = pool.get(1500)?;
    /// buf.put_slice(b"hello");
    /// assert_eq!(&buf[..], b"hello");
    /// drop(buf);
    /// assert_eq!(pool.stats().rented_blocks, 0);
    /// # Ok::<(), bufslab::Error>(())
    /// ```
    pub fn new() -> Self {
        match Builder::default().build() {
            Ok(pool) => pool,
            Err(e) => panic!("bufslab: default pool: {e}"),
        }
    }

    /// Starts configuring a pool.
    pub fn builder() -> Builder {
        Builder::default()
    }
}

impl Default for Pool {
    fn default() -> Self {
        Pool::new()
    }
}

impl Builder {
    /// Builds a pool with the default free list ([`QueueFreeList`](crate::QueueFreeList)).
    ///
    /// Fails if a class or bound is invalid (see [`ConfigError`]), or if the allocator refuses
    /// a preallocated slab; never panics.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab::{ClassConfig, ConfigError, Pool};
    ///
    /// let pool = Pool::builder().class(ClassConfig::new(1024)).build()?;
    /// assert_eq!(pool.block_sizes().collect::<Vec<_>>(), [1024]);
    ///
    /// let bad = Pool::builder().class(ClassConfig::new(1000)).build();
    /// assert!(matches!(bad, Err(ConfigError::BadBlockSize(1000))));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn build(self) -> Result<Pool, ConfigError> {
        self.build_with()
    }

    /// Builds a pool with free-list strategy `F`. Both strategies can live in one binary, so
    /// an A/B comparison is one type parameter away.
    ///
    /// # Examples
    ///
    /// With the `stack` feature (on by default):
    ///
    /// ```
    /// # #[cfg(feature = "stack")] {
    /// use bufslab::{Pool, StackFreeList};
    ///
    /// let pool: Pool<StackFreeList> = Pool::builder().build_with()?;
    /// assert_eq!(pool.strategy(), "stack");
    /// # }
    /// # Ok::<(), bufslab::ConfigError>(())
    /// ```
    pub fn build_with<F: FreeList>(self) -> Result<Pool<F>, ConfigError> {
        Pool::from_builder(self.validated()?)
    }
}

impl<F: FreeList> Pool<F> {
    fn from_builder(builder: Builder) -> Result<Self, ConfigError> {
        let shared = Arc::new(Shared {
            classes: builder
                .classes
                .iter()
                .map(|c| Class::new(c, builder.local_capacity))
                .collect(),
            max_bytes: builder.max_bytes,
            allocated: AtomicUsize::new(0),
            handles: AtomicUsize::new(1),
            evict_share: builder.evict_share,
            locals: Mutex::new(Vec::new()),
        });
        // Built before preallocating, so that a failure part-way frees what was made.
        let pool = Pool { shared };
        for (c, config) in builder.classes.iter().enumerate() {
            for _ in 0..config.prealloc_slabs {
                let class = &pool.shared.classes[c];
                let mut slabs = class.slabs.lock();
                let slab = pool
                    .shared
                    .grow(c, &mut slabs)
                    .map_err(|_| ConfigError::OutOfMemory)?;
                // SAFETY: the slab is new: every block is ours to hand to the free list.
                unsafe { push_new_blocks(class, slab, 0) };
            }
        }
        Ok(pool)
    }

    /// Rents a block of at least `len` bytes from the smallest class that fits, growing the
    /// pool by a slab if the class has no free block and the bounds allow.
    ///
    /// Fails with [`Error::TooLarge`], [`Error::Exhausted`] at the bound, or
    /// [`Error::OutOfMemory`]; never panics.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = bufslab::Pool::new();
    /// let buf = pool.get(100)?;
    /// assert_eq!(buf.capacity(), 4096);
    /// assert!(matches!(pool.get(5000), Err(bufslab::Error::TooLarge { .. })));
    /// # Ok::<(), bufslab::Error>(())
    /// ```
    #[inline]
    pub fn get(&self, len: usize) -> Result<PoolBuf, Error> {
        let c = self.shared.class_for(len)?;
        self.shared.take(c, true)
    }

    /// Like [`get`](Self::get), but never allocates: with no free block it fails with
    /// [`Error::Empty`].
    #[inline]
    pub fn try_get(&self, len: usize) -> Result<PoolBuf, Error> {
        let c = self.shared.class_for(len)?;
        self.shared.take(c, false)
    }

    /// Gives every fully free slab above each class's preallocated floor back to the allocator.
    /// Returns how many slabs were released.
    ///
    /// Blocks held in local caches keep their slabs alive. A `get` that finds the free list
    /// empty while a trim runs waits for it rather than growing.
    pub fn trim(&self) -> usize {
        (0..self.shared.classes.len())
            .map(|c| self.shared.evict(c, usize::MAX))
            .sum()
    }

    /// The idle policy: call it periodically (say once a second, from a timer). For each class
    /// where returns kept up with rents since the previous call, it releases
    /// `ceil(evict_share * surplus)` fully free slabs, where the surplus is the free blocks, in
    /// slabs, above the preallocated floor. Returns how many slabs were released.
    pub fn evict_idle(&self) -> usize {
        let shared = &self.shared;
        (0..shared.classes.len())
            .map(|c| {
                let class = &shared.classes[c];
                let out = class.out.get();
                let before = class.idle_mark.swap(out, Ordering::Relaxed);
                if out > before {
                    return 0;
                }
                let slabs = class.slab_count.load(Ordering::Relaxed);
                let free_slabs = slabs
                    .saturating_mul(class.blocks_per_slab)
                    .saturating_sub(out)
                    / class.blocks_per_slab;
                let surplus = free_slabs.min(slabs.saturating_sub(class.prealloc_slabs));
                let limit = (surplus as f64 * shared.evict_share).ceil() as usize;
                if limit == 0 {
                    0
                } else {
                    shared.evict(c, limit)
                }
            })
            .sum()
    }

    /// What the pool holds now, summed over its classes. Reads counters only; allocates nothing.
    pub fn stats(&self) -> Stats {
        let mut total = Stats::default();
        for c in 0..self.shared.classes.len() {
            total.add(&self.shared.class_stats(c));
        }
        total
    }

    /// What class `index` (in increasing block size) holds now, or `None` past the last class.
    pub fn class_stats(&self, index: usize) -> Option<ClassStats> {
        (index < self.shared.classes.len()).then(|| self.shared.class_stats(index))
    }

    /// The block sizes of the pool's classes, smallest first.
    pub fn block_sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.shared.classes.iter().map(|c| c.block_size)
    }

    /// The name of the free-list strategy ("queue" or "stack").
    pub fn strategy(&self) -> &'static str {
        F::NAME
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<F>> {
        &self.shared
    }
}

impl<F: FreeList> Clone for Pool<F> {
    fn clone(&self) -> Self {
        self.shared.handles.fetch_add(1, Ordering::Relaxed);
        Pool {
            shared: self.shared.clone(),
        }
    }
}

impl<F: FreeList> Drop for Pool<F> {
    fn drop(&mut self) {
        if self.shared.handles.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // The last handle: close every class. Where blocks are still out, the thread that
        // returns the last one frees the slabs (see `out_count`).
        let this = Arc::as_ptr(&self.shared);
        for c in 0..self.shared.classes.len() {
            if self.shared.classes[c].out.close() {
                // SAFETY: the class is closed with no block out, and this handle's strong
                // count keeps the pool alive during the call.
                unsafe { Shared::reap(this, c) };
            } else {
                #[cfg(feature = "debug")]
                crate::debug::report_outstanding(
                    self.shared.classes[c].block_size,
                    self.shared.classes[c].out.get(),
                );
            }
        }
    }
}

impl<F: FreeList> fmt::Debug for Pool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("strategy", &F::NAME)
            .field("stats", &self.stats())
            .finish()
    }
}

impl<F: FreeList> Shared<F> {
    const HOME: HomeVTable = HomeVTable {
        put: put_blocks::<F>,
    };

    pub(crate) fn home(&self) -> &'static HomeVTable {
        &Self::HOME
    }

    /// The pool's identity, as slab headers and thread caches record it, and the pointer their
    /// `HomeVTable::put` calls get. From the Arc, not from `&self`: a put may drop a strong
    /// count through it (`free_slabs`), so its provenance must cover the whole Arc allocation.
    #[inline]
    pub(crate) fn id(self: &Arc<Self>) -> *const () {
        Arc::as_ptr(self).cast()
    }

    #[inline]
    pub(crate) fn class_for(&self, len: usize) -> Result<usize, Error> {
        // Most requests fit the smallest class: one compare.
        if self.classes.first().is_some_and(|c| len <= c.block_size) {
            return Ok(0);
        }
        match self.classes.iter().position(|c| c.block_size >= len) {
            Some(c) => Ok(c),
            None => Err(Error::TooLarge {
                requested: len,
                largest: self.classes.last().map_or(0, |c| c.block_size),
            }),
        }
    }

    /// Takes one block of class `c` from the free list, growing if `grow` allows.
    #[inline]
    pub(crate) fn take(self: &Arc<Self>, c: usize, grow: bool) -> Result<PoolBuf, Error> {
        let class = &self.classes[c];
        match class.free.pop() {
            Some(block) => {
                class.note_taken(1);
                Ok(PoolBuf::rent(block))
            }
            None => from_slow_path(|error| self.take_slow(c, grow, error)),
        }
    }

    #[cold]
    #[inline(never)]
    fn take_slow(self: &Arc<Self>, c: usize, grow: bool, error: &mut Error) -> Option<PoolBuf> {
        split(self.take_or_grow(c, grow), error)
    }

    /// The shared path's slow half: blocks parked in this thread's cache, the free list again
    /// under the class lock, then growth.
    #[inline(always)]
    fn take_or_grow(self: &Arc<Self>, c: usize, grow: bool) -> Result<PoolBuf, Error> {
        // Blocks this thread returned while it has a cache of the pool are parked there: use
        // them before growing or failing.
        if let Some(block) = thread_cache::take_local(self.id(), c) {
            return Ok(PoolBuf::rent(block));
        }
        let class = &self.classes[c];
        let mut slabs = class.slabs.lock();
        // A trim holds every free block while it holds the lock: look again now it is done.
        if let Some(block) = class.free.pop() {
            drop(slabs);
            class.note_taken(1);
            return Ok(PoolBuf::rent(block));
        }
        class.misses.fetch_add(1, Ordering::Relaxed);
        if !grow {
            return Err(Error::Empty {
                block_size: class.block_size,
            });
        }
        let slab = self.grow(c, &mut slabs)?;
        // SAFETY: the slab is new: every block is ours; block 0 is kept for the caller.
        let first = unsafe {
            push_new_blocks(class, slab, 1);
            slab.as_ref().block(0)
        };
        drop(slabs);
        class.note_taken(1);
        Ok(PoolBuf::rent(first))
    }

    /// Allocates and registers a slab for class `c`; its blocks are not yet in the free list.
    fn grow(
        self: &Arc<Self>,
        c: usize,
        slabs: &mut Vec<NonNull<Slab>>,
    ) -> Result<NonNull<Slab>, Error> {
        let class = &self.classes[c];
        let exhausted = Error::Exhausted {
            block_size: class.block_size,
        };
        if slabs.len() >= class.max_slabs {
            return Err(exhausted);
        }
        let bytes = class.slab_bytes();
        self.allocated
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |a| {
                a.checked_add(bytes)
                    .filter(|&total| total <= self.max_bytes)
            })
            .map_err(|_| exhausted)?;
        // From the Arc, not from `&self`: the slab's strong count is taken and later dropped
        // through this pointer, so it must cover the whole Arc allocation.
        let this = Arc::as_ptr(self);
        let Some(slab) = Slab::new(
            class.block_size,
            class.blocks_per_slab as u32,
            c as u8,
            this.cast(),
            &Self::HOME,
        ) else {
            self.allocated.fetch_sub(bytes, Ordering::Relaxed);
            return Err(Error::OutOfMemory { slab_bytes: bytes });
        };
        #[cfg(feature = "debug")]
        // SAFETY: the slab was just made and no block of it is out.
        unsafe {
            crate::debug::poison_slab(slab.as_ref())
        };
        // SAFETY: `this` is the pointer of a live Arc (the caller holds it). The count is the slab's, given back
        // when the slab is freed (`free_slabs`).
        unsafe { Arc::increment_strong_count(this) };
        slabs.push(slab);
        class.slab_count.store(slabs.len(), Ordering::Relaxed);
        Ok(slab)
    }

    /// Releases up to `limit` fully free slabs of class `c` above its floor; returns how many.
    fn evict(self: &Arc<Self>, c: usize, limit: usize) -> usize {
        let class = &self.classes[c];
        let doomed = self.unlink_free_slabs(c, class.prealloc_slabs, limit);
        let n = doomed.len();
        class.evicted.fetch_add(n as u64, Ordering::Relaxed);
        // SAFETY: the slabs are unlinked and all their blocks are out of the free list; the
        // caller holds a handle, so the pool outlives the call.
        unsafe { Self::free_slabs(Arc::as_ptr(self), c, doomed) };
        n
    }

    /// Takes up to `limit` slabs of class `c` whose blocks are all in the free list out of the
    /// registry, and their blocks out of the free list, keeping at least `keep` slabs.
    fn unlink_free_slabs(&self, c: usize, keep: usize, limit: usize) -> Vec<NonNull<Slab>> {
        let class = &self.classes[c];
        let mut slabs = class.slabs.lock();
        let wanted = slabs.len().saturating_sub(keep).min(limit);
        if wanted == 0 {
            return Vec::new();
        }
        // Count each slab's free blocks. Blocks pushed meanwhile are not counted, so their
        // slabs stay: only a slab whose every block was drained here can go.
        let mut drained = Vec::with_capacity(class.free.len());
        while let Some(block) = class.free.pop() {
            drained.push(block);
        }
        for block in &drained {
            // SAFETY: drained from the free list under the class lock: owned here.
            unsafe { block.header() }
                .scratch
                .fetch_add(1, Ordering::Relaxed);
        }
        let mut doomed = Vec::new();
        slabs.retain(|&slab| {
            // SAFETY: registered slabs are live.
            let s = unsafe { slab.as_ref() };
            if doomed.len() < wanted && s.scratch.load(Ordering::Relaxed) == s.blocks() {
                s.scratch.store(DOOMED, Ordering::Relaxed);
                doomed.push(slab);
                false
            } else {
                s.clear_scratch();
                true
            }
        });
        drained.retain(|block| {
            // SAFETY: as above; doomed slabs stay allocated until `free_slabs`.
            unsafe { block.header() }.scratch.load(Ordering::Relaxed) != DOOMED
        });
        class.free.push_batch(&drained);
        class.slab_count.store(slabs.len(), Ordering::Relaxed);
        doomed
    }

    /// Frees every slab of class `c`, once the class is closed with no block out.
    ///
    /// # Safety
    /// `this` points to a live `Shared<F>` kept alive by at least the class's slabs; the class
    /// is closed and no block of it is out, so no other thread touches it.
    unsafe fn reap(this: *const Self, c: usize) {
        // SAFETY: the caller guarantees `this` is live for this block.
        let doomed = unsafe { (*this).unlink_free_slabs(c, 0, usize::MAX) };
        // SAFETY: as above; the slabs are unlinked with all their blocks.
        unsafe { Self::free_slabs(this, c, doomed) };
    }

    /// Frees unlinked slabs and drops the strong count each held on the pool.
    ///
    /// # Safety
    /// `this` is live; each slab is unlinked and none of its blocks is out or in a free list.
    /// The pool may be freed by this call: `this` is not used after it.
    unsafe fn free_slabs(this: *const Self, c: usize, doomed: Vec<NonNull<Slab>>) {
        if doomed.is_empty() {
            return;
        }
        // SAFETY: `this` is live until the strong counts below are dropped.
        let bytes = unsafe { (*this).classes[c].slab_bytes() };
        // SAFETY: as above.
        unsafe { &(*this).allocated }.fetch_sub(bytes * doomed.len(), Ordering::Relaxed);
        for &slab in &doomed {
            // SAFETY: the caller guarantees nothing refers to the slab any more.
            unsafe { Slab::free(slab) };
        }
        for _ in 0..doomed.len() {
            // SAFETY: each freed slab held one strong count, taken in `grow`.
            unsafe { Arc::decrement_strong_count(this) };
        }
    }

    pub(crate) fn class_stats(&self, c: usize) -> ClassStats {
        let class = &self.classes[c];
        let slabs = class.slab_count.load(Ordering::Relaxed);
        let total = slabs * class.blocks_per_slab;
        let out = class.out.get();
        let cached: usize = self
            .locals
            .lock()
            .iter()
            .map(|stashes| stashes[c].len())
            .sum();
        ClassStats {
            block_size: class.block_size,
            slabs,
            free_blocks: total.saturating_sub(out),
            cached_blocks: cached.min(out),
            rented_blocks: out.saturating_sub(cached),
            peak_out_blocks: class.peak.load(Ordering::Relaxed),
            misses: class.misses.load(Ordering::Relaxed),
            evicted_slabs: class.evicted.load(Ordering::Relaxed),
            slab_bytes: class.slab_bytes(),
        }
    }
}

impl<F: FreeList> Owner for Shared<F> {
    fn is_closed(&self) -> bool {
        self.handles.load(Ordering::Acquire) == 0
    }

    fn forget(&self, stashes: &Arc<[Stash]>) {
        self.locals.lock().retain(|p| !Arc::ptr_eq(p, stashes));
    }
}

/// Pushes blocks `from..` of a new slab onto the class's free list.
///
/// # Safety
/// The slab was just made by `grow` and none of its blocks `from..` is owned elsewhere.
unsafe fn push_new_blocks<F: FreeList>(class: &Class<F>, slab: NonNull<Slab>, from: u32) {
    // SAFETY: the caller guarantees the slab is live and new.
    let s = unsafe { slab.as_ref() };
    for i in from..s.blocks() {
        // SAFETY: `i < blocks`, and the block is owned by nobody until pushed.
        class.free.push(unsafe { s.block(i) });
    }
}

/// The `put` of `Shared<F>`'s [`HomeVTable`]: blocks coming back from handles or local caches.
///
/// # Safety
/// As [`HomeVTable::put`]: `pool` is a `Shared<F>` and the blocks of class `class` are owned by
/// the caller, which gives them up.
unsafe fn put_blocks<F: FreeList>(pool: *const (), class: usize, blocks: &[FreeBlock]) {
    #[cfg(feature = "debug")]
    crate::debug::on_put(pool, class, blocks);
    let this = pool.cast::<Shared<F>>();
    // SAFETY: the blocks are out, so their slabs are alive and hold strong counts on the pool.
    let cls = unsafe { &(*this).classes[class] };
    cls.free.push_batch(blocks);
    // After this decrement the pool may be freed by another thread, unless this call is the
    // one that must free it: nothing of the pool is touched on the `false` path.
    if cls.out.give_back(blocks.len()) {
        // SAFETY: the count reached "closed, nothing out" here, so this thread alone frees the
        // class; the slabs still hold their strong counts.
        unsafe { Shared::<F>::reap(this, class) };
    }
}
