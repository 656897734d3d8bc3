//! [`PoolBuf`]: the owned, writable handle to one rented block.

use std::fmt;
use std::io;
use std::mem::{size_of, ManuallyDrop};
use std::ops::{Deref, DerefMut};

use bytes::buf::UninitSlice;
use bytes::{Buf, BufMut};

use crate::slab::{FreeBlock, Slab};

/// A rented block: a fixed-capacity byte buffer that goes back to its pool when dropped.
///
/// It holds the bytes `[start, end)` of its block. Writes ([`BufMut`], [`io::Write`],
/// [`read_from`](Self::read_from), [`spare_mut`](Self::spare_mut) + [`commit`](Self::commit))
/// append at `end` and never grow the block: the capacity is the block size. Reads ([`Buf`],
/// [`io::Read`]) consume from `start`; [`compact`](Self::compact) moves what is left to the
/// front. `Deref` gives the filled bytes.
///
/// Every byte of a block is initialised (slabs are zeroed when made), so the spare capacity is
/// handed out as a plain `&mut [u8]` and a read needs no zeroing first.
///
/// A `PoolBuf` is `Send`: it may be dropped on any thread and still returns to its pool.
///
/// It is two words (the block's address and the two offsets), so it is passed and returned in
/// registers; the capacity is read from the block's slab header.
pub struct PoolBuf {
    block: FreeBlock,
    start: u32,
    end: u32,
}

// Two registers, and `Option<PoolBuf>` costs nothing more (the address is never null).
const _: () = assert!(size_of::<PoolBuf>() == 16 && size_of::<Option<PoolBuf>>() == 16);

impl PoolBuf {
    /// Wraps a block the caller owns.
    #[inline]
    pub(crate) fn rent(block: FreeBlock) -> Self {
        #[cfg(feature = "debug")]
        crate::debug::on_rent(block);
        PoolBuf {
            block,
            start: 0,
            end: 0,
        }
    }

    /// Bytes filled and not yet consumed.
    #[inline]
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// `true` when nothing is filled.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The block size: the most bytes this buffer can ever hold.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.header().block_size()
    }

    /// Room left after the filled bytes (compacting can free the consumed prefix too).
    #[inline]
    pub fn spare_capacity(&self) -> usize {
        self.capacity() - self.end as usize
    }

    /// The unfilled tail of the block, to be written and then [`commit`](Self::commit)ted.
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        // SAFETY: `end <= capacity`, the block is owned by this handle, and all its bytes are
        // initialised.
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr().add(self.end as usize), self.spare_capacity())
        }
    }

    /// Marks the first `n` bytes of [`spare_mut`](Self::spare_mut) as filled.
    ///
    /// # Panics
    /// If `n` is larger than the spare capacity.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        assert!(
            n <= self.spare_capacity(),
            "commit past the end of the block"
        );
        self.end += n as u32;
    }

    /// Fills the spare capacity with one `read` call; returns the bytes read (0 at end of
    /// stream or when the buffer is full).
    pub fn read_from<R: io::Read + ?Sized>(&mut self, reader: &mut R) -> io::Result<usize> {
        // The spare room once: each capacity query reads the slab header.
        let spare = self.spare_mut();
        let room = spare.len();
        if room == 0 {
            return Ok(0);
        }
        // A reader claiming more than it was given is broken; never trust it past the block.
        let n = reader.read(spare)?.min(room);
        self.end += n as u32;
        Ok(n)
    }

    /// Empties the buffer (the block stays rented).
    #[inline]
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Keeps the first `len` filled bytes (no-op if `len >= self.len()`).
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.end = self.start + len as u32;
        }
    }

    /// Moves the filled bytes to the front of the block, so the consumed prefix is writable
    /// again. Copies `len()` bytes; free when nothing was consumed or nothing is left.
    pub fn compact(&mut self) {
        if self.start == 0 {
            return;
        }
        let (start, len) = (self.start as usize, self.len());
        if len > 0 {
            self.block_mut().copy_within(start..start + len, 0);
        }
        self.start = 0;
        self.end = len as u32;
    }

    /// Gives up the block without returning it: the block and the filled range `start..end`.
    #[inline]
    pub(crate) fn into_parts(self) -> (FreeBlock, u32, u32) {
        let this = ManuallyDrop::new(self);
        (this.block, this.start, this.end)
    }

    /// A handle over a block the caller owns, filled over `start..end`, with no debug check (the
    /// block is still rented: it comes from [`into_parts`](Self::into_parts) or a frozen view).
    ///
    /// # Safety
    /// The caller owns `block` and gives it up; `start <= end <= ` its block size.
    #[inline]
    pub(crate) unsafe fn from_parts(block: FreeBlock, start: u32, end: u32) -> Self {
        PoolBuf { block, start, end }
    }

    /// The header of the block's slab.
    #[inline]
    fn header(&self) -> &Slab {
        // SAFETY: the handle owns the block.
        unsafe { self.block.header() }
    }

    #[inline]
    fn ptr(&self) -> *mut u8 {
        self.block.ptr().as_ptr()
    }

    fn block_mut(&mut self) -> &mut [u8] {
        // SAFETY: the whole block is owned by this handle and initialised.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.capacity()) }
    }
}

impl Drop for PoolBuf {
    #[inline]
    fn drop(&mut self) {
        crate::home::give_back(self.block);
    }
}

impl Deref for PoolBuf {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: `start <= end <= capacity`; the block is owned by this handle and initialised.
        unsafe { std::slice::from_raw_parts(self.ptr().add(self.start as usize), self.len()) }
    }
}

impl DerefMut for PoolBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr().add(self.start as usize), self.len()) }
    }
}

impl AsRef<[u8]> for PoolBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for PoolBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl fmt::Debug for PoolBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuf")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl Buf for PoolBuf {
    #[inline]
    fn remaining(&self) -> usize {
        self.len()
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        self
    }

    #[inline]
    fn advance(&mut self, cnt: usize) {
        assert!(cnt <= self.len(), "advance past the filled bytes");
        self.start += cnt as u32;
    }
}

// SAFETY: `chunk_mut` exposes exactly the spare capacity, and `advance_mut` only accepts counts
// within it, so `remaining_mut` and the filled length stay consistent.
unsafe impl BufMut for PoolBuf {
    #[inline]
    fn remaining_mut(&self) -> usize {
        self.spare_capacity()
    }

    #[inline]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        self.commit(cnt);
    }

    #[inline]
    fn chunk_mut(&mut self) -> &mut UninitSlice {
        UninitSlice::new(self.spare_mut())
    }

    // One bounds check and one copy, instead of the trait's chunk-by-chunk loop; the capacity
    // is read from the slab header once.
    #[inline]
    fn put_slice(&mut self, src: &[u8]) {
        let end = self.end as usize;
        let block = self.block_mut();
        let cap = block.len();
        match block.get_mut(end..end + src.len()) {
            Some(dst) => dst.copy_from_slice(src),
            None => panic!(
                "put_slice of {} bytes with {} spare in the block",
                src.len(),
                cap - end
            ),
        }
        self.end += src.len() as u32;
    }

    #[inline]
    fn put_u8(&mut self, n: u8) {
        self.put_slice(&[n]);
    }
}

impl io::Write for PoolBuf {
    /// Writes what fits; `Ok(0)` once the block is full, so `write_all` reports `WriteZero`.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let spare = self.spare_mut();
        let n = data.len().min(spare.len());
        spare[..n].copy_from_slice(&data[..n]);
        self.end += n as u32;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl io::Read for PoolBuf {
    /// Consumes from the front of the filled bytes.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = out.len().min(self.len());
        out[..n].copy_from_slice(&self[..n]);
        self.start += n as u32;
        Ok(n)
    }
}
