//! After warm-up, renting, writing, returning, freezing and dropping views allocate nothing,
//! through the shared pool, a local cache and `get_local`, for both strategies. dhat counts every
//! heap allocation of the process (dhat allows one profiler per process: one test here).
//!
//! The file is its own `main` (`harness = false`): libtest's main thread goes on allocating
//! (recording and announcing the test) after it starts the test's thread, and on a loaded
//! machine those few blocks land inside the measured window, where dhat cannot tell them from
//! the pool's.

use std::io::Write;

#[cfg(feature = "stack")]
use bufslab::StackFreeList;
use bufslab::{ClassConfig, FreeList, Pool, QueueFreeList};
use bytes::{Buf, BufMut};

#[cfg(not(miri))]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// One round of everything the hot path does.
fn workload<F: FreeList>(pool: &Pool<F>, cache: &bufslab::LocalCache<F>) {
    for i in 0..64usize {
        let mut a = cache.get(1000).unwrap();
        a.put_slice(b"GET /plaintext HTTP/1.1\r\n");
        a.put_u32(i as u32);
        a.write_all(&[7; 100]).unwrap();
        let n = a.spare_capacity().min(32);
        a.spare_mut()[..n].fill(1);
        a.commit(n);
        a.advance(4);
        a.compact();
        let mut b = pool.get(5000).unwrap();
        b.put_slice(&a);
        let view = b.freeze();
        let part = view.slice(2..10);
        let copy = view.clone();
        drop(view);
        assert_eq!(part.len(), 8);
        drop((a, part, copy));
        // A block returned on another thread's behalf: straight to the shared list.
        let c = pool.try_get(10).unwrap();
        drop(c);
        // The per-thread path a task of a multi-thread runtime takes: the cache found through
        // the thread (this thread's `LocalCache` here).
        let d = pool.get_local(10).unwrap();
        drop(d);
    }
}

fn steady_state_allocations<F: FreeList>() -> u64 {
    let pool = Pool::builder()
        .class(ClassConfig::new(1024).prealloc_slabs(2))
        .class(ClassConfig::new(8192).blocks_per_slab(4).prealloc_slabs(1))
        .build_with::<F>()
        .unwrap();
    let cache = pool.local_cache();
    // Warm-up: the slabs and cache the workload needs now exist.
    workload(&pool, &cache);
    let before = dhat::HeapStats::get();
    for _ in 0..10 {
        workload(&pool, &cache);
    }
    let after = dhat::HeapStats::get();
    after.total_blocks - before.total_blocks
}

fn main() {
    // dhat's counting allocator does not run under Miri.
    if cfg!(miri) {
        return;
    }
    hot_path_allocates_nothing();
    println!("test hot_path_allocates_nothing ... ok");
}

fn hot_path_allocates_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let queue = steady_state_allocations::<QueueFreeList>();
    dhat::assert_eq!(queue, 0);
    #[cfg(feature = "stack")]
    {
        let stack = steady_state_allocations::<StackFreeList>();
        dhat::assert_eq!(stack, 0);
    }

    // The one documented allocation: `into_bytes` makes `Bytes`' owner record.
    let pool = Pool::new();
    let before = dhat::HeapStats::get();
    let bytes = pool.get(10).unwrap().into_bytes();
    drop(bytes);
    let after = dhat::HeapStats::get();
    dhat::assert_eq!(after.total_blocks - before.total_blocks, 1);

    // `get_local` on a thread with no other cache: one allocation round to make the cache on
    // first use, none after.
    let pool = Pool::new();
    drop(pool.get_local(10).unwrap());
    let before = dhat::HeapStats::get();
    for _ in 0..100 {
        let mut buf = pool.get_local(10).unwrap();
        buf.put_slice(b"x");
        drop(buf.freeze());
    }
    let after = dhat::HeapStats::get();
    dhat::assert_eq!(after.total_blocks - before.total_blocks, 0);
    pool.release_local();
}
