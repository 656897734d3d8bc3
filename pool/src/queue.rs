//! The FIFO free list: a bounded lock-free queue.

use crossbeam_queue::ArrayQueue;

use crate::free_list::{sealed::FreeListImpl, FreeList};
use crate::slab::FreeBlock;

/// FIFO free list on crossbeam's `ArrayQueue`: lock-free, preallocated, never allocates.
///
/// Gets take from the head while puts append at the tail, so threads that rent and threads that
/// return touch different cache lines. A returned block is reused last, when its cache lines are
/// likely cold. See the crate docs for when it wins.
pub struct QueueFreeList(ArrayQueue<FreeBlock>);

impl FreeList for QueueFreeList {}

impl FreeListImpl for QueueFreeList {
    const NAME: &'static str = "queue";

    fn with_capacity(capacity: usize) -> Self {
        QueueFreeList(ArrayQueue::new(capacity.max(1)))
    }

    fn push(&self, block: FreeBlock) {
        // The capacity is the class's maximum block count and a block is in the list at most
        // once, so the queue cannot be full. Were the invariant broken, dropping the block
        // (a leak) is the only answer that keeps memory safe.
        let pushed = self.0.push(block);
        debug_assert!(pushed.is_ok(), "free list over capacity");
    }

    fn pop(&self) -> Option<FreeBlock> {
        self.0.pop()
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}
