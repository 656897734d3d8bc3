//! The atomics the pool's own lock-free protocols use: std's normally, loom's under `--cfg bufslab_loom`
//! so that `RUSTFLAGS="--cfg bufslab_loom" cargo test -p bufslab --lib --release` model-checks them.

#[cfg(bufslab_loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};
#[cfg(not(bufslab_loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};
