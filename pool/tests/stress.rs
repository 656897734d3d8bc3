//! Many threads renting, stamping, handing blocks to each other and returning them, with every
//! strategy, through the shared pool and through local caches. Nothing may be lost, aliased or
//! corrupted: each owner checks its stamp, and at the end free + in use == total.

mod common;

use std::sync::mpsc;
use std::thread;

#[cfg(feature = "stack")]
use bufslab::StackFreeList;
use bufslab::{ClassConfig, FreeList, Pool, PoolBuf, QueueFreeList};
use common::{check, scaled, stamp};

const THREADS: usize = 4;

fn pool<F: FreeList>() -> Pool<F> {
    Pool::builder()
        .class(
            ClassConfig::new(256)
                .blocks_per_slab(8)
                .prealloc_slabs(1)
                .max_slabs(scaled(1024, 32)),
        )
        .class(
            ClassConfig::new(1024)
                .blocks_per_slab(4)
                .prealloc_slabs(0)
                .max_slabs(scaled(2048, 64)),
        )
        .local_capacity(8)
        .build_with::<F>()
        .unwrap()
}

/// Each thread rents blocks, stamps them, and sends every other one to the next thread, which
/// checks the stamp, re-stamps and drops it there (the remote-return path). Views are frozen and
/// shared across threads too.
fn stress<F: FreeList>(local: bool) {
    let pool = pool::<F>();
    let rounds = scaled(2_000, 30);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS)
        .map(|_| mpsc::channel::<(PoolBuf, u64)>())
        .unzip();
    let (view_tx, view_rx) = mpsc::channel::<(bufslab::PoolBytes, u64)>();

    thread::scope(|s| {
        for (t, rx) in receivers.into_iter().enumerate() {
            let pool = pool.clone();
            let next = senders[(t + 1) % THREADS].clone();
            let view_tx = view_tx.clone();
            s.spawn(move || {
                let cache = local.then(|| pool.local_cache());
                let get = |len| match &cache {
                    Some(cache) => cache.get(len),
                    None => pool.get(len),
                };
                let mut held: Vec<(PoolBuf, u64)> = Vec::new();
                for i in 0..rounds {
                    let id = ((t as u64) << 32) | i as u64;
                    let len = if i % 3 == 0 { 1000 } else { 200 };
                    let mut buf = get(len).expect("the bound is never reached in this test");
                    stamp(&mut buf, id);
                    match i % 4 {
                        0 => next.send((buf, id)).unwrap(),
                        1 => held.push((buf, id)),
                        2 => view_tx.send((buf.freeze(), id)).unwrap(),
                        _ => drop(buf),
                    }
                    // Blocks from the previous thread: check, re-stamp, drop here.
                    while let Ok((mut buf, id)) = rx.try_recv() {
                        assert!(check(&buf, id), "block {id:x} corrupted in transit");
                        stamp(&mut buf, id ^ 0xffff);
                        assert!(check(&buf, id ^ 0xffff));
                    }
                    if held.len() > 16 {
                        for (buf, id) in held.drain(..) {
                            assert!(check(&buf, id), "held block {id:x} overwritten");
                        }
                    }
                }
                for (buf, id) in held {
                    assert!(check(&buf, id), "held block {id:x} overwritten");
                }
                drop(next);
                // Drain what the previous thread still sends until it hangs up.
                for (buf, id) in rx {
                    assert!(check(&buf, id), "block {id:x} corrupted in transit");
                }
            });
        }
        drop(senders);
        drop(view_tx);
        // The main thread checks frozen views made on every worker, cloning them on the way.
        for (view, id) in view_rx {
            let copy = view.clone();
            assert!(check(&view, id), "frozen block {id:x} corrupted");
            drop(view);
            assert!(check(&copy, id));
        }
    });

    let stats = pool.stats();
    assert_eq!(stats.rented_blocks, 0, "{stats:?}");
    assert_eq!(stats.rented_bytes, 0);
    assert_eq!(
        stats.pooled_bytes, stats.allocated_bytes,
        "free + in use == total"
    );
    for c in 0..2 {
        let s = pool.class_stats(c).unwrap();
        assert_eq!(
            s.free_blocks + s.cached_blocks,
            s.slabs * (if c == 0 { 8 } else { 4 })
        );
        assert_eq!(s.cached_blocks, 0, "every local cache flushed when dropped");
    }
}

#[test]
fn queue_shared() {
    stress::<QueueFreeList>(false);
}

#[test]
fn queue_local() {
    stress::<QueueFreeList>(true);
}

#[cfg(feature = "stack")]
#[test]
fn stack_shared() {
    stress::<StackFreeList>(false);
}

#[cfg(feature = "stack")]
#[test]
fn stack_local() {
    stress::<StackFreeList>(true);
}

/// Blocks outlive every handle: the pool is dropped while other threads still hold blocks and
/// views, which then come home on those threads, and the last one frees the slabs.
#[test]
fn blocks_outlive_the_pool() {
    for _ in 0..scaled(50, 3) {
        let pool = pool::<QueueFreeList>();
        let mut first: Vec<PoolBuf> = (0..20)
            .map(|i| pool.get(if i % 2 == 0 { 10 } else { 1000 }).unwrap())
            .collect();
        let second = first.split_off(10);
        let views: Vec<_> = (0..5).map(|_| pool.get(10).unwrap().freeze()).collect();
        thread::scope(|s| {
            s.spawn(move || drop(first));
            s.spawn(move || drop(second));
            let clones: Vec<_> = views.to_vec();
            s.spawn(move || drop(views));
            s.spawn(move || drop(clones));
            drop(pool);
        });
    }
}
