//! [`PoolBuf`]: the owned, writable handle to one rented block.

use std::fmt;
use std::io;
use std::mem::{size_of, ManuallyDrop};
use std::ops::{Deref, DerefMut};

use bytes::buf::UninitSlice;
use bytes::{Buf, BufMut};

use crate::error::Error;
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
///
/// # A full buffer reads `Ok(0)`
///
/// The capacity never grows, so once a buffer is full, tokio's
/// [`read_buf`](https://docs.rs/tokio/1/tokio/io/trait.AsyncReadExt.html#method.read_buf)
/// (and [`read_from`](Self::read_from)) return `Ok(0)` without reading — the same value that
/// means end of stream. A loop that takes every `Ok(0)` for end of stream stops early on a full
/// block, and one that retries spins. Check [`spare_capacity`](Self::spare_capacity) (or
/// `BufMut::has_remaining_mut`) before reading, and when it is zero hand the filled block on
/// and rent another (or [`compact`](Self::compact) one whose front was consumed):
///
/// ```
/// use bufslab::{ClassConfig, Pool};
/// use tokio::io::AsyncReadExt;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let pool = Pool::builder().class(ClassConfig::new(64)).build()?;
/// let runtime = tokio::runtime::Builder::new_current_thread().build()?;
/// let received = runtime.block_on(async {
///     let mut stream: &[u8] = &[7; 150]; // any `AsyncRead`: a `TcpStream` in a server
///     let mut blocks = Vec::new();
///     let mut buf = pool.get(64)?;
///     loop {
///         if buf.spare_capacity() == 0 {
///             // Full: `read_buf` would return Ok(0) here, which is not end of stream.
///             blocks.push(buf.freeze());
///             buf = pool.get(64)?;
///         }
///         if stream.read_buf(&mut buf).await? == 0 {
///             break; // there was room, so this is the real end of stream
///         }
///     }
///     blocks.push(buf.freeze());
///     Ok::<_, Box<dyn std::error::Error>>(blocks)
/// })?;
/// assert_eq!(received.iter().map(|b| b.len()).collect::<Vec<_>>(), [64, 64, 22]);
/// # Ok(())
/// # }
/// ```
///
/// # Examples
///
/// Writing, reading and reusing the block:
///
/// ```
/// use std::io::Read;
/// use bytes::{Buf, BufMut};
///
/// let pool = bufslab::Pool::new();
/// let mut buf = pool.get(1500)?;
/// assert_eq!((buf.len(), buf.capacity()), (0, 4096));
///
/// buf.put_slice(b"GET / HTTP/1.1\r\n");   // BufMut appends at the end
/// let n = buf.read_from(&mut &b"Host: a\r\n"[..])?; // so does any std::io::Read
/// assert_eq!(n, 9);
///
/// buf.advance(4);                          // Buf consumes from the front
/// assert_eq!(&buf[..5], b"/ HTT");
/// let mut word = [0; 1];
/// buf.read_exact(&mut word)?;              // and so does std::io::Read
/// buf.compact();                           // the consumed prefix is writable again
/// assert_eq!(buf.spare_capacity(), 4096 - buf.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Panics
///
/// [`commit`](Self::commit), `BufMut::advance_mut` and `BufMut::put_*` past the spare capacity
/// panic, as `BufMut` requires of a buffer that cannot grow (check
/// [`spare_capacity`](Self::spare_capacity) first, or use [`io::Write`], which writes what fits);
/// `Buf::advance` past the filled bytes panics.
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

    /// The filled bytes and the spare room at once: read the one while writing the other (a
    /// response written behind the request it answers, in the same block). Commit what was
    /// written with [`commit`](Self::commit) once both borrows end.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BufMut;
    /// let pool = bufslab::Pool::new();
    /// let mut buf = pool.get(4096).unwrap();
    /// buf.put_slice(b"ping");
    /// let (filled, spare) = buf.split_spare();
    /// spare[..4].copy_from_slice(filled);
    /// buf.commit(4);
    /// assert_eq!(&buf[..], b"pingping");
    /// ```
    #[inline]
    pub fn split_spare(&mut self) -> (&[u8], &mut [u8]) {
        let (start, end) = (self.start as usize, self.end as usize);
        let (filled, spare) = self.block_mut().split_at_mut(end);
        (filled.get(start..).unwrap_or_default(), spare)
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

    /// Fills the spare capacity with one `read` call; returns the bytes read: 0 at end of
    /// stream, and also when the buffer is full (see [the type docs](PoolBuf#a-full-buffer-reads-ok0)).
    ///
    /// # Errors
    /// The reader's error, with nothing committed.
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

    #[inline]
    fn block_mut(&mut self) -> &mut [u8] {
        // SAFETY: the whole block is owned by this handle and initialised.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.capacity()) }
    }
}

/// Runs a rent's out-of-line slow path (`slow`, which writes its error through the reference it
/// is given) so that the buffer comes back in registers.
///
/// A call returns a `Result<PoolBuf, Error>` (24 bytes) through memory. With a slow path that
/// returns one, the compiler may build the inlined fast path's `Ok` in that same memory (two
/// 8-byte stores) and move the buffer out of it with one 16-byte load, which no store can
/// forward: wherever the caller keeps the buffer in memory, every rent then waits for both stores
/// to reach the cache. `Option<PoolBuf>` is 16 bytes and comes back in two registers, so the
/// fast path's buffer reaches the caller without a trip through memory. That needs a call: each
/// slow path is `#[inline(never)]`.
#[inline(always)]
pub(crate) fn from_slow_path(
    slow: impl FnOnce(&mut Error) -> Option<PoolBuf>,
) -> Result<PoolBuf, Error> {
    // Any value: `slow` overwrites it whenever it returns `None`.
    let mut error = Error::Empty { block_size: 0 };
    match slow(&mut error) {
        Some(buf) => Ok(buf),
        None => Err(error),
    }
}

/// The slow path's half of [`from_slow_path`].
#[inline(always)]
pub(crate) fn split(got: Result<PoolBuf, Error>, error: &mut Error) -> Option<PoolBuf> {
    got.map_err(|e| *error = e).ok()
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
