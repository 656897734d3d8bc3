//! After warm-up, a receive costs no heap allocation: the kernel fills a pooled block, the
//! completion turns it into a `PoolBuf`, the buffer goes home, and the refill rents a block from
//! the local cache. dhat counts every allocation of the process (one profiler per process: one
//! test here).
//!
//! The file is its own `main` (`harness = false`): libtest's main thread goes on allocating
//! (recording and announcing the test) after it starts the test's thread, and on a loaded
//! machine those few blocks land inside the measured window, where dhat cannot tell them from
//! the receive path's.

mod common;

use std::io::Write;

use bufslab::{ClassConfig, Pool};
use bufslab_uring::BufRing;
use common::{arm_recv, next_cqe, ring_or_skip, tcp_pair};
use io_uring::cqueue;

#[cfg(not(miri))]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() {
    // dhat's counting allocator does not run under Miri.
    if cfg!(miri) {
        return;
    }
    a_receive_allocates_nothing_after_warm_up();
    println!("test a_receive_allocates_nothing_after_warm_up ... ok");
}

fn a_receive_allocates_nothing_after_warm_up() {
    let Some(mut ring) = ring_or_skip("a_receive_allocates_nothing_after_warm_up", 64) else {
        return;
    };
    let _profiler = dhat::Profiler::builder().testing().build();
    let pool = Pool::builder()
        .class(
            ClassConfig::new(2048)
                .blocks_per_slab(64)
                .prealloc_slabs(1)
                .max_slabs(1),
        )
        .build()
        .unwrap();
    let cache = pool.local_cache();
    let mut bufs = BufRing::new(&ring, &cache, 0, 16, 2048).unwrap();
    let (mut client, server) = tcp_pair();
    arm_recv(&mut ring, &server, bufs.group(), 1);
    let request = [b'x'; 300];

    let mut round = |ring: &mut io_uring::IoUring, bufs: &mut BufRing| {
        client.write_all(&request).unwrap();
        let mut got = 0;
        while got < request.len() {
            let cqe = next_cqe(ring);
            assert!(cqueue::more(cqe.flags()), "result {}", cqe.result());
            // SAFETY: from this ring, for the single-buffer receive on `bufs`' group, taken once.
            if let Some(buf) = unsafe { bufs.take(&cqe) } {
                got += buf.len();
            }
        }
        bufs.refill();
    };
    for _ in 0..200 {
        round(&mut ring, &mut bufs);
    }
    let before = dhat::HeapStats::get();
    let rounds = 2000;
    for _ in 0..rounds {
        round(&mut ring, &mut bufs);
    }
    let after = dhat::HeapStats::get();
    println!(
        "{} allocations over {rounds} receives after warm-up",
        after.total_blocks - before.total_blocks
    );
    assert_eq!(after.total_blocks, before.total_blocks);
    drop(client);
    let cqe = next_cqe(&mut ring);
    // SAFETY: as above.
    drop(unsafe { bufs.take(&cqe) });
    // SAFETY: the receive posted its final completion (end of stream), taken above.
    unsafe { bufs.release() };
}
