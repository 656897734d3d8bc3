//! The allocator yardstick under jemalloc (the global allocator is per binary).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn jemalloc(c: &mut Criterion) {
    common::allocator_yardstick(c, "jemalloc_vec");
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = jemalloc
}
criterion_main!(benches);
