//! The record layer's fuzz target. What it checks is in `../checks/records.rs`, shared with
//! `tests/fuzz_seeds.rs`, which runs every seed of `seeds/records/` through it under
//! `cargo test`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/records.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check(data));
