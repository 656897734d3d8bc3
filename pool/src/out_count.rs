//! How many blocks of a class are outside its free list, and the hand-off that frees the class's
//! slabs once the pool is closed and the last block is back.
//!
//! The count and the "closed" flag share one word so that exactly one thread sees the transition
//! to "closed and nothing out": either the closer (nothing was out when it closed) or the
//! returner of the last block. That thread, and only it, frees the slabs. A returner that does
//! not see the transition touches nothing of the pool after its decrement, which is what makes
//! it safe for the pool to disappear right after.

use crate::sync::{AtomicUsize, Ordering};

const CLOSED: usize = 1 << (usize::BITS - 1);

pub(crate) struct OutCount(AtomicUsize);

impl OutCount {
    pub(crate) fn new() -> Self {
        OutCount(AtomicUsize::new(0))
    }

    /// Counts `n` blocks taken out of the free list; returns how many are out now.
    pub(crate) fn take(&self, n: usize) -> usize {
        // Relaxed: the free list's own synchronisation orders the blocks; this is a tally.
        (self.0.fetch_add(n, Ordering::Relaxed) + n) & !CLOSED
    }

    /// Counts `n` blocks pushed back onto the free list (push first, then call this).
    ///
    /// Returns `true` when this call brought a closed pool's count to zero: the caller must then
    /// free the class's slabs. AcqRel: the release publishes this thread's push to whoever frees,
    /// the acquire lets the freeing thread see every earlier returner's push.
    pub(crate) fn give_back(&self, n: usize) -> bool {
        self.0.fetch_sub(n, Ordering::AcqRel) == CLOSED | n
    }

    /// Marks the pool closed. Returns `true` when no block was out: the caller must free the
    /// slabs now, since no returner will.
    pub(crate) fn close(&self) -> bool {
        self.0.fetch_or(CLOSED, Ordering::AcqRel) & !CLOSED == 0
    }

    /// Blocks out now (a snapshot).
    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed) & !CLOSED
    }
}

#[cfg(all(test, bufslab_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two blocks come back on two threads while a third closes: exactly one thread frees.
    #[test]
    fn exactly_one_reaper() {
        loom::model(|| {
            let count = Arc::new(OutCount::new());
            count.take(2);
            let reapers = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let (count, reapers) = (count.clone(), reapers.clone());
                    loom::thread::spawn(move || {
                        if count.give_back(1) {
                            reapers.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            if count.close() {
                reapers.fetch_add(1, Ordering::Relaxed);
            }
            for h in handles {
                h.join().unwrap();
            }
            assert_eq!(reapers.load(Ordering::Relaxed), 1);
            assert_eq!(count.get(), 0);
        });
    }

    /// The reaper sees every returner's plain (non-atomic) write made before its give_back:
    /// loom reports a data race if the hand-off does not order them.
    #[test]
    fn reaper_sees_returned_data() {
        loom::model(|| {
            let count = Arc::new(OutCount::new());
            let data = Arc::new(Shared(loom::cell::UnsafeCell::new(0)));
            count.take(1);
            let t = {
                let (count, data) = (count.clone(), data.clone());
                loom::thread::spawn(move || {
                    // SAFETY: this thread owns the "block" until its give_back.
                    data.0.with_mut(|p| unsafe { *p = 7 });
                    if count.give_back(1) {
                        // SAFETY: the count reached closed-and-zero here: nobody else touches it.
                        assert_eq!(data.0.with(|p| unsafe { *p }), 7);
                    }
                })
            };
            if count.close() {
                // SAFETY: as above, for the closer.
                assert_eq!(data.0.with(|p| unsafe { *p }), 7);
            }
            t.join().unwrap();
        });
    }

    struct Shared(loom::cell::UnsafeCell<usize>);
    // SAFETY: the tests access the cell under the protocol being checked; loom reports races.
    unsafe impl Sync for Shared {}
    unsafe impl Send for Shared {}
}
