//! The raw-block handoff: a block lent to foreign code through `PoolBuf::into_raw` stays owned
//! and rented, is written through its bare address (from other threads too), and comes back
//! through `PoolBuf::from_raw` as an ordinary buffer that goes home on drop. Runs under Miri:
//! `MIRIFLAGS=-Zmiri-disable-isolation cargo +nightly miri test -p bufslab --test raw`.

mod common;

use std::sync::mpsc;
use std::thread;

use bufslab::{ClassConfig, Pool, PoolBuf, RawBlock};
use bytes::BufMut;

fn pool() -> Pool {
    Pool::builder()
        .class(
            ClassConfig::new(256)
                .blocks_per_slab(4)
                .prealloc_slabs(1)
                .max_slabs(1),
        )
        .build()
        .unwrap()
}

/// Writes `byte` over the block's first `n` bytes through its address, as foreign code would.
fn foreign_fill(raw: &RawBlock, byte: u8, n: usize) {
    assert!(n <= raw.capacity());
    // SAFETY: `n <= capacity`, and the token (held by the caller) owns the block.
    unsafe { raw.as_mut_ptr().write_bytes(byte, n) };
}

#[test]
fn round_trip_keeps_the_block_and_its_bytes() {
    let pool = pool();
    let mut buf = pool.get(10).unwrap();
    buf.put_slice(b"hello");
    let addr = buf.as_ptr();
    let raw = buf.into_raw();
    assert_eq!(raw.as_mut_ptr().cast_const(), addr);
    assert_eq!(raw.capacity(), 256);
    // Lent, not returned: still rented, and no other rent can get it.
    assert_eq!(pool.stats().rented_blocks, 1);
    let others: Vec<_> = (0..3).map(|_| pool.try_get(1).unwrap()).collect();
    assert!(others.iter().all(|b| b.as_ptr() != addr));
    assert!(pool.try_get(1).is_err(), "all four blocks are out");
    drop(others);

    // SAFETY: no foreign code touched the block.
    let back = unsafe { PoolBuf::from_raw(raw, 5) };
    assert_eq!(&back[..], b"hello", "the bytes stay in place");
    assert_eq!(back.as_ptr(), addr);
    assert_eq!(back.capacity(), 256);
    drop(back);
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn foreign_writes_are_seen_and_the_buffer_works_as_usual() {
    let pool = pool();
    let raw = pool.get(1).unwrap().into_raw();
    foreign_fill(&raw, b'x', 200);
    // SAFETY: the writes above are done; nothing else touches the block.
    let mut buf = unsafe { PoolBuf::from_raw(raw, 100) };
    assert_eq!(buf.len(), 100);
    assert!(buf.iter().all(|&b| b == b'x'));
    assert_eq!(buf.spare_capacity(), 156);
    // Bytes past `len` were written too, and are simply spare capacity.
    assert!(buf.spare_mut()[..100].iter().all(|&b| b == b'x'));
    buf.put_slice(b"tail");
    assert_eq!(&buf[100..], b"tail");
    let frozen = buf.freeze();
    assert_eq!(frozen.len(), 104);
    drop(frozen);
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn full_and_empty_lengths() {
    let pool = pool();
    let raw = pool.get(1).unwrap().into_raw();
    foreign_fill(&raw, 7, 256);
    // SAFETY: as above.
    let full = unsafe { PoolBuf::from_raw(raw, 256) };
    assert_eq!(full.len(), 256);
    assert_eq!(full.spare_capacity(), 0);
    // SAFETY: as above.
    let empty = unsafe { PoolBuf::from_raw(full.into_raw(), 0) };
    assert!(empty.is_empty());
    drop(empty);
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn a_consumed_prefix_is_forgotten_not_moved() {
    let pool = pool();
    let mut buf = pool.get(1).unwrap();
    buf.put_slice(b"abcdef");
    bytes::Buf::advance(&mut buf, 2);
    // SAFETY: as above.
    let back = unsafe { PoolBuf::from_raw(buf.into_raw(), 6) };
    assert_eq!(&back[..], b"abcdef", "offsets reset, bytes in place");
}

#[test]
#[cfg_attr(miri, ignore = "leaks a slab on purpose")]
fn a_length_past_the_block_panics_and_leaks_nothing_it_should_not() {
    let pool = pool();
    let raw = pool.get(1).unwrap().into_raw();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: as above; the length is refused before the block is touched.
        drop(unsafe { PoolBuf::from_raw(raw, 257) });
    }));
    assert!(err.is_err());
    // The token was consumed by the failed call: its block is leaked, never handed out again.
    assert_eq!(pool.stats().rented_blocks, 1);
    let all: Vec<_> = (0..3).map(|_| pool.try_get(1).unwrap()).collect();
    assert!(pool.try_get(1).is_err());
    drop(all);
}

/// A block's address as foreign code holds it, sent to another thread (keeping provenance).
struct Addr(*mut u8);

impl Addr {
    /// A method, so a closure captures the whole `Addr` (which is `Send`), not the raw field.
    fn get(&self) -> *mut u8 {
        self.0
    }
}

// SAFETY: the address is only used while the block is lent to the thread it is sent to.
unsafe impl Send for Addr {}

/// Foreign code on other threads: the token crosses threads (it is `Send`), another thread
/// writes through the address while the token is held elsewhere, and the buffer made from it
/// goes home from a third thread.
#[test]
fn lent_across_threads_and_returned_from_another() {
    let pool = pool();
    let rounds = common::scaled(200, 12);
    for round in 0..rounds {
        let mut buf = pool.get(1).unwrap();
        buf.put_u8(round as u8);
        let raw = buf.into_raw();
        // The "device": fills through the address it was given.
        let addr = Addr(raw.as_mut_ptr());
        let cap = raw.capacity();
        let writer = thread::spawn(move || {
            let ptr = addr.get();
            // SAFETY: the block is `cap` bytes at `ptr`, lent to this thread until it is joined;
            // its owner (the token, held by the main thread) does not touch the bytes meanwhile.
            unsafe { ptr.add(1).write_bytes(round as u8 ^ 0x5a, cap - 1) };
        });
        writer.join().unwrap();
        let (tx, rx) = mpsc::channel::<RawBlock>();
        let receiver = thread::spawn(move || {
            let raw = rx.recv().unwrap();
            // SAFETY: the writer was joined before the token was sent: its writes happened
            // before, and nothing writes any more.
            let buf = unsafe { PoolBuf::from_raw(raw, cap) };
            assert_eq!(buf[0], round as u8);
            assert!(buf[1..].iter().all(|&b| b == round as u8 ^ 0x5a));
            // Dropped here: the remote-return path.
        });
        tx.send(raw).unwrap();
        receiver.join().unwrap();
    }
    assert_eq!(pool.stats().rented_blocks, 0);
}

/// Blocks lent from a thread's local cache come back into it like any other buffer.
#[test]
fn local_cache_blocks_round_trip() {
    let pool = pool();
    let cache = pool.local_cache();
    let raws: Vec<RawBlock> = (0..4).map(|_| cache.get(1).unwrap().into_raw()).collect();
    assert!(cache.get(1).is_err(), "all four blocks lent");
    for (i, raw) in raws.iter().enumerate() {
        foreign_fill(raw, i as u8, 8);
    }
    let bufs: Vec<PoolBuf> = raws
        .into_iter()
        // SAFETY: the fills above are done.
        .map(|raw| unsafe { PoolBuf::from_raw(raw, 8) })
        .collect();
    for (i, buf) in bufs.iter().enumerate() {
        assert_eq!(&buf[..], &[i as u8; 8]);
    }
    drop(bufs);
    assert!(cache.get(1).is_ok());
}

/// A dropped token leaks its block: it stays out, and its slab is never freed (not even by
/// `trim`), which is what makes "let go of what foreign code may still touch" safe. Miri would
/// report the leak itself, so this one runs natively only.
#[test]
#[cfg_attr(miri, ignore = "leaks a slab on purpose")]
fn a_dropped_token_leaks_its_block() {
    let pool = Pool::builder()
        .class(
            ClassConfig::new(256)
                .blocks_per_slab(1)
                .prealloc_slabs(0)
                .max_slabs(2),
        )
        .build()
        .unwrap();
    let raw = pool.get(1).unwrap().into_raw();
    drop(raw);
    assert_eq!(pool.stats().rented_blocks, 1);
    assert_eq!(pool.trim(), 0, "the leaked block keeps its slab");
    assert_eq!(pool.stats().slabs, 1);
}
