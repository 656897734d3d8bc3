//! The pool against its yardsticks, per get + touch + put, in one run:
//! `cargo bench -p bufslab` (this binary runs glibc's allocator; `jemalloc` and `mimalloc` are
//! the sibling binaries). See the README for the figures and how to read them.

mod common;

use bufslab::{QueueFreeList, StackFreeList};
use common::*;
use criterion::{criterion_group, criterion_main, Criterion};

fn pool_benches(c: &mut Criterion) {
    allocator_yardstick(c, "glibc_vec");

    let queue = bench_pool::<QueueFreeList>();
    let stack = bench_pool::<StackFreeList>();
    let local_queue = queue.local_cache();
    let local_stack = stack.local_cache();

    let mut g = c.benchmark_group("get_touch_put");
    get_touch_put(&mut g, "stash", &Stash);
    get_touch_put(&mut g, "queue", &Shared(queue.clone()));
    get_touch_put(&mut g, "stack", &Shared(stack.clone()));
    get_touch_put(&mut g, "local_queue", &Local(local_queue.clone()));
    get_touch_put(&mut g, "local_stack", &Local(local_stack.clone()));
    g.finish();

    let mut g = c.benchmark_group("get_fill_put");
    get_fill_put(&mut g, "stash", &Stash);
    get_fill_put(&mut g, "queue", &Shared(queue.clone()));
    get_fill_put(&mut g, "stack", &Shared(stack.clone()));
    get_fill_put(&mut g, "local_queue", &Local(local_queue.clone()));
    get_fill_put(&mut g, "local_stack", &Local(local_stack.clone()));
    g.finish();

    let mut g = c.benchmark_group("burst_256");
    burst(&mut g, "stash", &Stash);
    burst(&mut g, "queue", &Shared(queue.clone()));
    burst(&mut g, "stack", &Shared(stack.clone()));
    burst(&mut g, "local_queue", &Local(local_queue.clone()));
    burst(&mut g, "local_stack", &Local(local_stack.clone()));
    g.finish();
    drop((local_queue, local_stack));

    let mut g = c.benchmark_group("two_threads");
    two_threads(&mut g, "stash", || Stash);
    two_threads(&mut g, "queue", || Shared(queue.clone()));
    two_threads(&mut g, "stack", || Shared(stack.clone()));
    two_threads(&mut g, "local_queue", || Local(queue.local_cache()));
    two_threads(&mut g, "local_stack", || Local(stack.local_cache()));
    g.finish();

    let mut g = c.benchmark_group("cross_thread");
    channel_only(&mut g);
    cross_thread(&mut g, "queue", || Shared(queue.clone()));
    cross_thread(&mut g, "stack", || Shared(stack.clone()));
    cross_thread(&mut g, "local_queue", || Local(queue.local_cache()));
    cross_thread(&mut g, "local_stack", || Local(stack.local_cache()));
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = pool_benches
}
criterion_main!(benches);
