//! The allocator yardstick under mimalloc (the global allocator is per binary).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn mimalloc(c: &mut Criterion) {
    common::allocator_yardstick(c, "mimalloc_vec");
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = mimalloc
}
criterion_main!(benches);
