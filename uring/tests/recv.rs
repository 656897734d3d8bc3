//! A real ring over loopback TCP: multishot receives fill pool blocks, an empty ring ends the
//! receive with ENOBUFS until a refill and a re-arm, bundles take consecutive blocks, and
//! teardown never frees what the kernel may write. Skips (printing why) where io_uring is
//! refused.
#![cfg(not(miri))]

mod common;

use std::io::Write;
use std::net::Shutdown;

use bufslab::{ClassConfig, Pool, PoolBuf};
use bufslab_uring::{BufRing, Error};
use common::{arm_recv, arm_recv_bundle, next_cqe, ring_or_skip, stream_bytes, tcp_pair};
use io_uring::cqueue;

const BLOCK: usize = 512;

fn pool(blocks: usize) -> Pool {
    Pool::builder()
        .class(
            ClassConfig::new(BLOCK)
                .blocks_per_slab(blocks)
                .prealloc_slabs(1)
                .max_slabs(1),
        )
        .build()
        .unwrap()
}

/// Receives until `want` bytes came in on the multishot receive tagged 1, checking each block
/// against stream 0 from offset `from`; returns the buffers, or stops early at a completion
/// without `F_MORE` (returned as `Err(result)`).
fn receive(
    ring: &mut io_uring::IoUring,
    bufs: &mut BufRing,
    from: u64,
    want: usize,
) -> (Vec<PoolBuf>, Result<(), i32>) {
    let mut got = Vec::new();
    let mut offset = from;
    let end = from + want as u64;
    while offset < end {
        let cqe = next_cqe(ring);
        assert_eq!(cqe.user_data(), 1);
        // SAFETY: from this ring, for the single-buffer receive tagged 1 on `bufs`' group,
        // taken once.
        if let Some(buf) = unsafe { bufs.take(&cqe) } {
            assert_eq!(buf.len() as i32, cqe.result());
            assert_eq!(buf.capacity(), BLOCK);
            assert_eq!(&buf[..], &stream_bytes(0, offset, buf.len())[..]);
            offset += buf.len() as u64;
            got.push(buf);
        }
        if !cqueue::more(cqe.flags()) {
            return (got, Err(cqe.result()));
        }
    }
    (got, Ok(()))
}

/// A ring (or `None`, after printing why there is none), a pool of `blocks` blocks, and a
/// buffer ring of `entries` of them registered as `group`.
fn setup(
    test: &str,
    blocks: usize,
    group: u16,
    entries: usize,
) -> Option<(io_uring::IoUring, Pool, BufRing)> {
    let ring = ring_or_skip(test, 64)?;
    let pool = pool(blocks);
    let bufs = BufRing::new(&ring, &pool.local_cache(), group, entries, BLOCK).unwrap();
    Some((ring, pool, bufs))
}

#[test]
fn multishot_receive_fills_pool_blocks() {
    let Some((mut ring, pool, mut bufs)) = setup("multishot_receive_fills_pool_blocks", 64, 1, 8)
    else {
        return;
    };
    assert_eq!(
        (bufs.entries(), bufs.held(), bufs.block_size()),
        (8, 8, BLOCK)
    );
    assert_eq!(
        pool.stats().rented_blocks,
        8,
        "the ring's blocks count as rented"
    );

    let (mut client, server) = tcp_pair();
    arm_recv(&mut ring, &server, bufs.group(), 1);
    let mut sent = 0u64;
    for round in 0..20 {
        let len = 100 + round * 37;
        client.write_all(&stream_bytes(0, sent, len)).unwrap();
        let (got, end) = receive(&mut ring, &mut bufs, sent, len);
        assert_eq!(end, Ok(()), "the multishot receive stays armed");
        sent += len as u64;
        // The buffers are ordinary: they go home by their drop, here on another thread.
        std::thread::spawn(move || drop(got)).join().unwrap();
        bufs.refill();
        assert_eq!(bufs.held(), 8);
    }
    drop(client);
    // End of stream: a last completion, with no F_MORE.
    let cqe = next_cqe(&mut ring);
    assert_eq!(cqe.result(), 0);
    assert!(!cqueue::more(cqe.flags()));
    // SAFETY: as in `receive`.
    if let Some(empty) = unsafe { bufs.take(&cqe) } {
        assert!(empty.is_empty());
    }
    bufs.refill();
    // SAFETY: the only request on the group has posted its final completion, which was taken.
    let returned = unsafe { bufs.release() };
    assert_eq!(returned, 8);
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn an_empty_ring_ends_the_receive_with_enobufs_until_refilled_and_rearmed() {
    let test = "an_empty_ring_ends_the_receive_with_enobufs_until_refilled_and_rearmed";
    let Some((mut ring, pool, mut bufs)) = setup(test, 16, 2, 4) else {
        return;
    };
    let (mut client, server) = tcp_pair();
    // Twice what the ring holds, in one write.
    let total = 8 * BLOCK;
    client.write_all(&stream_bytes(0, 0, total)).unwrap();
    arm_recv(&mut ring, &server, bufs.group(), 1);

    // No refill: four blocks, then ENOBUFS ends the multishot receive.
    let (first, end) = receive(&mut ring, &mut bufs, 0, total);
    assert_eq!(end, Err(-libc::ENOBUFS));
    assert_eq!(first.len(), 4, "one completion per block");
    assert_eq!(bufs.held(), 0);
    let mut received: usize = first.iter().map(|b| b.len()).sum();
    assert_eq!(received, 4 * BLOCK);

    // The application lets go, the loop refills and re-arms: the rest arrives, nothing lost.
    drop(first);
    while received < total {
        assert_eq!(bufs.refill(), 4);
        arm_recv(&mut ring, &server, bufs.group(), 1);
        let (more, _) = receive(&mut ring, &mut bufs, received as u64, total - received);
        received += more.iter().map(|b| b.len()).sum::<usize>();
    }
    assert_eq!(received, total);
    drop(client);
    let cqe = next_cqe(&mut ring);
    // Either the end of stream, or the ENOBUFS of a ring left empty by the last round.
    assert!(cqe.result() == 0 || cqe.result() == -libc::ENOBUFS);
    // SAFETY: as in `receive`.
    drop(unsafe { bufs.take(&cqe) });
    // SAFETY: the receive has posted its final completion.
    unsafe { bufs.release() };
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn a_bundle_takes_consecutive_blocks_where_the_kernel_has_bundles() {
    let test = "a_bundle_takes_consecutive_blocks_where_the_kernel_has_bundles";
    let Some((mut ring, pool, mut bufs)) = setup(test, 32, 3, 16) else {
        return;
    };
    if !bufs.supports_bundles() {
        println!("skipped: {test}: the kernel has no receive bundles (Linux 6.10)");
        return;
    }
    let (mut client, server) = tcp_pair();
    let total = 6 * BLOCK + 100;
    client.write_all(&stream_bytes(0, 0, total)).unwrap();
    arm_recv_bundle(&mut ring, &server, bufs.group(), 1);
    let mut received = 0;
    let mut widest = 0;
    let mut kept = Vec::new();
    while received < total {
        let cqe = next_cqe(&mut ring);
        assert!(cqe.result() > 0, "result {}", cqe.result());
        let before = bufs.held();
        // SAFETY: from this ring, for the bundle receive on `bufs`' group, taken once.
        let blocks: Vec<PoolBuf> = unsafe { bufs.take_bundle(&cqe) }.collect();
        assert_eq!(before - bufs.held(), blocks.len());
        assert_eq!(
            blocks.iter().map(|b| b.len()).sum::<usize>(),
            cqe.result() as usize
        );
        // All but the last block are full.
        assert!(blocks[..blocks.len() - 1].iter().all(|b| b.len() == BLOCK));
        for b in &blocks {
            assert_eq!(&b[..], &stream_bytes(0, received as u64, b.len())[..]);
            received += b.len();
        }
        widest = widest.max(blocks.len());
        kept.extend(blocks);
    }
    assert!(
        widest > 1,
        "a bundle of {} bytes pending took one block",
        total
    );
    drop(kept);
    client.shutdown(Shutdown::Write).unwrap();
    let cqe = next_cqe(&mut ring);
    assert_eq!(cqe.result(), 0);
    // A bundle that received nothing consumed no block.
    let held = bufs.held();
    // SAFETY: as above.
    assert_eq!(unsafe { bufs.take_bundle(&cqe) }.count(), 0);
    assert_eq!(bufs.held(), held);
    // SAFETY: the receive posted its final completion.
    unsafe { bufs.release() };
    assert_eq!(pool.stats().rented_blocks, 0);
}

/// Dropping a registered ring with a receive still armed unregisters it first and leaks the
/// blocks it held (the kernel could be writing one); the armed receive then finds no buffers.
#[test]
fn dropping_a_registered_ring_unregisters_and_leaks_what_the_kernel_held() {
    let test = "dropping_a_registered_ring_unregisters_and_leaks_what_the_kernel_held";
    let Some((mut ring, pool, bufs)) = setup(test, 8, 4, 4) else {
        return;
    };
    let (mut client, server) = tcp_pair();
    arm_recv(&mut ring, &server, bufs.group(), 1);
    ring.submit().unwrap();
    drop(bufs);
    assert_eq!(pool.stats().rented_blocks, 4, "leaked, not freed or reused");
    client.write_all(b"late data").unwrap();
    let cqe = next_cqe(&mut ring);
    assert!(
        cqe.result() < 0,
        "no buffer to receive into: {}",
        cqe.result()
    );
    assert!(cqueue::buffer_select(cqe.flags()).is_none());
    // The group id is free again.
    let again = BufRing::new(&ring, &pool.local_cache(), 4, 4, BLOCK).unwrap();
    assert_eq!(again.held(), 4);
}

#[test]
fn a_group_is_registered_once_and_entries_are_checked() {
    let Some(ring) = ring_or_skip("a_group_is_registered_once_and_entries_are_checked", 8) else {
        return;
    };
    let pool = pool(8);
    let cache = pool.local_cache();
    let mut first = BufRing::new(&ring, &cache, 5, 2, BLOCK).unwrap();
    match BufRing::new(&ring, &cache, 5, 2, BLOCK) {
        Err(Error::GroupInUse { group: 5 }) => {}
        other => panic!("expected GroupInUse, got {other:?}"),
    }
    for bad in [0, 3, 65536] {
        assert!(matches!(
            BufRing::new(&ring, &cache, 6, bad, BLOCK),
            Err(Error::Entries { .. })
        ));
    }
    assert!(matches!(
        BufRing::new(&ring, &cache, 6, 2, BLOCK + 1),
        Err(Error::Pool(bufslab::Error::TooLarge { .. }))
    ));
    // SAFETY: no request ever selected from the group.
    assert_eq!(unsafe { first.release() }, 2);
    assert_eq!(pool.stats().rented_blocks, 0);
    // Released: unregistered and empty for good; the group id is free again.
    assert_eq!((first.refill(), first.held()), (0, 0));
    let mut again = BufRing::new(&ring, &cache, 5, 2, BLOCK).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { again.release() }, 2);
}

/// A ring larger than the pool holds what the pool can give, and refill tops it up later.
#[test]
fn a_ring_larger_than_the_pool_fills_as_blocks_come_home() {
    let Some(ring) = ring_or_skip("a_ring_larger_than_the_pool_fills_as_blocks_come_home", 8)
    else {
        return;
    };
    let pool = pool(4);
    let cache = pool.local_cache();
    let held_by_app = cache.get(1).unwrap();
    let mut bufs = BufRing::new(&ring, &cache, 7, 8, BLOCK).unwrap();
    assert_eq!(bufs.held(), 3);
    assert_eq!(bufs.refill(), 0);
    drop(held_by_app);
    assert_eq!(bufs.refill(), 1);
    assert_eq!(bufs.held(), 4);
    // SAFETY: no request ever selected from the group.
    unsafe { bufs.release() };
}
