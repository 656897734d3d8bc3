//! [`RawBlock`]: a rented block lent to code the pool cannot see (a kernel, a device, C).
//!
//! A [`PoolBuf`] guards its block with Rust's borrow rules. Foreign code does not follow them:
//! a kernel that fills a provided buffer writes through a bare address, at a time of its
//! choosing. [`PoolBuf::into_raw`] turns the handle into a `RawBlock`, which still *owns* the
//! block (it is out of the pool, counted as rented) but gives no access to its bytes, only their
//! address; [`PoolBuf::from_raw`] turns it back once the foreign code is done.
//!
//! The token is moved, never copied: safe code can neither duplicate a raw block nor return it
//! twice, so "every block lent out comes back at most once" is the type system's job. What the
//! type system cannot see is when foreign code stops touching the memory, and that is the one
//! promise `from_raw` asks for.

use std::fmt;

use crate::buf::PoolBuf;
use crate::slab::FreeBlock;

/// A rented block lent to foreign code: its address, with ownership, and no access to its bytes.
///
/// Made by [`PoolBuf::into_raw`]; turned back into a buffer by [`PoolBuf::from_raw`]. It is one
/// word, `Send` and `Sync`, and holds no reference to the pool.
///
/// # The contract
///
/// - **Ownership.** The block stays rented while the `RawBlock` exists: the pool never hands it
///   to anyone else, never frees its slab, and counts it in
///   [`Stats::rented_blocks`](crate::Stats::rented_blocks). Whoever holds the token owns the
///   block.
/// - **What foreign code may do.** Read and write any of the [`capacity`](Self::capacity)
///   bytes starting at [`as_mut_ptr`](Self::as_mut_ptr), from any thread, while the token is
///   held. Nothing outside that range, and nothing once the token has been given back.
/// - **Bytes.** Every byte of a block is initialised (slabs are zeroed when made), and foreign
///   code only ever stores bytes, so the block needs no initialisation when it comes back. The
///   bytes the buffer held when it became raw stay where they were.
/// - **Coming back.** Each raw block goes back through [`PoolBuf::from_raw`] exactly once. A
///   `RawBlock` that is dropped instead is **leaked**, never freed: the block stays out for the
///   life of the process and its slab is never released. Leaking is always safe, which is what
///   lets an owner that cannot prove foreign code is done (a kernel that might still write)
///   simply let go.
///
/// # Examples
///
/// ```
/// use bufslab::{Pool, PoolBuf};
///
/// let pool = Pool::new();
/// let raw = pool.get(4096)?.into_raw();
///
/// // Foreign code (here, a plain copy) fills the block through its address.
/// let reply = b"HTTP/1.1 200 OK\r\n";
/// assert!(reply.len() <= raw.capacity());
/// // SAFETY: the block is `capacity()` bytes at `as_mut_ptr()`, owned by `raw`, and nothing else
/// // touches it.
/// unsafe { raw.as_mut_ptr().copy_from_nonoverlapping(reply.as_ptr(), reply.len()) };
///
/// // SAFETY: the write above is finished; nothing else reads or writes the block any more.
/// let buf = unsafe { PoolBuf::from_raw(raw, reply.len()) };
/// assert_eq!(&buf[..], reply);
/// drop(buf); // home, like any other buffer
/// assert_eq!(pool.stats().rented_blocks, 0);
/// # Ok::<(), bufslab::Error>(())
/// ```
#[must_use = "a RawBlock that is dropped leaks its block; give it back with PoolBuf::from_raw"]
#[repr(transparent)]
pub struct RawBlock {
    block: FreeBlock,
}

impl RawBlock {
    /// The first byte of the block. The `capacity()` bytes from here are the block; they may be
    /// read and written through this pointer, by any thread, while this token is held.
    #[inline]
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.block.ptr().as_ptr()
    }

    /// The block size: how many bytes from [`as_mut_ptr`](Self::as_mut_ptr) foreign code may use.
    #[inline]
    pub fn capacity(&self) -> usize {
        // SAFETY: the token owns the block, so its slab is live.
        unsafe { self.block.slab().as_ref() }.block_size()
    }
}

// A leaked token is the safe outcome; say so where it shows, rather than hide it.
impl fmt::Debug for RawBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawBlock")
            .field("ptr", &self.as_mut_ptr())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl PoolBuf {
    /// Lends the block to foreign code: gives up the buffer's access to its bytes and returns a
    /// token that still owns the block (see [`RawBlock`] for the contract).
    ///
    /// The filled range is forgotten, not the bytes: they stay at their offsets in the block
    /// (call [`compact`](Self::compact) first to have them start at the front).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = bufslab::Pool::new();
    /// let raw = pool.get(100)?.into_raw();
    /// assert_eq!(raw.capacity(), 4096);
    /// assert_eq!(pool.stats().rented_blocks, 1); // still out while lent
    /// // SAFETY: no foreign code ever saw the block.
    /// drop(unsafe { bufslab::PoolBuf::from_raw(raw, 0) });
    /// assert_eq!(pool.stats().rented_blocks, 0);
    /// # Ok::<(), bufslab::Error>(())
    /// ```
    #[inline]
    pub fn into_raw(self) -> RawBlock {
        let (block, _, _) = self.into_parts();
        RawBlock { block }
    }

    /// Takes a lent block back as a buffer holding its first `len` bytes, which then goes home
    /// through the normal drop, on any thread.
    ///
    /// # Safety
    ///
    /// Foreign code is done with the block: every read and write it made through the raw block's
    /// address happened before this call (e.g. the kernel posted the final completion that used
    /// it, and that completion was read), and none will happen after. The bytes need not have been
    /// written: every byte of a block is always initialised.
    ///
    /// # Panics
    ///
    /// If `len` is larger than the block's [`capacity`](RawBlock::capacity).
    #[inline]
    pub unsafe fn from_raw(raw: RawBlock, len: usize) -> PoolBuf {
        let cap = raw.capacity();
        // Checked before the token is consumed: a panic here leaks the block, which is safe.
        assert!(len <= cap, "from_raw of {len} bytes into a block of {cap}");
        // SAFETY: the token owned the block and is consumed here; `0 <= len <= capacity`, and a
        // block is at most 1 GiB (see the crate's limits), so `len` fits a `u32`.
        unsafe { PoolBuf::from_parts(raw.block, 0, len as u32) }
    }
}

#[cfg(all(test, not(bufslab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_raw_block_is_one_word() {
        assert_eq!(
            std::mem::size_of::<RawBlock>(),
            std::mem::size_of::<usize>()
        );
        assert_eq!(
            std::mem::size_of::<Option<RawBlock>>(),
            std::mem::size_of::<usize>()
        );
    }
}
