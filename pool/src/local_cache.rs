//! The per-thread fast path's two entry points: a [`LocalCache`] handle for a thread that owns
//! its work (thread-per-core), and [`Pool::get_local`] for tasks that move between threads
//! (tokio's multi-thread runtime). Both rent from the calling thread's cache of the pool (see
//! [`thread_cache`](crate::thread_cache)) with no atomic read-modify-write and no lock, and
//! move blocks to and from the shared free list in batches of half the cache's capacity.

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::buf::{from_slow_path, split, PoolBuf};
use crate::error::Error;
use crate::free_list::{DefaultFreeList, FreeList};
use crate::pool::{Pool, Shared};
use crate::thread_cache::{self, Local, Stash};

impl<F: FreeList> Pool<F> {
    /// A per-thread cache of this pool for the calling thread (see [`LocalCache`]).
    ///
    /// A thread has at most one cache per pool: calling this again on the same thread, or
    /// calling it on a thread that already used [`get_local`](Self::get_local), returns another
    /// handle to the same cache.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = bufslab::Pool::new();
    /// let cache = pool.local_cache();
    /// let buf = cache.get(100)?;
    /// assert_eq!(buf.capacity(), 4096);
    /// # Ok::<(), bufslab::Error>(())
    /// ```
    pub fn local_cache(&self) -> LocalCache<F> {
        let local = match thread_cache::find(self.shared().id()) {
            Some(local) => {
                // SAFETY: listed caches are live and owned by this thread.
                unsafe { local.as_ref() }.add_handle();
                local
            }
            None => match open(self.shared(), true) {
                Some(local) => local,
                None => unreachable!("a cache held by a handle is always made"),
            },
        };
        LocalCache {
            local,
            pool: self.clone(),
            _not_send: PhantomData,
        }
    }

    /// Rents a block of at least `len` bytes through the calling thread's cache of this pool,
    /// from any thread and any task: the per-thread fast path for code that cannot keep a
    /// [`LocalCache`] (a task of tokio's multi-thread runtime moves between worker threads, and
    /// a `LocalCache` is not `Send`).
    ///
    /// The first call on a thread makes that thread's cache of the pool (one allocation for the
    /// cache and its slots); later calls find it in a short thread-local list (one entry per
    /// pool the thread uses) and allocate nothing. The thread holds the cache until it exits,
    /// when the cache's blocks go back to the pool; a cache of a pool whose handles are all
    /// dropped is also emptied the next time the thread makes a cache for another pool.
    /// Otherwise as [`Pool::get`], including growth and its errors; on a thread that is exiting
    /// it takes the shared path.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BufMut;
    ///
    /// let pool = bufslab::Pool::new();
    /// let worker = {
    ///     let pool = pool.clone(); // a `Pool` is `Send`: any thread or task can hold one
    ///     std::thread::spawn(move || {
    ///         for _ in 0..1000 {
    ///             let mut buf = pool.get_local(1500).expect("pool within bounds");
    ///             buf.put_slice(b"hello");
    ///         } // each block parks in this thread's cache, and the next call takes it again
    ///     })
    /// };
    /// worker.join().unwrap(); // the thread's exit sends its cached blocks home
    /// assert_eq!(pool.stats().rented_blocks, 0);
    /// assert_eq!(pool.class_stats(0).unwrap().cached_blocks, 0);
    /// ```
    #[inline]
    pub fn get_local(&self, len: usize) -> Result<PoolBuf, Error> {
        self.rent_local(len, true)
    }

    /// Like [`get_local`](Self::get_local), but never allocates a slab: fails with
    /// [`Error::Empty`] when neither this thread's cache nor the shared free list has a block.
    /// (The first call on a thread still makes the thread's cache.)
    #[inline]
    pub fn try_get_local(&self, len: usize) -> Result<PoolBuf, Error> {
        self.rent_local(len, false)
    }

    /// Ends the calling thread's hold on its cache of this pool (the one
    /// [`get_local`](Self::get_local) made): the cache's blocks go back to the shared free
    /// list, unless a [`LocalCache`] handle on this thread still uses the cache. The next
    /// `get_local` on the thread makes a new one.
    ///
    /// Thread exit does this anyway; call it on a thread that stops serving the pool but lives
    /// on, or before reading [`stats`](Self::stats) that should not count the thread's cache.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = bufslab::Pool::new();
    /// drop(pool.get_local(100)?);
    /// assert!(pool.class_stats(0).unwrap().cached_blocks > 0);
    /// pool.release_local();
    /// assert_eq!(pool.class_stats(0).unwrap().cached_blocks, 0);
    /// # Ok::<(), bufslab::Error>(())
    /// ```
    pub fn release_local(&self) {
        if let Some(local) = thread_cache::find(self.shared().id()) {
            // SAFETY: listed caches are live and owned by this thread.
            unsafe { Local::release_by_thread(local) };
        }
    }

    #[inline(always)]
    fn rent_local(&self, len: usize, grow: bool) -> Result<PoolBuf, Error> {
        let shared = self.shared();
        let c = shared.class_for(len)?;
        match thread_cache::find(shared.id()) {
            // SAFETY: listed caches are live and owned by this thread.
            Some(local) => rent(shared, unsafe { local.as_ref() }, c, grow, true),
            None => from_slow_path(|error| self.rent_first(c, grow, error)),
        }
    }

    /// The thread's first rent through `get_local`: make its cache, or take the shared path on
    /// an exiting thread.
    #[cold]
    #[inline(never)]
    fn rent_first(&self, c: usize, grow: bool, error: &mut Error) -> Option<PoolBuf> {
        let shared = self.shared();
        let got = match open(shared, false) {
            // SAFETY: just made and linked; owned by this thread.
            Some(local) => rent(shared, unsafe { local.as_ref() }, c, grow, true),
            None => shared.take(c, grow),
        };
        split(got, error)
    }
}

/// Makes this thread's cache of the pool.
fn open<F: FreeList>(shared: &Arc<Shared<F>>, handle: bool) -> Option<NonNull<Local>> {
    let stashes: Arc<[Stash]> = shared
        .classes
        .iter()
        .map(|class| Stash::new(class.local_capacity))
        .collect();
    let local = Local::open(
        shared.id(),
        shared.home(),
        shared.clone(),
        stashes.clone(),
        handle,
    )?;
    shared.locals.lock().push(stashes);
    Some(local)
}

/// Rents a block of class `c` from the thread's cache `local` of the pool, refilling it from the
/// shared free list when empty.
#[inline(always)]
fn rent<F: FreeList>(
    shared: &Arc<Shared<F>>,
    local: &Local,
    c: usize,
    grow: bool,
    by_thread: bool,
) -> Result<PoolBuf, Error> {
    match local.pop(c) {
        Some(block) => Ok(PoolBuf::rent(block)),
        None => from_slow_path(|error| refill(shared, local, c, grow, by_thread, error)),
    }
}

#[cold]
#[inline(never)]
fn refill<F: FreeList>(
    shared: &Arc<Shared<F>>,
    local: &Local,
    c: usize,
    grow: bool,
    by_thread: bool,
    error: &mut Error,
) -> Option<PoolBuf> {
    if by_thread {
        // A cache made for a `LocalCache` and now used through `get_local` stays when the
        // handle goes.
        local.hold_by_thread();
    }
    let class = &shared.classes[c];
    let got = local.stashes[c].refill(|slots| class.free.pop_batch(slots));
    if got > 0 {
        class.note_taken(got);
        if let Some(block) = local.pop(c) {
            return Some(PoolBuf::rent(block));
        }
    }
    split(shared.take(c, grow), error)
}

/// A thread's cache of a [`Pool`]: gets and puts with no atomic read-modify-write and no lock.
///
/// Made by [`Pool::local_cache`]. It is neither `Send` nor `Sync`: it belongs to the thread that
/// made it (for tasks that move between threads, use [`Pool::get_local`], which reaches the same
/// kind of cache through the thread they run on). Buffers it hands out are ordinary
/// [`PoolBuf`]s: they may be sent to and dropped on any thread. Dropping the last handle of a
/// thread's cache flushes its blocks to the pool, unless the thread also uses the cache through
/// `get_local`.
///
/// Blocks parked in a cache (at most its capacity per class) count as out of the shared free
/// list: `Pool::get` on the same thread uses them before growing, other threads cannot.
///
/// # Examples
///
/// A thread-per-core server makes one cache per worker thread:
///
/// ```
/// use bytes::BufMut;
///
/// let pool = bufslab::Pool::builder()
///     .class(bufslab::ClassConfig::new(4096).max_slabs(8))
///     .build()?;
/// let workers: Vec<_> = (0..2)
///     .map(|_| {
///         let pool = pool.clone();
///         std::thread::spawn(move || {
///             let cache = pool.local_cache();
///             for _ in 0..100 {
///                 let mut buf = cache.get(1500).expect("pool within bounds");
///                 buf.put_slice(b"ping");
///             } // back into this thread's stash: no atomic, no lock
///         })
///     })
///     .collect();
/// for w in workers {
///     w.join().unwrap();
/// }
/// assert_eq!(pool.stats().rented_blocks, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LocalCache<F: FreeList = DefaultFreeList> {
    local: NonNull<Local>,
    pool: Pool<F>,
    _not_send: PhantomData<*const ()>,
}

impl<F: FreeList> LocalCache<F> {
    fn local(&self) -> &Local {
        // SAFETY: the `Local` lives until its last holder lets go, and this handle is one.
        unsafe { self.local.as_ref() }
    }

    /// Rents a block of at least `len` bytes: from this thread's stash, refilled from the pool
    /// when empty, growing the pool as [`Pool::get`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = bufslab::Pool::new();
    /// let cache = pool.local_cache();
    /// assert!(cache.get(4096).is_ok());
    /// assert!(matches!(cache.get(4097), Err(bufslab::Error::TooLarge { .. })));
    /// ```
    #[inline]
    pub fn get(&self, len: usize) -> Result<PoolBuf, Error> {
        let shared = self.pool.shared();
        rent(shared, self.local(), shared.class_for(len)?, true, false)
    }

    /// Like [`get`](Self::get), but never allocates a slab: fails with [`Error::Empty`] when
    /// neither the stash nor the shared free list has a block.
    #[inline]
    pub fn try_get(&self, len: usize) -> Result<PoolBuf, Error> {
        let shared = self.pool.shared();
        rent(shared, self.local(), shared.class_for(len)?, false, false)
    }

    /// The pool this cache draws from.
    pub fn pool(&self) -> &Pool<F> {
        &self.pool
    }
}

impl<F: FreeList> Clone for LocalCache<F> {
    fn clone(&self) -> Self {
        self.local().add_handle();
        LocalCache {
            local: self.local,
            pool: self.pool.clone(),
            _not_send: PhantomData,
        }
    }
}

impl<F: FreeList> Drop for LocalCache<F> {
    fn drop(&mut self) {
        // SAFETY: this handle's cache is live and this thread's (`LocalCache` is not `Send`);
        // the handle is being dropped. `self.pool` is still a live handle during the flush.
        unsafe { Local::drop_handle(self.local) };
    }
}

impl<F: FreeList> std::fmt::Debug for LocalCache<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCache")
            .field("classes", &self.local().stashes.len())
            .finish_non_exhaustive()
    }
}
