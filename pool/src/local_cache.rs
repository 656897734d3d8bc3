//! The per-thread fast path: a small stash of free blocks per class, owned by one thread.
//!
//! A thread-per-core server rents and returns on the same thread. Its [`LocalCache`] serves
//! both from a plain `Vec` with no atomic read-modify-write and no lock, and moves blocks to and
//! from the shared free list in batches of half its capacity.
//!
//! Returns find the cache through a thread-local list, so a buffer needs no pointer to the cache
//! it came from: a block dropped on its own thread goes into that thread's stash; one dropped on
//! a thread with no cache of the pool goes straight to the shared free list (the remote-return
//! path); one dropped on a thread with its own cache of the pool lands in that stash. In every
//! case the block is back in its own pool, owned once.

use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::buf::PoolBuf;
use crate::error::Error;
use crate::free_list::{DefaultFreeList, FreeList};
use crate::pool::Pool;
use crate::slab::{FreeBlock, HomeVTable};

thread_local! {
    /// This thread's live caches, newest first, linked through `Local::next`. A const-initialised
    /// `Cell` has no destructor, so it stays usable while other thread-locals are torn down.
    static HEAD: Cell<*const Local> = const { Cell::new(ptr::null()) };
}

/// The state behind one thread's cache of one pool.
struct Local {
    /// The pool's identity (its shared state's address), matched against a slab's `pool`.
    pool: *const (),
    home: &'static HomeVTable,
    next: Cell<*const Local>,
    /// `LocalCache` handles sharing this state.
    refs: Cell<usize>,
    /// One stash per class, also registered with the pool for `Pool::stats`.
    stashes: Arc<[Stash]>,
}

/// A fixed-capacity stack of free blocks of one class.
pub(crate) struct Stash {
    /// Blocks parked. Only the owning thread writes it (plain loads and stores, no
    /// read-modify-write); `Pool::stats` reads it from any thread.
    len: AtomicUsize,
    /// `slots[..len]` are the parked blocks; the rest are stale copies or placeholders.
    slots: UnsafeCell<Box<[FreeBlock]>>,
}

// SAFETY: other threads only ever read `len`, an atomic; `slots` is touched by the owning thread
// alone (`Local` is reached only through a `!Send` `LocalCache` or that thread's list).
unsafe impl Sync for Stash {}

impl Stash {
    fn new(capacity: usize) -> Self {
        Stash {
            len: AtomicUsize::new(0),
            slots: UnsafeCell::new(vec![FreeBlock::EMPTY; capacity].into_boxed_slice()),
        }
    }

    /// Blocks parked now; any thread may ask.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Copies `block` into the next free slot; `false` when the stash is full. Owning thread
    /// only (see `Stash`).
    #[inline]
    fn try_park(&self, block: FreeBlock) -> bool {
        let len = self.len.load(Ordering::Relaxed);
        // SAFETY: owning thread, and the borrow ends within this function.
        match unsafe { self.slots() }.get_mut(len) {
            Some(slot) => {
                *slot = block;
                self.len.store(len + 1, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// The slots.
    ///
    /// # Safety
    /// Only the owning thread calls this, and no other reference to the slots is live: none of
    /// the pool's code called while one is held re-enters the cache.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slots(&self) -> &mut [FreeBlock] {
        // SAFETY: the caller guarantees exclusive access on the owning thread.
        unsafe { &mut *self.slots.get() }
    }
}

impl Local {
    #[inline]
    fn pop(&self, c: usize) -> Option<FreeBlock> {
        let stash = &self.stashes[c];
        let len = stash.len.load(Ordering::Relaxed).checked_sub(1)?;
        // SAFETY: owning thread (see `Stash`); the borrow ends here.
        let block = *unsafe { stash.slots() }.get(len)?;
        stash.len.store(len, Ordering::Relaxed);
        Some(block)
    }

    /// Parks a returned block, flushing half the stash first when it is full; `false` (block
    /// not taken) when caching is off.
    fn push(&self, c: usize, block: FreeBlock) -> bool {
        let stash = &self.stashes[c];
        if stash.try_park(block) {
            return true;
        }
        // SAFETY: owning thread; the flush goes to the shared free list, never back here, and
        // the borrow ends before `try_park` takes its own.
        let slots = unsafe { stash.slots() };
        if slots.is_empty() {
            return false;
        }
        let keep = self.flush_half(c, slots);
        stash.len.store(keep, Ordering::Relaxed);
        stash.try_park(block)
    }

    /// Gives the newer half of a full stash back to the pool; returns the length left.
    #[cold]
    fn flush_half(&self, c: usize, parked: &[FreeBlock]) -> usize {
        let keep = parked.len() / 2;
        // SAFETY: the blocks are this stash's and the caller drops them from it; the cache
        // holds a pool handle, so the pool is live and not closed.
        unsafe { (self.home.put)(self.pool, c, &parked[keep..]) };
        keep
    }
}

/// Parks a block in this thread's cache of its pool if there is one with room: the fast path of
/// every return, with no call and no flush.
#[inline]
pub(crate) fn park(block: FreeBlock) -> bool {
    // SAFETY: the caller owns the block, so its slab is live.
    let slab = unsafe { block.slab().as_ref() };
    let Some(local) = find_local(slab.pool()) else {
        return false;
    };
    // SAFETY: listed `Local`s are live and owned by this thread.
    let local = unsafe { local.as_ref() };
    local
        .stashes
        .get(slab.class())
        .is_some_and(|stash| stash.try_park(block))
}

/// Returns a block to a cache of its pool on this thread, if there is one.
#[inline]
pub(crate) fn put_local(pool: *const (), class: usize, block: FreeBlock) -> bool {
    match find_local(pool) {
        // SAFETY: listed `Local`s are live and owned by this thread.
        Some(local) => unsafe { local.as_ref() }.push(class, block),
        None => false,
    }
}

/// Takes a block of class `class` from this thread's cache of the pool, if it has one.
pub(crate) fn take_local(pool: *const (), class: usize) -> Option<FreeBlock> {
    // SAFETY: listed `Local`s are live and owned by this thread (see `put_local`).
    find_local(pool).and_then(|local| unsafe { local.as_ref() }.pop(class))
}

/// This thread's cache of the pool, if it has one.
#[inline]
fn find_local(pool: *const ()) -> Option<NonNull<Local>> {
    // Only the head pointer is read inside `with`, which keeps the walk inlined in callers.
    let mut p = HEAD.with(Cell::get);
    // SAFETY: the list holds only live `Local`s of this thread: each is unlinked before it is
    // freed.
    while let Some(local) = unsafe { p.as_ref() } {
        if local.pool == pool {
            // From the list's own pointer, which carries the provenance of `Box::leak`: the
            // last handle frees the `Local` through it.
            return NonNull::new(p.cast_mut());
        }
        p = local.next.get();
    }
    None
}

/// A thread's cache of a [`Pool`]: gets and puts with no atomic read-modify-write and no lock.
///
/// Made by [`Pool::local_cache`]. It is neither `Send` nor `Sync`: it belongs to the thread that
/// made it. Buffers it hands out are ordinary [`PoolBuf`]s: they may be sent to and dropped on
/// any thread. Dropping the last handle of a thread's cache flushes its blocks to the pool.
///
/// Blocks parked in a cache (at most its capacity per class) count as out of the shared free
/// list: `Pool::get` on the same thread uses them before growing, other threads cannot.
///
/// ```
/// use bytes::BufMut;
///
/// let pool = bufslab::Pool::builder()
///     .class(bufslab::ClassConfig::new(4096).max_slabs(8))
///     .build()?;
/// let cache = pool.local_cache();
/// let mut buf = cache.get(1500)?;
/// buf.put_slice(b"ping");
/// drop(buf); // back into this thread's stash
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LocalCache<F: FreeList = DefaultFreeList> {
    local: NonNull<Local>,
    pool: Pool<F>,
    _not_send: PhantomData<*const ()>,
}

impl<F: FreeList> LocalCache<F> {
    pub(crate) fn new(pool: Pool<F>) -> Self {
        let id = Arc::as_ptr(pool.shared()).cast::<()>();
        if let Some(local) = find_local(id) {
            // SAFETY: listed `Local`s are live and owned by this thread.
            let l = unsafe { local.as_ref() };
            l.refs.set(l.refs.get() + 1);
            return LocalCache {
                local,
                pool,
                _not_send: PhantomData,
            };
        }
        let shared = pool.shared();
        let stashes: Arc<[Stash]> = shared
            .classes
            .iter()
            .map(|class| Stash::new(class.local_capacity))
            .collect();
        shared.locals.lock().push(stashes.clone());
        let local = Box::new(Local {
            pool: id,
            home: shared.home(),
            next: Cell::new(HEAD.with(Cell::get)),
            refs: Cell::new(1),
            stashes,
        });
        let local = NonNull::from(Box::leak(local));
        HEAD.with(|head| head.set(local.as_ptr()));
        LocalCache {
            local,
            pool,
            _not_send: PhantomData,
        }
    }

    fn local(&self) -> &Local {
        // SAFETY: the `Local` lives until the last handle of this thread drops.
        unsafe { self.local.as_ref() }
    }

    /// Rents a block of at least `len` bytes: from this thread's stash, refilled from the pool
    /// when empty, growing the pool as [`Pool::get`] does.
    #[inline]
    pub fn get(&self, len: usize) -> Result<PoolBuf, Error> {
        self.rent(len, true)
    }

    /// Like [`get`](Self::get), but never allocates a slab: fails with [`Error::Empty`] when
    /// neither the stash nor the shared free list has a block.
    #[inline]
    pub fn try_get(&self, len: usize) -> Result<PoolBuf, Error> {
        self.rent(len, false)
    }

    #[inline(always)]
    fn rent(&self, len: usize, grow: bool) -> Result<PoolBuf, Error> {
        let shared = self.pool.shared();
        let c = shared.class_for(len)?;
        match self.local().pop(c) {
            Some(block) => Ok(PoolBuf::rent(block)),
            None => self.refill(c, grow),
        }
    }

    /// The pool this cache draws from.
    pub fn pool(&self) -> &Pool<F> {
        &self.pool
    }

    #[cold]
    fn refill(&self, c: usize, grow: bool) -> Result<PoolBuf, Error> {
        let shared = self.pool.shared();
        let class = &shared.classes[c];
        let local = self.local();
        let stash = &local.stashes[c];
        // SAFETY: owning thread, and `pop_batch` does not re-enter the cache.
        let slots = unsafe { stash.slots() };
        // Half full: room to park returns before the next flush.
        let want = slots.len().div_ceil(2);
        let got = class.free.pop_batch(&mut slots[..want]);
        if got > 0 {
            class.note_taken(got);
            stash.len.store(got, Ordering::Relaxed);
            if let Some(block) = local.pop(c) {
                return Ok(PoolBuf::rent(block));
            }
        }
        shared.take(c, grow)
    }
}

impl<F: FreeList> Clone for LocalCache<F> {
    fn clone(&self) -> Self {
        let local = self.local();
        local.refs.set(local.refs.get() + 1);
        LocalCache {
            local: self.local,
            pool: self.pool.clone(),
            _not_send: PhantomData,
        }
    }
}

impl<F: FreeList> Drop for LocalCache<F> {
    fn drop(&mut self) {
        let local = self.local();
        let refs = local.refs.get() - 1;
        local.refs.set(refs);
        if refs > 0 {
            return;
        }
        let target = self.local.as_ptr().cast_const();
        HEAD.with(|head| {
            if head.get() == target {
                head.set(local.next.get());
                return;
            }
            let mut p = head.get();
            // SAFETY: listed `Local`s are live and owned by this thread.
            while let Some(l) = unsafe { p.as_ref() } {
                if l.next.get() == target {
                    l.next.set(local.next.get());
                    return;
                }
                p = l.next.get();
            }
        });
        for (c, stash) in local.stashes.iter().enumerate() {
            // SAFETY: owning thread; the cache is unlinked, so no return can reach it now.
            let slots = unsafe { stash.slots() };
            let parked = &slots[..stash.len()];
            if !parked.is_empty() {
                // SAFETY: the blocks are the stash's and it forgets them below; `self.pool` is
                // still a live handle.
                unsafe { (local.home.put)(local.pool, c, parked) };
                stash.len.store(0, Ordering::Relaxed);
            }
        }
        self.pool
            .shared()
            .locals
            .lock()
            .retain(|p| !Arc::ptr_eq(p, &local.stashes));
        // SAFETY: made by `Box::leak` in `new`, unlinked above, and this was the last handle.
        drop(unsafe { Box::from_raw(self.local.as_ptr()) });
    }
}

impl<F: FreeList> std::fmt::Debug for LocalCache<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCache")
            .field("classes", &self.local().stashes.len())
            .finish_non_exhaustive()
    }
}
