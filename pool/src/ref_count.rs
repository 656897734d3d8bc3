//! The reference count of a frozen block, shared by its [`PoolBytes`](crate::PoolBytes) views.
//!
//! Arc's protocol: increments are relaxed (a new view can only be made from a live one), the
//! last decrement releases and then acquires, so the thread that returns the block sees every
//! other view's reads finished.

use crate::sync::{fence, AtomicU32, Ordering};

/// Clones past this abort, as `Arc` does: wrapping to zero would free a block still in use.
const MAX_REFS: u32 = u32::MAX / 2;

#[repr(transparent)]
pub(crate) struct RefCount(AtomicU32);

impl RefCount {
    #[cfg(bufslab_loom)]
    pub(crate) fn new() -> Self {
        RefCount(AtomicU32::new(0))
    }

    /// Starts counting with one view; the caller owns the block uniquely.
    pub(crate) fn init(&self) {
        self.0.store(1, Ordering::Relaxed);
    }

    /// Counts one more view.
    pub(crate) fn acquire(&self) {
        if self.0.fetch_add(1, Ordering::Relaxed) > MAX_REFS {
            std::process::abort();
        }
    }

    /// `true` when the caller's view is the only one. Acquire, as the last `release` does: the
    /// other views' reads, finished before their releases, happen before what the caller does
    /// with the block next.
    pub(crate) fn is_unique(&self) -> bool {
        self.0.load(Ordering::Acquire) == 1
    }

    /// Drops one view; `true` when it was the last, and the block may go back to the pool.
    pub(crate) fn release(&self) -> bool {
        if self.0.fetch_sub(1, Ordering::Release) != 1 {
            return false;
        }
        fence(Ordering::Acquire);
        true
    }
}

#[cfg(all(test, bufslab_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    struct Block(loom::cell::UnsafeCell<usize>);
    // SAFETY: the test reads and writes the cell under the protocol being checked; loom reports
    // a data race if the protocol does not order them.
    unsafe impl Sync for Block {}
    unsafe impl Send for Block {}

    /// Views dropped on two threads: exactly one sees the last drop, and its reuse of the block
    /// happens after the other view's read.
    #[test]
    fn last_drop_is_unique_and_ordered() {
        loom::model(|| {
            let refs = Arc::new(RefCount::new());
            let block = Arc::new(Block(loom::cell::UnsafeCell::new(5)));
            refs.init();
            refs.acquire();
            let t = {
                let (refs, block) = (refs.clone(), block.clone());
                loom::thread::spawn(move || {
                    // SAFETY: a live view may read the block.
                    let seen = block.0.with(|p| unsafe { *p });
                    assert_eq!(seen, 5);
                    refs.release()
                })
            };
            // SAFETY: a live view may read the block.
            assert_eq!(block.0.with(|p| unsafe { *p }), 5);
            let last_here = refs.release();
            if last_here {
                // SAFETY: the last view is gone: the block is ours to reuse.
                block.0.with_mut(|p| unsafe { *p = 0 });
            }
            let last_there = t.join().unwrap();
            assert!(last_here ^ last_there);
        });
    }
}
