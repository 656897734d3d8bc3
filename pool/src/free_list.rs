//! The free-list strategy of a pool: where returned blocks wait for the next `get`.
//!
//! Two strategies ship, both usable in one binary so they can be measured side by side:
//!
//! - [`QueueFreeList`](crate::QueueFreeList): FIFO, a bounded lock-free queue (crossbeam's `ArrayQueue`), the choice
//!   Kestrel settled on. Gets and puts touch opposite ends, so they contend less under heavy
//!   multi-threaded traffic; a returned block waits longest before reuse.
//! - `StackFreeList` (cargo feature `stack`, on by default): LIFO behind a `parking_lot` mutex.
//!   The block handed out is the one returned last, still warm in cache; batches (a local
//!   cache's refill or flush) move under one lock acquisition.
//!
//! `Pool` without a type parameter uses the queue; name the stack as a type parameter
//! (`Pool<StackFreeList>`, [`Builder::build_with`](crate::Builder::build_with)). No cargo feature
//! changes the default (`stack` only adds the type), so two crates in one build that name
//! `Pool<QueueFreeList>` and `Pool` always agree. The trait is sealed: a free list that lost or
//! duplicated a block would break the pool's soundness.

use crate::slab::FreeBlock;

/// A free-list strategy for [`Pool`](crate::Pool). Sealed: implemented by
/// [`QueueFreeList`](crate::QueueFreeList) and, with the `stack` feature (on by default),
/// `StackFreeList` only.
pub trait FreeList: sealed::FreeListImpl {}

/// The strategy `Pool` uses when none is named: always [`QueueFreeList`](crate::QueueFreeList),
/// whatever the cargo features. Choose the other with a type parameter (`Pool<StackFreeList>`,
/// `Builder::build_with::<StackFreeList>()`).
pub type DefaultFreeList = crate::QueueFreeList;

pub(crate) mod sealed {
    use super::FreeBlock;

    /// The operations a pool needs. Capacity is fixed at creation to the most blocks the class
    /// can ever have, so a push never fails and never allocates.
    pub trait FreeListImpl: Send + Sync + Sized + 'static {
        /// A short name for reports ("queue", "stack").
        const NAME: &'static str;
        /// An empty list that can hold `capacity` blocks.
        fn with_capacity(capacity: usize) -> Self;
        /// Adds a block. The caller owned it and gives it up.
        fn push(&self, block: FreeBlock);
        /// Takes a block, if any.
        fn pop(&self) -> Option<FreeBlock>;
        /// Blocks in the list now (a snapshot under concurrency).
        fn len(&self) -> usize;
        /// Adds several blocks.
        fn push_batch(&self, blocks: &[FreeBlock]) {
            for &block in blocks {
                self.push(block);
            }
        }
        /// Fills the front of `out` with as many blocks as it can take; returns how many.
        fn pop_batch(&self, out: &mut [FreeBlock]) -> usize {
            let mut n = 0;
            for slot in out.iter_mut() {
                match self.pop() {
                    Some(block) => *slot = block,
                    None => break,
                }
                n += 1;
            }
            n
        }
    }
}
