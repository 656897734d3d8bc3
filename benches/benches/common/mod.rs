//! Scenarios shared by the `pool_ab*` bench binaries. Each binary has its own global allocator
//! (glibc, jemalloc, mimalloc), so the `Vec` yardstick is measured under each, in the same
//! `cargo bench -p bufslab-benches --bench 'pool_ab*'` run as the pool.
// The allocator binaries use only `allocator_yardstick` and what it needs.
#![allow(dead_code)]

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::mpsc::sync_channel;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use bufslab::{FreeList, Pool, PoolBuf};
use bytes::{BufMut, BytesMut};
use criterion::{BenchmarkGroup, Criterion, Throughput};

pub const BLOCK: usize = 4096;

/// A criterion group measuring wall time.
pub type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;
pub const BURST: usize = 256;

/// Something that hands out 4 KiB buffers.
pub trait Source {
    type Buf: Send + 'static;
    fn get(&self) -> Self::Buf;
    /// Writes one byte, as a server writes at least a little into what it rents.
    fn touch(buf: &mut Self::Buf);
    /// Writes the whole block: the cache-hotness case.
    fn fill(buf: &mut Self::Buf);
}

/// The allocator yardstick: `Vec::with_capacity(4096)` and drop.
pub struct VecSource;

impl Source for VecSource {
    type Buf = Vec<u8>;
    fn get(&self) -> Vec<u8> {
        Vec::with_capacity(BLOCK)
    }
    fn touch(buf: &mut Vec<u8>) {
        buf.push(1);
    }
    fn fill(buf: &mut Vec<u8>) {
        buf.resize(BLOCK, 1);
    }
}

/// `bytes::BytesMut::with_capacity(4096)` and drop: the read buffer of a tokio-style server
/// without a pool. It wraps a `Vec` until split or frozen, so this is the `Vec` yardstick plus
/// `BytesMut`'s own bookkeeping.
pub struct BytesSource;

impl Source for BytesSource {
    type Buf = BytesMut;
    fn get(&self) -> BytesMut {
        BytesMut::with_capacity(BLOCK)
    }
    fn touch(buf: &mut BytesMut) {
        buf.put_u8(1);
    }
    fn fill(buf: &mut BytesMut) {
        buf.resize(BLOCK, 1);
    }
}

/// The floor: a bare thread-local stash of `Vec`s, no pool, no bookkeeping.
pub struct Stash;

/// A `Vec` that goes back to this thread's stash when dropped.
pub struct Stashed(Vec<u8>);

thread_local! {
    static STASH: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Stashed {
    fn drop(&mut self) {
        let mut v = std::mem::take(&mut self.0);
        v.clear();
        STASH.with(|s| s.borrow_mut().push(v));
    }
}

impl Source for Stash {
    type Buf = Stashed;
    fn get(&self) -> Stashed {
        Stashed(
            STASH
                .with(|s| s.borrow_mut().pop())
                .unwrap_or_else(|| Vec::with_capacity(BLOCK)),
        )
    }
    fn touch(buf: &mut Stashed) {
        buf.0.push(1);
    }
    fn fill(buf: &mut Stashed) {
        buf.0.resize(BLOCK, 1);
    }
}

/// A pool source: `Pooled(|| pool.get(BLOCK))` for the shared path, or the same over a
/// `LocalCache` for the per-thread path.
pub struct Pooled<G>(pub G);

impl<G: Fn() -> Result<PoolBuf, bufslab::Error>> Source for Pooled<G> {
    type Buf = PoolBuf;
    fn get(&self) -> PoolBuf {
        (self.0)().expect("bench pool is large enough")
    }
    fn touch(buf: &mut PoolBuf) {
        buf.put_u8(1);
    }
    fn fill(buf: &mut PoolBuf) {
        let n = buf.spare_capacity();
        buf.spare_mut().fill(1);
        buf.commit(n);
    }
}

/// The shared path of `pool`.
pub fn shared<F: FreeList>(pool: &Pool<F>) -> Pooled<impl Fn() -> Result<PoolBuf, bufslab::Error>> {
    let pool = pool.clone();
    Pooled(move || pool.get(BLOCK))
}

/// A local cache of `pool` for the calling thread.
pub fn local<F: FreeList>(pool: &Pool<F>) -> Pooled<impl Fn() -> Result<PoolBuf, bufslab::Error>> {
    let cache = pool.local_cache();
    Pooled(move || cache.get(BLOCK))
}

/// A pool big enough for every scenario, with everything it needs preallocated.
pub fn bench_pool<F: FreeList>() -> Pool<F> {
    Pool::builder()
        .class(
            bufslab::ClassConfig::new(BLOCK)
                .blocks_per_slab(32)
                .prealloc_slabs(64)
                .max_slabs(256),
        )
        .build_with::<F>()
        .expect("bench pool config")
}

pub fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
        .noise_threshold(0.05)
}

/// get, touch one byte, drop: the per-request pattern.
pub fn get_touch_put<S: Source>(group: &mut Group<'_>, name: &str, src: &S) {
    get_write_put(group, name, src, S::touch);
}

/// get, write the whole block, drop: where a cache-hot block should pay off.
pub fn get_fill_put<S: Source>(group: &mut Group<'_>, name: &str, src: &S) {
    get_write_put(group, name, src, S::fill);
}

fn get_write_put<S: Source>(group: &mut Group<'_>, name: &str, src: &S, write: fn(&mut S::Buf)) {
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut buf = src.get();
            write(&mut buf);
            black_box(&buf);
        })
    });
}

/// 256 gets, then all 256 dropped. Throughput is per block.
pub fn burst<S: Source>(group: &mut Group<'_>, name: &str, src: &S) {
    group.throughput(Throughput::Elements(BURST as u64));
    let mut held = Vec::with_capacity(BURST);
    group.bench_function(name, |b| {
        b.iter(|| {
            for _ in 0..BURST {
                let mut buf = src.get();
                S::touch(&mut buf);
                held.push(buf);
            }
            held.clear();
        })
    });
}

/// Two threads each doing get+touch+put on their own source made by `make` (e.g. sharing one
/// pool). Reports the slower thread's time per op.
pub fn two_threads<S: Source, M: Fn() -> S + Sync>(group: &mut Group<'_>, name: &str, make: M) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let barrier = Barrier::new(2);
            thread::scope(|s| {
                let run = || {
                    let src = make();
                    // Warm this thread's source before timing.
                    drop(src.get());
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        let mut buf = src.get();
                        S::touch(&mut buf);
                        black_box(&buf);
                    }
                    start.elapsed()
                };
                let a = s.spawn(run);
                let b = s.spawn(run);
                a.join().unwrap().max(b.join().unwrap())
            })
        })
    });
}

/// A buffer got on one thread, sent through a bounded channel, dropped on another thread.
/// `make` builds the producer's source on the producer thread.
pub fn cross_thread<S: Source, M: Fn() -> S + Sync>(group: &mut Group<'_>, name: &str, make: M) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let (tx, rx) = sync_channel::<S::Buf>(256);
            thread::scope(|s| {
                let producer = s.spawn(|| {
                    let src = make();
                    let start = Instant::now();
                    for _ in 0..iters {
                        let mut buf = src.get();
                        S::touch(&mut buf);
                        tx.send(buf).unwrap();
                    }
                    drop(tx);
                    start
                });
                for buf in rx {
                    drop(buf);
                }
                producer.join().unwrap().elapsed()
            })
        })
    });
}

/// No buffer at all: a `u64` through the same channel, so [`cross_thread`] with it measures the
/// hand-off alone, to subtract from the other contenders.
pub struct Handoff;

impl Source for Handoff {
    type Buf = u64;
    fn get(&self) -> u64 {
        black_box(0)
    }
    fn touch(_: &mut u64) {}
    fn fill(_: &mut u64) {}
}

/// The channel hand-off alone (see [`Handoff`]).
pub fn channel_only(group: &mut Group<'_>) {
    cross_thread(group, "channel_only", || Handoff);
}

/// The allocator yardstick in every scenario, under whichever global allocator this binary has.
pub fn allocator_yardstick(c: &mut Criterion, allocator: &str) {
    let mut g = c.benchmark_group("get_touch_put");
    get_touch_put(&mut g, allocator, &VecSource);
    g.finish();
    let mut g = c.benchmark_group("get_fill_put");
    get_fill_put(&mut g, allocator, &VecSource);
    g.finish();
    let mut g = c.benchmark_group("burst_256");
    burst(&mut g, allocator, &VecSource);
    g.finish();
    let mut g = c.benchmark_group("two_threads");
    two_threads(&mut g, allocator, || VecSource);
    g.finish();
    let mut g = c.benchmark_group("cross_thread");
    cross_thread(&mut g, allocator, || VecSource);
    g.finish();
}
