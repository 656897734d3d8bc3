//! A connection's output: a small FIFO of pooled blocks in a fixed array, so queuing never
//! allocates.
//!
//! Responses are encoded straight into the tail block; the driver sends from the front (one
//! block, or all of them as one vectored write) and reports how much went out with
//! [`OutQueue::consume`]. A block that is fully sent goes back to the pool at once.

use std::io::IoSlice;

use bufslab::{FreeList, LocalCache, PoolBuf};
use bytes::Buf;

use crate::config::SMALL_BLOCK;

/// Most output blocks queued per connection (one vectored write carries them all). Eight
/// 4 KiB blocks hold a pipelined batch of over 200 small responses, or 32 KiB of echo in
/// flight.
pub(crate) const OUT_BLOCKS: usize = 8;

/// Where output blocks come from: a worker's local cache of the pool. A trait so that the
/// response writer a service holds need not name the pool's free list; the engine calls it
/// through the concrete type, a service's writes through `dyn` (only when a block fills).
pub(crate) trait BlockSource {
    /// A block of at least `len` bytes.
    fn block(&self, len: usize) -> Option<PoolBuf>;
}

impl<F: FreeList> BlockSource for LocalCache<F> {
    #[inline]
    fn block(&self, len: usize) -> Option<PoolBuf> {
        self.get(len).ok()
    }
}

/// Why a block for output could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// The queue is full: send first.
    OutputFull,
    /// The pool has no block for us: wait until blocks come back.
    Pool,
}

/// The output blocks of one connection, oldest first.
#[derive(Debug, Default)]
pub(crate) struct OutQueue {
    bufs: [Option<PoolBuf>; OUT_BLOCKS],
    head: usize,
    len: usize,
}

impl OutQueue {
    /// No block is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn is_full(&self) -> bool {
        self.len == OUT_BLOCKS
    }

    fn slot(&self, i: usize) -> Option<&PoolBuf> {
        self.bufs[(self.head + i) % OUT_BLOCKS].as_ref()
    }

    fn tail(&mut self) -> Option<&mut PoolBuf> {
        if self.len == 0 {
            return None;
        }
        self.bufs[(self.head + self.len - 1) % OUT_BLOCKS].as_mut()
    }

    /// Queues a block (ignored when the queue is full; callers check `is_empty` first).
    #[inline]
    pub(crate) fn push(&mut self, buf: PoolBuf) {
        if !self.is_full() {
            self.bufs[(self.head + self.len) % OUT_BLOCKS] = Some(buf);
            self.len += 1;
        }
    }

    /// Queues a block in front of the others (ignored when the queue is full): the read
    /// block that became a response's first block, once the bytes the response spilled into
    /// the queue were written behind it.
    #[inline]
    pub(crate) fn push_front(&mut self, buf: PoolBuf) {
        if !self.is_full() {
            self.head = (self.head + OUT_BLOCKS - 1) % OUT_BLOCKS;
            self.bufs[self.head] = Some(buf);
            self.len += 1;
        }
    }

    /// The tail block if it has `room` spare bytes, else a fresh block queued behind it.
    #[inline(always)]
    pub(crate) fn reserve<C: BlockSource + ?Sized>(
        &mut self,
        blocks: &C,
        room: usize,
    ) -> Result<&mut PoolBuf, Blocked> {
        let fits = self.tail().is_some_and(|t| t.spare_capacity() >= room);
        if !fits {
            self.grow(blocks, room)?;
        }
        self.tail().ok_or(Blocked::Pool)
    }

    /// [`reserve`](Self::reserve), returning the bytes queued before the room: where what is
    /// written into it starts in the output.
    #[inline(always)]
    pub(crate) fn reserve_start<C: BlockSource + ?Sized>(
        &mut self,
        blocks: &C,
        room: usize,
    ) -> Result<usize, Blocked> {
        let in_tail = self.reserve(blocks, room)?.len();
        // One block, the common case of pipelined responses: the tail's bytes are all.
        Ok(if self.len == 1 {
            in_tail
        } else {
            self.queued()
        })
    }

    /// A fresh block of at least `room` bytes queued at the tail: [`reserve`](Self::reserve)'s
    /// rare path, out of line.
    #[cold]
    #[inline(never)]
    fn grow<C: BlockSource + ?Sized>(&mut self, blocks: &C, room: usize) -> Result<(), Blocked> {
        if self.is_full() {
            return Err(Blocked::OutputFull);
        }
        let buf = blocks.block(room.max(SMALL_BLOCK)).ok_or(Blocked::Pool)?;
        self.push(buf);
        Ok(())
    }

    /// Spare bytes of the last block (0 with none queued).
    pub(crate) fn tail_spare(&self) -> usize {
        match self.len {
            0 => 0,
            n => self.slot(n - 1).map_or(0, PoolBuf::spare_capacity),
        }
    }

    /// Bytes queued and not yet sent.
    pub(crate) fn queued(&self) -> usize {
        (0..self.len)
            .filter_map(|i| self.slot(i))
            .map(|b| b.len())
            .sum()
    }

    /// Keeps the first `len` queued bytes and gives the blocks after them back.
    pub(crate) fn truncate(&mut self, mut len: usize) {
        let mut keep = 0;
        while keep < self.len {
            let i = (self.head + keep) % OUT_BLOCKS;
            let Some(b) = self.bufs[i].as_mut() else {
                break;
            };
            if len == 0 {
                break;
            }
            let take = len.min(b.len());
            b.truncate(take);
            len -= take;
            keep += 1;
        }
        for k in keep..self.len {
            self.bufs[(self.head + k) % OUT_BLOCKS] = None;
        }
        self.len = keep;
    }

    /// Gives back blocks at the front that hold nothing to send: a block reserved for output
    /// that got none (a body step that decoded only framing). An empty send would read as a
    /// dead peer.
    #[inline]
    pub(crate) fn settle(&mut self) {
        while self.len > 0 && self.bufs[self.head].as_ref().map_or(true, |b| b.is_empty()) {
            self.pop_front();
        }
    }

    /// Drops the oldest block: it goes back to the pool.
    #[inline(always)]
    fn pop_front(&mut self) {
        self.bufs[self.head] = None;
        self.head = (self.head + 1) % OUT_BLOCKS;
        self.len -= 1;
    }

    /// The blocks to send, oldest first, as slices in `slices`; returns how many. The first
    /// alone is what a plain `send` would take.
    pub(crate) fn slices<'a>(&'a self, slices: &mut [IoSlice<'a>; OUT_BLOCKS]) -> usize {
        let mut n = 0;
        for i in 0..self.len {
            if let Some(b) = self.slot(i).filter(|b| !b.is_empty()) {
                slices[n] = IoSlice::new(b);
                n += 1;
            }
        }
        n
    }

    /// The oldest block's bytes (empty when nothing is queued).
    pub(crate) fn front(&self) -> &[u8] {
        match self.slot(0) {
            Some(b) if self.len > 0 => b,
            _ => &[],
        }
    }

    /// Blocks queued (the count of slices [`slices`](Self::slices) may give).
    pub(crate) fn blocks(&self) -> usize {
        self.len
    }

    /// `n` bytes were sent: drops them from the front; fully sent blocks go home at once.
    #[inline]
    pub(crate) fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(b) = self.bufs[self.head].as_mut() else {
                return;
            };
            let len = b.len();
            if n < len {
                b.advance(n);
                return;
            }
            n -= len;
            self.pop_front();
        }
    }

    /// Gives every block back.
    pub(crate) fn clear(&mut self) {
        for b in &mut self.bufs {
            *b = None;
        }
        self.head = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    #[test]
    fn consume_truncate_and_slices_agree() {
        let pool = bufslab::Pool::new();
        let cache = pool.local_cache();
        let mut q = OutQueue::default();
        q.reserve(&cache, 64).unwrap().put_slice(b"hello ");
        q.push(pool.get(4096).unwrap());
        q.reserve(&cache, 64).unwrap().put_slice(b"world");
        assert_eq!(q.queued(), 11);
        let mut s = [IoSlice::new(&[]); OUT_BLOCKS];
        assert_eq!(q.slices(&mut s), 2);
        assert_eq!(q.front(), b"hello ");
        q.consume(3);
        assert_eq!(q.front(), b"lo ");
        q.truncate(5);
        assert_eq!(q.queued(), 5);
        q.consume(3);
        assert_eq!(q.front(), b"wo");
        q.truncate(0);
        assert!(q.is_empty());
        q.reserve(&cache, 64).unwrap();
        q.settle();
        assert!(q.is_empty());
        drop(cache);
        assert_eq!(pool.stats().rented_blocks, 0);
    }
}
