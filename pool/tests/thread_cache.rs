//! `Pool::get_local`: a per-thread cache reached from any thread without a handle, shared with
//! `LocalCache`, flushed home when the thread exits or its pool is gone. Small enough for Miri,
//! whose leak check also covers the caches of dropped pools.

use std::sync::mpsc;
use std::thread;

use bufslab::{ClassConfig, Pool};
use bytes::BufMut;

fn small_pool() -> Pool {
    Pool::builder()
        .class(ClassConfig::new(64).blocks_per_slab(8).max_slabs(4))
        .local_capacity(4)
        .build()
        .unwrap()
}

#[test]
fn get_local_reuses_the_block_it_parked() {
    let pool = small_pool();
    let p = pool.clone();
    thread::spawn(move || {
        let mut buf = p.get_local(10).unwrap();
        buf.put_slice(b"x");
        let addr = buf.as_ptr() as usize;
        drop(buf);
        assert_eq!(
            p.class_stats(0).unwrap().cached_blocks,
            2,
            "refill takes half, one parked back"
        );
        let again = p.get_local(10).unwrap();
        assert_eq!(
            again.as_ptr() as usize,
            addr,
            "the block returned last comes back first"
        );
    })
    .join()
    .unwrap();
    let stats = pool.class_stats(0).unwrap();
    assert_eq!(
        stats.cached_blocks, 0,
        "the thread's exit sent its cache home"
    );
    assert_eq!(stats.rented_blocks, 0);
    assert_eq!(stats.free_blocks, 8);
}

#[test]
fn blocks_dropped_on_another_thread_go_home() {
    let pool = small_pool();
    let (tx, rx) = mpsc::channel();
    let p = pool.clone();
    let producer = thread::spawn(move || {
        for i in 0..20u8 {
            let mut buf = p.get_local(64).unwrap();
            buf.put_u8(i);
            tx.send(buf).unwrap();
        }
    });
    // This thread has no cache of the pool: every block takes the remote-return path.
    for (i, buf) in rx.iter().enumerate() {
        assert_eq!(buf[0], i as u8);
    }
    producer.join().unwrap();
    assert_eq!(pool.stats().rented_blocks, 0);
    assert_eq!(pool.class_stats(0).unwrap().cached_blocks, 0);
}

#[test]
fn get_local_and_local_cache_share_one_cache() {
    let pool = small_pool();
    let p = pool.clone();
    thread::spawn(move || {
        let cache = p.local_cache();
        let addr = {
            let buf = p.get_local(1).unwrap();
            buf.as_ptr() as usize
        };
        assert_eq!(cache.get(1).unwrap().as_ptr() as usize, addr);
        drop(cache);
        // The thread used the cache through `get_local`, so it outlives the handle.
        assert!(p.class_stats(0).unwrap().cached_blocks > 0);
        assert_eq!(p.get_local(1).unwrap().as_ptr() as usize, addr);
    })
    .join()
    .unwrap();
    assert_eq!(pool.class_stats(0).unwrap().cached_blocks, 0);
    assert_eq!(pool.stats().rented_blocks, 0);
}

/// The other strategy, where the `stack` feature provides it; else a second queue pool.
#[cfg(feature = "stack")]
type Other = bufslab::StackFreeList;
#[cfg(not(feature = "stack"))]
type Other = bufslab::QueueFreeList;

#[test]
fn each_pool_has_its_own_cache_on_a_thread() {
    let a = small_pool();
    let b: Pool<Other> = Pool::builder()
        .class(ClassConfig::new(128).blocks_per_slab(8))
        .local_capacity(4)
        .build_with()
        .unwrap();
    let (pa, pb) = (a.clone(), b.clone());
    thread::spawn(move || {
        for _ in 0..10 {
            let x = pa.get_local(64).unwrap();
            let y = pb.get_local(128).unwrap();
            assert_eq!((x.capacity(), y.capacity()), (64, 128));
        }
        assert!(pa.class_stats(0).unwrap().cached_blocks > 0);
        assert!(pb.class_stats(0).unwrap().cached_blocks > 0);
    })
    .join()
    .unwrap();
    for stats in [a.class_stats(0).unwrap(), b.class_stats(0).unwrap()] {
        assert_eq!((stats.cached_blocks, stats.rented_blocks), (0, 0));
    }
}

/// A thread's cache outlives every handle of its pool: the blocks it holds keep the slabs alive
/// until the thread exits, and then everything is freed (Miri checks for leaks).
#[test]
fn cache_of_a_dropped_pool_is_freed_at_thread_exit() {
    let pool = small_pool();
    let (parked_tx, parked_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let p = pool.clone();
    let t = thread::spawn(move || {
        let kept = p.get_local(1).unwrap();
        drop(p.get_local(1).unwrap());
        drop(p);
        parked_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        drop(kept); // parks in the cache of a pool with no handle left
    });
    parked_rx.recv().unwrap();
    drop(pool);
    go_tx.send(()).unwrap();
    t.join().unwrap();
}

/// A thread that makes a cache for a new pool first empties its caches of dropped pools.
#[test]
fn caches_of_dropped_pools_are_swept() {
    thread::spawn(|| {
        for _ in 0..3 {
            let pool = small_pool();
            drop(pool.get_local(1).unwrap());
            let stats = pool.class_stats(0).unwrap();
            assert_eq!(stats.cached_blocks, 2);
        }
        let pool = small_pool();
        drop(pool.get_local(1).unwrap());
    })
    .join()
    .unwrap();
}

#[test]
fn try_get_local_does_not_grow() {
    let pool = Pool::builder()
        .class(
            ClassConfig::new(64)
                .blocks_per_slab(2)
                .prealloc_slabs(1)
                .max_slabs(2),
        )
        .local_capacity(2)
        .build()
        .unwrap();
    let p = pool.clone();
    thread::spawn(move || {
        let a = p.try_get_local(1).unwrap();
        let b = p.try_get_local(1).unwrap();
        assert!(matches!(
            p.try_get_local(1),
            Err(bufslab::Error::Empty { block_size: 64 })
        ));
        let c = p.get_local(1).unwrap();
        assert!(matches!(
            p.get_local(65),
            Err(bufslab::Error::TooLarge { .. })
        ));
        drop((a, b, c));
    })
    .join()
    .unwrap();
    assert_eq!(pool.stats().slabs, 2);
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn release_local_sends_the_cache_home_but_keeps_a_handles_cache() {
    let pool = small_pool();
    let p = pool.clone();
    thread::spawn(move || {
        drop(p.get_local(1).unwrap());
        assert!(p.class_stats(0).unwrap().cached_blocks > 0);
        p.release_local();
        assert_eq!(p.class_stats(0).unwrap().cached_blocks, 0);
        p.release_local(); // nothing held: a no-op

        let cache = p.local_cache();
        drop(p.get_local(1).unwrap());
        p.release_local();
        assert!(
            p.class_stats(0).unwrap().cached_blocks > 0,
            "the handle still uses the cache"
        );
        drop(cache);
        assert_eq!(p.class_stats(0).unwrap().cached_blocks, 0);
    })
    .join()
    .unwrap();
    assert_eq!(pool.stats().rented_blocks, 0);
}
