//! Every committed seed of the fuzz targets (`fuzz/seeds/<target>/`) through the checks its
//! target runs (`fuzz/checks/<target>.rs`, the same file the target includes), so a change
//! that breaks a seed fails `cargo test`, not only a fuzzing run. Each seed is the target's
//! whole input: the mode byte, then the bytes.
// Each check file includes the helpers it needs, as its target compiles it alone; here the
// head and response checks both bring `split.rs` and `tests/common`.
#![allow(clippy::duplicate_mod)]

use std::path::{Path, PathBuf};

#[path = "../fuzz/checks/chunked.rs"]
mod chunked;
#[path = "../fuzz/checks/head.rs"]
mod head;
#[path = "../fuzz/checks/response.rs"]
mod response;

/// Runs `check` on each seed of `target`; fails naming every seed that panicked, and why.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    let failed: Vec<String> = seeds
        .iter()
        .filter_map(|seed| {
            let data = std::fs::read(seed).unwrap_or_else(|e| panic!("{}: {e}", seed.display()));
            let panic = std::panic::catch_unwind(|| check(&data)).err()?;
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Some(format!("{}: {why}", seed.display()))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} {target} seeds fail (replay one with `cargo +nightly fuzz run {target} <seed>` in fuzz/):\n{}",
        failed.len(),
        seeds.len(),
        failed.join("\n")
    );
}

#[test]
fn head_seeds_pass_the_head_target() {
    replay("head", head::check);
}

#[test]
fn response_seeds_pass_the_response_target() {
    replay("response", response::check);
}

#[test]
fn chunked_seeds_pass_the_chunked_target() {
    replay("chunked", chunked::check);
}
