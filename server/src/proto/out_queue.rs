//! A connection's output: a FIFO ring of pooled blocks and owned bodies, its slots allocated
//! once with the connection slot, so queuing never allocates.
//!
//! Responses are encoded straight into the tail block; an owned body ([`OutBuf::Shared`],
//! [`OutBuf::Bytes`], or a whole [`PoolBuf`] the service filled) is queued as it is, by
//! reference, and the next bytes go into a fresh block behind it. The driver sends from the
//! front (one entry, or up to [`SEND_BLOCKS`] of them as one vectored write) and reports how
//! much went out with [`OutQueue::consume`]. An entry that is fully sent is dropped at once:
//! a pooled block goes back to the pool.
//!
//! The queue has `Config::out_blocks` slots. The connection takes the next pipelined head only
//! while more than half of them are free (see `Conn::head`), so a whole response of up to half
//! the queue always fits wherever it falls in a batch; the ring's index arithmetic wraps by
//! compare, not by a division.

use std::io::IoSlice;

use bufslab::{FreeList, LocalCache, PoolBuf, PoolBytes};
use bytes::{Buf, Bytes};

use crate::config::SMALL_BLOCK;

/// Most entries one send carries (one `writev` of that many slices); a longer queue goes out
/// in several sends.
pub(crate) const SEND_BLOCKS: usize = 16;

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

/// One queued piece of output.
#[derive(Debug)]
pub(crate) enum OutBuf {
    /// A pooled block: one the engine wrote into and moved on from, or one a service filled
    /// and handed over. Sealed entries are never written into (only the queue's tail is).
    Buf(PoolBuf),
    /// A shared view of a pooled block, handed over by a service.
    Shared(PoolBytes),
    /// Any `bytes::Bytes`, handed over by a service.
    Bytes(Bytes),
}

impl OutBuf {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        match self {
            OutBuf::Buf(b) => b,
            OutBuf::Shared(b) => b,
            OutBuf::Bytes(b) => b,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.bytes().len()
    }

    #[inline(always)]
    fn advance(&mut self, n: usize) {
        match self {
            OutBuf::Buf(b) => b.advance(n),
            OutBuf::Shared(b) => b.advance(n),
            OutBuf::Bytes(b) => b.advance(n),
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            OutBuf::Buf(b) => b.truncate(len),
            OutBuf::Shared(b) => *b = b.slice(..len.min(b.len())),
            OutBuf::Bytes(b) => b.truncate(len),
        }
    }
}

/// The output entries of one connection, oldest first: sealed entries in a ring (blocks the
/// engine moved on from, owned bodies), then the block being written into. That block is a
/// field of its own so that the writes of a response, several per response, reach it with one
/// check and no ring index.
#[derive(Debug)]
pub(crate) struct OutQueue {
    ring: Box<[Option<OutBuf>]>,
    /// The slot of the oldest sealed entry.
    head: usize,
    /// Sealed entries.
    len: usize,
    /// The block the next bytes go into, after every sealed entry.
    tail: Option<PoolBuf>,
}

impl OutQueue {
    /// An empty queue of `slots` entries (at least 2), the tail block included.
    pub(crate) fn new(slots: usize) -> OutQueue {
        OutQueue {
            ring: (0..slots.max(2)).map(|_| None).collect(),
            head: 0,
            len: 0,
            tail: None,
        }
    }

    /// No entry is queued.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0 && self.tail.is_none()
    }

    /// Entries queued (the count of slices [`slices`](Self::slices) may give).
    #[inline(always)]
    pub(crate) fn blocks(&self) -> usize {
        self.len + usize::from(self.tail.is_some())
    }

    /// Entries the queue holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.ring.len()
    }

    /// Entries that can still be queued, the tail block's included when there is none.
    pub(crate) fn free_entries(&self) -> usize {
        self.ring.len().saturating_sub(self.blocks())
    }

    #[inline(always)]
    fn is_full(&self) -> bool {
        self.blocks() >= self.ring.len()
    }

    /// The ring slot `i` sealed entries after the oldest.
    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        let k = self.head + i;
        if k >= self.ring.len() {
            k - self.ring.len()
        } else {
            k
        }
    }

    fn entry(&self, i: usize) -> Option<&OutBuf> {
        self.ring.get(self.at(i)).and_then(Option::as_ref)
    }

    /// Moves the tail block into the ring: the next bytes go into a block behind it.
    #[inline]
    fn seal(&mut self) {
        if let Some(t) = self.tail.take() {
            self.push_sealed(OutBuf::Buf(t));
        }
    }

    /// Queues `buf` behind the sealed entries; the caller made sure of a free slot.
    #[inline]
    fn push_sealed(&mut self, buf: OutBuf) {
        let i = self.at(self.len);
        if let Some(slot) = self.ring.get_mut(i) {
            *slot = Some(buf);
            self.len += 1;
        }
    }

    /// Queues a block the engine writes into (ignored when the queue is full; callers check
    /// first).
    #[inline]
    pub(crate) fn push(&mut self, buf: PoolBuf) {
        if !self.is_full() {
            self.seal();
            self.tail = Some(buf);
        }
    }

    /// Queues a body a service handed over, as it is: nothing is written into it, and it is
    /// dropped (a pooled block goes home) once sent. An empty one is dropped at once.
    ///
    /// # Errors
    /// The body back when the queue is full.
    pub(crate) fn push_owned(&mut self, buf: OutBuf) -> Result<(), OutBuf> {
        if buf.len() == 0 {
            return Ok(());
        }
        if self.is_full() {
            return Err(buf);
        }
        self.seal();
        self.push_sealed(buf);
        Ok(())
    }

    /// Queues a block in front of the others (ignored when the queue is full): the read
    /// block that became a response's first block, once the bytes the response spilled into
    /// the queue were written behind it.
    #[inline]
    pub(crate) fn push_front(&mut self, buf: PoolBuf) {
        // The common case, a response written whole behind its head: the block is the only
        // entry, and the tail (one check away from the send) rather than a ring slot.
        if self.is_empty() {
            self.tail = Some(buf);
        } else if !self.is_full() {
            self.head = self.head.checked_sub(1).unwrap_or(self.ring.len() - 1);
            self.ring[self.head] = Some(OutBuf::Buf(buf));
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
        let fits = self
            .tail
            .as_ref()
            .is_some_and(|t| t.spare_capacity() >= room);
        if !fits {
            self.grow(blocks, room)?;
        }
        self.tail.as_mut().ok_or(Blocked::Pool)
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
        // Nothing sealed, the common case of pipelined responses: the tail's bytes are all.
        Ok(if self.len == 0 {
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

    /// Spare bytes of the block being written into (0 with none).
    pub(crate) fn tail_spare(&self) -> usize {
        self.tail.as_ref().map_or(0, PoolBuf::spare_capacity)
    }

    /// Bytes queued and not yet sent.
    pub(crate) fn queued(&self) -> usize {
        let sealed: usize = (0..self.len)
            .filter_map(|i| self.entry(i))
            .map(OutBuf::len)
            .sum();
        sealed + self.tail.as_ref().map_or(0, |t| t.len())
    }

    /// Keeps the first `len` queued bytes and drops the entries after them.
    pub(crate) fn truncate(&mut self, mut len: usize) {
        let mut keep = 0;
        while keep < self.len && len > 0 {
            let i = self.at(keep);
            let Some(b) = self.ring[i].as_mut() else {
                break;
            };
            let take = len.min(b.len());
            b.truncate(take);
            len -= take;
            keep += 1;
        }
        for k in keep..self.len {
            let i = self.at(k);
            self.ring[i] = None;
        }
        let all_sealed_kept = keep == self.len;
        self.len = keep;
        match self.tail.as_mut() {
            Some(t) if all_sealed_kept && len > 0 => t.truncate(len.min(t.len())),
            _ => self.tail = None,
        }
    }

    /// Drops entries at the front that hold nothing to send: a block reserved for output that
    /// got none (a body step that decoded only framing). An empty send would read as a dead
    /// peer.
    #[inline]
    pub(crate) fn settle(&mut self) {
        while self.len > 0 && self.ring[self.head].as_ref().map_or(true, |b| b.len() == 0) {
            self.pop_sealed();
        }
        if self.len == 0 && self.tail.as_ref().is_some_and(|t| t.is_empty()) {
            self.tail = None;
        }
    }

    /// Drops the oldest sealed entry: a pooled block goes back to the pool.
    #[inline(always)]
    fn pop_sealed(&mut self) {
        self.ring[self.head] = None;
        self.head = self.at(1);
        self.len -= 1;
    }

    /// The entries to send, oldest first, as slices in `slices` (at most its length); returns
    /// how many. The first alone is what a plain `send` would take.
    pub(crate) fn slices<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        let sealed = (0..self.len)
            .filter_map(|i| self.entry(i))
            .map(OutBuf::bytes);
        let tail = self.tail.as_deref();
        let mut n = 0;
        for (b, s) in sealed
            .chain(tail)
            .filter(|b| !b.is_empty())
            .zip(slices.iter_mut())
        {
            *s = IoSlice::new(b);
            n += 1;
        }
        n
    }

    /// The oldest entry's bytes (empty when nothing is queued).
    #[inline]
    pub(crate) fn front(&self) -> &[u8] {
        if self.len > 0 {
            return self.entry(0).map_or(&[], OutBuf::bytes);
        }
        self.tail.as_deref().unwrap_or_default()
    }

    /// `n` bytes were sent: drops them from the front; fully sent entries go at once.
    #[inline]
    pub(crate) fn consume(&mut self, mut n: usize) {
        if self.len > 0 {
            n = self.consume_sealed(n);
        }
        if n > 0 {
            if let Some(t) = self.tail.as_mut() {
                if n < t.len() {
                    t.advance(n);
                } else {
                    self.tail = None;
                }
            }
        }
    }

    /// [`consume`](Self::consume) of the sealed entries; returns what is left of `n` for the
    /// tail.
    fn consume_sealed(&mut self, mut n: usize) -> usize {
        while n > 0 && self.len > 0 {
            let Some(b) = self.ring[self.head].as_mut() else {
                return 0;
            };
            let len = b.len();
            if n < len {
                b.advance(n);
                return 0;
            }
            n -= len;
            self.pop_sealed();
        }
        n
    }

    /// Drops every entry.
    pub(crate) fn clear(&mut self) {
        for b in self.ring.iter_mut() {
            *b = None;
        }
        self.head = 0;
        self.len = 0;
        self.tail = None;
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
        let mut q = OutQueue::new(8);
        q.reserve(&cache, 64).unwrap().put_slice(b"hello ");
        q.push(pool.get(4096).unwrap());
        q.reserve(&cache, 64).unwrap().put_slice(b"world");
        assert_eq!(q.queued(), 11);
        let mut s = [IoSlice::new(&[]); SEND_BLOCKS];
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

    #[test]
    fn owned_bodies_are_queued_by_reference_and_never_written_into() {
        let pool = bufslab::Pool::new();
        let cache = pool.local_cache();
        let mut q = OutQueue::new(4);
        q.reserve(&cache, 64).unwrap().put_slice(b"head ");
        let mut value = pool.get(4096).unwrap();
        value.put_slice(b"value");
        let shared = value.freeze();
        q.push_owned(OutBuf::Shared(shared.clone())).unwrap();
        q.push_owned(OutBuf::Bytes(Bytes::new())).unwrap(); // empty: dropped at once
        assert_eq!(q.blocks(), 2);
        // The next bytes go behind the owned body, in a block of their own.
        q.reserve(&cache, 64).unwrap().put_slice(b" tail");
        assert_eq!(q.blocks(), 3);
        let mut s = [IoSlice::new(&[]); SEND_BLOCKS];
        let n = q.slices(&mut s);
        let sent: Vec<u8> = s[..n].iter().flat_map(|s| s.iter().copied()).collect();
        assert_eq!(sent, b"head value tail");
        q.consume(7);
        assert_eq!(q.front(), b"lue");
        q.truncate(3);
        assert_eq!(q.queued(), 3);
        // The kept tail is the owned body: closed to writes.
        q.reserve(&cache, 64).unwrap().put_slice(b"!");
        assert_eq!(q.queued(), 4);
        drop(q);
        // Full: an owned body comes back.
        let mut q = OutQueue::new(2);
        q.push_owned(OutBuf::Bytes(Bytes::from_static(b"a")))
            .unwrap();
        q.push_owned(OutBuf::Bytes(Bytes::from_static(b"b")))
            .unwrap();
        assert!(q
            .push_owned(OutBuf::Bytes(Bytes::from_static(b"c")))
            .is_err());
        q.clear();
        drop((q, shared, cache));
        assert_eq!(pool.stats().rented_blocks, 0);
    }

    #[test]
    fn the_ring_wraps() {
        let pool = bufslab::Pool::new();
        let cache = pool.local_cache();
        let mut q = OutQueue::new(3);
        for round in 0..10u8 {
            q.reserve(&cache, 64).unwrap().put_slice(&[round]);
            q.push_owned(OutBuf::Bytes(Bytes::from_static(b"xy")))
                .unwrap();
            assert_eq!(q.queued(), 3);
            q.consume(3);
            assert!(q.is_empty());
        }
        drop((q, cache));
        assert_eq!(pool.stats().rented_blocks, 0);
    }
}
