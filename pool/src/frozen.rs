//! [`PoolBytes`]: a block frozen into shared, read-only views, and back to a writable
//! [`PoolBuf`] when one view is left.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Bound, Deref, RangeBounds};
use std::ptr::NonNull;

use bytes::Buf;

use crate::buf::PoolBuf;
use crate::home::give_back;
use crate::slab::{FreeBlock, Slab};

impl PoolBuf {
    /// Turns the buffer into a shared, read-only, cloneable view of its filled bytes, without
    /// copying. The block returns to the pool when the last clone is dropped.
    pub fn freeze(self) -> PoolBytes {
        let (block, start, end) = self.into_parts();
        // SAFETY: the handle owned the block and `into_parts` gave it up to the frozen view;
        // `start..end` is within the block.
        unsafe { PoolBytes::from_block(block, start as usize, (end - start) as usize) }
    }

    /// Converts into [`bytes::Bytes`] without copying, via [`Bytes::from_owner`](bytes::Bytes::from_owner).
    /// That costs one small heap allocation (the `Bytes` owner record); the data stays in the
    /// block, which returns to the pool when the last `Bytes` clone drops.
    pub fn into_bytes(self) -> bytes::Bytes {
        self.freeze().into_bytes()
    }
}

/// A cheaply cloneable, read-only view of bytes in a pooled block (from [`PoolBuf::freeze`]).
///
/// Clones and [`slice`](Self::slice)s share the block and bump one atomic count; the block goes
/// back to its pool when the last view is dropped, on whatever thread. It is `Send + Sync`,
/// implements [`Buf`] (so it is the data of an HTTP body such as `http_body_util::Full`, or
/// the argument of tokio's `write_all_buf`), converts to [`bytes::Bytes`] with
/// [`into_bytes`](Self::into_bytes), and back to a writable [`PoolBuf`] with
/// [`try_into_mut`](Self::try_into_mut) when it is the only view.
///
/// # Examples
///
/// ```
/// use bytes::{Buf, BufMut};
///
/// let pool = bufslab::Pool::new();
/// let mut buf = pool.get(64)?;
/// buf.put_slice(b"HTTP/1.1 200 OK\r\n\r\nhello");
/// let response = buf.freeze();
///
/// let head = response.slice(..19);       // shares the block, no copy
/// let mut body = response.slice(19..);
/// assert_eq!(&head[..8], b"HTTP/1.1");
/// assert_eq!(body.remaining(), 5);
/// body.advance(1);
/// assert_eq!(&body[..], b"ello");
///
/// let sent = std::thread::spawn(move || body.len()); // Send: drop it on any thread
/// assert_eq!(sent.join().unwrap(), 4);
/// drop((response, head));                // the block goes home with the last view
/// assert_eq!(pool.stats().rented_blocks, 0);
/// # Ok::<(), bufslab::Error>(())
/// ```
///
/// # Panics
///
/// [`slice`](Self::slice) and `Buf::advance` out of bounds panic. Making more than
/// `u32::MAX / 2` views of one block aborts the process, as `Arc` does on overflow.
///
/// [`PoolBuf::freeze`]: crate::PoolBuf::freeze
pub struct PoolBytes {
    slab: NonNull<Slab>,
    ptr: NonNull<u8>,
    len: usize,
    index: u32,
}

// SAFETY: the viewed bytes are immutable while any view exists, and the block's lifetime is
// governed by an atomic reference count, exactly like `Arc<[u8]>`.
unsafe impl Send for PoolBytes {}
// SAFETY: as above; `&PoolBytes` gives read access only.
unsafe impl Sync for PoolBytes {}

impl PoolBytes {
    /// The first view of `block`, over `len` bytes at `offset`.
    ///
    /// # Safety
    /// The caller owns `block` (no other handle or view) and gives it up; `offset + len` is
    /// within the block.
    pub(crate) unsafe fn from_block(block: FreeBlock, offset: usize, len: usize) -> Self {
        // SAFETY: the caller owns the block.
        let slab = unsafe { block.header() };
        let index = slab.index_of(block.ptr());
        slab.refs(index).init();
        PoolBytes {
            slab: block.slab(),
            // SAFETY: within the block, per the caller.
            ptr: unsafe { block.ptr().add(offset) },
            len,
            index,
        }
    }

    /// A view of `range` of these bytes, sharing the block (no copy).
    ///
    /// # Panics
    /// If the range is out of bounds or decreasing, as slicing does.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> PoolBytes {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1).expect("range start overflows"),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1).expect("range end overflows"),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        assert!(
            start <= end && end <= self.len,
            "slice {start}..{end} out of 0..{}",
            self.len
        );
        let mut view = self.clone();
        // SAFETY: `start <= len`, so the pointer stays within the viewed bytes.
        view.ptr = unsafe { self.ptr.add(start) };
        view.len = end - start;
        view
    }

    /// Converts into [`bytes::Bytes`] without copying, via [`Bytes::from_owner`](bytes::Bytes::from_owner)
    /// (one small heap allocation for the owner record).
    pub fn into_bytes(self) -> bytes::Bytes {
        bytes::Bytes::from_owner(self)
    }

    /// Back to a writable [`PoolBuf`] over the same bytes, without copying, when this is the
    /// only view of the block; `Err(self)` when other views (clones, slices, a [`bytes::Bytes`]
    /// made from one) still exist. As [`bytes::Bytes::try_into_mut`].
    ///
    /// The buffer's filled bytes are this view's; the rest of the block after them is its spare
    /// capacity, the part before them is consumed (see [`PoolBuf::compact`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BufMut;
    ///
    /// let pool = bufslab::Pool::new();
    /// let mut buf = pool.get(64)?;
    /// buf.put_slice(b"hello");
    /// let view = buf.freeze();
    ///
    /// let other = view.clone();
    /// let view = view.try_into_mut().unwrap_err(); // `other` shares the block
    /// drop(other);
    ///
    /// let mut buf = view.try_into_mut().unwrap(); // the only view: writable again
    /// buf.put_slice(b", world");
    /// assert_eq!(&buf[..], b"hello, world");
    /// # Ok::<(), bufslab::Error>(())
    /// ```
    pub fn try_into_mut(self) -> Result<PoolBuf, PoolBytes> {
        let slab = self.slab();
        if !slab.refs(self.index).is_unique() {
            return Err(self);
        }
        // SAFETY: this is the block's only view, and `is_unique` ordered every other view's
        // reads before this point, so the block is this thread's to own again: nobody can make
        // a new view without one. `index` is within the slab.
        let block = unsafe { slab.block(self.index) };
        let start = self.ptr.as_ptr() as usize - block.ptr().as_ptr() as usize;
        let end = start + self.len;
        // The count is not released: the block leaves the view, it does not go home.
        let _ = ManuallyDrop::new(self);
        // SAFETY: owned as argued above and given up by the forgotten view; `start..end` is the
        // view's range, within the block, so both fit in `u32` (blocks are at most 1 GiB).
        Ok(unsafe { PoolBuf::from_parts(block, start as u32, end as u32) })
    }

    fn slab(&self) -> &Slab {
        // SAFETY: a live view holds a count on its block, so the slab is live.
        unsafe { self.slab.as_ref() }
    }
}

impl Clone for PoolBytes {
    #[inline]
    fn clone(&self) -> Self {
        self.slab().refs(self.index).acquire();
        PoolBytes { ..*self }
    }
}

impl Drop for PoolBytes {
    #[inline]
    fn drop(&mut self) {
        let slab = self.slab();
        if slab.refs(self.index).release() {
            // SAFETY: the last view is gone, so this thread owns the block again.
            let block = unsafe { slab.block(self.index) };
            give_back(block);
        }
    }
}

impl Deref for PoolBytes {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: the viewed range is within the block, initialised, and immutable while any
        // view lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for PoolBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq<[u8]> for PoolBytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl fmt::Debug for PoolBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBytes").field("len", &self.len).finish()
    }
}

impl Buf for PoolBytes {
    #[inline]
    fn remaining(&self) -> usize {
        self.len
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        self
    }

    #[inline]
    fn advance(&mut self, cnt: usize) {
        assert!(cnt <= self.len, "advance past the end of the view");
        // SAFETY: `cnt <= len`, so the pointer stays within the viewed bytes.
        self.ptr = unsafe { self.ptr.add(cnt) };
        self.len -= cnt;
    }
}
