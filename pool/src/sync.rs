//! The atomics the pool's own lock-free protocols use: std's normally, loom's under `--cfg loom`
//! so that `RUSTFLAGS="--cfg loom" cargo test -p bufslab --lib --release` model-checks them.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};
