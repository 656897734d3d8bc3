//! The LIFO free list: a vector behind a mutex. Behind the `stack` feature, which adds this type
//! and nothing else: no default type names it.

use parking_lot::Mutex;

use crate::free_list::{sealed::FreeListImpl, FreeList};
use crate::slab::FreeBlock;

/// LIFO free list: a preallocated `Vec` behind a `parking_lot` mutex (cargo feature `stack`, on
/// by default).
///
/// The block a `get` receives is the one returned most recently, whose lines are likely still
/// in cache. Batches (a local cache's refill and flush) move under one lock acquisition. Under
/// heavy traffic from many threads without local caches, the single lock is the bottleneck.
pub struct StackFreeList(Mutex<Vec<FreeBlock>>);

impl FreeList for StackFreeList {}

impl FreeListImpl for StackFreeList {
    const NAME: &'static str = "stack";

    fn with_capacity(capacity: usize) -> Self {
        StackFreeList(Mutex::new(Vec::with_capacity(capacity)))
    }

    fn push(&self, block: FreeBlock) {
        let mut list = self.0.lock();
        // Capacity is the class's maximum block count, so this never reallocates.
        debug_assert!(list.len() < list.capacity(), "free list over capacity");
        list.push(block);
    }

    fn pop(&self) -> Option<FreeBlock> {
        self.0.lock().pop()
    }

    fn len(&self) -> usize {
        self.0.lock().len()
    }

    fn push_batch(&self, blocks: &[FreeBlock]) {
        let mut list = self.0.lock();
        debug_assert!(
            list.len() + blocks.len() <= list.capacity(),
            "free list over capacity"
        );
        list.extend_from_slice(blocks);
    }

    fn pop_batch(&self, out: &mut [FreeBlock]) -> usize {
        let mut list = self.0.lock();
        let n = out.len().min(list.len());
        let from = list.len() - n;
        // Order kept: the most recently returned block lands last, where the cache pops first.
        for (slot, block) in out.iter_mut().zip(list.drain(from..)) {
            *slot = block;
        }
        n
    }
}
