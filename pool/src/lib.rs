//! A preallocated, bounded slab pool of fixed-size I/O blocks, for servers that must not touch
//! the heap on their hot path.
//!
//! ```
//! use bufslab::{ClassConfig, Pool};
//! use bytes::BufMut;
//!
//! let pool = Pool::builder()
//!     .class(ClassConfig::new(4096).blocks_per_slab(32).prealloc_slabs(4).max_slabs(64))
//!     .class(ClassConfig::new(64 * 1024).blocks_per_slab(8).prealloc_slabs(0).max_slabs(16))
//!     .max_bytes(64 << 20)
//!     .build()?;
//!
//! // A thread-per-core server keeps one cache per worker thread.
//! let cache = pool.local_cache();
//! let mut buf = cache.get(1500)?; // smallest class that fits: 4096
//! buf.put_slice(b"HTTP/1.1 200 OK\r\n");
//! assert_eq!(&buf[..8], b"HTTP/1.1");
//!
//! let shared = buf.freeze(); // zero-copy, cloneable, Send + Sync
//! let again = shared.clone();
//! drop((shared, again)); // the block goes home with the last view
//! assert_eq!(pool.stats().rented_blocks, 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Design
//!
//! **Slabs, not per-block allocations.** Memory comes in slabs: one allocation carved into equal
//! blocks (zeroed, page-aligned), with a small header (and one reference count per block) just
//! past the next power-of-two boundary. A block finds its header from its address alone, so a
//! free block is one word and a [`PoolBuf`] two (it travels in registers), no handle needs a
//! pointer to the pool, and blocks outlive every `Pool` handle — a slab is freed only once its
//! last block is back. The price is address space, not memory: a slab whose block memory is not a
//! power of two reserves (but never writes) the gap up to the next one; the default slab (32
//! blocks of 4 KiB) is exactly 128 KiB.
//!
//! **Size classes.** A pool holds one or more [`ClassConfig`]s (e.g. 4 KiB and 64 KiB blocks);
//! a request for `n` bytes gets the smallest class with blocks of at least `n`, or
//! [`Error::TooLarge`].
//!
//! **Preallocated and bounded.** Each class preallocates `prealloc_slabs` slabs when the pool is
//! built, and grows one slab at a time up to `max_slabs`, and the whole pool up to
//! [`Builder::max_bytes`]. [`Pool::get`] grows while under the bounds and otherwise returns
//! [`Error::Exhausted`]; [`Pool::try_get`] never grows. Neither panics, neither allocates past
//! the bound. Free lists are sized for the class's maximum up front, so returning a block never
//! allocates either.
//!
//! **Two free-list strategies** ([`FreeList`]), usable side by side in one binary
//! (`Pool<QueueFreeList>`, `Pool<StackFreeList>`): a FIFO lock-free queue, the strategy Kestrel
//! shipped, and a LIFO mutex-guarded stack that hands back the block returned last, still warm
//! in cache. The stack is behind the `stack` cargo feature, on by default. `Pool` without a
//! parameter is always `Pool<QueueFreeList>`: no cargo feature changes it. When to pick which is
//! in the crate's README.
//!
//! **Per-thread fast path.** Each thread can keep a cache of a pool: a small stash per class
//! that serves gets and puts with no atomic read-modify-write and no lock, refilling and
//! flushing half its capacity at a time. A thread that owns its work holds it as a
//! [`LocalCache`] (not `Send`); a task that moves between threads (tokio's multi-thread runtime)
//! reaches the cache of whichever thread it runs on with [`Pool::get_local`], which makes the
//! cache on first use and sends its blocks home when the thread exits. A block dropped on
//! another thread takes the remote-return path: into that thread's own cache of the pool if it
//! has one, else straight onto the shared free list. Either way it is back in its pool, owned
//! once.
//!
//! **Buffers.** [`PoolBuf`] owns a rented block: `Deref<Target = [u8]>` over the filled part,
//! [`bytes::BufMut`] (so `tokio::io::AsyncReadExt::read_buf` fills it), [`bytes::Buf`],
//! `std::io::{Read, Write}` and [`PoolBuf::read_from`] for any `std::io::Read`.
//! [`PoolBuf::freeze`] turns it into [`PoolBytes`], a cloneable read-only view whose block returns
//! when the last clone drops; [`PoolBuf::into_bytes`] gives a [`bytes::Bytes`] over the same
//! memory (one small allocation, for `Bytes`' owner record), and [`PoolBytes::try_into_mut`]
//! makes the last view writable again.
//!
//! **Shrinking.** [`Pool::trim`] gives every fully free slab above the preallocated floor back to
//! the allocator. [`Pool::evict_idle`], called periodically, is the idle policy: when returns kept
//! up with rents over the last period, it releases a share (see [`Builder::evict_share`]) of the
//! surplus. A slab with any block out, or parked in a local cache, is never released.
//!
//! **Reporting.** [`Pool::stats`] and [`Pool::class_stats`] read relaxed counters: bytes
//! allocated, pooled and rented, peak, misses, slabs and evictions. They allocate nothing.
//!
//! **Debug aids.** With the `debug` feature, returned blocks are poisoned and checked on the next
//! rent (a write after return panics), a block handed to a free list of a pool or class that
//! does not own it, or returned twice, panics, and a pool dropped with blocks still out says so on
//! stderr.
//!
//! # Allocation
//!
//! After warm-up (the slabs a workload needs exist, each thread's cache exists), renting,
//! writing, returning, freezing and dropping views perform no heap allocation. The crate's tests
//! check this with dhat. Growing a class allocates one slab; `trim`, `evict_idle` and making a
//! thread's cache of a pool (its first `LocalCache` or `get_local`) allocate a little
//! bookkeeping.
//!
//! # Public API and features
//!
//! The public API names only `std` types and `bytes` types (`Buf`, `BufMut`, `Bytes`): the free
//! lists' crates (`crossbeam-queue`, `parking_lot`) are private dependencies, and a test
//! (`tests/public_api.rs`, on rustdoc's JSON) fails if one of their types shows up.
//!
//! Two cargo features, both purely additive: `stack` (on by default) adds `StackFreeList` and
//! nothing else, and `debug` adds checks (above). Neither changes a type, a default type
//! parameter or a signature, so a build that turns one on or off for one crate breaks no other
//! (`tests/additive_features.rs` checks a crate outside the workspace under every combination).
//!
//! # Limits
//!
//! Block sizes are multiples of 64 bytes up to 1 GiB; a slab is at most 4 GiB; a pool has at
//! most 255 classes. `max_slabs` defaults to 256 per class, and each class's free list reserves
//! room for all of its blocks when the pool is built.

#![deny(unsafe_op_in_unsafe_fn, missing_docs)]
// docs.rs builds with `--cfg docsrs` and every feature: mark what the `debug` and `stack`
// features add.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(clippy::undocumented_unsafe_blocks)]

mod buf;
mod config;
#[cfg(feature = "debug")]
mod debug;
mod error;
mod free_list;
mod frozen;
mod home;
mod local_cache;
mod out_count;
mod pool;
mod queue;
mod raw;
mod ref_count;
mod slab;
#[cfg(feature = "stack")]
mod stack;
mod stats;
mod sync;
mod thread_cache;

pub use buf::PoolBuf;
pub use config::{Builder, ClassConfig};
#[cfg(feature = "debug")]
#[cfg_attr(docsrs, doc(cfg(feature = "debug")))]
pub use debug::POISON;
pub use error::{ConfigError, Error};
pub use free_list::{DefaultFreeList, FreeList};
pub use frozen::PoolBytes;
pub use local_cache::LocalCache;
pub use pool::Pool;
pub use queue::QueueFreeList;
pub use raw::RawBlock;
#[cfg(feature = "stack")]
#[cfg_attr(docsrs, doc(cfg(feature = "stack")))]
pub use stack::StackFreeList;
pub use stats::{ClassStats, Stats};

// The README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
