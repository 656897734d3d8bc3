//! Replays a fuzz target's committed seeds through its check, for the `fuzz_seeds` tests of the
//! workspace's crates (each includes this file), so a change that breaks a seed fails
//! `cargo test`, not only a fuzzing run.

use std::path::{Path, PathBuf};

/// Runs `check` on each seed in `crate_dir/fuzz/seeds/<target>/`; fails naming every seed that
/// panicked, and why. A seed that cannot be read fails at once, naming the file.
pub fn replay(crate_dir: &str, target: &str, check: fn(&[u8])) {
    let dir = Path::new(crate_dir).join("fuzz/seeds").join(target);
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
