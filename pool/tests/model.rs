//! Model-based property test: random get / put / freeze / clone / trim / evict sequences against
//! a simple model of what the pool must hold.

mod common;

#[cfg(feature = "stack")]
use bufslab::StackFreeList;
use bufslab::{ClassConfig, Error, Pool, PoolBuf, PoolBytes, QueueFreeList};
use common::{check, check_from, stamp};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Rent `len` bytes, through the pool or the local cache, growing or not.
    Get {
        len: usize,
        local: bool,
        grow: bool,
    },
    /// Drop the buffer at this index (modulo the live ones).
    Put(usize),
    /// Freeze a buffer into a view.
    Freeze(usize),
    /// Clone a view.
    CloneView(usize),
    /// Drop a view.
    DropView(usize),
    Trim,
    EvictIdle,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (prop_oneof![Just(1usize), Just(64), Just(100), Just(128), Just(256), Just(300)], any::<bool>(), any::<bool>())
            .prop_map(|(len, local, grow)| Op::Get { len, local, grow }),
        3 => any::<usize>().prop_map(Op::Put),
        1 => any::<usize>().prop_map(Op::Freeze),
        1 => any::<usize>().prop_map(Op::CloneView),
        2 => any::<usize>().prop_map(Op::DropView),
        1 => Just(Op::Trim),
        1 => Just(Op::EvictIdle),
    ]
}

const BLOCKS_PER_SLAB: usize = 4;
const MAX_SLABS: usize = 3;

/// Runs one sequence against a two-class pool and checks it against the model after each step.
fn run<F: bufslab::FreeList>(pool: Pool<F>, ops: &[Op]) {
    let cache = pool.local_cache();
    let sizes = [128usize, 256];
    let mut bufs: Vec<(PoolBuf, u64)> = Vec::new();
    // Each frozen block: its id and the views of it.
    let mut frozen: Vec<(u64, Vec<PoolBytes>)> = Vec::new();
    let mut next_id = 0u64;
    // Model: blocks rented per class (held by a buffer or by at least one view).
    let mut rented = [0usize; 2];

    for op in ops {
        match *op {
            Op::Get { len, local, grow } => {
                let got = match (local, grow) {
                    (true, true) => cache.get(len),
                    (true, false) => cache.try_get(len),
                    (false, true) => pool.get(len),
                    (false, false) => pool.try_get(len),
                };
                let class = sizes.iter().position(|&s| s >= len);
                match (got, class) {
                    (Ok(mut buf), Some(c)) => {
                        assert_eq!(buf.capacity(), sizes[c]);
                        assert!(buf.is_empty());
                        stamp(&mut buf, next_id);
                        bufs.push((buf, next_id));
                        next_id += 1;
                        rented[c] += 1;
                    }
                    (Err(Error::TooLarge { requested, largest }), None) => {
                        assert_eq!((requested, largest), (len, 256));
                    }
                    (Err(Error::Exhausted { block_size }), Some(c)) => {
                        assert!(grow);
                        assert_eq!(block_size, sizes[c]);
                        // Only at the bound: every block is rented or parked in this thread's
                        // cache (which a local get would have used first).
                        let stats = pool.class_stats(c).unwrap();
                        assert_eq!(stats.slabs, MAX_SLABS);
                        assert_eq!(rented[c] + stats.cached_blocks, MAX_SLABS * BLOCKS_PER_SLAB);
                        if local {
                            assert_eq!(stats.cached_blocks, 0);
                        }
                    }
                    (Err(Error::Empty { block_size }), Some(c)) => {
                        assert!(!grow);
                        assert_eq!(block_size, sizes[c]);
                        let stats = pool.class_stats(c).unwrap();
                        assert_eq!(stats.free_blocks, 0);
                        // Nothing free in the shared list; a local try_get looked in its stash
                        // first, a pool try_get does not.
                        assert_eq!(
                            stats.rented_blocks + stats.cached_blocks,
                            stats.slabs * BLOCKS_PER_SLAB
                        );
                        if local {
                            assert_eq!(stats.cached_blocks, 0);
                        }
                    }
                    (other, class) => panic!("get({len}) gave {other:?} for class {class:?}"),
                }
            }
            Op::Put(i) if !bufs.is_empty() => {
                let (buf, id) = bufs.swap_remove(i % bufs.len());
                assert!(check(&buf, id), "buffer {id} was overwritten");
                let c = sizes.iter().position(|&s| s == buf.capacity()).unwrap();
                drop(buf);
                rented[c] -= 1;
            }
            Op::Freeze(i) if !bufs.is_empty() => {
                let (buf, id) = bufs.swap_remove(i % bufs.len());
                frozen.push((id, vec![buf.freeze()]));
            }
            Op::CloneView(i) if !frozen.is_empty() => {
                let n = frozen.len();
                let views = &mut frozen[i % n].1;
                let view = views[0].clone();
                views.push(view.slice(1..));
            }
            Op::DropView(i) if !frozen.is_empty() => {
                let n = frozen.len();
                let views = &mut frozen[i % n].1;
                let view = views.pop().unwrap();
                if views.is_empty() {
                    // The last view: its block goes home.
                    let c = sizes.iter().position(|&s| s >= view.len()).unwrap();
                    rented[c] -= 1;
                    frozen.swap_remove(i % n);
                }
                drop(view);
            }
            Op::Trim => {
                pool.trim();
            }
            Op::EvictIdle => {
                pool.evict_idle();
            }
            _ => {}
        }

        // The model holds after every step.
        for (buf, id) in &bufs {
            assert!(check(buf, *id), "buffer {id} was overwritten");
        }
        for (id, views) in &frozen {
            for view in views {
                // Views are the whole block or `slice(1..)` of it.
                let offset = if sizes.contains(&view.len()) { 0 } else { 1 };
                assert!(
                    check_from(view, *id, offset),
                    "frozen block {id} was overwritten"
                );
            }
        }
        for (c, &r) in rented.iter().enumerate() {
            let s = pool.class_stats(c).unwrap();
            assert_eq!(s.rented_blocks, r, "class {c} rented");
            assert_eq!(
                s.free_blocks + s.cached_blocks + s.rented_blocks,
                s.slabs * BLOCKS_PER_SLAB
            );
            assert!(s.slabs <= MAX_SLABS);
            assert!(s.slabs >= 1, "below the preallocated floor");
        }
    }
    drop(bufs);
    drop(frozen);
    drop(cache);
    let stats = pool.stats();
    assert_eq!(stats.rented_blocks, 0);
    assert_eq!(stats.pooled_bytes, stats.allocated_bytes);
    pool.trim();
    assert_eq!(
        pool.stats().slabs,
        2,
        "trim keeps exactly the preallocated floor"
    );
}

fn builder() -> bufslab::Builder {
    let class = |size| {
        ClassConfig::new(size)
            .blocks_per_slab(BLOCKS_PER_SLAB)
            .prealloc_slabs(1)
            .max_slabs(MAX_SLABS)
    };
    Pool::builder()
        .class(class(256))
        .class(class(128))
        .local_capacity(4)
        .evict_share(0.5)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn queue_pool_matches_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 200 })) {
        run(builder().build_with::<QueueFreeList>().unwrap(), &ops);
    }

    #[cfg(feature = "stack")]
    #[test]
    fn stack_pool_matches_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 200 })) {
        run(builder().build_with::<StackFreeList>().unwrap(), &ops);
    }
}
