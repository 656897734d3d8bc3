//! A thread's caches of free blocks, one per pool it uses: the state behind both the
//! [`LocalCache`](crate::LocalCache) handle and [`Pool::get_local`](crate::Pool::get_local).
//!
//! Each thread keeps a list of its caches in a thread-local, so a returned block needs no
//! pointer to the cache it came from: the return path ([`home`](crate::home)) looks its pool up
//! in the list of the thread it is dropped on. A cache is shared by the thread's `LocalCache`
//! handles of the pool and, once [`Pool::get_local`](crate::Pool::get_local) ran on the thread,
//! by the thread itself: the thread-exit hook releases that share, flushing the cache's blocks
//! home. A cache whose pool was dropped by every handle is also flushed the next time the thread
//! makes a cache for another pool, so a long-lived thread does not pile up caches of dead pools.

use std::cell::{Cell, UnsafeCell};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::slab::{FreeBlock, HomeVTable};

thread_local! {
    /// This thread's live caches, newest first, linked through `Local::next`. A const-initialised
    /// `Cell` has no destructor, so it stays usable while other thread-locals are torn down.
    static HEAD: Cell<*const Local> = const { Cell::new(ptr::null()) };

    /// Flushes the caches the thread itself holds (made by `Pool::get_local`) when it exits.
    static EXIT: ExitHook = const { ExitHook };
}

/// What a thread's cache needs of its pool, whatever the pool's free list.
pub(crate) trait Owner: Send + Sync {
    /// `true` once every `Pool` handle is gone.
    fn is_closed(&self) -> bool;
    /// Takes a cache's stashes off the pool's list (the one `Pool::stats` reads).
    fn forget(&self, stashes: &Arc<[Stash]>);
}

/// The state behind one thread's cache of one pool.
pub(crate) struct Local {
    /// The pool's identity (its shared state's address), matched against a slab's `pool`.
    pool: *const (),
    home: &'static HomeVTable,
    /// Keeps the pool's shared state (not a `Pool` handle) alive while the cache exists.
    owner: Arc<dyn Owner>,
    next: Cell<*const Local>,
    /// `LocalCache` handles sharing this state.
    handles: Cell<usize>,
    /// The thread itself holds the cache (made or used by `Pool::get_local`).
    held_by_thread: Cell<bool>,
    /// One stash per class, also registered with the pool for `Pool::stats`.
    pub(crate) stashes: Arc<[Stash]>,
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
    pub(crate) fn new(capacity: usize) -> Self {
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

    /// Refills an empty stash to half its capacity through `take`, which fills the front of
    /// the slice it is given and returns how many blocks it put there.
    #[inline]
    pub(crate) fn refill(&self, take: impl FnOnce(&mut [FreeBlock]) -> usize) -> usize {
        debug_assert_eq!(self.len(), 0);
        // SAFETY: owning thread, and `take` (a free-list pop) does not re-enter the cache.
        let slots = unsafe { self.slots() };
        // Half full: room to park returns before the next flush.
        let want = slots.len().div_ceil(2);
        let got = take(&mut slots[..want]);
        self.len.store(got, Ordering::Relaxed);
        got
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
    /// Makes a cache of the pool `pool` for this thread and links it into the thread's list.
    /// `handles` says whether a `LocalCache` handle holds it (else the thread does).
    ///
    /// `None` when the thread is exiting (its exit hook is gone): the caller takes the shared
    /// path instead, and nothing is made that nobody would flush.
    pub(crate) fn open(
        pool: *const (),
        home: &'static HomeVTable,
        owner: Arc<dyn Owner>,
        stashes: Arc<[Stash]>,
        handle: bool,
    ) -> Option<NonNull<Local>> {
        if !handle {
            // Registers the exit hook on first use; fails once it has run.
            EXIT.try_with(|_| ()).ok()?;
            sweep_dead_pools();
        }
        let local = Box::new(Local {
            pool,
            home,
            owner,
            next: Cell::new(HEAD.with(Cell::get)),
            handles: Cell::new(usize::from(handle)),
            held_by_thread: Cell::new(!handle),
            stashes,
        });
        let local = NonNull::from(Box::leak(local));
        HEAD.with(|head| head.set(local.as_ptr()));
        Some(local)
    }

    #[inline]
    pub(crate) fn pop(&self, c: usize) -> Option<FreeBlock> {
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
        // SAFETY: the blocks are this stash's and the caller drops them from it; `owner` keeps
        // the pool's shared state alive, and `put` works on a closed pool too.
        unsafe { (self.home.put)(self.pool, c, &parked[keep..]) };
        keep
    }

    /// One more `LocalCache` handle.
    pub(crate) fn add_handle(&self) {
        self.handles.set(self.handles.get() + 1);
    }

    /// The thread holds the cache from now on (until it exits).
    pub(crate) fn hold_by_thread(&self) {
        if !self.held_by_thread.get() && EXIT.try_with(|_| ()).is_ok() {
            self.held_by_thread.set(true);
        }
    }

    /// Ends the thread's hold on the cache, if it has one; the last holder frees the cache.
    ///
    /// # Safety
    /// `local` is a live cache of this thread.
    pub(crate) unsafe fn release_by_thread(local: NonNull<Local>) {
        // SAFETY: live, per the caller.
        let l = unsafe { local.as_ref() };
        if l.held_by_thread.replace(false) && l.handles.get() == 0 {
            // SAFETY: no holder is left.
            unsafe { Local::close(local) };
        }
    }

    /// Drops one `LocalCache` handle; the last holder frees the cache.
    ///
    /// # Safety
    /// `local` is a live cache of this thread, and the caller's handle is not used afterwards.
    pub(crate) unsafe fn drop_handle(local: NonNull<Local>) {
        // SAFETY: live, per the caller.
        let l = unsafe { local.as_ref() };
        l.handles.set(l.handles.get() - 1);
        if l.handles.get() == 0 && !l.held_by_thread.get() {
            // SAFETY: no holder is left.
            unsafe { Local::close(local) };
        }
    }

    /// Unlinks the cache, flushes its blocks home and frees it.
    ///
    /// # Safety
    /// `local` is a live cache of this thread with no holder left (no handle, not held by the
    /// thread).
    unsafe fn close(local: NonNull<Local>) {
        let target = local.as_ptr().cast_const();
        // SAFETY: live until freed below.
        let l = unsafe { local.as_ref() };
        HEAD.with(|head| {
            if head.get() == target {
                head.set(l.next.get());
                return;
            }
            let mut p = head.get();
            // SAFETY: listed `Local`s are live and owned by this thread.
            while let Some(prev) = unsafe { p.as_ref() } {
                if prev.next.get() == target {
                    prev.next.set(l.next.get());
                    return;
                }
                p = prev.next.get();
            }
        });
        for (c, stash) in l.stashes.iter().enumerate() {
            // SAFETY: owning thread; the cache is unlinked, so no return can reach it now.
            let slots = unsafe { stash.slots() };
            let parked = &slots[..stash.len()];
            if !parked.is_empty() {
                // SAFETY: the blocks are the stash's and it forgets them below; `owner` keeps
                // the pool's shared state alive.
                unsafe { (l.home.put)(l.pool, c, parked) };
                stash.len.store(0, Ordering::Relaxed);
            }
        }
        l.owner.forget(&l.stashes);
        // SAFETY: made by `Box::leak` in `open`, unlinked above, and nothing holds it.
        drop(unsafe { Box::from_raw(local.as_ptr()) });
    }
}

/// Releases the thread's hold on every cache it holds; those with no `LocalCache` handle left
/// are flushed and freed.
struct ExitHook;

impl Drop for ExitHook {
    fn drop(&mut self) {
        release_held(|_| true);
    }
}

/// Frees the thread-held caches of pools that every handle has dropped.
fn sweep_dead_pools() {
    release_held(|l| l.owner.is_closed());
}

/// Releases the thread's hold on each cache it holds for which `which` says so.
fn release_held(which: impl Fn(&Local) -> bool) {
    let mut p = HEAD.with(Cell::get);
    while let Some(local) = NonNull::new(p.cast_mut()) {
        // SAFETY: listed `Local`s are live and owned by this thread; `next` is read before the
        // cache may be freed.
        let l = unsafe { local.as_ref() };
        p = l.next.get();
        if which(l) {
            // SAFETY: listed, so live and this thread's; not used after this call.
            unsafe { Local::release_by_thread(local) };
        }
    }
}

/// Parks a block in this thread's cache of its pool if there is one with room: the fast path of
/// every return, with no call and no flush.
#[inline]
pub(crate) fn park(block: FreeBlock) -> bool {
    // SAFETY: the caller owns the block.
    let slab = unsafe { block.header() };
    let Some(local) = find(slab.pool()) else {
        return false;
    };
    // SAFETY: listed `Local`s are live and owned by this thread.
    let local = unsafe { local.as_ref() };
    let stash = match &local.stashes[..] {
        // Every block of a one-class pool is of class 0, so the stash is known without the
        // header's class. Indexing by it would put the header on the path from one rent to the
        // next: the popped block's header gives the class, the class the stash whose length
        // this return stores and the next rent loads. The pool identity read above only feeds
        // a branch, which is predicted.
        [only] => {
            debug_assert_eq!(slab.class(), 0);
            only
        }
        stashes => match stashes.get(slab.class()) {
            Some(stash) => stash,
            None => return false,
        },
    };
    stash.try_park(block)
}

/// Returns a block to a cache of its pool on this thread, if there is one.
#[inline]
pub(crate) fn put_local(pool: *const (), class: usize, block: FreeBlock) -> bool {
    match find(pool) {
        // SAFETY: listed `Local`s are live and owned by this thread.
        Some(local) => unsafe { local.as_ref() }.push(class, block),
        None => false,
    }
}

/// Takes a block of class `class` from this thread's cache of the pool, if it has one.
pub(crate) fn take_local(pool: *const (), class: usize) -> Option<FreeBlock> {
    // SAFETY: listed `Local`s are live and owned by this thread (see `put_local`).
    find(pool).and_then(|local| unsafe { local.as_ref() }.pop(class))
}

/// This thread's cache of the pool, if it has one.
#[inline]
pub(crate) fn find(pool: *const ()) -> Option<NonNull<Local>> {
    // Only the head pointer is read inside `with`, which keeps the walk inlined in callers.
    let mut p = HEAD.with(Cell::get);
    // SAFETY: the list holds only live `Local`s of this thread: each is unlinked before it is
    // freed.
    while let Some(local) = unsafe { p.as_ref() } {
        if local.pool == pool {
            // From the list's own pointer, which carries the provenance of `Box::leak`: the
            // last holder frees the `Local` through it.
            return NonNull::new(p.cast_mut());
        }
        p = local.next.get();
    }
    None
}
