//! The pool's free-list strategies (shared queue, shared stack, and over each a `LocalCache` and
//! the per-thread cache reached through `Pool::get_local`) against their yardsticks, in one run:
//! `cargo bench -p bufslab-benches --bench 'pool_ab*'` (this binary runs glibc's allocator;
//! `pool_ab_jemalloc` and `pool_ab_mimalloc` are the sibling binaries). `BENCHMARKS.md` has the
//! figures, `pool/README.md` how to read them.

mod common;

use bufslab::{FreeList, Pool, PoolBuf, QueueFreeList, StackFreeList};
use common::*;
use criterion::{criterion_group, criterion_main, Criterion};

/// `Pool::get_local`: the calling thread's cache found through the thread, as a task of a
/// multi-thread runtime rents.
fn via_thread<F: FreeList>(pool: &Pool<F>) -> Pooled<impl Fn() -> Result<PoolBuf, bufslab::Error>> {
    let pool = pool.clone();
    Pooled(move || pool.get_local(BLOCK))
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
    targets = pool_benches
}
criterion_main!(benches);
