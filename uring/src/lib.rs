//! io_uring provided buffer rings whose buffers are blocks of a [`bufslab`] pool: the kernel
//! receives straight into pooled blocks, and each completion hands the application an ordinary
//! [`PoolBuf`](bufslab::PoolBuf).
//!
//! ```no_run
//! use bufslab::Pool;
//! use bufslab_uring::BufRing;
//! use io_uring::{opcode, types, IoUring};
//! use std::os::fd::AsRawFd;
//!
//! let pool = Pool::new(); // 4 KiB blocks
//! let cache = pool.local_cache();
//! let mut ring = IoUring::new(256)?;
//! // 64 blocks for the kernel to pick from, as buffer group 0.
//! let mut bufs = BufRing::new(&ring, &cache, 0, 64, 4096)?;
//!
//! let socket = std::net::TcpStream::connect("127.0.0.1:8080")?;
//! let recv = opcode::RecvMulti::new(types::Fd(socket.as_raw_fd()), bufs.group()).build();
//! // SAFETY: the receive names no memory of ours but the buffer group, which `bufs` keeps
//! // registered; the socket outlives the request.
//! unsafe { ring.submission().push(&recv)? };
//!
//! loop {
//!     ring.submit_and_wait(1)?;
//!     let cqes: Vec<_> = ring.completion().collect();
//!     for cqe in &cqes {
//!         // SAFETY: read from this ring's completion queue, for the receive above (a single
//!         // buffer from `bufs`' group), and taken once.
//!         if let Some(data) = unsafe { bufs.take(cqe) } {
//!             println!("{} bytes", data.len()); // a PoolBuf: send it anywhere, drop it anywhere
//!         }
//!     }
//!     bufs.refill(); // once per loop turn
//! #   break;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Design
//!
//! **The pool feeds the kernel.** A *provided buffer ring* (`IORING_REGISTER_PBUF_RING`, Linux
//! 5.19) is an array of buffer descriptions the kernel picks from when a receive is ready, so a
//! server with ten thousand idle connections pins no buffer per connection: only data that has
//! arrived takes a block. [`BufRing`] fills that array with blocks rented from a
//! [`bufslab::LocalCache`], so received data lands in pooled memory and leaves as a
//! [`PoolBuf`](bufslab::PoolBuf) like any other: frozen, sliced, sent to another thread, and
//! returned to its pool by its drop wherever that happens. Netty's `IoUringBufferRing` has the
//! same shape over Netty's allocator.
//!
//! **Buffer id = slot.** Ring position `p` is always entry `p % N` with buffer id `p % N`, and a
//! slot table of `N` [`RawBlock`](bufslab::RawBlock)s says which block each id names. A
//! completion's buffer id (`IORING_CQE_F_BUFFER`) is therefore an index: [`BufRing::take`] empties
//! the slot and turns its block into a buffer filled to the received length, in O(1) and with no
//! allocation. A bundle receive (`IORING_RECVSEND_BUNDLE`, Linux 6.10, probed from the ring's
//! features: [`BufRing::supports_bundles`]) fills several consecutive slots per completion,
//! and [`BufRing::take_bundle`] yields them in order.
//!
//! **Refilled once per loop turn.** The kernel consumes positions in order; [`BufRing::refill`]
//! walks the emptied slots behind it, puts a fresh block from the local cache in each (a few
//! loads and stores each: the cache is the pool's per-thread fast path), and publishes them with
//! one release store of the ring's tail. It stops at the first slot whose completion has not
//! been read yet, and when the pool is exhausted; the next turn goes on from there.
//!
//! **Running dry.** When every block is out (the application holds them, or the pool is
//! exhausted), a receive that needs one completes with `ENOBUFS`, and a multishot receive stops
//! (its completion lacks `IORING_CQE_F_MORE`). That is back-pressure, not a failure: refill
//! and submit the receive again. Nothing is lost; the data waits in the socket.
//!
//! # Who owns what
//!
//! Memory the kernel may still write belongs to the kernel until the completion that gives it
//! back, and safe code cannot break that:
//!
//! - a block in a slot is a [`RawBlock`](bufslab::RawBlock): out of the pool, reachable by no
//!   handle; the only way back to a `PoolBuf` is a completion ([`take`](BufRing::take),
//!   [`take_bundle`](BufRing::take_bundle)), and a slot is emptied once;
//! - the ring memory is freed only after the kernel unregistered it; the `BufRing` holds a
//!   duplicate of the ring's file descriptor, so the kernel ring cannot go away first;
//! - dropping a `BufRing` unregisters it and **leaks** the blocks still in it (a request may
//!   have picked one just before and still be writing it); [`BufRing::release`] returns them
//!   after a clean shutdown;
//! - if the kernel refuses to unregister, the ring memory is leaked, never freed.
//!
//! What safe code cannot know is whether a completion is genuine: a `cqueue::Entry` can be
//! cloned, and one from another ring or group names a slot the kernel may still fill. So
//! `take`, `take_bundle` and `release` are `unsafe`, with one-sentence contracts, in the same
//! spirit as `io_uring`'s own `SubmissionQueue::push`. All of the crate's `unsafe` code is in
//! one module (`buf_ring`), each block with its argument; the rest of the crate forbids it.
//!
//! **Incremental consumption** (`IOU_PBUF_RING_INC`, Linux 6.12), where one block takes
//! several receives, is not used: with pooled blocks the application wants each receive in its
//! own buffer that it may keep, send and free independently, and a block shared by several
//! completions could only go home after the last, which breaks "one completion, one owner".
//!
//! # Refused io_uring
//!
//! Containers often forbid io_uring (the default seccomp profiles of Docker and containerd
//! refuse its calls), and the `kernel.io_uring_disabled` sysctl can turn it off. [`Error`] says
//! which: [`Error::classify`] maps the error of any io_uring call, and
//! [`Error::is_refused`] tells "use another I/O path" from a real failure. [`Features::probe`]
//! answers before any real work is set up.
//!
//! # Kernel versions
//!
//! | feature | Linux |
//! | --- | --- |
//! | provided buffer rings (`IORING_REGISTER_PBUF_RING`) | 5.19 |
//! | multishot receive (`IORING_RECV_MULTISHOT`) | 6.0 |
//! | receive bundles (`IORING_RECVSEND_BUNDLE`, `IORING_FEAT_RECVSEND_BUNDLE`) | 6.10 |
//! | incremental consumption (`IOU_PBUF_RING_INC`), not used | 6.12 |

#![deny(unsafe_code, unsafe_op_in_unsafe_fn, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[allow(unsafe_code)]
mod buf_ring;
mod error;
mod features;

pub use buf_ring::{BufRing, Bundle};
pub use error::Error;
pub use features::Features;
