//! Bounds, errors and shrinking: exhaustion returns an error and recovers, `try_get` never
//! grows, trimming and the idle policy free only fully free slabs above the floor.

mod common;

use bufslab::{ClassConfig, ConfigError, Error, FreeList, Pool, QueueFreeList};

fn small(prealloc: usize, max: usize) -> bufslab::Builder {
    Pool::builder().class(
        ClassConfig::new(128)
            .blocks_per_slab(4)
            .prealloc_slabs(prealloc)
            .max_slabs(max),
    )
}

#[test]
fn exhaustion_at_the_bound_recovers() {
    let pool = small(1, 2).build().unwrap();
    let held: Vec<_> = (0..8).map(|_| pool.get(100).unwrap()).collect();
    assert_eq!(pool.stats().slabs, 2);
    assert_eq!(
        pool.get(100).unwrap_err(),
        Error::Exhausted { block_size: 128 }
    );
    assert_eq!(
        pool.try_get(1).unwrap_err(),
        Error::Empty { block_size: 128 }
    );
    let cache = pool.local_cache();
    assert_eq!(
        cache.get(1).unwrap_err(),
        Error::Exhausted { block_size: 128 }
    );
    drop(held);
    // Recovered: every block is usable again, without growing.
    let again: Vec<_> = (0..8).map(|_| pool.get(100).unwrap()).collect();
    assert_eq!(again.len(), 8);
    assert_eq!(pool.stats().slabs, 2);
}

#[test]
fn max_bytes_bounds_all_classes_together() {
    let pool = Pool::builder()
        .class(ClassConfig::new(128).blocks_per_slab(4).prealloc_slabs(0))
        .class(ClassConfig::new(256).blocks_per_slab(4).prealloc_slabs(0))
        .max_bytes(1024 + 512)
        .build()
        .unwrap();
    let a = pool.get(256).unwrap(); // 1024-byte slab
    let b = pool.get(128).unwrap(); // 512-byte slab: at the bound now
    let more: Vec<_> = (0..3).map(|_| pool.get(128).unwrap()).collect();
    assert_eq!(
        pool.get(128).unwrap_err(),
        Error::Exhausted { block_size: 128 }
    );
    assert_eq!(pool.stats().allocated_bytes, 1536);
    drop((a, b, more));
}

#[test]
fn try_get_never_grows() {
    let pool = small(0, 4).build().unwrap();
    assert_eq!(
        pool.try_get(1).unwrap_err(),
        Error::Empty { block_size: 128 }
    );
    assert_eq!(pool.stats().slabs, 0);
    let first = pool.get(1).unwrap();
    assert_eq!(pool.stats().slabs, 1);
    assert_eq!(pool.stats().misses, 2);
    let rest: Vec<_> = (0..3).map(|_| pool.try_get(1).unwrap()).collect();
    assert!(pool.try_get(1).is_err());
    assert_eq!(pool.stats().slabs, 1);
    drop((first, rest));
}

#[test]
fn too_large_names_the_largest_class() {
    let pool = small(1, 1).build().unwrap();
    assert_eq!(
        pool.get(129).unwrap_err(),
        Error::TooLarge {
            requested: 129,
            largest: 128
        }
    );
    assert_eq!(
        pool.get(129).unwrap_err().to_string(),
        "requested 129 bytes but the largest block is 128 bytes"
    );
}

#[test]
fn smallest_fitting_class_is_chosen() {
    let pool = Pool::builder()
        .class(ClassConfig::new(4096).max_slabs(2))
        .class(ClassConfig::new(64).max_slabs(2))
        .class(ClassConfig::new(1024).max_slabs(2))
        .build()
        .unwrap();
    assert_eq!(pool.block_sizes().collect::<Vec<_>>(), [64, 1024, 4096]);
    for (len, cap) in [
        (0, 64),
        (64, 64),
        (65, 1024),
        (1024, 1024),
        (1025, 4096),
        (4096, 4096),
    ] {
        assert_eq!(pool.get(len).unwrap().capacity(), cap, "len {len}");
    }
}

#[test]
fn bad_configs_are_rejected() {
    let build = |b: bufslab::Builder| b.build().unwrap_err();
    assert_eq!(
        build(Pool::builder().class(ClassConfig::new(0))),
        ConfigError::BadBlockSize(0)
    );
    assert_eq!(
        build(Pool::builder().class(ClassConfig::new(100))),
        ConfigError::BadBlockSize(100)
    );
    assert_eq!(
        build(
            Pool::builder()
                .class(ClassConfig::new(64))
                .class(ClassConfig::new(64))
        ),
        ConfigError::DuplicateClass(64)
    );
    assert_eq!(
        build(Pool::builder().class(ClassConfig::new(64).blocks_per_slab(0))),
        ConfigError::BadBlocksPerSlab {
            block_size: 64,
            blocks_per_slab: 0
        }
    );
    assert_eq!(
        build(Pool::builder().class(ClassConfig::new(64).prealloc_slabs(3).max_slabs(2))),
        ConfigError::BadMaxSlabs { block_size: 64 }
    );
    assert_eq!(
        build(
            Pool::builder()
                .class(ClassConfig::new(64).prealloc_slabs(2))
                .max_bytes(64 * 32)
        ),
        ConfigError::PreallocOverMax {
            prealloc_bytes: 64 * 32 * 2,
            max_bytes: 64 * 32
        }
    );
    assert_eq!(
        build(Pool::builder().evict_share(1.5)),
        ConfigError::BadEvictShare
    );
    assert!(!ConfigError::BadEvictShare.to_string().is_empty());
}

#[test]
fn trim_frees_only_fully_free_slabs_above_the_floor() {
    trims_only_fully_free_slabs::<QueueFreeList>();
    #[cfg(feature = "stack")]
    trims_only_fully_free_slabs::<bufslab::StackFreeList>();
}

fn trims_only_fully_free_slabs<F: FreeList>() {
    let pool = small(1, 8).build_with::<F>().unwrap();
    let mut held: Vec<_> = (0..16).map(|_| pool.get(1).unwrap()).collect();
    assert_eq!(pool.stats().slabs, 4);
    assert_eq!(pool.trim(), 0, "every slab is in use");
    // Free all but one block: its slab stays and counts towards the floor of one slab.
    let keep = held.pop().unwrap();
    drop(held);
    assert_eq!(pool.trim(), 3);
    let stats = pool.stats();
    assert_eq!(stats.slabs, 1);
    assert_eq!(stats.evicted_slabs, 3);
    assert_eq!(stats.evicted_bytes, 3 * 4 * 128);
    assert_eq!(stats.rented_blocks, 1);
    assert_eq!(stats.allocated_bytes, 512);
    // The kept block is still usable, and the floor stays once it is back.
    assert_eq!(keep.capacity(), 128);
    drop(keep);
    assert_eq!(pool.trim(), 0);
    assert_eq!(pool.stats().slabs, 1);
}

#[test]
fn evict_idle_releases_a_share_when_returns_outpace_rents() {
    let pool = small(1, 16).evict_share(0.5).build().unwrap();
    let held: Vec<_> = (0..32).map(|_| pool.get(1).unwrap()).collect();
    assert_eq!(pool.stats().slabs, 8);
    // Demand grew since the last call: nothing goes.
    assert_eq!(pool.evict_idle(), 0);
    drop(held);
    // Returns outpaced rents: half of the 7 surplus slabs (rounded up) go, then half of the rest.
    assert_eq!(pool.evict_idle(), 4);
    assert_eq!(pool.stats().slabs, 4);
    assert_eq!(pool.evict_idle(), 2);
    assert_eq!(pool.evict_idle(), 1);
    assert_eq!(pool.evict_idle(), 0);
    assert_eq!(pool.stats().slabs, 1);
}

#[test]
fn blocks_parked_in_a_local_cache_keep_their_slab() {
    let pool = small(0, 4).local_capacity(4).build().unwrap();
    let cache = pool.local_cache();
    let bufs: Vec<_> = (0..4).map(|_| cache.get(1).unwrap()).collect();
    drop(bufs); // parked in the cache
    let stats = pool.class_stats(0).unwrap();
    assert_eq!((stats.cached_blocks, stats.rented_blocks), (4, 0));
    assert_eq!(pool.trim(), 0);
    drop(cache); // flushed
    assert_eq!(pool.class_stats(0).unwrap().cached_blocks, 0);
    assert_eq!(pool.trim(), 1);
}

#[test]
fn a_second_cache_on_one_thread_shares_the_first() {
    let pool = small(1, 4).local_capacity(4).build().unwrap();
    let a = pool.local_cache();
    let b = pool.local_cache();
    let cached = || pool.class_stats(0).unwrap().cached_blocks;
    // The first get refills half the capacity (2 blocks) and takes one.
    let buf = a.get(1).unwrap();
    assert_eq!(cached(), 1);
    drop(buf);
    assert_eq!(cached(), 2);
    drop(a);
    // Still cached: `b` is a handle to the same cache, and serves from it.
    assert_eq!(cached(), 2);
    let buf = b.get(1).unwrap();
    assert_eq!(cached(), 1);
    drop((buf, b));
    assert_eq!(cached(), 0, "flushed when the last handle drops");
}
