//! [`BufRing`]: a registered provided buffer ring whose entries are blocks rented from a
//! [`LocalCache`]. Every `unsafe` operation of the crate is in this module.
//!
//! # Ownership, slot by slot
//!
//! The ring has `N` entries (a power of two) and a slot table of `N` `Option<RawBlock>`s. Ring
//! position `p` is always described by entry `p % N`, whose buffer id is `p % N`: **buffer id =
//! slot**. A slot is in one of two states:
//!
//! - `None`: the slot is empty. Its block (if it ever had one) was taken back from a completion
//!   that named it, so the kernel has consumed its ring position and will never read that entry
//!   again; user space may write the entry.
//! - `Some(raw)`: the kernel owns the block. It was published at some position `p`; the kernel
//!   may read the entry until it consumes `p`, and write the block until the completion that
//!   names it is posted. The slot leaves this state only through [`BufRing::take`] or
//!   [`BufRing::take_bundle`], whose callers promise (they are `unsafe`) that the completion is
//!   real, is this group's, and is passed once.
//!
//! The kernel consumes positions in order, so when the slot of position `tail` is empty, the
//! position one lap behind (`tail - N`, same slot) was consumed and completed: writing the entry
//! at `tail` and publishing `tail + 1` can never overwrite an entry the kernel may still read.
//! [`BufRing::refill`] stops at the first slot still owned by the kernel.
//!
//! # What the kernel reads
//!
//! The ring memory is `N` 16-byte `struct io_uring_buf` entries, page-aligned; the ring's tail
//! is the `u16` overlaid on the last field of entry 0. User space writes an entry's address,
//! length and id with plain stores (never the overlaid tail), then publishes the new tail with a
//! release store, so that the kernel's acquire load of the tail sees the entries written.
//!
//! # Teardown
//!
//! The ring memory and the ring's file stay alive while the group is registered: the `BufRing`
//! holds a duplicate of the ring's file descriptor, so the kernel ring cannot be destroyed under
//! it, and frees its memory only after the kernel has unregistered the group. If unregistering
//! fails, the ring memory is leaked, never freed. Blocks still in slots at drop are leaked too
//! (a request selected before unregistering may still be writing one); [`BufRing::release`]
//! returns them when the caller knows no request is left.

use std::alloc::{self, Layout};
use std::io;
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU16, Ordering};

use bufslab::{DefaultFreeList, FreeList, LocalCache, PoolBuf, RawBlock};
use io_uring::{cqueue, squeue, IoUring};

use crate::error::Error;

/// The most entries a provided buffer ring can have.
pub(crate) const MAX_ENTRIES: usize = 1 << 15;

/// `struct io_uring_buf`: one ring entry as the kernel reads it. The `resv` field of entry 0 is
/// the ring's tail.
#[repr(C)]
struct Entry {
    addr: u64,
    len: u32,
    bid: u16,
    resv: u16,
}

const _: () = assert!(size_of::<Entry>() == 16);

/// Where the tail lives: the `resv` field of entry 0.
const TAIL_OFFSET: usize = 14;

/// `struct io_uring_buf_reg`, the argument of the register and unregister calls.
#[repr(C)]
#[derive(Default)]
struct BufReg {
    ring_addr: u64,
    ring_entries: u32,
    bgid: u16,
    flags: u16,
    resv: [u64; 3],
}

const IORING_REGISTER_PBUF_RING: libc::c_long = 22;
const IORING_UNREGISTER_PBUF_RING: libc::c_long = 23;

/// The ring entries, page-aligned, zeroed when made.
struct RingMem {
    ptr: NonNull<Entry>,
    layout: Layout,
}

impl RingMem {
    fn new(entries: usize) -> Option<RingMem> {
        // Page-aligned: the kernel pins the ring's pages and refuses an unaligned address.
        let layout = Layout::from_size_align(entries * size_of::<Entry>(), page_size()).ok()?;
        // SAFETY: the size is non-zero (at least one entry).
        let ptr = NonNull::new(unsafe { alloc::alloc_zeroed(layout) })?.cast();
        Some(RingMem { ptr, layout })
    }

    fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// The tail the kernel reads.
    fn tail(&self) -> &AtomicU16 {
        // SAFETY: offset 14 of entry 0 is inside the allocation, 2-aligned (the base is
        // page-aligned), and zero-initialised; it is only ever accessed atomically, by us and by
        // the kernel, and no other reference covers those two bytes.
        unsafe {
            &*self
                .ptr
                .as_ptr()
                .cast::<u8>()
                .add(TAIL_OFFSET)
                .cast::<AtomicU16>()
        }
    }

    /// Writes entry `index` (not its overlaid tail).
    ///
    /// # Safety
    /// `index` is below the entry count, and the kernel does not read the entry now: its slot
    /// is empty (see the module docs).
    unsafe fn write(&self, index: usize, addr: u64, len: u32, bid: u16) {
        // SAFETY: in bounds per the caller; field-by-field raw writes, so no reference covers
        // the `resv` bytes that are the tail in entry 0.
        unsafe {
            let e = self.ptr.as_ptr().add(index);
            ptr::addr_of_mut!((*e).addr).write(addr);
            ptr::addr_of_mut!((*e).len).write(len);
            ptr::addr_of_mut!((*e).bid).write(bid);
        }
    }

    /// Lets go of the memory without freeing it, for a ring the kernel may still read. (A
    /// `RingMem` has no `Drop`: this names what dropping one does.)
    fn leak(self) {}

    /// Gives the memory back.
    ///
    /// # Safety
    /// The kernel no longer knows the ring: it was never registered, or was unregistered.
    unsafe fn free(self) {
        // SAFETY: allocated in `new` with this layout, and freed once (`self` is consumed).
        unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

/// One buffer-ring register call (`io_uring_register(2)` with a `BufReg`).
fn register_call(fd: &OwnedFd, op: libc::c_long, reg: &BufReg) -> io::Result<()> {
    // SAFETY: `reg` is a valid `struct io_uring_buf_reg` for the duration of the call, and
    // `nr_args` is 1 as the two buffer-ring calls require. For a register call, the caller (of
    // `BufRing::new`) keeps the memory at `reg.ring_addr` alive until it is unregistered.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd.as_raw_fd(),
            op,
            reg as *const BufReg,
            1 as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A provided buffer ring, registered with one io_uring, filled with blocks rented from a
/// [`LocalCache`].
///
/// A receive submitted with buffer select on [`group`](Self::group) (e.g.
/// `opcode::RecvMulti::new(fd, ring.group())`) makes the kernel pick the next block; its
/// completion is turned back into an ordinary [`PoolBuf`] by [`take`](Self::take) (or
/// [`take_bundle`](Self::take_bundle) for a bundle receive), which goes home through its normal
/// drop, on any thread. Call [`refill`](Self::refill) once per loop turn to put fresh blocks from
/// the cache where the kernel consumed some.
///
/// Not `Send`: it lives on the thread of its ring and its cache. See the [crate docs](crate) for
/// the design and a complete example.
pub struct BufRing<F: FreeList = DefaultFreeList> {
    /// `None` once unregistered and freed (or leaked) by `release`.
    mem: Option<RingMem>,
    slots: Box<[Option<RawBlock>]>,
    mask: u16,
    /// The next ring position to fill (wrapping, like the kernel's `u16` head and tail).
    tail: u16,
    /// Slots that hold a block.
    held: usize,
    entry_len: u32,
    /// The length asked of the cache: it picks the class.
    request: usize,
    group: u16,
    bundles: bool,
    /// A duplicate of the ring's descriptor, so the ring outlives the registration; `None` only
    /// for the unregistered rings of this module's tests.
    fd: Option<OwnedFd>,
    cache: LocalCache<F>,
}

impl<F: FreeList> BufRing<F> {
    /// Registers a buffer ring of `entries` slots as group `group` on `ring`, and fills it with
    /// blocks of the class `cache.get(block_len)` picks.
    ///
    /// `entries` is a power of two from 1 to 32768. A ring larger than the pool can fill is
    /// fine: it holds what the pool gives and [`refill`](Self::refill) tops it up later.
    ///
    /// Whether the ring supports receive bundles is read from its features
    /// ([`supports_bundles`](Self::supports_bundles)).
    ///
    /// # Errors
    ///
    /// [`Error::Entries`], [`Error::Pool`] when no block of that size can be rented, and the
    /// register call's error through [`Error::classify`] ([`Error::Invalid`] on kernels before
    /// 5.19), or [`Error::GroupInUse`].
    pub fn new<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
        ring: &IoUring<S, C>,
        cache: &LocalCache<F>,
        group: u16,
        entries: usize,
        block_len: usize,
    ) -> Result<Self, Error> {
        let fd = ring.as_fd().try_clone_to_owned().map_err(Error::classify)?;
        let mut this = Self::unregistered(cache, entries, block_len)?;
        this.group = group;
        this.bundles = ring.params().is_feature_recvsend_bundle();
        let reg = BufReg {
            ring_addr: this.mem.as_ref().map_or(0, RingMem::addr),
            ring_entries: entries as u32,
            bgid: group,
            ..BufReg::default()
        };
        match register_call(&fd, IORING_REGISTER_PBUF_RING, &reg) {
            Ok(()) => this.fd = Some(fd),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                return Err(Error::GroupInUse { group })
            }
            // `this` drops unregistered: its memory is freed, it holds no block yet.
            Err(e) => return Err(Error::classify(e)),
        }
        this.refill();
        Ok(this)
    }

    /// The ring memory and slot table, not yet registered and empty.
    fn unregistered(
        cache: &LocalCache<F>,
        entries: usize,
        block_len: usize,
    ) -> Result<Self, Error> {
        if !entries.is_power_of_two() || entries > MAX_ENTRIES {
            return Err(Error::Entries { requested: entries });
        }
        // One rent tells the class's block size (and that the pool can serve it at all).
        let probe = cache.get(block_len)?;
        let entry_len = u32::try_from(probe.capacity()).map_err(|_| {
            Error::Pool(bufslab::Error::TooLarge {
                requested: probe.capacity(),
                largest: u32::MAX as usize,
            })
        })?;
        drop(probe);
        let mem = RingMem::new(entries).ok_or(Error::LockedMemory)?;
        Ok(BufRing {
            mem: Some(mem),
            slots: (0..entries).map(|_| None).collect(),
            mask: (entries - 1) as u16,
            tail: 0,
            held: 0,
            entry_len,
            request: block_len,
            group: 0,
            bundles: false,
            fd: None,
            cache: cache.clone(),
        })
    }

    /// The buffer group id to name in a buffer-select request.
    #[inline]
    pub fn group(&self) -> u16 {
        self.group
    }

    /// The number of slots.
    #[inline]
    pub fn entries(&self) -> usize {
        self.slots.len()
    }

    /// The size of every block in the ring: the most one completion's buffer holds.
    #[inline]
    pub fn block_size(&self) -> usize {
        self.entry_len as usize
    }

    /// Slots holding a block the kernel owns: published, and not yet taken back.
    #[inline]
    pub fn held(&self) -> usize {
        self.held
    }

    /// Whether the kernel takes receive bundles (`IORING_FEAT_RECVSEND_BUNDLE`, Linux 6.10):
    /// one completion, several consecutive blocks ([`take_bundle`](Self::take_bundle)).
    #[inline]
    pub fn supports_bundles(&self) -> bool {
        self.bundles
    }

    /// Puts fresh blocks from the cache into every slot the kernel has given back, in ring
    /// order, and publishes them (one release store of the tail). Returns how many were added.
    ///
    /// Call it once per loop turn, after taking the turn's completions. It stops early at the
    /// first slot the kernel still owns (a completion not yet read), and when the pool has no
    /// block to give; both are retried by the next call. Allocates nothing unless the pool grows
    /// a slab.
    pub fn refill(&mut self) -> usize {
        self.refill_to(self.slots.len())
    }

    /// [`refill`](Self::refill), but only until the kernel holds `most` blocks.
    ///
    /// A caller that keeps received blocks waiting (for a connection not ready to take them)
    /// can count them against the ring: refilled to `entries() - waiting`, the ring and the
    /// waiting blocks together never exceed `entries()`, whatever the kernel delivers, so the
    /// place they wait in never has to grow.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn f(bufs: &mut bufslab_uring::BufRing, waiting: usize) {
    /// bufs.refill_to(bufs.entries() - waiting);
    /// assert!(bufs.held() + waiting <= bufs.entries());
    /// # }
    /// ```
    pub fn refill_to(&mut self, most: usize) -> usize {
        let Some(mem) = &self.mem else { return 0 };
        let mut added = 0;
        loop {
            if self.held + added >= most {
                break;
            }
            let index = usize::from(self.tail & self.mask);
            let slot = &mut self.slots[index];
            if slot.is_some() {
                break; // the kernel still owns this slot: the ring is as full as it can be
            }
            let Ok(buf) = self.cache.get(self.request) else {
                break; // pool exhausted: the next turn tries again
            };
            let raw = buf.into_raw();
            // SAFETY: `index < entries`; the slot is empty, so the kernel consumed the previous
            // lap's position of this entry and never reads it again (module docs).
            unsafe { mem.write(index, raw.as_mut_ptr() as u64, self.entry_len, index as u16) };
            *slot = Some(raw);
            self.tail = self.tail.wrapping_add(1);
            added += 1;
        }
        if added > 0 {
            self.held += added;
            // The entries written above happen-before the kernel's acquire load of the tail.
            mem.tail().store(self.tail, Ordering::Release);
        }
        added
    }

    /// Takes back the block a single-buffer completion names (`IORING_CQE_F_BUFFER`), filled to
    /// the received length: an ordinary [`PoolBuf`]. `None` when the completion carries no
    /// buffer (an error such as `ENOBUFS`, or a cancellation).
    ///
    /// A receive that returned 0 (end of stream) still consumes its block: it comes back empty.
    ///
    /// # Safety
    ///
    /// `cqe` was read from the completion queue of the ring this `BufRing` is registered with,
    /// for a request that selected a single buffer from this ring's [`group`](Self::group) (not
    /// a bundle), and it is passed here (or to `take_bundle`) once. Otherwise the slot it names
    /// may hold a block the kernel can still write.
    pub unsafe fn take(&mut self, cqe: &cqueue::Entry) -> Option<PoolBuf> {
        let bid = cqueue::buffer_select(cqe.flags())?;
        let len = usize::try_from(cqe.result()).unwrap_or(0);
        // SAFETY: the caller's contract: the kernel consumed slot `bid` and posted this, its
        // final completion.
        unsafe { self.take_slot(bid, len) }
    }

    /// Takes back the blocks a bundle receive completion names: `ceil(result / block_size)`
    /// consecutive slots from its buffer id, each filled in turn (all but the last to the block
    /// size). A completion with no data carries no block (a bundle that received nothing consumed
    /// none), and yields nothing.
    ///
    /// Blocks the iterator is not asked for are taken when it drops, and go home.
    ///
    /// # Safety
    ///
    /// As [`take`](Self::take), for a request that selected a *bundle* from this ring's group
    /// (`IORING_RECVSEND_BUNDLE`).
    pub unsafe fn take_bundle(&mut self, cqe: &cqueue::Entry) -> Bundle<'_, F> {
        let (next, left) = match cqueue::buffer_select(cqe.flags()) {
            Some(bid) if cqe.result() > 0 => (bid, cqe.result() as usize),
            _ => (0, 0),
        };
        Bundle {
            ring: self,
            next,
            left,
        }
    }

    /// Empties slot `bid` into a buffer holding its first `len` bytes (at most the block size).
    /// `None` for an id past the ring or an empty slot, which only a broken contract produces.
    ///
    /// # Safety
    /// The kernel consumed slot `bid` and posted the completion that names it.
    unsafe fn take_slot(&mut self, bid: u16, len: usize) -> Option<PoolBuf> {
        let raw = self.slots.get_mut(usize::from(bid))?.take()?;
        self.held -= 1;
        let len = len.min(raw.capacity());
        // SAFETY: the caller's contract: the completion is posted, so the kernel's writes to
        // the block happened before (they are published with the completion, which was read),
        // and the consumed entry is never used again.
        Some(unsafe { PoolBuf::from_raw(raw, len) })
    }

    /// Unregisters the ring and returns every block it still holds to the pool; returns how
    /// many. If the kernel refuses to unregister, nothing is returned and the memory is leaked.
    /// Afterwards the ring is empty and unregistered: [`refill`](Self::refill) adds nothing,
    /// and dropping it does nothing more.
    ///
    /// # Safety
    ///
    /// No request that selected, or may still select, a buffer from this group is in flight:
    /// every such request has posted its final completion (one without `IORING_CQE_F_MORE`),
    /// and each completion that named a block was either passed to `take`/`take_bundle` or read
    /// and discarded. (Dropping the `BufRing` instead is always safe, and leaks those blocks.)
    pub unsafe fn release(&mut self) -> usize {
        if !self.unregister() {
            return 0;
        }
        let mut returned = 0;
        for slot in self.slots.iter_mut() {
            if let Some(raw) = slot.take() {
                // SAFETY: the group is unregistered and, per the caller, no request that
                // selected this block is in flight, so the kernel neither reads the entry nor
                // writes the block.
                drop(unsafe { PoolBuf::from_raw(raw, 0) });
                returned += 1;
            }
        }
        self.held = 0;
        returned
    }

    /// Unregisters the group and frees the ring memory; `false` (memory leaked) if the kernel
    /// refused.
    fn unregister(&mut self) -> bool {
        let Some(mem) = self.mem.take() else {
            return false;
        };
        let unregistered = match &self.fd {
            Some(fd) => {
                let reg = BufReg {
                    bgid: self.group,
                    ..BufReg::default()
                };
                register_call(fd, IORING_UNREGISTER_PBUF_RING, &reg).is_ok()
            }
            None => true,
        };
        if unregistered {
            // SAFETY: the kernel no longer knows the ring.
            unsafe { mem.free() };
        } else {
            // The kernel may still read the entries: never free them.
            mem.leak();
        }
        unregistered
    }
}

impl<F: FreeList> Drop for BufRing<F> {
    /// Unregisters the group, then frees the ring memory (or leaks it, if the kernel refused).
    /// Blocks still in the ring are leaked: a request may have selected one just before and
    /// still write it. Use [`release`](BufRing::release) to return them.
    fn drop(&mut self) {
        self.unregister();
        // The slots' `RawBlock`s drop after this, which leaks them; the duplicate descriptor
        // closes after that, once the group is gone.
    }
}

impl<F: FreeList> std::fmt::Debug for BufRing<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufRing")
            .field("group", &self.group)
            .field("entries", &self.entries())
            .field("block_size", &self.entry_len)
            .field("held", &self.held)
            .field("bundles", &self.bundles)
            .finish()
    }
}

/// The blocks of one bundle completion, in order (from [`BufRing::take_bundle`]).
pub struct Bundle<'a, F: FreeList = DefaultFreeList> {
    ring: &'a mut BufRing<F>,
    next: u16,
    left: usize,
}

impl<F: FreeList> Iterator for Bundle<'_, F> {
    type Item = PoolBuf;

    fn next(&mut self) -> Option<PoolBuf> {
        if self.left == 0 {
            return None;
        }
        let len = self.left.min(self.ring.block_size());
        let bid = self.next;
        self.next = (bid.wrapping_add(1)) & self.ring.mask;
        // SAFETY: `take_bundle`'s contract: the kernel consumed the `ceil(result / block_size)`
        // consecutive slots from the completion's id, and posted the completion.
        match unsafe { self.ring.take_slot(bid, len) } {
            Some(buf) => {
                self.left -= len;
                Some(buf)
            }
            None => {
                self.left = 0;
                None
            }
        }
    }
}

impl<F: FreeList> Drop for Bundle<'_, F> {
    fn drop(&mut self) {
        for buf in self.by_ref() {
            drop(buf);
        }
    }
}

/// Registers and unregisters a one-entry ring as `group`: whether the kernel has provided
/// buffer rings at all.
pub(crate) fn probe_registration<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &IoUring<S, C>,
    group: u16,
) -> Result<(), Error> {
    let fd = ring.as_fd().try_clone_to_owned().map_err(Error::classify)?;
    let mem = RingMem::new(1).ok_or(Error::LockedMemory)?;
    let reg = BufReg {
        ring_addr: mem.addr(),
        ring_entries: 1,
        bgid: group,
        ..BufReg::default()
    };
    if let Err(e) = register_call(&fd, IORING_REGISTER_PBUF_RING, &reg) {
        // SAFETY: registration failed: the kernel never knew the ring.
        unsafe { mem.free() };
        return Err(Error::classify(e));
    }
    let unreg = BufReg {
        bgid: group,
        ..BufReg::default()
    };
    if register_call(&fd, IORING_UNREGISTER_PBUF_RING, &unreg).is_ok() {
        // SAFETY: unregistered.
        unsafe { mem.free() };
    } else {
        mem.leak();
    }
    Ok(())
}

/// The ring protocol against a stand-in for the kernel, on another thread: it reads the tail
/// with acquire ordering, consumes entries in order, writes the blocks they name and posts
/// (id, length) completions. Runs under Miri, which checks the ring memory, the blocks and the
/// tail for data races and provenance: `cargo +nightly miri test -p bufslab-uring --lib`.
#[cfg(test)]
mod tests {
    use super::*;
    use bufslab::{ClassConfig, Pool};
    use std::sync::mpsc;
    use std::thread;

    /// The ring memory as the kernel sees it: a base address and a mask.
    struct KernelView {
        base: *const Entry,
        mask: u16,
        head: u16,
    }

    // SAFETY: the kernel thread reads only entries the ring published, and the tail atomically.
    unsafe impl Send for KernelView {}

    impl KernelView {
        /// Consumes the next published entry, writes `len` bytes of `byte` into its block (at
        /// most the entry's length), and returns (buffer id, bytes written); `None` when the
        /// ring is empty (the kernel's ENOBUFS).
        fn receive(&mut self, byte: u8, len: usize) -> Option<(u16, usize)> {
            // SAFETY: the tail is entry 0's last two bytes, only accessed atomically.
            let tail = unsafe { &*self.base.cast::<u8>().add(TAIL_OFFSET).cast::<AtomicU16>() }
                .load(Ordering::Acquire);
            if tail == self.head {
                return None;
            }
            // SAFETY: position `head` is published (before the tail just read), so its entry
            // is written and the ring does not touch it until this completion is taken.
            let (addr, cap, bid) = unsafe {
                let e = self.base.add(usize::from(self.head & self.mask));
                (
                    ptr::addr_of!((*e).addr).read(),
                    ptr::addr_of!((*e).len).read(),
                    ptr::addr_of!((*e).bid).read(),
                )
            };
            let n = len.min(cap as usize);
            let block = ptr::with_exposed_provenance_mut::<u8>(addr as usize);
            // SAFETY: the entry names a block of `cap` bytes lent to the kernel until it posts
            // the completion below.
            unsafe { block.write_bytes(byte, n) };
            self.head = self.head.wrapping_add(1);
            Some((bid, n))
        }
    }

    fn ring(pool: &Pool, entries: usize) -> (BufRing, KernelView) {
        let cache = pool.local_cache();
        let mut ring = BufRing::unregistered(&cache, entries, 64).unwrap();
        ring.refill();
        let view = KernelView {
            base: ring.mem.as_ref().unwrap().ptr.as_ptr(),
            mask: ring.mask,
            head: 0,
        };
        (ring, view)
    }

    fn pool(blocks: usize) -> Pool {
        Pool::builder()
            .class(
                ClassConfig::new(64)
                    .blocks_per_slab(blocks)
                    .prealloc_slabs(1)
                    .max_slabs(1),
            )
            .build()
            .unwrap()
    }

    #[test]
    fn completions_take_their_slots_and_refill_follows_the_kernel() {
        let pool = pool(8);
        let (mut ring, mut kernel) = ring(&pool, 4);
        assert_eq!(ring.held(), 4);
        // The kernel consumes all four; the fifth receive finds the ring empty.
        let done: Vec<_> = (0..4)
            .map(|i| kernel.receive(i, 10 + i as usize).unwrap())
            .collect();
        assert_eq!(kernel.receive(9, 1), None);
        // Completions in another order than consumption: each takes its own slot.
        for &(bid, len) in done.iter().rev() {
            // SAFETY: the stand-in consumed `bid` and this is its completion, taken once.
            let buf = unsafe { ring.take_slot(bid, len) }.unwrap();
            assert_eq!(buf.len(), 10 + bid as usize);
            assert!(buf.iter().all(|&b| b == bid as u8));
            // SAFETY: as above; a second take of the same completion finds the slot empty.
            assert!(unsafe { ring.take_slot(bid, len) }.is_none());
        }
        assert_eq!(ring.held(), 0);
        assert_eq!(ring.refill(), 4);
        assert_eq!(
            kernel.receive(1, 64),
            Some((0, 64)),
            "buffer id = slot, in ring order"
        );
        // SAFETY: the stand-in kernel is done (its last receive is complete, and unread).
        assert_eq!(unsafe { ring.release() }, 4);
        assert_eq!(pool.stats().rented_blocks, 0);
    }

    #[test]
    fn refill_stops_at_a_slot_whose_completion_is_unread() {
        let pool = pool(8);
        let (mut ring, mut kernel) = ring(&pool, 4);
        let a = kernel.receive(1, 5).unwrap();
        let b = kernel.receive(2, 5).unwrap();
        assert_eq!((a.0, b.0), (0, 1));
        // Only the second completion is read: slot 0 is still the kernel's, so nothing can be
        // published past it, even though slot 1 is empty.
        // SAFETY: consumed and completed, taken once.
        drop(unsafe { ring.take_slot(b.0, b.1) });
        assert_eq!(ring.refill(), 0);
        // SAFETY: as above.
        drop(unsafe { ring.take_slot(a.0, a.1) });
        assert_eq!(ring.refill(), 2);
        assert_eq!(ring.held(), 4);
        // SAFETY: the stand-in kernel is done.
        assert_eq!(unsafe { ring.release() }, 4);
    }

    #[test]
    fn a_bundle_takes_consecutive_slots_across_the_wrap() {
        let pool = pool(8);
        let (mut ring, mut kernel) = ring(&pool, 4);
        // Move the head to slot 2, so that a three-block bundle wraps to slot 0.
        for _ in 0..2 {
            let (bid, len) = kernel.receive(0, 1).unwrap();
            // SAFETY: as above.
            drop(unsafe { ring.take_slot(bid, len) });
        }
        assert_eq!(ring.refill(), 2);
        let parts: Vec<_> = (0..3)
            .map(|i| kernel.receive(7, 64 - 10 * i).unwrap())
            .collect();
        assert_eq!(parts.iter().map(|p| p.0).collect::<Vec<_>>(), [2, 3, 0]);
        let total = 64 + 64 + 10;
        let mut bundle = Bundle {
            ring: &mut ring,
            next: 2,
            left: total,
        };
        let first = bundle.next().unwrap();
        assert_eq!(first.len(), 64);
        drop(bundle); // the two blocks not asked for are taken (and go home) on drop
        assert_eq!(ring.held(), 1);
        assert_eq!(ring.refill(), 3);
        drop(first);
        // SAFETY: the stand-in kernel is done.
        assert_eq!(unsafe { ring.release() }, 4);
        assert_eq!(pool.stats().rented_blocks, 0);
    }

    /// The kernel on one thread, completions read on the ring's thread, buffers dropped on a
    /// third: the ring memory and blocks cross threads only as the protocol allows.
    #[test]
    fn the_protocol_holds_across_threads() {
        let rounds = if cfg!(miri) { 40 } else { 20_000 };
        let pool = pool(16);
        let (mut ring, mut kernel) = ring(&pool, 8);
        let (to_ring, completions) = mpsc::channel::<(u16, usize, u8)>();
        let kernel_thread = thread::spawn(move || {
            let mut sent = 0;
            let mut byte = 0u8;
            while sent < rounds {
                byte = byte.wrapping_add(1);
                match kernel.receive(byte, 1 + sent % 64) {
                    Some((bid, n)) => {
                        to_ring.send((bid, n, byte)).unwrap();
                        sent += 1;
                    }
                    // Empty ring (ENOBUFS): try again once the ring's thread has refilled.
                    None => thread::yield_now(),
                }
            }
        });
        let (to_dropper, dropped) = mpsc::channel::<PoolBuf>();
        let dropper = thread::spawn(move || dropped.into_iter().for_each(drop));
        loop {
            match completions.try_recv() {
                Ok((bid, n, byte)) => {
                    // SAFETY: the stand-in consumed `bid`, wrote it, and posted this completion
                    // once.
                    let buf = unsafe { ring.take_slot(bid, n) }.unwrap();
                    assert_eq!(buf.len(), n);
                    assert!(buf.iter().all(|&b| b == byte));
                    to_dropper.send(buf).unwrap();
                }
                // A loop turn with nothing to read: refill (blocks come home from the dropper).
                Err(mpsc::TryRecvError::Empty) => thread::yield_now(),
                Err(mpsc::TryRecvError::Disconnected) => break,
            }
            ring.refill();
        }
        kernel_thread.join().unwrap();
        drop(to_dropper);
        dropper.join().unwrap();
        let held = ring.held();
        // SAFETY: the stand-in kernel is gone; nothing selects from the ring any more.
        assert_eq!(unsafe { ring.release() }, held);
        assert_eq!(pool.stats().rented_blocks, 0);
    }
}
