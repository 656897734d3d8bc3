//! The handshake driver's fuzz target. What it checks is in `../checks/handshake.rs`, shared
//! with `tests/fuzz_seeds.rs`, which runs every seed of `seeds/handshake/` through it under
//! `cargo test`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/handshake.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check(data));
