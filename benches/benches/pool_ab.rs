//! The pool's free-list strategies (shared queue, shared stack, and over each a `LocalCache` and
//! the per-thread cache reached through `Pool::get_local`) against their yardsticks, in one run:
//! `cargo bench -p bufslab-benches --bench 'pool_ab*'` (this binary runs glibc's allocator;
//! `pool_ab_jemalloc` and `pool_ab_mimalloc` are the sibling binaries). `BENCHMARKS.md` has the
//! figures, `pool/README.md` how to read them.

mod common;

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bufslab::{FreeList, LocalCache, Pool, PoolBuf, QueueFreeList, StackFreeList};
use bytes::BufMut;
use common::*;
use criterion::{criterion_group, criterion_main, Criterion};

/// `Pool::get_local`: the calling thread's cache found through the thread, as a task of a
/// multi-thread runtime rents.
fn via_thread<F: FreeList>(pool: &Pool<F>) -> Pooled<impl Fn() -> Result<PoolBuf, bufslab::Error>> {
    let pool = pool.clone();
    Pooled(move || pool.get_local(BLOCK))
}

thread_local! {
    /// The floor `LocalCache` is held to: a thread-local stash of boxed blocks, nothing else.
    static BOXES: RefCell<Vec<Box<[u8; BLOCK]>>> = const { RefCell::new(Vec::new()) };
}

// Both rents keep the buffer in memory (`black_box(&mut ..)`), as a server does that lends
// `&mut buf` to a read: a buffer held only in registers hides what a rent costs once it is
// stored, which is where a store-forwarding stall in the pool's rent showed.
#[inline(always)]
fn local_rent(cache: &LocalCache) {
    let mut buf = cache.get(BLOCK).expect("bench pool is large enough");
    buf.put_slice(b"ok");
    black_box(&mut buf);
}

#[inline(always)]
fn boxed_rent() {
    BOXES.with(|stash| {
        let mut block = stash
            .borrow_mut()
            .pop()
            .expect("stash filled before timing");
        block[..2].copy_from_slice(b"ok");
        black_box(&mut block);
        stash.borrow_mut().push(block);
    });
}

// Each paired loop is a function of its own, so that both are compiled alike and neither into
// criterion's closure: how a rent compiles depends on its surroundings (see BENCHMARKS.md,
// "`LocalCache` against a bare stash").
#[inline(never)]
fn local_loop(cache: &LocalCache, iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        local_rent(cache);
    }
    start.elapsed()
}

#[inline(never)]
fn boxed_loop(iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        boxed_rent();
    }
    start.elapsed()
}

/// Samples shorter than this are criterion's warm-up or test mode: too short to pair.
const MIN_PAIRED_ITERS: u64 = 100_000;

/// `LocalCache` get + write two bytes + drop against the boxed stash (pop, write two bytes,
/// push). Each contender alone, then `interleaved`: every criterion sample times both back to
/// back, in alternating order so that drift hits both, and the medians over samples (and of the
/// per-sample difference) are printed after the group. Criterion's figure for `interleaved` is
/// the pair's sum.
fn local_vs_stash(c: &mut Criterion) {
    let pool = bench_pool::<QueueFreeList>();
    let cache = pool.local_cache();
    drop(cache.get(BLOCK));
    BOXES.with(|stash| {
        stash
            .borrow_mut()
            .extend((0..16).map(|_| Box::new([0; BLOCK])))
    });

    let mut g = c.benchmark_group("local_vs_stash");
    g.bench_function("local_cache", |b| b.iter(|| local_rent(&cache)));
    g.bench_function("boxed_stash", |b| b.iter(boxed_rent));
    let pairs = RefCell::new(Vec::new());
    let mut stash_first = false;
    g.bench_function("interleaved", |b| {
        b.iter_custom(|iters| {
            stash_first = !stash_first;
            let (local, stash) = if stash_first {
                let stash = boxed_loop(iters);
                (local_loop(&cache, iters), stash)
            } else {
                let local = local_loop(&cache, iters);
                (local, boxed_loop(iters))
            };
            if iters >= MIN_PAIRED_ITERS {
                let per = |d: Duration| d.as_secs_f64() * 1e9 / iters as f64;
                pairs.borrow_mut().push((per(local), per(stash)));
            }
            local + stash
        })
    });
    g.finish();
    BOXES.with(|stash| stash.borrow_mut().clear());

    let pairs = pairs.into_inner();
    if !pairs.is_empty() {
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let local = median(pairs.iter().map(|p| p.0).collect());
        let stash = median(pairs.iter().map(|p| p.1).collect());
        let diff = median(pairs.iter().map(|p| p.0 - p.1).collect());
        println!(
            "local_vs_stash/interleaved: {} paired samples: local_cache {local:.2} ns, \
             boxed_stash {stash:.2} ns, median difference {diff:+.2} ns, ratio {:.2}",
            pairs.len(),
            local / stash
        );
    }
}

fn pool_benches(c: &mut Criterion) {
    allocator_yardstick(c, "glibc_vec");

    // The shared-path pools and the local-cache pools are separate: a block dropped on a thread
    // that has a cache of its pool goes into that cache, which would blur the shared figures.
    let queue = bench_pool::<QueueFreeList>();
    let stack = bench_pool::<StackFreeList>();
    let cached_queue = bench_pool::<QueueFreeList>();
    let cached_stack = bench_pool::<StackFreeList>();
    let thread_queue = bench_pool::<QueueFreeList>();
    let thread_stack = bench_pool::<StackFreeList>();

    // Every single-thread scenario runs the same eight contenders. The `thread_*` ones run last
    // and release this thread's caches after, so that the shared pools' returns never walk
    // past them.
    macro_rules! single_thread {
        ($group:literal, $scenario:ident) => {{
            let mut g = c.benchmark_group($group);
            $scenario(&mut g, "bytes_mut", &BytesSource);
            $scenario(&mut g, "stash", &Stash);
            $scenario(&mut g, "queue", &shared(&queue));
            $scenario(&mut g, "stack", &shared(&stack));
            $scenario(&mut g, "local_queue", &local(&cached_queue));
            $scenario(&mut g, "local_stack", &local(&cached_stack));
            $scenario(&mut g, "thread_queue", &via_thread(&thread_queue));
            $scenario(&mut g, "thread_stack", &via_thread(&thread_stack));
            thread_queue.release_local();
            thread_stack.release_local();
            g.finish();
        }};
    }
    single_thread!("get_touch_put", get_touch_put);
    single_thread!("get_fill_put", get_fill_put);
    single_thread!("burst_256", burst);

    let mut g = c.benchmark_group("two_threads");
    two_threads(&mut g, "bytes_mut", || BytesSource);
    two_threads(&mut g, "stash", || Stash);
    two_threads(&mut g, "queue", || shared(&queue));
    two_threads(&mut g, "stack", || shared(&stack));
    two_threads(&mut g, "local_queue", || local(&cached_queue));
    two_threads(&mut g, "local_stack", || local(&cached_stack));
    two_threads(&mut g, "thread_queue", || via_thread(&thread_queue));
    two_threads(&mut g, "thread_stack", || via_thread(&thread_stack));
    g.finish();

    // The consumer thread has no cache: every block takes the remote-return path.
    let mut g = c.benchmark_group("cross_thread");
    channel_only(&mut g);
    cross_thread(&mut g, "bytes_mut", || BytesSource);
    cross_thread(&mut g, "queue", || shared(&queue));
    cross_thread(&mut g, "stack", || shared(&stack));
    cross_thread(&mut g, "local_queue", || local(&cached_queue));
    cross_thread(&mut g, "local_stack", || local(&cached_stack));
    cross_thread(&mut g, "thread_queue", || via_thread(&thread_queue));
    cross_thread(&mut g, "thread_stack", || via_thread(&thread_stack));
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = pool_benches, local_vs_stash
}
criterion_main!(benches);
